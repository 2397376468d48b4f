"""Every word a page draws is in the visitor's language: the Playground, the Graph page and
the Backward page (every place of its pass) after one run, in English and in Chinese
(Streamlit's AppTest, real runs), read for what they draw: captions, markdown, alerts,
widget labels, table headers, the picture's caption, numbers and hover text. In Chinese, no
English word of the interface's own; in English, no Chinese."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

from streamlit.testing.v1 import AppTest

import explorer.ui
from explorer.content.i18n import texts

# A 4×3 leaf: its gradients are too many to read whole (shape and norm in the captions).
GRID = ("w = torch.ones(4, 3, requires_grad=True)\nx = torch.tensor([1.0, 2.0, 3.0])\n"
        "y = (w * x).sum()\ny.backward()\nprint(w.grad)\n")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")  # a word, or a name such as is_leaf
HAN = re.compile(r"[\u4e00-\u9fff]")
ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")  # markdown's escapes: drawn as the sign


def _words(lang: str) -> set[str]:
    """The words the interface writes in `lang` (placeholders left out), lower case."""
    return {w.lower() for entry in texts().values() if lang in entry
            for w in WORD.findall(re.sub(r"\{[^}]*\}", "", entry[lang]))}


def english_only() -> set[str]:
    """Words of the English interface that the Chinese one never uses: PyTorch's names and
    other words kept in Chinese text (grad, dtype, backward...) are not among them."""
    return _words("en") - _words("zh")


def _figure_words(spec: str) -> Iterator[str]:
    """What a plotly figure writes: its traces' text and hover text, its buttons' labels."""
    made = json.loads(spec)
    for trace in made["data"]:
        for field in ("text", "hovertext"):
            items = trace.get(field) or []
            yield from ([items] if isinstance(items, str) else items)
    for menu in made["layout"].get("updatemenus", []):
        yield from (button["label"] for button in menu["buttons"])


def drawn(at: AppTest) -> Iterator[str]:
    """Every piece of text the page draws but the program's own (its code, its output)."""
    for kind in ("title", "header", "subheader", "caption", "info", "warning", "success",
                 "error", "markdown"):
        for element in getattr(at, kind):
            if not str(element.value).startswith("<style>"):
                yield ESCAPED.sub(r"\1", str(element.value))
    for kind in ("button", "toggle", "selectbox", "multiselect", "select_slider", "text_input",
                 "number_input", "expander"):
        for widget in getattr(at, kind):
            yield str(widget.label)
            yield from (str(option) for option in getattr(widget, "options", None) or ())
            yield str(getattr(widget.proto, "placeholder", ""))
    for table in at.table:
        yield from (str(column) for column in table.value.columns)
    for chart in at.get("plotly_chart"):
        yield from _figure_words(chart.proto.spec)


def _ran(lang: str, page: str, name: str) -> AppTest:
    """Page `page` (its editor `name`) in `lang`, after running GRID."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.switch_page(f"pages/{page}.py").run()
    at.session_state[f"{name}.code"] = GRID
    at.button(key=f"{name}.run").click().run()
    assert not at.exception
    return at


def _walk(lang: str) -> list[str]:
    """What the Playground and Graph pages draw after GRID runs, and the Backward page at
    each place of its pass's timeline, in `lang`."""
    said = [*drawn(_ran(lang, "1_Playground", "playground")), *drawn(_ran(lang, "2_Graph",
                                                                          "graph"))]
    at = _ran(lang, "5_Backward", "backward")
    at.button(key="backward.replay.1.first").click().run()
    said += drawn(at)
    while not at.button(key="backward.replay.1.forward").disabled:
        at.button(key="backward.replay.1.forward").click().run()
        assert not at.exception
        said += drawn(at)
    return said


def test_the_chinese_backward_page_draws_no_english_word_of_its_own() -> None:
    said = _walk("zh")
    own = {w.lower() for w in WORD.findall(GRID)}  # the program's names are its own
    foreign = english_only() - own
    found = {(w, text) for text in said for w in WORD.findall(re.sub(r"<[^>]+>", " ", text))
             if w.lower() in foreign}
    assert not found, sorted(found)[:20]
    captions = [text for text in said if "(4, 3)" in text]  # the step panel's gradients
    assert captions and all("形状" in text and "范数" in text for text in captions), captions


def test_the_english_backward_page_draws_no_chinese() -> None:
    said = _walk("en")
    assert not [text for text in said if HAN.search(text)]
    assert any("shape (4, 3)" in text and "2-norm" in text for text in said)


def test_the_words_looked_for_are_the_english_interfaces_own() -> None:
    assert {"shape", "step", "of", "in"} <= english_only()
    assert not {"grad", "backward", "cpu", "none", "is_leaf"} & english_only()


def test_every_choice_that_can_be_empty_has_a_placeholder_of_its_own() -> None:
    """Streamlit writes its own English ("Choose options", "Choose an option") in a
    multiselect, and in a selectbox with nothing chosen (index=None), unless given one."""
    bare = []
    for path in sorted(Path(explorer.ui.__file__).parent.glob("*.py")):
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            given = {k.arg: k.value for k in call.keywords}
            empty = call.func.attr == "multiselect" or call.func.attr == "selectbox" and (
                isinstance(given.get("index"), ast.Constant) and given["index"].value is None)
            if empty and "placeholder" not in given:
                bare.append(f"{path.name}:{call.lineno}")
    assert not bare, bare
