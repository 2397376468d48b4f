"""The training page's parts: the program in an editor, its loss drawn live as it trains, and
any iteration's backward pass."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.trace.schema import Summary
from explorer.ui.backward import backward_pass
from explorer.ui.code_editor import code_editor
from explorer.ui.common import SETTINGS, may_run, pool
from explorer.ui.link import keep, restore, take
from explorer.ui.steps import error_panel
from explorer.views.curves import Compared, Curves, compared, curves, grad_norm_figure, loss_figure
from explorer.views.training import (
    SEED,
    STARTS,
    Settings,
    calls,
    leaf_names,
    loss_lines,
    program,
    starting,
)

LIMITS = SETTINGS.training_limits  # thousands of iterations of the seed's network
CODE, WANTED, RUN, PASS = "training.code", "training.wanted", "training.run", "training.pass"
# (the Trace, weakly: an old run is not kept alive; the language; its Curves; whether its loss
# fell): made once per run and language
CURVES = "training.curves"
# The settings a link made before the program was editable carries: param -> Settings field.
SETTINGS_PARAMS = {"n": "n", "d_in": "d_in", "h": "h", "d_out": "d_out", "lr": "learning_rate",
                   "iters": "iterations"}


def program_editor(lang: str) -> Callable[[], None]:
    """The program to train: a starting program, the editor and the Train button (the editor
    runs it on Ctrl/Cmd+Enter too). Returns what draws the editor, called once the run is
    shown so that it marks the run's error."""
    linked = _linked()
    if linked is not None:
        st.session_state[CODE] = st.session_state["training.linked"] = linked
    st.session_state.setdefault(CODE, starting(SEED, lang))

    def start() -> None:
        st.session_state[CODE] = starting(st.session_state["training.start"], lang)

    st.selectbox(text("start_from", lang), STARTS, index=None, key="training.start",
                 format_func=lambda key: _start_title(key, lang), on_change=start,
                 placeholder="—")
    look = st.session_state.get("training.look")  # a lesson's (explorer.ui.lessons._open)
    if look and look["code"] == st.session_state[CODE]:
        st.caption(look[lang])
    if st.session_state.get("training.linked") == st.session_state[CODE]:
        st.caption(text("link_opened", lang))
    st.caption(text("sandbox_note", lang, time=LIMITS.time_s, memory=LIMITS.memory_mb))
    slot = st.container()
    clicked = st.button(text("train", lang), type="primary", key="training.train")
    asked = (clicked, take("trained"), st.session_state.pop("training.autorun", False))
    if any(asked):  # each read, so that none is left for the next run
        st.session_state[WANTED] = st.session_state[CODE]
    keep("code", st.session_state[CODE])

    def train_now(code: str) -> None:
        st.session_state.update({CODE: code, "training.autorun": True})

    def draw() -> None:
        with slot:
            code_editor("training.editor", st.session_state[CODE], text("code", lang),
                        step=None, error=_error_mark(), on_run=train_now,
                        on_edit=lambda code: st.session_state.update({CODE: code}))
    return draw


def _linked() -> str | None:
    """The program an opened link shows: its code, or the seed's with a link's settings."""
    code = take("code")
    settings = {field: value for param, field in SETTINGS_PARAMS.items()
                if (value := take(param)) is not None}
    return program(Settings(**settings)) if code is None and settings else code


def _start_title(key: str, lang: str) -> str:
    return by_key(key).title[lang] if key == SEED else text(f"start_{key}", lang)


def _error_mark() -> dict[str, Any] | None:
    """The last run's error line and message, while the editor shows the program that ran."""
    ran, trace = st.session_state.get(RUN, (None, None))
    if trace is None or ran != st.session_state[CODE] or not (trace.error and trace.error.line):
        return None
    return {"line": trace.error.line,
            "message": f"{trace.error.type}: {trace.error.message}"[:300]}


