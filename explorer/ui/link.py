"""Permalinks on the pages: the URL always says what the page shows, so copying it shares it.

A session opened with a link takes its values once, on the page it names: `take` hands them
to the parts that draw that state (before their widgets are drawn). On every run each part
`keep`s what it shows, and the page's last line, `publish`, writes it all into the URL at
once (each change of the URL is an entry in the browser's history, so once per run, not
once per value). The Share button copies the URL.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import streamlit as st

from explorer.content.i18n import LANGUAGES, text
from explorer.content.markdown import code_span
from explorer.views import permalink

OPENED = "link.opened"  # (page, the opened link's values not yet taken)
SHOWN = "link.shown"  # the parameters kept so far in this run
SHARE = """<div style="font-family:'Source Sans Pro',sans-serif;font-size:14px">
<button id="share" style="width:100%;padding:.45rem .75rem;border-radius:.5rem;cursor:pointer;
  border:1px solid rgba(49,51,63,.2);background:#fff;font:inherit;color:#31333f">
  <svg width="14" height="14" viewBox="0 0 24 24" fill="none" stroke="currentColor"
   stroke-width="2.2" style="vertical-align:-2px"><path d="M10 13a5 5 0 0 0 7.5.5l3-3a5 5 0 0
   0-7-7l-1.7 1.7"/><path d="M14 11a5 5 0 0 0-7.5-.5l-3 3a5 5 0 0 0 7 7l1.7-1.7"/></svg>
  @LABEL@</button>
<div id="said" style="margin-top:.3rem;color:#555;font-size:13px"></div></div>
<script>
const said = document.getElementById("said"), words = @WORDS@;
document.getElementById("share").addEventListener("click", async () => {
  const where = window.parent.location;
  if (where.search.length > @MAX@) { said.textContent = words.too_long; return; }
  try {
    await navigator.clipboard.writeText(where.href);
    said.textContent = words.copied;
  } catch (error) {  // no clipboard here (plain http): the link to copy by hand
    said.textContent = words.by_hand;
    const box = document.createElement("input");
    box.value = where.href; box.readOnly = true; box.style.width = "100%";
    said.appendChild(box); box.select();
  }
});
</script>"""


def open_link(page: str) -> None:
    """On a session's first run, read the link it was opened with (say what could not be
    used); on every run, start anew what the page will `keep`. (Later URLs are not read: a
    rerun may carry the URL of the run before, when the browser has not yet heard of the
    newer one, and reading it would undo a click.)"""
    if OPENED not in st.session_state:
        st.session_state[OPENED] = (page, _opened(st.query_params.to_dict()))
    elif st.session_state[OPENED][0] != page:  # a link's values are for its own page
        st.session_state[OPENED] = (page, {})
    st.session_state[SHOWN] = {}


def _opened(query: dict[str, str]) -> dict[str, Any]:
    lang = query.get("lang") if query.get("lang") in LANGUAGES else "en"
    try:
        values, dropped = permalink.read(query)
    except permalink.LinkError as error:
        st.error(text("link_refused", lang, reason=text(error.key, lang, **error.values)),
                 icon=":material/link_off:")
        return {"lang": lang}
    if dropped:
        st.warning(text("link_dropped", lang, names=", ".join(map(code_span, dropped))),
                   icon=":material/link:")
    return values


def take(param: str) -> Any:
    """The opened link's value of `param` for this page, once; None when there is none."""
    opened = st.session_state.get(OPENED)
    return opened[1].pop(param, None) if opened else None


def restore(param: str, key: str, allowed: Collection[Any] | None = None) -> bool:
    """Before the widget `key` is drawn: give it the opened link's value of `param`, if it
    is one of `allowed` (for a list, the members that are). Whether it did."""
    value = take(param)
    if value is None:
        return False
    if isinstance(value, list):
        value = [v for v in value if allowed is None or v in allowed]
    elif allowed is not None and value not in allowed:
        return False
    st.session_state[key] = value
    return True


def keep(param: str, value: Any) -> None:
    """Note that this page shows `value` as `param` (None: nothing to note)."""
    if value is not None:
        st.session_state[SHOWN][param] = permalink.show(param, value)


def publish() -> None:
    """The page's last line: put what it kept in the URL, if that changed."""
    shown = st.session_state.get(SHOWN, {})
    if shown != st.query_params.to_dict():
        st.query_params.from_dict(shown)


def share_button(lang: str) -> None:
    """A button that copies the page's URL, this page as it is now, to the clipboard."""
    words = {k: text(f"share_{k}", lang) for k in ("copied", "by_hand", "too_long")}
    st.iframe(SHARE.replace("@LABEL@", text("share", lang))
              .replace("@WORDS@", json.dumps(words, ensure_ascii=False))
              .replace("@MAX@", str(permalink.MAX_QUERY)), height=95)
