"""A tensor of a few elements (present.FEW) is written as its values wherever the Backward
page writes a gradient: the picture's numbers and hover text, the step panel's captions and
its table of `.grad`s (Streamlit's AppTest, real runs). Shape and norm are for larger ones."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.views.present import FEW, compact, few, preview, stacked

# t is used three times; both leaves have two elements.
USED_THRICE = ("t = torch.tensor([1.2092, 2.9402], requires_grad=True)\n"
               "w = torch.tensor([0.5, -1.5], requires_grad=True)\n"
               "y = t * t * 1.5 + t.exp() * w + t.sin()\nloss = y.sum()\nloss.backward()\n")


def _last_step(lang: str) -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = USED_THRICE
    at.button(key="backward.run").click().run()
    at.button(key="backward.replay.1.last").click().run()
    assert not at.exception
    return at


def _traces(at: AppTest) -> list[dict[str, Any]]:
    return json.loads(at.get("plotly_chart")[0].proto.spec)["data"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_page_writes_a_few_values_as_they_are(lang: str) -> None:
    at = _last_step(lang)
    grads = {row[1]: row[2] for row in at.table[0].value.itertuples()}
    assert grads == {"t": "`[5.6568, -20.5386]`", "w": "`[3.3508, 18.9196]`"}
    assert list(at.table[0].value.columns)[1:] == [".grad"]  # no norm column
    traces = _traces(at)
    (numbers,) = [t for t in traces if t.get("textfont", {}).get("family") == "monospace"]
    written = [text.replace("<br>", "\n").replace("\u00a0", " ") for text in numbers["text"]]
    assert written and not [text for text in written if "‖" in text]
    # t.grad, beside its leaf: on lines of their own where, on one line, it would cover an
    # edge (as it did before numbers kept off the edges)
    assert ".grad = [5.6568, -20.5386]" in [" ".join(text.split()) for text in written]
    (hover,) = [t for t in traces if t.get("name") == "nodes"]
    assert not [text for text in hover["hovertext"] if "‖" in text]
    assert any("[5.6568, -20.5386]" in text for text in hover["hovertext"])
    captions = [c.value for c in at.caption]
    assert not [c for c in captions if "‖g‖" in c]


def test_past_a_few_values_a_tensor_is_its_shape_and_norm() -> None:
    nine = [3.0, 4.0] + [0.0] * 7
    assert few([1.0] * FEW) and not few([1.0] * (FEW + 1)) and not few([1.0], truncated=True)
    assert compact([3.6276, 8.8207], [2]) == "[3.6276, 8.8207]"
    assert compact(nine, [9]) == "9 ‖5.‖"
    eight = [float(k) + 0.5 for k in range(8)]
    assert preview(eight, limit=10) == "[0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, " \
        "6.5000, 7.5000]"  # whole, however short the room
    assert stacked([[1.0, 2.5], [3.0, 4.0]]) == "[[1.0000, 2.5000],\n [3.0000, 4.0000]]"
    assert stacked([1.0, -2.5]) == "[1.0000,\n -2.5000]"
