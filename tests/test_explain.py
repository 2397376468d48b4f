"""explain() recognises the real errors PyTorch and Python raise, and only those.

Every case runs real code to produce the error, so a change in PyTorch's wording breaks a test
instead of silently losing an explanation. The few that need a GPU are checked against the
message text from PyTorch's source instead.
"""

from collections.abc import Callable

import numpy as np
import pytest
import torch

from explorer.content.explain import _rules, explain


def _leaf() -> torch.Tensor:
    return torch.ones(3, requires_grad=True)


def _backward_twice() -> None:
    y = _leaf().exp().sum()
    y.backward()
    y.backward()


def _modify_saved_tensor() -> None:
    y = _leaf().exp()  # exp saves its output for the backward pass
    y.add_(1)
    y.sum().backward()


def _custom_function_wrong_gradient_count() -> None:
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, threshold):
            return x.clamp(min=threshold)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output  # should also return None for `threshold`

    MyReLU.apply(_leaf(), 0.0).sum().backward()


def _undefined_name() -> None:
    print(undefined_variable)  # noqa: F821


CASES = [
    pytest.param(lambda: _leaf().mul(2).backward(), RuntimeError, "gradient", id="non-scalar"),
    pytest.param(
        lambda: _leaf().mul(2).backward(torch.ones(2)), RuntimeError, "ones_like", id="grad-shape"
    ),
    pytest.param(_backward_twice, RuntimeError, "retain_graph", id="backward-twice"),
    pytest.param(
        lambda: _leaf().mul(2).requires_grad_(False), RuntimeError, "detach", id="non-leaf-flag"
    ),
    pytest.param(
        lambda: torch.ones(3).sum().backward(), RuntimeError, "requires_grad=True", id="no-grad"
    ),
    pytest.param(
        lambda: torch.ones(3, dtype=torch.long, requires_grad=True),
        RuntimeError,
        "float",
        id="integer-requires-grad",
    ),
    pytest.param(
        lambda: torch.autograd.grad(_leaf().sum(), _leaf()),
        RuntimeError,
        "allow_unused",
        id="unused-input",
    ),
    pytest.param(lambda: _leaf().numpy(), RuntimeError, ".detach().numpy()", id="numpy-grad"),
    # The same check that rejects a CUDA tensor; "meta" is the non-CPU device a CPU build has.
    pytest.param(
        lambda: torch.ones(2, device="meta").numpy(), TypeError, ".cpu()", id="numpy-device"
    ),
    # On a CPU build, mixing devices gives the Python-side wording of the same-device check.
    pytest.param(
        lambda: torch.ones(2) + torch.ones(2, device="meta"),
        RuntimeError,
        ".to(device)",
        id="devices",
    ),
    pytest.param(lambda: _leaf().add_(1), RuntimeError, "no_grad", id="leaf-in-place"),
    pytest.param(
        lambda: _leaf().__setitem__(0, 5.0), RuntimeError, "no_grad", id="leaf-view-in-place"
    ),
    pytest.param(_modify_saved_tensor, RuntimeError, "_version", id="saved-modified"),
    pytest.param(
        lambda: torch.ones(2, 3).t().view(6), RuntimeError, "reshape", id="view-non-contiguous"
    ),
    pytest.param(lambda: torch.ones(6).view(4, 2), RuntimeError, "-1", id="view-bad-shape"),
    pytest.param(lambda: torch.ones(6).reshape(4, 2), RuntimeError, "-1", id="reshape-bad-shape"),
    pytest.param(lambda: torch.ones(2, 3) @ torch.ones(2, 3), RuntimeError, ".T", id="matmul"),
    pytest.param(
        lambda: torch.nn.Linear(3, 2)(torch.ones(4, 5)), RuntimeError, "in_features", id="linear"
    ),
    pytest.param(
        lambda: torch.mv(torch.ones(2, 3), torch.ones(4)), RuntimeError, ".T", id="mv-size"
    ),
    pytest.param(
        lambda: torch.ones(2, 3, 4).bmm(torch.ones(2, 3, 4)), RuntimeError, ".T", id="bmm"
    ),
    pytest.param(
        lambda: torch.ones(3) @ torch.ones(4), RuntimeError, ".shape", id="matmul-vectors"
    ),
    pytest.param(
        lambda: torch.ones(3) + torch.ones(4), RuntimeError, "broadcast", id="broadcasting"
    ),
    pytest.param(
        lambda: torch.ones(3, dtype=torch.long).mul_(0.5),
        RuntimeError,
        "out-of-place",
        id="in-place-cast",
    ),
    pytest.param(
        lambda: torch.add(torch.ones(3), 1, out=torch.empty(3, dtype=torch.long)),
        RuntimeError,
        "out-of-place",
        id="out-cast",
    ),
    pytest.param(lambda: torch.ones(3).item(), RuntimeError, "tolist", id="item"),
    pytest.param(lambda: float(torch.ones(3)), ValueError, "tolist", id="float"),
    pytest.param(lambda: bool(torch.ones(3)), RuntimeError, ".any()", id="bool"),
    # A CPU-only build refuses CUDA with an AssertionError, not a RuntimeError.
    pytest.param(
        lambda: torch.ones(1, device="cuda"), AssertionError, "is_available", id="cuda-device"
    ),
    pytest.param(lambda: torch.ones(1).cuda(), AssertionError, "is_available", id="cuda-method"),
    pytest.param(
        lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64),
        RuntimeError,
        ".float()",
        id="matmul-dtype",
    ),
    pytest.param(
        lambda: torch.nn.Linear(2, 2)(torch.ones(2, dtype=torch.float64)),
        RuntimeError,
        ".float()",
        id="linear-dtype",
    ),
    pytest.param(
        lambda: torch.nn.functional.conv1d(
            torch.ones(1, 2, 3, dtype=torch.float64), torch.ones(1, 2, 1)
        ),
        RuntimeError,
        ".float()",
        id="conv-dtype",
    ),
    pytest.param(
        _custom_function_wrong_gradient_count, RuntimeError, "None", id="function-gradients"
    ),
    pytest.param(_undefined_name, NameError, "undefined_variable", id="name"),
    pytest.param(lambda: torch.ones(3)[5], IndexError, "t.shape", id="tensor-index"),
    pytest.param(lambda: np.ones(3)[5], IndexError, "t.shape", id="numpy-index"),
    pytest.param(lambda: torch.ones(2, 3).sum(dim=2), IndexError, "t.dim()", id="dim"),
    pytest.param(lambda: _leaf().grad.zero_(), AttributeError, "is not None", id="none-grad"),
]


