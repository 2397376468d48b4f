"""The training page's parts: settings, a live loss curve while it trains, any iteration."""

from __future__ import annotations

import time
from dataclasses import astuple
from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.runner.trace import Trace
from explorer.ui.backward import backward_pass
from explorer.ui.common import SETTINGS, may_run, pool
from explorer.ui.link import keep, restore, take
from explorer.ui.steps import error_panel
from explorer.views.training import Settings, grad_norm_figure, loss_figure, program

LIMITS = SETTINGS.training_limits  # thousands of iterations of the seed's network
MAX_ITERATIONS = SETTINGS.max_iterations
PARAMS = {"n": "n", "d_in": "d_in", "h": "h", "d_out": "d_out", "learning_rate": "lr",
          "iterations": "iters"}  # each setting's name in the page's link


def settings_form(lang: str) -> Settings:
    """The seed's hyper-parameters as widgets (its values as defaults)."""
    seed = Settings()
    for field, param in PARAMS.items():
        restore(param, f"training.{field}",
                range(1, MAX_ITERATIONS + 1) if field == "iterations" else None)
        st.session_state.setdefault(f"training.{field}", getattr(seed, field))
    linked = take("trained")
    with st.form("training.settings", border=True):
        a, b, c, d, e, f = st.columns(6)
        settings = Settings(
            n=a.number_input(text("batch", lang), 1, 512, key="training.n"),
            d_in=b.number_input("D_in", 1, 4096, key="training.d_in"),
            h=c.number_input("H", 1, 1024, key="training.h"),
            d_out=d.number_input("D_out", 1, 256, key="training.d_out"),
            learning_rate=e.number_input(text("learning_rate", lang), 0.0, 1.0,
                                         format="%.1e", step=1e-7, key="training.learning_rate"),
            iterations=f.number_input(text("iterations", lang), 1, MAX_ITERATIONS,
                                      key="training.iterations"))
        if st.form_submit_button(text("train", lang), type="primary") or linked:
            st.session_state["training.wanted"] = settings
    for field, param in PARAMS.items():
        keep(param, getattr(settings, field))
    return settings


def train(settings: Settings, lang: str) -> Trace | None:
    """Train when asked, drawing the loss as it falls; then the curves of the last run."""
    if st.session_state.pop("training.wanted", None) == settings and may_run(
            program(settings), lang):
        st.session_state["training.run"] = (settings, _run_live(settings, lang))
    done = st.session_state.get("training.run")
    if done is None:
        st.info(text("train_first", lang))
        return None
    ran_with, trace = done
    if ran_with != settings:
        st.caption(text("settings_changed", lang))
    else:
        keep("trained", True)
    error_panel(trace, program(ran_with), lang)
    losses = [s for s in trace.losses if s["value"] is not None]
    if losses:
        first, last = losses[0]["value"], losses[-1]["value"]
        (st.success if last < first else st.warning)(
            text("loss_fell" if last < first else "loss_rose", lang, first=first, last=last))
    left, right = st.columns(2)
    axis = text("iteration", lang)
    left.plotly_chart(loss_figure(trace.losses, text("loss", lang), axis), key="training.loss")
    right.plotly_chart(grad_norm_figure(trace.losses, text("grad_norms", lang), axis),
                       key="training.norms")
    with st.expander(text("output", lang)):
        st.code(trace.stdout or "—", language=None)
    with st.expander(text("training_program", lang)):
        st.code(program(ran_with), language="python")
    return trace


def _run_live(settings: Settings, lang: str) -> Trace:
    bar = st.progress(0.0, text=text("training_started", lang))
    chart = st.empty()
    seen: list[dict[str, Any]] = []
    drawn = [0.0]

    def update(summary: dict[str, Any]) -> None:
        seen.append(summary)
        bar.progress(min(1.0, summary["call"] / settings.iterations),
                     text=text("training_progress", lang, i=summary["call"],
                               n=settings.iterations, loss=summary["value"] or 0.0))
        if time.monotonic() - drawn[0] > 0.25:  # redraw four times a second at most
            drawn[0] = time.monotonic()
            chart.plotly_chart(loss_figure(seen, text("loss", lang), text("iteration", lang),
                                           height=260), key=f"training.live.{len(seen)}")

    trace = pool().run(program(settings), limits=LIMITS, on_progress=update)
    bar.empty()
    chart.empty()
    return trace


def iteration_pass(settings: Settings, trace: Trace, lang: str) -> None:
    """Open the backward pass of any iteration: the same seeded program, run again with that
    call recorded in full."""
    st.subheader(text("iteration_title", lang))
    count = len(trace.losses)
    if not count:
        return
    restore("k", "training.k")
    if not 1 <= st.session_state.get("training.k", 0) <= count:
        st.session_state["training.k"] = count
    chosen = st.number_input(text("iteration", lang), 1, count, key="training.k")
    keep("k", chosen)
    key = ("training.pass", astuple(settings), chosen)
    clicked = st.button(text("open_iteration", lang, k=chosen), key="training.open")
    code = program(settings)
    if (clicked or take("opened")) and may_run(code, lang):
        with st.spinner(text("rerunning", lang, k=chosen)):
            st.session_state["training.pass"] = (key, pool().run(code, limits=LIMITS,
                                                                 keep=(int(chosen),)))
    opened = st.session_state.get("training.pass")
    if opened and opened[0] == key:
        keep("opened", True)
        backward_pass("training", opened[1], lang, chosen=int(chosen))
