"""The training page's starting programs and what names its lines. Pure.

The learner edits the whole program; any run that calls backward more than once is a training
loop, one point per call (Trace.losses); its charts are explorer.views.curves."""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.content.examples import by_key, start
from explorer.content.i18n import text
from explorer.trace.schema import Graph, Summary
from explorer.views.present import cut

SEED = "my-relu-train"  # the notes' two-layer network, trained by hand with MyReLU
STARTS = (SEED, "module")  # the programs a learner starts from (module: nn.Sequential, Adam)


def starting(key: str, lang: str) -> str:
    """Starting program `key` as a reader of `lang` reads it."""
    return by_key(SEED).code_in(lang) if key == SEED else start(key, lang)


@dataclass(frozen=True)
class Settings:
    """The seed's hyper-parameters, its values as defaults (links made before the program
    was editable carry them)."""

    n: int = 64
    d_in: int = 1000
    h: int = 100
    d_out: int = 10
    learning_rate: float = 1e-6
    iterations: int = 500


# The seed's lines that hold its settings.
SETTING_LINES = (re.compile(r"N, D_in, H, D_out = .*"), re.compile(r"learning_rate = .*"),
                 re.compile(r"for t in range\(\d+\):"))


def program(s: Settings) -> str:
    """The seed's training program (note 004) with `s` in place of its own numbers."""
    code = by_key(SEED).code
    for pattern, value in zip(SETTING_LINES, (
            f"N, D_in, H, D_out = {s.n}, {s.d_in}, {s.h}, {s.d_out}",
            f"learning_rate = {s.learning_rate!r}", f"for t in range({s.iterations}):"),
            strict=True):
        code, count = pattern.subn(value, code, count=1)
        assert count == 1, pattern  # the seed's program has each line once
    return code


def calls(losses: list[Summary]) -> int:
    """How many times the run called backward (a thinned record skips some)."""
    return losses[-1].call if losses else 0


def leaf_names(graphs: list[Graph]) -> dict[str, str]:
    """The name a recorded graph gives each unnamed leaf, by id: a module's parameter is
    `model.0.weight` (the first line of its label), not a bare id."""
    return {node.id: node.label.split("\n")[0] for graph in graphs
            for node in graph.nodes if node.kind == "leaf" and not node.names
            and node.label.split("\n")[0].strip()}


def loss_lines(losses: list[Summary], code: str, lang: str) -> dict[int, str]:
    """What to call the loss of each program line that calls backward, where there are
    several: its code and line number (`d_loss.backward() · line 20`)."""
    lines = code.splitlines()
    made = {s.line for s in losses if s.line is not None and 0 < s.line <= len(lines)}
    return {n: text("loss_line", lang, code=cut(lines[n - 1].strip(), 40), line=n)
            for n in sorted(made)}
