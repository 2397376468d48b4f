"""The seed's two-layer network as a program with chosen settings, and its charts. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Any

import plotly.graph_objects as go

from explorer.content.examples import by_key


@dataclass(frozen=True)
class Settings:
    """The seed's hyper-parameters, its values as defaults."""

    n: int = 64
    d_in: int = 1000
    h: int = 100
    d_out: int = 10
    learning_rate: float = 1e-6
    iterations: int = 500


def program(s: Settings) -> str:
    """The seed's training program (note 004) with `s` in place of its own numbers."""
    code = by_key("my-relu-train").code
    for pattern, value in ((r"N, D_in, H, D_out = .*", f"N, D_in, H, D_out = {s.n}, {s.d_in}, "
                                                       f"{s.h}, {s.d_out}"),
                           (r"learning_rate = .*", f"learning_rate = {s.learning_rate!r}"),
                           (r"for t in range\(\d+\):", f"for t in range({s.iterations}):")):
        code, count = re.subn(pattern, value, code, count=1)
        assert count == 1, pattern  # the seed's program has each line once
    return code


def loss_figure(losses: list[dict[str, Any]], title: str = "loss", axis: str = "iteration",
                height: int = 300) -> go.Figure:
    """Loss per iteration, log scale (it falls over orders of magnitude)."""
    points = [(s["call"], s["value"]) for s in losses if s["value"] and s["value"] > 0]
    fig = go.Figure(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points],
                               mode="lines", name="loss", line={"color": "#d9480f"}))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    return fig


def grad_norm_figure(losses: list[dict[str, Any]], title: str = "gradient norms",
                     axis: str = "iteration", height: int = 300) -> go.Figure:
    """‖.grad‖ of every leaf per iteration (w1, w2 in the seed), log scale."""
    fig = go.Figure()
    for name in dict.fromkeys(n for s in losses for n in s["grad_norms"]):
        points = [(s["call"], s["grad_norms"][name]) for s in losses
                  if s["grad_norms"].get(name, 0) > 0]
        fig.add_trace(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points],
                                 mode="lines", name=f"‖{escape(name)}.grad‖"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    return fig
