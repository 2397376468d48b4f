"""Tests for the preset programs in ``explorer.content.examples``.

Three kinds of check:

* static: the catalogue is well formed (keys, seeds, titles, parseable code that respects
  the app's sandbox rules, no leftover PDF glitches);
* plain PyTorch: every program runs with plain ``exec`` in a fresh subprocess, seeded like
  the app, and exits cleanly or raises exactly the error the example is about;
* in-app: ``explorer.pool.worker.run`` prints exactly what plain PyTorch printed.  The runner is
  written separately; this test is skipped while ``explorer.pool.worker`` cannot be imported.
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from explorer.content.examples import EXAMPLES, Example, by_key  # noqa: E402
from explorer.pool.worker import default_pool  # noqa: E402
from explorer.safety.limits import Limits  # noqa: E402
from tests.plain import PlainRun, run_plain, without_addresses  # noqa: E402

SEEDS = ("000", "001", "002", "003", "004")
ALLOWED_IMPORTS = {"torch", "numpy", "math", "torch.nn.functional"}
ALLOWED_FROM_IMPORTS = {"__future__": {"print_function"}, "torch.autograd": {"Function"}}

# Outputs printed in the notes themselves (seed 003's notebook, seed 001's well-known values)
# for programs whose output does not depend on random numbers.
NOTE_OUTPUTS = {
    "autograd-basics": "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    "autograd-backward": "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    "scalar-backward": "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    "autograd-track-3x3": (
        "tensor([[1., 1., 1.],\n        [1., 1., 1.],\n        [1., 1., 1.]], requires_grad=True)\n"
        "tensor([[3., 3., 3.],\n        [3., 3., 3.],\n        [3., 3., 3.]],"
        " grad_fn=<AddBackward0>)\n"
        "tensor([[27., 27., 27.],\n        [27., 27., 27.],\n        [27., 27., 27.]],"
        " grad_fn=<MulBackward0>) tensor(27., grad_fn=<MeanBackward0>)\n"
    ),
    "grad-before-backward": "None\n",
    "grad-after-backward": (
        "tensor([[4., 4., 4.],\n        [4., 4., 4.],\n        [4., 4., 4.]])\n"
    ),
    "y-requires-grad": "True\n",
    "non-leaf-grad": "None\n",
}


def shows_uninitialised_memory(code: str) -> bool:
    """True if the program makes a tensor with ``torch.empty(...)``.

    Such a tensor holds whatever was in memory, so when it is printed its values (and even
    their format, e.g. scientific notation) differ from run to run.  Output of these
    programs is compared by structure only (see ``output_structure``).
    """
    return "torch.empty(" in code


_NUMBER = re.compile(r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)", re.IGNORECASE)


def output_structure(stdout: str) -> list[str]:
    """Lines of ``stdout`` with every number replaced by ``#`` and all spacing removed.

    Spacing goes too because its width follows the numbers (column padding, sign slots).
    """
    lines = without_addresses(stdout).splitlines()
    return ["".join(_NUMBER.sub("#", line).split()) for line in lines]


def assert_same_output(expected: str, actual: str, *, uninitialised: bool) -> None:
    """Exact comparison (bar object addresses), or a structural one for ``torch.empty``."""
    if uninitialised:
        assert len(actual.splitlines()) == len(expected.splitlines())
        assert output_structure(actual) == output_structure(expected)
    else:
        assert without_addresses(actual) == without_addresses(expected)


@pytest.fixture(scope="session")
def plain_runs() -> dict[str, tuple[PlainRun, PlainRun]]:
    """Each example run twice under plain PyTorch (the second run checks determinism), with
    the app's worker thread count."""
    runs = run_plain([example.code for example in EXAMPLES for _ in range(2)],
                     default_pool().threads)
    return {example.key: (runs[2 * i], runs[2 * i + 1]) for i, example in enumerate(EXAMPLES)}


