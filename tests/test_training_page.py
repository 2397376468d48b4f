"""What the training page draws for a loop typed in its editor (Streamlit's AppTest, real
runs): a log-scale loss axis labelled with whole numbers (powers of ten where it spans them,
never plotly's `2` for 0.02), and the program's printed output in plain sight."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.trace.schema import Summary
from explorer.views.curves import curves, log_ticks, loss_figure, tick_label
from tests.test_gate import send
from tests.test_training import ADAM


def _trained(lang: str) -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=120)
    at.query_params["lang"] = lang
    at.switch_page("pages/7_Training.py").run()
    at = send(at, run=ADAM)
    assert not at.exception, at.exception
    return at


def _read(label: str) -> float:
    """A tick's label read back as a number: `0.01`, `10⁴`, `2×10⁻⁵`."""
    plain = label.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
    if "10" in plain and ("×" in plain or not label.isascii()):
        m, _, k = plain.rpartition("10")
        return float(m.rstrip("×") or 1) * 10.0 ** int(k)
    return float(plain)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_loss_axes_are_labelled_in_whole_numbers_and_the_output_is_open(lang: str) -> None:
    at = _trained(lang)
    for chart in at.get("plotly_chart")[:2]:  # the loss, the gradient norms
        made = json.loads(chart.proto.spec)
        axis = made["layout"]["yaxis"]
        drawn = [v for line in made["data"] for v in line["y"]]
        assert axis["type"] == "log" and axis["tickmode"] == "array"
        assert len(axis["tickvals"]) >= 2 and all(min(drawn) <= v <= max(drawn)
                                                  for v in axis["tickvals"])
        assert [_read(t) for t in axis["ticktext"]] == pytest.approx(axis["tickvals"])
    (output,) = [e for e in at.expander if e.label == text("output", lang)]
    assert output.proto.expanded
    printed = "\n".join(str(c.value) for c in output.code)
    assert printed.startswith("0 ") and "\n29 " in printed  # print(t, loss.item())


def _labels(low: float, high: float) -> list[str]:
    return [tick_label(m, k) for m, k in log_ticks(low, high)]


def test_a_log_axis_reads_as_whole_numbers_however_narrow_or_wide_the_values() -> None:
    assert _labels(0.009, 0.11) == ["0.01", "0.1"]  # the powers of ten it spans
    assert _labels(0.003, 2.3) == ["0.003", "0.01", "0.1", "1", "2.3"]  # and its ends, if far
    assert _labels(0.01, 7.5) == ["0.01", "0.1", "1", "7.5"]
    assert _labels(1e-9, 1e6) == ["10⁻⁹", "10⁻⁷", "10⁻⁵", "0.001", "0.1", "10", "1000", "10⁵",
                                  "10⁶"]
    assert _labels(0.3, 0.5) == ["0.3", "0.4", "0.5"]  # within a decade: every digit
    assert _labels(0.73, 1.53) == ["0.8", "0.9", "1", "1.5"]
    assert _labels(0.81, 1.2) == ["0.9", "1"]
    assert _labels(2e-5, 7e-5) == ["2×10⁻⁵", "5×10⁻⁵", "7×10⁻⁵"]
    assert _labels(1.9e-5, 9.9e-5) == ["2×10⁻⁵", "5×10⁻⁵", "9.9×10⁻⁵"]  # one digit before the
    assert _labels(0.0019, 0.0093) == ["0.002", "0.005", "0.0093"]  # point, either way
    assert _labels(0.81, 0.89) == []  # narrower: plotly writes such labels in full
    assert _labels(5e-324, 1.7e308)[::8] == ["10⁻³⁰⁰", "10³⁰⁰"]  # the float's ends: no overflow
    axis = loss_figure(curves([])).to_dict()["layout"]["yaxis"]
    assert axis["type"] == "log" and "tickvals" not in axis  # nothing drawn, nothing labelled


def test_a_few_calls_are_each_labelled_and_many_as_plotly_chooses() -> None:
    def axis(calls: int) -> dict[str, object]:
        losses = [Summary(call=c, kind="backward", value=1.0 / c, grad_norms={})
                  for c in range(1, calls + 1)]
        return loss_figure(curves(losses)).to_dict()["layout"]["xaxis"]

    assert axis(3)["dtick"] == 1  # no call 1.5 between calls 1 and 2
    assert "dtick" not in axis(100)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_losses_a_log_axis_cannot_hold_are_left_out_and_counted(lang: str) -> None:
    # A loss gone to inf from the start raised OverflowError as the page labelled its axis.
    at = AppTest.from_file("../streamlit_app.py", default_timeout=120)
    at.query_params["lang"] = lang
    at.switch_page("pages/7_Training.py").run()
    at = send(at, run="w = torch.tensor(float('inf'), requires_grad=True)\nfor i in range(4):\n"
                      "    loss = w * 2 if i < 3 else w * 0\n    loss.backward()\n")
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if "4" in str(w.value)] == [
        text("curves_undrawn", lang, count=4)]  # three infinite, one NaN (inf · 0)
    loss = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert all(not line["y"] for line in loss["data"])


def test_curves_hold_positive_finite_values_only() -> None:
    summaries = [Summary(call=k, kind="backward", value=v, grad_norms={"w": n})
                 for k, (v, n) in enumerate([(1.0, 2.0), (float("inf"), float("inf")),
                                             (0.0, 1.0), (float("nan"), 3.0)], start=1)]
    drawn = curves(summaries)
    assert (drawn.losses[0].calls, drawn.undrawn) == ([1], 3)
    assert drawn.norms[0].calls == [1, 3, 4]
    assert log_ticks(float("inf"), float("inf")) == []


def test_an_end_is_labelled_only_as_far_from_a_label_as_their_spacing_allows() -> None:
    # Across 32 decades labelled every 4th, 3.2×10² stood on 10³; across 10, 4.4×10¹² on 10¹².
    assert _labels(324, 5.5e34) == ["1000", "10⁷", "10¹¹", "10¹⁵", "10¹⁹", "10²³", "10²⁷",
                                    "10³¹", "5.5×10³⁴"]
    assert _labels(81, 4.4e12)[-1] == "10¹²"
