"""What every page shares: page set-up, the sidebar (pages, language, device), the pool."""

from __future__ import annotations

import streamlit as st

from explorer.content.i18n import LANGUAGES, text
from explorer.content.markdown import code_span, plain
from explorer.pool.worker import WorkerPool, default_pool
from explorer.safety import box
from explorer.safety.sandbox import MAX_CODE_CHARS
from explorer.serve.hosting import settings
from explorer.serve.nodelay import send_at_once
from explorer.ui.link import keep, open_link, share_button, take
from explorer.views.devices import cuda_devices as ask_cuda_devices

SETTINGS = settings()  # local, or a public host's (EXPLORER_HOSTED, see explorer.serve.hosting)
LIMITS = SETTINGS.limits
RUNS = SETTINGS.rate_limiter()  # every session's runs
PAGES = (("streamlit_app.py", "home", ":material/home:"),
         ("pages/1_Playground.py", "playground", ":material/play_arrow:"),
         ("pages/2_Graph.py", "graph_page", ":material/account_tree:"),
         ("pages/5_Backward.py", "backward_page", ":material/replay:"),
         ("pages/6_Custom_Function.py", "custom_page", ":material/function:"),
         ("pages/7_Training.py", "training_page", ":material/trending_down:"),
         ("pages/3_NumPy.py", "numpy_page", ":material/swap_horiz:"),
         ("pages/4_Devices.py", "devices_page", ":material/memory:"))
CSS = """<style>
[data-testid="stTable"] { overflow-x: auto; }
[data-testid="stTable"] th, [data-testid="stTable"] td {
  font-size: .8rem !important; padding: .25rem .45rem !important; }
/* A cell breaks its text only between words: a number, or a name, is never cut. */
[data-testid="stTable"] p, [data-testid="stTable"] code {
  white-space: normal !important; word-break: keep-all !important;
  overflow-wrap: normal !important; font-size: .8rem !important; }
/* Scrolled sideways (a phone), a row still says whose values it holds. */
[data-testid="stTable"] tr > :first-child { position: sticky; left: 0; z-index: 1;
  background: var(--st-background-color, #fff); }
.st-key-editor-library { display: none; } /* draws nothing (explorer/ui/code_editor.py) */
/* One screen at 1400×1000: the title, then the editor beside the picture and its controls. */
[data-testid="stMainBlockContainer"] { padding-top: 3rem; padding-left: 1.5rem;
  padding-right: 1.5rem; }
[data-testid="stMain"] h1 { font-size: 2rem; padding: 0 0 .25rem; }
/* A page's step controls stay one row, a phone's too (explorer.ui.steps.step_controls). */
[class*="st-key-steps-"] [data-testid="stHorizontalBlock"] { flex-wrap: nowrap !important;
  gap: .35rem !important; }
[class*="st-key-steps-"] [data-testid="stColumn"] { min-width: 0 !important;
  width: auto !important; flex: 1 1 0 !important; }
[class*="st-key-steps-"] button { padding-left: .2rem; padding-right: .2rem; }
[class*="st-key-steps-"] button p { white-space: nowrap; }
/* Under them, one row too: step inside loops, a round back and on (steps._loop_row). */
[class*="st-key-loops-"] [data-testid="stHorizontalBlock"] { flex-wrap: nowrap !important;
  gap: .35rem !important; }
[class*="st-key-loops-"] [data-testid="stColumn"] { min-width: 0 !important;
  width: auto !important; flex: 1 1 0 !important; }
[class*="st-key-loops-"] [data-testid="stColumn"]:first-child { flex: 2 1 0 !important; }
[class*="st-key-loops-"] button { padding-left: .2rem; padding-right: .2rem; }
[class*="st-key-loops-"] button p { white-space: nowrap; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding-top: 2.5rem; padding-left: 1rem;
    padding-right: 1rem; }
  [class*="st-key-steps-"] button { padding-left: .1rem; padding-right: .1rem; }
  [class*="st-key-steps-"] button p { font-size: .75rem; }
  [class*="st-key-steps-"] button kbd { display: none; } /* the key's hint: no room */
  [class*="st-key-loops-"] button { padding-left: .1rem; padding-right: .1rem; }
  [class*="st-key-loops-"] p { font-size: .75rem; }
  [class*="st-key-loops-"] button kbd { display: none; }
}
</style>"""