def last_code_line(code: str) -> int:
    """Line number of the last line holding code (not blank, not a comment)."""
    lines = code.splitlines()
    for number in range(len(lines), 0, -1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    raise AssertionError("program has no code")


def iter_nodes(code: str) -> Iterator[ast.AST]:
    """All AST nodes of ``code``."""
    return ast.walk(ast.parse(code))


example_params = pytest.mark.parametrize("example", EXAMPLES, ids=lambda ex: ex.key)


# ---- static checks -------------------------------------------------------------------------


def test_every_seed_contributes_an_example() -> None:
    """Each of the five notes gives at least one preset, and no preset names another seed."""
    seeds = {example.seed for example in EXAMPLES}
    assert seeds == set(SEEDS)


def test_keys_are_unique_slugs() -> None:
    """Keys are unique, short, lower-case slugs."""
    keys = [example.key for example in EXAMPLES]
    assert len(keys) == len(set(keys))
    for key in keys:
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", key), key
        assert len(key) <= 40, key


def test_by_key() -> None:
    """``by_key`` finds every example and raises a KeyError naming a missing key."""
    for example in EXAMPLES:
        assert by_key(example.key) is example
    with pytest.raises(KeyError, match="no-such-example"):
        by_key("no-such-example")


def test_autograd_basics_opens_the_autograd_group() -> None:
    """``autograd-basics`` has the prescribed code and comes before every autograd example."""
    basics = by_key("autograd-basics")
    assert basics.code == (
        "import torch\n"
        "x = torch.ones(2, 2, requires_grad=True)\n"
        "y = x + 2\n"
        "z = y * y * 3\n"
        "out = z.mean()\n"
        "out.backward()\n"
        "print(x.grad)\n"
    )
    position = EXAMPLES.index(basics)
    for example in EXAMPLES[:position]:
        assert "requires_grad" not in example.code, example.key
        assert "backward" not in example.code, example.key


def test_error_examples() -> None:
    """Exactly the two lessons that are about an error carry the error's message."""
    errors = {example.key: example.error for example in EXAMPLES if example.error is not None}
    assert errors == {
        "vector-backward-error": "grad can be implicitly created only for scalar outputs",
        "requires-grad-non-leaf-error": (
            "you can only change requires_grad flags of leaf variables"
        ),
    }


def test_my_relu_training_is_one_example_per_note() -> None:
    """The MyReLU + two-layer training loop is a single, complete program."""
    for key in ("my-relu-train", "custom-function-relu"):
        code = by_key(key).code
        assert "class MyReLU(torch.autograd.Function):" in code
        assert "N, D_in, H, D_out = 64, 1000, 100, 10" in code
        assert "for t in range(500):" in code


@example_params
def test_example_is_well_formed(example: Example) -> None:
    """Titles in both languages; code parses, is dedented and ends with one newline."""
    assert set(example.title) == {"en", "zh"}
    assert all(title.strip() for title in example.title.values())
    assert example.seed in SEEDS
    ast.parse(example.code)
    assert example.code.endswith("\n")
    assert not example.code.endswith("\n\n")
    assert example.code == textwrap.dedent(example.code)
    assert not example.code[0].isspace()


@example_params
def test_example_has_no_pdf_glitches(example: Example) -> None:
    """No full-width parentheses or Kangxi-radical look-alikes survive from the PDFs."""
    for char in example.code:
        assert char not in "（）", example.key
        assert not 0x2F00 <= ord(char) <= 0x2FDF, (example.key, char)


@example_params
def test_example_respects_sandbox(example: Example) -> None:
    """Only the imports the app allows; no private attributes except ``_version``."""
    for node in iter_nodes(example.code):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name in ALLOWED_IMPORTS, (example.key, alias.name)
        elif isinstance(node, ast.ImportFrom):
            allowed = ALLOWED_FROM_IMPORTS.get(node.module or "", set())
            for alias in node.names:
                assert alias.name in allowed, (example.key, node.module, alias.name)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            assert node.attr == "_version", (example.key, node.attr)


# ---- plain PyTorch --------------------------------------------------------------------------


@example_params
def test_runs_in_plain_pytorch(
    example: Example, plain_runs: dict[str, tuple[PlainRun, PlainRun]]
) -> None:
    """The program exits cleanly, or fails on its last line with the expected error."""
    run, _ = plain_runs[example.key]
    assert run.returncode == 0, run.stderr
    assert run.result is not None, run.stderr
    if example.error is None:
        assert run.result["ok"], run.result
    else:
        assert not run.result["ok"], "expected an error, but the program ran cleanly"
        assert example.error in run.result["message"]
        # The lesson ends at the failing line: nothing after it is left unexecuted.
        assert run.result["line"] == last_code_line(example.code)


@example_params
def test_plain_output_is_reproducible(
    example: Example, plain_runs: dict[str, tuple[PlainRun, PlainRun]]
) -> None:
    """Two seeded runs print the same (``torch.empty`` examples: the same structure)."""
    first, second = plain_runs[example.key]
    assert_same_output(
        first.stdout, second.stdout, uninitialised=shows_uninitialised_memory(example.code)
    )


@pytest.mark.parametrize("key", sorted(NOTE_OUTPUTS))
def test_plain_output_matches_the_notes(
    key: str, plain_runs: dict[str, tuple[PlainRun, PlainRun]]
) -> None:
    """Where the notes show a deterministic output, plain PyTorch prints exactly that."""
    run, _ = plain_runs[key]
    assert run.stdout == NOTE_OUTPUTS[key]


def test_uninitialised_memory_detection() -> None:
    """The ``torch.empty`` flag and the structural comparison behave as intended."""
    flagged = {example.key for example in EXAMPLES if shows_uninitialised_memory(example.code)}
    assert "tensor-create" in flagged
    assert "autograd-basics" not in flagged
    before = "tensor([[0., 0., 0.],\n        [0., 0., 0.]])\n"
    after = "tensor([[ 1.4013e-45,  0.0000e+00, -nan],\n        [inf, 2.5000e+10, 7.]])\n"
    assert output_structure(before) == output_structure(after)
    assert output_structure(before) != output_structure("tensor([0., 0., 0.])\n")


# ---- in the app -----------------------------------------------------------------------------


@example_params
def test_in_app_output_matches_plain_pytorch(
    example: Example, plain_runs: dict[str, tuple[PlainRun, PlainRun]]
) -> None:
    """``explorer.pool.worker.run`` prints what plain PyTorch prints and agrees on the error."""
    worker = pytest.importorskip(
        "explorer.pool.worker", reason="runner not available", exc_type=ImportError
    )
    plain, _ = plain_runs[example.key]
    trace = worker.run(example.code, limits=Limits(time_s=60))  # behaviour, not speed
    assert trace.threads == worker.default_pool().threads
    assert_same_output(
        plain.stdout, trace.stdout, uninitialised=shows_uninitialised_memory(example.code)
    )
    if example.error is None:
        assert trace.ok, trace.error
        assert trace.error is None
    else:
        assert not trace.ok
        assert trace.error is not None
        assert example.error in trace.error.message
        assert plain.result is not None
        if trace.error.line is not None:
            assert trace.error.line == plain.result["line"]
