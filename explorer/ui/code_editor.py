"""The code editor: CodeMirror 6 as a Streamlit component (source in frontend/editor, bundled
into assets/editor.js so the app needs no network and no Node.js at run time).

The bundle is mounted as an element of its own that draws nothing: its message is the same at
every rerun, so Streamlit sends a tab its 370 KB once and then only its hash (its message
cache). The editor's own element, whose data change, carries a few lines that wait for it.

Python hands it the program, the lines of the step being shown and the error line with its
message; it hands back the program (when the editor loses focus) and a run request
(Ctrl/Cmd+Enter). The program is only ever text in the editor, never HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

ASSETS = Path(__file__).parent / "assets"
_LIBRARY = st.components.v2.component(
    "autograd_explorer.editor_library", js=(ASSETS / "editor.js").read_text(encoding="utf-8"))
_EDITOR = st.components.v2.component(
    "autograd_explorer.editor", html='<div class="editor"></div>',
    css=(ASSETS / "editor.css").read_text(encoding="utf-8"),
    js=(ASSETS / "editor-mount.js").read_text(encoding="utf-8"))


def code_editor(key: str, code: str, label: str, *, step: tuple[int, int] | None,
                error: dict[str, Any] | None, on_edit: Callable[[str], None],
                on_run: Callable[[str], None]) -> None:
    """Show `code` with `step` (first and last line) and `error` ({line, message}) marked;
    `on_edit` gets the edited program, `on_run` the program to run now."""
    def value(name: str) -> str:
        return str(getattr(st.session_state[key], name))

    _LIBRARY(key="editor.library")  # the same message on every page
    _EDITOR(key=key, data={"code": code, "label": label, "step": step, "error": error},
            on_code_change=lambda: on_edit(value("code")),
            on_run_change=lambda: on_run(value("run")))
