"""The top-level statement a run's error stopped part way. A step is one whole top-level
statement, so the state at the error is the state from before that statement: what it ran
before the error (a loop's earlier rounds, the `.grad` they wrote) did happen but is in no
step, and the pages say so. Pure: read from the Trace and the program's code."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.trace import Trace

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)  # bodies that run when called


@dataclass(frozen=True)
class Unfinished:
    """The top-level statement the error stopped: its first line, and whether it is a loop."""

    line: int
    loop: bool

    def said(self, lang: str) -> str:
        """What the state at the error leaves out, in `lang`."""
        return text("unfinished_loop" if self.loop else "unfinished_block", lang, line=self.line)


def unfinished(trace: Trace, code: str, most_steps: int) -> Unfinished | None:
    """The top-level statement of `code` the error of `trace` stopped after part of it ran: a
    block (a loop, `with`, `if`, `try`...) or a statement whose error came in a function it
    called; None for an error on a plain top-level line, or where the steps do not say which
    statement was running (`_running`)."""
    error, body = trace.error, _body(code)
    running = _running(trace, body, most_steps)
    if error is None or not error.line or running is None:
        return None
    inside, called = _spans(running, error.line), _in_function(body, error.line)
    within_block = _block(running) and (inside or called)
    in_a_callee = called and not inside
    return Unfinished(running.lineno, isinstance(running, LOOPS)) if (
        within_block or in_a_callee) else None


def _running(trace: Trace, body: list[ast.stmt], most_steps: int) -> ast.stmt | None:
    """The top-level statement of `body` that was running when the run stopped: the one after
    its last step. None where no step is missing, a run started none, its steps may have
    stopped at the cap (a run records at most `most_steps`) or are not of `body`."""
    done = len(trace.steps)
    if not trace.started or done >= min(most_steps, len(body)):
        return None
    lines = [step.line for step in trace.steps]
    return body[done] if lines == [statement.lineno for statement in body[:done]] else None


def _body(code: str) -> list[ast.stmt]:
    """The top-level statements of `code` (none where it does not parse)."""
    try:
        return ast.parse(code).body
    except (SyntaxError, ValueError):
        return []


def _spans(node: ast.stmt | ast.expr, line: int) -> bool:
    """Whether `line` is one of `node`'s lines."""
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _block(statement: ast.stmt) -> bool:
    """Whether `statement` runs statements of its own (a loop, `with`, `if`, `try`, `match`,
    a class body), not when defined as a function is."""
    return not isinstance(statement, FUNCTIONS) and any(
        isinstance(node, ast.stmt) for node in ast.walk(statement) if node is not statement)


def _in_function(body: list[ast.stmt], line: int) -> bool:
    """Whether `line` is in a function or lambda of the program: an error there came from
    wherever it was called."""
    return any(isinstance(node, FUNCTIONS) and _spans(node, line)
               for statement in body for node in ast.walk(statement))