def train(lang: str) -> tuple[str, Trace] | None:
    """Train when asked, drawing the loss as it falls; then the curves of the last run. Its
    program and Trace if it was a training loop (backward called more than once)."""
    wanted = st.session_state.pop(WANTED, None)
    if wanted is not None and may_run(wanted, lang):
        st.session_state[RUN] = (wanted, _run_live(wanted, lang))
    done = st.session_state.get(RUN)
    if done is None:
        st.info(text("train_press", lang))
        return None
    code, trace = done
    if code != st.session_state[CODE]:
        st.caption(text("program_changed", lang))
    else:
        keep("trained", True)
    error_panel(trace, code, lang)
    count = calls(trace.losses)
    if count < 2 and trace.ok:
        st.info(text("training_no_loop", lang, count=count), icon=":material/loop:")
    if count >= 2:
        _charts(*_curves(trace, code, lang), count, lang)
    with st.expander(text("output", lang), expanded=True):  # what the program printed
        st.code(trace.stdout or "—", language=None)
    return (code, trace) if count >= 2 else None


def _curves(trace: Trace, code: str, lang: str) -> tuple[Curves, Compared | None]:
    """The run's Curves and whether its loss fell, made once (a language) and kept with it:
    after a loop of 108,000 backward calls over 1,000 leaves, walking and drawing every call
    took 11 s of the server's CPU on each rerun; kept and reduced, a rerun takes 0.03 s
    (explorer.bench.rerun)."""
    kept = st.session_state.get(CURVES)
    if kept is None or kept[0]() is not trace or kept[1] != lang:
        kept = st.session_state[CURVES] = (
            weakref.ref(trace), lang,
            curves(trace.losses, leaf_names(trace.graphs),
                   lines=loss_lines(trace.losses, code, lang)),
            compared(trace.losses, trace.backward))
    return kept[2], kept[3]


def _charts(drawn: Curves, verdict: Compared | None, count: int, lang: str) -> None:
    """Whether the loss fell, its curve and the gradient norms', and what was left out."""
    if verdict is not None:
        (st.success if verdict.fell else st.warning)(verdict.said(lang))
    elif drawn.loss_lines > 1:
        st.info(text("losses_of_lines" if len(drawn.losses) > 1 else "losses_drawn_as_one", lang,
                     count=drawn.loss_lines))
    axis = text("backward_call", lang)
    st.plotly_chart(loss_figure(drawn, text("loss", lang), axis), key="training.loss")
    st.plotly_chart(grad_norm_figure(drawn, text("grad_norms", lang), axis,
                                     others=text("other_leaves", lang, count=drawn.hidden)),
                    key="training.norms")
    st.caption(text("grad_norms_held", lang))
    if drawn.reduced:
        st.caption(text("curves_reduced", lang, calls=count, points=drawn.drawn))
    if drawn.undrawn:
        st.warning(text("curves_undrawn", lang, count=drawn.undrawn), icon=":material/warning:")


def _run_live(code: str, lang: str) -> Trace:
    said = st.empty()
    said.caption(text("training_started", lang))
    chart = st.empty()
    seen: list[Summary] = []
    drawn = [0.0]

    def update(summary: Summary) -> None:
        seen.append(summary)
        loss = "—" if summary.value is None else f"{summary.value:.4g}"
        said.caption(text("training_live", lang, i=summary.call, loss=loss))
        if time.monotonic() - drawn[0] > 0.25:  # redraw four times a second at most
            drawn[0] = time.monotonic()
            live = curves(seen, lines=loss_lines(seen, code, lang))
            chart.plotly_chart(loss_figure(live, text("loss", lang),
                                           text("backward_call", lang), height=260),
                               key=f"training.live.{len(seen)}")

    trace = pool().run(code, limits=LIMITS, on_progress=update)
    said.empty()
    chart.empty()
    return trace


def iteration_pass(code: str, trace: Trace, lang: str) -> None:
    """Open the backward pass of any iteration: the same seeded program, run again with that
    call recorded in full."""
    st.subheader(text("iteration_title", lang))
    count = calls(trace.losses)
    restore("k", "training.k")
    if not 1 <= st.session_state.get("training.k", 0) <= count:
        st.session_state["training.k"] = count
    chosen = int(st.number_input(text("backward_call", lang), 1, count, key="training.k"))
    keep("k", chosen)
    clicked = st.button(text("open_iteration", lang, k=chosen), key="training.open")
    if (clicked or take("opened")) and may_run(code, lang):
        with st.spinner(text("rerunning", lang, k=chosen)):
            st.session_state[PASS] = ((code, chosen),
                                      pool().run(code, limits=LIMITS, keep=(chosen,)))
    opened = st.session_state.get(PASS)
    if opened and opened[0] == (code, chosen):
        keep("opened", True)
        backward_pass("training", opened[1], lang, chosen=chosen)
