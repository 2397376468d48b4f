"""Observing changes nothing: a program prints, computes and fails in the app exactly as in
plain PyTorch, whatever hooks it registers. Each case here once behaved differently."""

from __future__ import annotations

import contextlib
import io
import random
import traceback

import numpy as np
import pytest
import torch

from explorer.execute import execute

CASES = {
    "tensor-hook-and-retain-grad": (
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * x\n"
        "y.register_hook(lambda g: print('hook saw', g))\ny.retain_grad()\n"
        "v = torch.tensor([1.0, 0.1, 0.01])\ny.backward(v)\nprint(y.grad, x.grad)\n"),
    "saved-tensor-hooks": (
        "def pack_hook(x):\n    print('Packing', x)\n    return x\n\n"
        "def unpack_hook(x):\n    print('Unpacking', x)\n    return x\n\n"
        "a = torch.ones(5, requires_grad=True)\nb = torch.ones(5, requires_grad=True) * 2\n"
        "with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):\n"
        "    y = a * b\ny.sum().backward()\nprint(a.grad)\n"),
    "inference-mode": (
        "with torch.inference_mode():\n    x = torch.ones(3)\n    y = x * 2\n"
        "print(x.is_inference(), y)\nx.add_(1)\n"),
    "post-accumulate-hook-clears-grad": (
        "p = torch.ones(2, requires_grad=True)\n\ndef step(param):\n"
        "    print('step with', param.grad)\n    param.grad = None\n\n"
        "p.register_post_accumulate_grad_hook(step)\n(p * 3).sum().backward()\nprint(p.grad)\n"),
    "grad-with-positional-vector": (
        "x = torch.ones(3, requires_grad=True)\ny = x * x\nv = torch.tensor([1.0, 2.0, 3.0])\n"
        "(g,) = torch.autograd.grad(y, x, v)\nprint(g)\n"),
    "hessian-vector-product": (
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\n"
        "(g,) = torch.autograd.grad(y, x, create_graph=True)\nv = torch.tensor([1.0, 0.5])\n"
        "(hv,) = torch.autograd.grad(g, x, grad_outputs=v)\nprint(g, hv)\n"),
    "wrong-shape-gradient": (
        "x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones(2))\n"),
    "batched-grads": (
        "x = torch.randn(3, requires_grad=True)\ny = x * 2\n"
        "(jac,) = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)\nprint(jac)\n"),
    "rng-untouched-by-recording": (
        "x = torch.randn(4, requires_grad=True)\n(x.exp() * torch.rand(4)).sum().backward()\n"
        "print(torch.rand(2), np.random.rand(2), random.random())\n"),
    "every-kind-of-hook": (
        "m = torch.nn.Linear(2, 1)\nwith torch.no_grad():\n    m.weight.fill_(0.5)\n"
        "    m.bias.fill_(0.0)\n"
        "m.register_forward_hook(lambda mod, i, o: print('forward', o))\n"
        "m.register_full_backward_hook(lambda mod, gi, go: print('module backward', go))\n"
        "x = torch.tensor([[1.0, 2.0]], requires_grad=True)\n"
        "x.register_post_accumulate_grad_hook(lambda t: print('accumulated', t.grad))\n"
        "with torch.autograd.graph.saved_tensors_hooks(lambda t: (print('pack'), t)[1],\n"
        "                                              lambda t: (print('unpack'), t)[1]):\n"
        "    h = m(x).tanh()\n"
        "h.register_hook(lambda g: print('tensor hook', g))\nh.retain_grad()\n"
        "h.grad_fn.register_prehook(lambda go: print('node pre', go))\n"
        "h.grad_fn.register_hook(lambda gi, go: print('node post', gi))\n"
        "h.sum().backward()\nprint(h.grad, x.grad)\n"),
}


def plain(code: str) -> tuple[str, str | None]:
    """What plain PyTorch prints, and its error as `Type: message`, seeded as the app seeds."""
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    out, error = io.StringIO(), None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, "<program>", "exec"),
                 {"__name__": "__main__", "torch": torch, "np": np, "random": random})
        except Exception as exc:  # noqa: BLE001 - the program's own error is the result
            error = f"{type(exc).__name__}: {exc}"
            traceback.clear_frames(exc.__traceback__)
    return out.getvalue(), error


@pytest.mark.parametrize("key", CASES)
def test_recording_changes_nothing_the_program_can_see(key: str) -> None:
    code = "import random\n" + CASES[key]
    expected_out, expected_error = plain(code)
    trace = execute(code)
    assert trace.stdout == expected_out
    error = trace.error and f"{trace.error['type']}: {trace.error['message']}"
    assert error == expected_error


def test_each_backward_call_records_the_gradients_plain_pytorch_gives() -> None:
    trace = execute(CASES["tensor-hook-and-retain-grad"])
    (call,) = trace.backward  # one call: nothing ran backward for the explorer
    (leaf,) = call["leaf_grads"]
    assert leaf["grad"]["values"] == pytest.approx(trace.variables["x"]["grad"])
    assert call["vector"] == pytest.approx([1.0, 0.1, 0.01])


def test_what_the_recorder_leaves_out_it_says() -> None:
    saved = execute(CASES["saved-tensor-hooks"])
    assert any("saved-tensor hooks" in note for note in saved.notes)
    batched = execute("import random\n" + CASES["batched-grads"])
    assert any("is_grads_batched" in note for note in batched.notes)
    inference = execute(CASES["inference-mode"])
    assert inference.steps[0].variables["x"]["version"] is None  # it keeps no version
