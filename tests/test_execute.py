"""The Trace that `execute` records: steps, variables as plain data, errors, warnings, caps."""

from __future__ import annotations

import json

import msgspec
import numpy as np
import torch

from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.notes import english
from tests.programs import SEED


def run(code: str, **kwargs: object) -> Trace:
    return execute(code, limits=Limits(time_s=5), **kwargs)  # type: ignore[arg-type]


def test_seed_program() -> None:
    trace = run(SEED)
    assert trace.ok and trace.error is None
    x, y, out = (trace.variables[name] for name in ("x", "y", "out"))
    assert x.grad == [[4.5, 4.5], [4.5, 4.5]]
    assert (x.is_leaf, x.grad_fn, x.requires_grad) == (True, None, True)
    assert (y.is_leaf, y.grad_fn) == (False, "AddBackward0")
    assert trace.variables["z"].grad_fn == "MulBackward0"
    assert (out.grad_fn, out.shape, out.values) == ("MeanBackward0", [], 27.0)
    assert trace.elapsed_ms > 0


def test_one_step_per_top_level_statement() -> None:
    trace = run(SEED)
    assert [(step.line, step.end_line) for step in trace.steps] == [(n, n) for n in range(1, 6)]
    # Each step shows the variables as they were after that statement.
    assert [sorted(step.variables) for step in trace.steps][:2] == [["x"], ["x", "y"]]
    assert trace.steps[3].variables["x"].grad is None
    assert trace.steps[4].variables["x"].grad == [[4.5, 4.5], [4.5, 4.5]]
    assert trace.variables == trace.steps[-1].variables


def test_a_compound_statement_steps_inside_then_is_one_step() -> None:
    trace = run("total = 0\nfor i in range(3):\n    total += i\n    print(i)\nprint(total)\n")
    inner = [(3, 3), (4, 4)] * 3
    assert [(step.line, step.end_line) for step in trace.steps] == [(1, 1), *inner, (2, 4),
                                                                      (5, 5)]
    assert [step.within for step in trace.steps] == [None, *[2] * 6, None, None]
    assert [step.rounds[0].round for step in trace.steps[1:7]] == [1, 1, 2, 2, 3, 3]
    assert [step.variables["total"].values for step in trace.steps[1:7:2]] == [0, 1, 3]
    assert "".join(step.output for step in trace.steps[:8]) == "0\n1\n2\n"
    assert trace.steps[7].output == "" and trace.steps[8].output == "3\n"
    assert trace.stdout == "0\n1\n2\n3\n"


def test_version_counts_in_place_changes() -> None:
    trace = run("x = torch.zeros(3)\nx.add_(1)\nx.mul_(2)\n")
    assert [step.variables["x"].version for step in trace.steps] == [0, 1, 2]
    assert trace.variables["x"].values == [2.0, 2.0, 2.0]


def test_numpy_view_shares_the_tensor_memory() -> None:
    trace = run("a = torch.arange(6.0).reshape(2, 3)\nn = a.numpy()\nc = a.t()\n")
    a, n, c = (trace.variables[name] for name in ("a", "n", "c"))
    assert n.kind == "ndarray" and n.dtype == "float32"
    assert n.values == a.values == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert n.memory == a.memory
    assert a.memory[1] - a.memory[0] == 6 * 4
    assert c.is_view is True and c.memory == a.memory and c.strides == [1, 3]


def test_large_values_are_capped_small_ones_complete() -> None:
    trace = execute("big = torch.arange(10000.0).reshape(100, 100)\n"
                    "small = torch.arange(100.0).reshape(10, 10)\n"
                    "wide = np.arange(5000)\n", limits=Limits(value_elements=1000))
    big, small, wide = (trace.variables[name] for name in ("big", "small", "wide"))
    assert big.truncated is True
    kept = [v for row in big.values for v in row]
    assert len(kept) >= 1000 and len(kept) < 10000
    assert kept == [float(i) for i in range(len(kept))]  # row-major, rows kept whole
    assert all(len(row) == 100 for row in big.values)
    assert small.truncated is False
    assert small.values == torch.arange(100.0).reshape(10, 10).tolist()
    assert wide.truncated is True and wide.values[:3] == [0, 1, 2]
    assert 1000 <= len(wide.values) < 5000


def test_non_finite_numbers_are_strings_and_json_is_strict() -> None:
    trace = run("v = torch.tensor([float('nan'), float('inf'), -float('inf'), 1.0])\n"
                "f = float('nan')\n"
                "a = np.array([np.inf])\n")
    assert trace.variables["v"].values == ["nan", "inf", "-inf", 1.0]
    assert trace.variables["f"].values == "nan"
    assert trace.variables["a"].values == ["inf"]
    text = json.dumps(msgspec.to_builtins(trace.to_dict()), allow_nan=False)
    assert json.loads(text)["variables"]["v"]["values"][0] == "nan"


