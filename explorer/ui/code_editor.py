"""The code editor: CodeMirror 6 as a Streamlit component (source in frontend/editor, bundled
into assets/editor.js so the app needs no network and no Node.js at run time).

The bundle is mounted as an element of its own that draws nothing: its message is the same at
every rerun, so Streamlit sends a tab its 370 KB once and then only its hash (its message
cache). The editor's own element, whose data change, carries a few lines that wait for it.

Python hands it the program, the lines of the step being shown and the error line with its
message; it hands back the program (when the editor loses focus) and a run request
(Ctrl/Cmd+Enter). The program is only ever text in the editor, never HTML. What comes back is
checked where it arrives: anything else, or more than a program may be, is refused and dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.ui.common import lang, refusal

SENT = ("code", "run")  # what the editor sends: the program, and the program to run now
ASSETS = Path(__file__).parent / "assets"
_LIBRARY = st.components.v2.component(
    "autograd_explorer.editor_library", js=(ASSETS / "editor.js").read_text(encoding="utf-8"))
_EDITOR = st.components.v2.component(
    "autograd_explorer.editor", html='<div class="editor"></div>',
    css=(ASSETS / "editor.css").read_text(encoding="utf-8"),
    js=(ASSETS / "editor-mount.js").read_text(encoding="utf-8"))


def code_editor(key: str, code: str, label: str, *, step: tuple[int, int] | None,
                error: dict[str, Any] | None, on_edit: Callable[[str], None],
                on_run: Callable[[str], None], calling: tuple[int, ...] = ()) -> None:
    """Show `code` with `step` (first and last line), the `calling` lines (the calls that led
    to it, marked lighter) and `error` ({line, message}) marked;
    `on_edit` gets the edited program, `on_run` the program to run now: each only if all the
    browser sent is what it may send (`_checked`)."""
    def arrived(name: str, then: Callable[[str], None]) -> Callable[[], None]:
        def callback() -> None:
            value = _checked(key).get(name)
            if isinstance(value, str):
                then(value)
        return callback

    _checked(key)  # also what came without a callback: a name the editor never sends
    refused = st.session_state.pop(f"{key}.refused", None)
    if refused:
        st.error(refused, icon=":material/block:")
    _LIBRARY(key="editor.library")  # the same message on every page
    _EDITOR(key=key, data={"code": code, "label": label, "step": step, "error": error,
                           "calling": list(calling)},
            on_code_change=arrived("code", on_edit), on_run_change=arrived("run", on_run))


def _checked(key: str) -> dict[str, Any]:
    """What the editor `key` sent, if it is what it may send: `code` and `run`, each a program
    the server may keep (explorer.ui.common.refusal). If not: nothing ({}), the component's
    state is dropped (the server keeps nothing of it) and the page will say why."""
    sent = dict(st.session_state.get(key) or {})
    reasons = (refusal(value, lang()) if name in SENT else text("code_not_text", lang())
               for name, value in sent.items() if value is not None)
    reason = next(filter(None, reasons), None)
    if reason is None:
        return sent
    del st.session_state[key]
    st.session_state[f"{key}.refused"] = reason
    return {}
