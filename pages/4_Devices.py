"""Devices: the CPU and GPUs as PyTorch sees them, seeded runs, and what moving data costs."""

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.ui.common import cuda_devices, device, lang, may_run, page, pool
from explorer.ui.link import publish
from explorer.views import devices

# Descriptions may wrap in this page's tables; calls and values stay on one line.
CSS = """<style>[class*="st-key-devices-"] [data-testid="stTable"] p {
  white-space: normal !important; }</style>"""

page("devices_page")
st.markdown(CSS, unsafe_allow_html=True)
st.title(text("devices_page", lang()))
st.caption(text("devices_intro", lang()))
where = devices.measuring_device(device(), cuda_devices())
probe_key, timing_key = f"devices.probe.{where}", f"devices.timing.{where}"
if probe_key not in st.session_state:
    if not may_run(devices.PROBE, lang()):
        st.stop()
    with st.spinner(text("devices_probing", lang())):
        st.session_state[probe_key] = devices.probe(pool().run, where)
first, second = st.session_state[probe_key]
if not first.ok:
    st.error(plain(f"{first.error['type']}: {first.error['message']}"), icon="🛑")
    st.stop()

reason = devices.no_gpu_reason(first, lang())
if reason:
    st.warning(text("devices_no_gpu", lang(), reason=reason), icon=":material/memory:")
else:
    st.caption(text("devices_gpu_note", lang(), device=where))
st.subheader(text("devices_machine", lang()))
st.container(key="devices-machine").table(devices.machine_rows(first, second, lang()))
with st.expander(text("devices_probe_code", lang())):
    st.code(devices.PROBE, language="python")
    st.caption(text("ran_in", lang(), device=plain(first.device), threads=first.threads,
                    ms=first.elapsed_ms))

left, right = st.columns(2, gap="large")
with left:
    st.subheader(text("devices_timing_title", lang()))
    st.markdown(text("devices_timing_text", lang()))
    again = st.session_state.pop("devices.measure", False)  # "measure again" was clicked
    if (again or timing_key not in st.session_state) and may_run(devices.TIMING, lang()):
        with st.spinner(text("devices_timing_running", lang())):
            st.session_state[timing_key] = devices.measure(pool().run, where, pool().limits)
    timing = st.session_state.get(timing_key)  # None: not measured yet, and the gate said why
    if timing is not None and timing.ok:
        st.plotly_chart(devices.timing_figure(devices.timing_series(timing), lang()),
                        key="devices.chart")
    elif timing is not None:
        st.error(plain(f"{timing.error['type']}: {timing.error['message']}"), icon="🛑")
    st.button(text("devices_measure_again", lang()), key="devices.again",
              on_click=lambda: st.session_state.update({"devices.measure": True}))
    with st.expander(text("devices_timing_code", lang())):
        st.code(devices.TIMING, language="python")
        if timing is not None:
            st.caption(text("ran_in", lang(), device=plain(timing.device),
                            threads=timing.threads, ms=timing.elapsed_ms))
with right:
    st.subheader(text("devices_seed_title", lang()))
    st.markdown(text("devices_seed_text", lang()))
    st.container(key="devices-seeds").table(devices.seed_rows(first, second, lang()))
publish()
