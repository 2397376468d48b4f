"""The server's patterns hold its interpreter for a bounded time whatever the text: each is
attacked with texts made to make it backtrack (explorer.bench.patterns), and every pattern
the server matches is one the attack sees."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pytest

from explorer.bench.patterns import BOUND_S, INSIDE, attacks, server_patterns, worst
from explorer.trace import Trace, error_info
from explorer.trace.check import MAX_MESSAGE
from explorer.views.scene import INPLACE, scene

PACKAGE = Path(__file__).resolve().parent.parent / "explorer"
MATCHING = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn",
            "split"}
LOADER = "_rules"  # what compiles a data file's patterns, which server_patterns reads too
PATTERNS = server_patterns()
# The message a program raised to freeze the server: 37 digits took minutes.
FREEZE = ("one of the variables needed for gradient computation has been modified by an "
          "inplace operation: [x [" + "1" * 37 + "X")


def test_every_pattern_the_server_matches_is_a_constant_the_attack_sees() -> None:
    made_here = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if ".".join(relative.with_suffix("").parts).startswith(INSIDE) or "programs" in (
                relative.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        loaders = [node for node in ast.walk(tree)
                   if isinstance(node, ast.FunctionDef) and node.name == LOADER]
        functions = [node for node in ast.walk(tree) if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and node not in loaders]
        made_here += [f"{relative}:{call.lineno}" for function in functions
                      for call in ast.walk(function) if _matches(call)]
    assert made_here == []
    assert len(PATTERNS) > 50 and "explorer.views.scene.INPLACE" in PATTERNS


def _matches(node: ast.AST) -> bool:
    """Whether `node` compiles or matches a pattern with a function of `re`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
            and node.func.attr in MATCHING)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_no_text_makes_a_pattern_backtrack(name: str) -> None:
    slowest = worst(PATTERNS[name])
    assert slowest.seconds < BOUND_S, f"{name}: {slowest}"


def test_the_attack_finds_what_froze_the_server() -> None:
    """The attack is worth its name: the pattern that froze the server fails it at once."""
    frozen = re.compile(r"modified by an inplace operation: \[\S+ \[((?:\d{1,18}(?:, )?){0,64})"
                        r"\]\]")
    slowest = worst(frozen, bound=0.01)
    assert slowest.seconds > 0.01 and slowest.length < 200


def test_the_attack_finds_a_pattern_whose_start_repeats() -> None:
    """A message of `shape '[` over and over made this pattern read to the end from each."""
    quadratic = re.compile(r"shape '(?P<shape>\[.*?\])' is invalid for input of size (\d+)")
    slowest = worst(quadratic, bound=0.01)
    assert slowest.seconds > 0.01


def test_the_message_that_froze_the_server_is_read_at_once() -> None:
    for message in (FREEZE, FREEZE.replace("X", ", 2" * 5000)[:MAX_MESSAGE]):
        trace = Trace(ok=False, error=error_info("RuntimeError", message, 1))
        start = time.perf_counter()
        assert scene(trace, "x = 1\n") is None
        assert time.perf_counter() - start < BOUND_S


def test_pytorchs_own_message_is_still_read() -> None:
    message = ("one of the variables needed for gradient computation has been modified by an "
               "inplace operation: [torch.FloatTensor [2, 3]], which is output 0 of "
               "SigmoidBackward0, is at version 1; expected version 0 instead.")
    found = INPLACE.search(message)
    assert found is not None and found.groups() == ("2, 3", "SigmoidBackward0", "1", "0")


def test_an_attack_is_as_long_as_the_longest_text_read() -> None:
    longest = max(len(text) for text in attacks(re.compile(r"(a|b)+c"), MAX_MESSAGE))
    assert MAX_MESSAGE <= longest <= MAX_MESSAGE + 40