def test_vector_backward_is_explained() -> None:
    trace = run("a = torch.ones(3, requires_grad=True)\nb = a * 2\nb.backward()\n")
    assert trace.ok is False and trace.error is not None
    assert trace.error.type == "RuntimeError"
    assert trace.error.line == 3
    assert trace.error.message == "grad can be implicitly created only for scalar outputs"
    explanation = trace.error.explanation
    assert explanation is not None
    assert "torch.ones_like(y)" in explanation.en and "标量" in explanation.zh
    # The statements before the error are still recorded.
    assert [step.line for step in trace.steps] == [1, 2]
    assert trace.variables["b"].grad_fn == "MulBackward0"


def test_requires_grad_on_a_non_leaf_is_explained() -> None:
    trace = run("a = torch.ones(3, requires_grad=True)\nb = a * 2\nb.requires_grad_(False)\n")
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == ("RuntimeError", 3)
    assert "only change requires_grad flags of leaf variables" in trace.error.message
    assert "detach" in trace.error.explanation.en


def test_error_line_is_inside_the_called_function() -> None:
    trace = run(
        "def step(t):\n"
        "    s = t * 2\n"
        "    s.backward()\n"
        "\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "step(x)\n"
    )
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == ("RuntimeError", 3)


def test_python_errors_have_their_line() -> None:
    trace = run("a = 1\nb = [1, 2]\nc = b[5]\n")
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == ("IndexError", 3)
    assert trace.error.message == "list index out of range"


def test_warnings_are_captured_with_their_line() -> None:
    trace = run("a = torch.ones(3, requires_grad=True)\nb = a * 2\ng = b.grad\n")
    assert trace.ok
    assert len(trace.warnings) == 1
    assert trace.warnings[0].startswith("line 3: UserWarning: The .grad attribute of a Tensor "
                                        "that is not a leaf Tensor is being accessed")


def test_a_warning_inside_a_function_names_the_function_line() -> None:
    trace = run("def grad_of(t):\n    return t.grad\n\nb = torch.ones(2, requires_grad=True) * 2\n"
                "g = grad_of(b)\n")
    assert [w.split(":")[0] for w in trace.warnings] == ["line 2"]


def test_no_warnings_for_a_clean_program() -> None:
    assert run(SEED).warnings == []


def test_stdout_is_capped_with_a_note() -> None:
    cap = Limits().output_chars
    trace = run("print('x' * 10**6)\nprint('never shown')\n")
    assert trace.ok
    assert trace.stdout == "x" * cap
    printed = 10**6 + 1 + len("never shown\n")
    assert english(trace.notes) == [f"{printed - cap:,} more characters of output were dropped "
                           f"(the cap is {cap:,})."]


def test_short_output_is_complete_and_unnoted() -> None:
    trace = run("print('a', 1, sep='-', end='!')\nprint()\n")
    assert trace.stdout == "a-1!\n"
    assert trace.notes == []


def test_seed_makes_runs_reproducible() -> None:
    first, second = (run("r = torch.rand(3)\nn = np.random.rand()\n", seed=0) for _ in "ab")
    torch.manual_seed(0)
    expected = torch.rand(3).tolist()
    assert first.variables["r"].values == second.variables["r"].values == expected
    np.random.seed(0)
    assert first.variables["n"].values == second.variables["n"].values == np.random.rand()
    other = run("r = torch.rand(3)\n", seed=1)
    assert other.variables["r"].values != expected


def test_json_round_trip() -> None:
    for code in (SEED, "a = torch.ones(3, requires_grad=True)\nprint(a)\na.sum().backward()\n"
                       "b = (a * 2)\nb.backward()\n"):
        trace = run(code)
        assert Trace.from_json(trace.to_json()) == trace
        assert Trace.from_json(trace.to_json(indent=2)) == trace


def test_describing_a_value_never_runs_the_programs_own_repr() -> None:
    # An `extra_repr` or `__repr__` the program wrote is its code: plain PyTorch would not run
    # it after each statement, so describing a variable does not (it may loop, or print).
    trace = execute("class N(torch.nn.Module):\n"
                    "    def extra_repr(self):\n"
                    "        while True:\n"
                    "            pass\n"
                    "n = N()\n", limits=Limits(time_s=2, loop_iterations=10_000))
    assert trace.ok, trace.error
    assert trace.variables["n"].values == "<N object>"


def test_only_the_program_variables_are_shown() -> None:
    trace = run("import math\nimport torch.nn.functional as F\nk = 3\n"
                "lin = torch.nn.Linear(2, k)\n")
    assert sorted(trace.variables) == ["k", "lin"]
    assert trace.variables["lin"].kind == "module"