@pytest.mark.parametrize(("code", "error", "remedy"), CASES)
def test_explains_real_errors(
    code: Callable[[], object], error: type[Exception], remedy: str
) -> None:
    with pytest.raises(error) as raised:
        code()
    explanation = explain(type(raised.value).__name__, str(raised.value))
    assert explanation is not None, str(raised.value)
    assert set(explanation) == {"en", "zh"}
    assert explanation["en"].strip() and explanation["zh"].strip()
    assert remedy in explanation["en"]


# These need a GPU (or a CUDA build), so this CPU-only machine cannot raise them. The messages
# are copied from PyTorch's source: c10/cuda/CUDAFunctions.cpp (no driver), the CUDA device
# count check (no GPUs), aten/src/ATen/TensorIterator.cpp and the generated device checks
# (devices), and torch/csrc/utils/tensor_numpy.cpp (numpy).
GPU_MESSAGES = [
    pytest.param(
        "RuntimeError",
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx",
        "is_available",
        id="no-driver",
    ),
    pytest.param("RuntimeError", "No CUDA GPUs are available", "is_available", id="no-gpus"),
    pytest.param(
        "RuntimeError",
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu!",
        ".to(device)",
        id="two-devices",
    ),
    pytest.param(
        "RuntimeError",
        "Expected all tensors to be on the same device, but got mat2 is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)",
        ".to(device)",
        id="argument-device",
    ),
    pytest.param(
        "TypeError",
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first.",
        "`cuda:0`",
        id="numpy-cuda",
    ),
]


@pytest.mark.parametrize(("error_type", "message", "remedy"), GPU_MESSAGES)
def test_explains_gpu_only_messages(error_type: str, message: str, remedy: str) -> None:
    explanation = explain(error_type, message)
    assert explanation is not None
    assert explanation["en"].strip() and explanation["zh"].strip()
    assert remedy in explanation["en"]


def test_quotes_details_from_the_message() -> None:
    explanation = explain("RuntimeError", "shape '[4, 2]' is invalid for input of size 6")
    assert explanation is not None
    assert "[4, 2]" in explanation["en"] and "6" in explanation["en"]
    assert "[4, 2]" in explanation["zh"] and "6" in explanation["zh"]


def test_error_type_is_respected() -> None:
    # Same words, wrong class: not Python's NameError, so no lesson about assignment.
    assert explain("RuntimeError", "name 'x' is not defined") is None


@pytest.mark.parametrize(
    ("error_type", "message"),
    [("ValueError", "boom"), ("RuntimeError", "something else entirely"), ("KeyError", "'x'"),
     ("AttributeError", "'NoneType' object has no attribute 'append'")],
)
def test_unrelated_errors_get_none(error_type: str, message: str) -> None:
    assert explain(error_type, message) is None


def test_every_rule_is_exercised() -> None:
    messages = [param.values[1] for param in GPU_MESSAGES]
    for param in CASES:
        code, error, _ = param.values
        try:
            code()
        except error as e:
            messages.append(str(e))
    unused = [
        rule.pattern.pattern for rule in _rules() if not any(map(rule.pattern.search, messages))
    ]
    assert not unused