def pool() -> WorkerPool:
    """One pool per server, shared by every session (explorer.pool.worker.default_pool). A
    public host refuses to run programs where the operating-system walls cannot be raised
    (SECURITY.md)."""
    return default_pool()


@st.cache_data(show_spinner=False)
def cuda_devices() -> list[str]:
    """CUDA devices of this machine, asked of a worker (the server never imports PyTorch)."""
    return ask_cuda_devices(pool().run)


def page(title_key: str) -> None:
    """Set up a page: its title, the shared styling and the sidebar."""
    send_at_once()  # the server's first page turns Nagle's algorithm off on its sockets
    st.set_page_config(page_title=f"{text(title_key, 'en')} · Autograd Explorer",
                       page_icon="∇", layout="wide")
    st.markdown(CSS, unsafe_allow_html=True)
    open_link(title_key)
    _sidebar()
    _walls()


def _walls() -> None:
    """A banner on every page where programs cannot be walled off: refused, or (the owner
    having accepted it) run without the missing walls."""
    missing = pool().missing
    if missing:
        why = plain("; ".join(missing)) if SETTINGS.details else "—"
        refused = pool().refuses
        (st.error if refused else st.warning)(
            text("walls_refused" if refused else "walls_waived", lang(), why=why),
            icon=":material/gpp_bad:")
        if SETTINGS.details and box.stopped_by_apparmor():  # what the machine's owner runs
            st.info(box.apparmor_advice(lang()), icon=":material/terminal:")


def _sidebar() -> None:
    """Page links, then the language and device choices, kept for every page to honour."""
    if "lang" not in st.session_state:
        st.session_state.lang = take("lang") or "en"
    for path, key, icon in PAGES:
        st.sidebar.page_link(path, label=text(key, lang()), icon=icon)
    st.sidebar.divider()
    _choice("lang", list(LANGUAGES), text("language", lang()), horizontal=True,
            format_func=lambda code: text("language_name", code))
    keep("lang", lang())
    devices = ["cpu", *cuda_devices()]
    wanted = take("device")
    if wanted in devices:
        st.session_state.device = wanted
    elif wanted is not None:
        st.warning(text("link_device", lang(), device=code_span(wanted)), icon=":material/memory:")
    if st.session_state.get("device") not in devices:
        st.session_state.device = "cpu"
    _choice("device", devices, text("device", lang()))
    keep("device", device())
    if len(devices) == 1:
        st.sidebar.caption(text("no_gpu", lang()))
    with st.sidebar:
        share_button(lang())
    if SETTINGS.hosted:  # a public demo says what it allows
        st.sidebar.caption(text("hosted_note", lang(), time=LIMITS.time_s,
                                memory=LIMITS.memory_mb, burst=SETTINGS.burst,
                                interval=SETTINGS.interval_s))


def _choice(key: str, options: list[str], label: str, **kwargs: object) -> None:
    """A sidebar radio/select whose value outlives page switches (widget state does not)."""
    st.session_state[f"{key}.widget"] = st.session_state[key]
    widget = st.sidebar.radio if kwargs.get("horizontal") else st.sidebar.selectbox
    widget(label, options, key=f"{key}.widget", **kwargs,
           on_change=lambda: st.session_state.update({key: st.session_state[f"{key}.widget"]}))


def refusal(code: object, language: str) -> str | None:
    """Why the server keeps no `code` sent by a visitor (None: it may): not text, or longer
    than a program may be (explorer.safety.sandbox.MAX_CODE_CHARS). Costs no more than `len`."""
    if not isinstance(code, str):
        return text("code_not_text", language)
    if len(code) > MAX_CODE_CHARS:
        return text("code_too_long", language, count=len(code), cap=MAX_CODE_CHARS)
    return None


def may_run(code: str, language: str) -> bool:
    """The gate before any run of a program and any parse of a visitor's text in the server:
    refuse `code` over the cap, then spend one of this session's runs
    (explorer.serve.ratelimit). Says on the page why not."""
    reason = refusal(code, language)
    if reason:
        st.error(reason, icon=":material/block:")
        return False
    wait = RUNS.take(RUNS.key(st.session_state))
    if wait:
        st.warning(RUNS.message(wait, language), icon=":material/hourglass_top:")
    return not wait


def lang() -> str:
    return st.session_state.get("lang", "en")


def device() -> str:
    return st.session_state.get("device", "cpu")
