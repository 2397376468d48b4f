"""The training page's starting programs and its charts. Pure.

The learner edits the whole program; any run that calls backward more than once is a training
loop, one point per call (Trace.losses)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

import plotly.graph_objects as go

from explorer.content.examples import by_key, start
from explorer.trace.schema import Graph, Summary

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


def program(s: Settings) -> str:
    """The seed's training program (note 004) with `s` in place of its own numbers."""
    code = by_key(SEED).code
    for pattern, value in ((r"N, D_in, H, D_out = .*", f"N, D_in, H, D_out = {s.n}, {s.d_in}, "
                                                       f"{s.h}, {s.d_out}"),
                           (r"learning_rate = .*", f"learning_rate = {s.learning_rate!r}"),
                           (r"for t in range\(\d+\):", f"for t in range({s.iterations}):")):
        code, count = re.subn(pattern, value, code, count=1)
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


def loss_figure(losses: list[Summary], title: str = "loss", axis: str = "iteration",
                height: int = 300) -> go.Figure:
    """Loss per iteration, log scale (it falls over orders of magnitude)."""
    points = [(s.call, s.value) for s in losses if s.value and s.value > 0]
    fig = go.Figure(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points],
                               mode="lines", name="loss", line={"color": "#d9480f"}))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    return fig


def grad_norm_figure(losses: list[Summary], title: str = "gradient norms",
                     axis: str = "iteration", height: int = 300,
                     names: Mapping[str, str] | None = None) -> go.Figure:
    """‖.grad‖ of every leaf per iteration (w1, w2 in the seed), log scale; `names`: what to
    call a leaf known by its id only (`leaf_names`)."""
    fig = go.Figure()
    for leaf in dict.fromkeys(n for s in losses for n in s.grad_norms):
        points = [(s.call, s.grad_norms[leaf]) for s in losses
                  if s.grad_norms.get(leaf, 0) > 0]
        name = (names or {}).get(leaf, leaf)
        fig.add_trace(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points],
                                 mode="lines", name=f"‖{escape(name)}.grad‖"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    return fig
