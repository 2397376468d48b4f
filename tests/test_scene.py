"""The scene of an autograd error (explorer.views.scene), for every reproduction of a
learner's mistake in tests/learner_programs/mistakes/: the nodes marked and the line named
are where the fix that answered the learner goes. The recorder computes nothing for it
(tests/test_corpus.py: each program prints and fails as in plain PyTorch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.record.execute import execute
from explorer.trace import Trace
from explorer.trace.graph_view import FREED, MARK, MODIFIED
from explorer.views.scene import Scene, scene
from tests.conftest import graph_viewer

MISTAKES = Path(__file__).parent / "learner_programs" / "mistakes"
PROGRAMS = {path.stem: path.read_text() for path in sorted(MISTAKES.glob("*.py"))}

# program -> (kind, the nodes marked by name, the line the fix goes on: what it is)
SCENES = {
    # a saved tensor changed in place: the node that saved it, and the line that changed it
    "inplace_modified_saved": ("inplace", {"SigmoidBackward0", "out"}, 5),  # out = out * 2
    "detach_then_inplace": ("inplace", {"SigmoidBackward0", "out"}, 6),  # c = c * 0, no zero_
    "relu_inplace_after_tanh": ("inplace", {"TanhBackward0", "h"}, 7),  # inplace=False
    "optimizer_step_between_backwards": ("inplace", {"PowBackward0", "w"}, 9),  # step later
    "normalise_in_place_by_norm": ("inplace", {"LinalgVectorNormBackward0", "emb"}, 7),  # emb /
    "softmax_epsilon_added_in_place": ("inplace", {"SoftmaxBackward0", "probs"}, 8),  # probs +
    "slice_assign_in_forward": ("inplace", {"SigmoidBackward0"}, 12),  # out * mask, in forward
    # backward through a freed graph: the nodes freed, and where to keep or cut the graph
    "backward_twice": ("freed", {"MulBackward0", "ExpBackward0"}, 5),  # retain_graph=True
    "second_loss_shares_graph": ("freed", {"ExpBackward0"}, 7),  # retain_graph=True
    "rnn_hidden_not_detached": ("freed_loop", {"TanhBackward0", "MvBackward0"}, 9),  # detach
    "running_loss_backward": ("freed_total", {"SigmoidBackward0", "MulBackward0"}, 11),  # .item()
    "features_computed_outside_loop": ("freed_outside", {"TanhBackward0", "MmBackward0"}, 7),
    # ...carried on by any line that keeps a round's tensor for the next: detach it there
    "rnn_previous_state_carried": ("freed_loop", {"TanhBackward0", "MvBackward0"}, 8),  # where
    # a round first reads h_prev: there, not at `h_prev = h`, a detach cuts the old round off
    # alone (tests/test_carried.py runs each such fix)
    "lstm_state_tuple_carried": ("freed_loop", {"AddmmBackward0", "TanhBackward0",
                                                "SigmoidBackward0", "MulBackward0"}, 9),
    "losses_kept_in_list": ("freed_list", {"ExpBackward0", "MulBackward0"}, 9),
    "total_loss_reassigned": ("freed_total", {"MulBackward0", "TanhBackward0"}, 9),
    # a root with more than one element and no gradient: the root, at its backward call
    "non_scalar_backward": ("not_scalar", {"y"}, 6),  # y.sum().backward()
    "loss_not_reduced": ("not_scalar", {"loss"}, 7),  # loss.mean().backward()
    "complex_output_backward": ("not_scalar", {"out"}, 6),  # out.real.backward()
    "per_sample_loss_reduction_none": ("not_scalar", {"loss"}, 9),  # loss.mean().backward()
    "model_output_backward_for_saliency": ("not_scalar", {"scores"}, 8),  # scores[0, c]
    # a leaf that requires grad changed in place; requires_grad on integers: the variable
    "inplace_on_leaf": ("leaf_inplace", {"w"}, 5),  # under torch.no_grad()
    "weight_update_without_no_grad": ("leaf_inplace", {"w"}, 10),  # under torch.no_grad()
    "init_weight_uniform_in_place": ("leaf_inplace", {"w"}, 7),  # under torch.no_grad()
    "zero_weight_entry_by_index": ("leaf_inplace", {"w"}, 9),  # under torch.no_grad()
    "integer_requires_grad": ("not_float", set(), 5),  # [1., 2.]
    "arange_requires_grad": ("not_float", set(), 4),  # dtype=torch.float32
    "randint_requires_grad": ("not_float", set(), 6),  # .float() first
    "parameter_of_integer_tensor": ("not_float", set(), 8),  # [1., 2., 3.]
    # the first node whose gradient became non-finite, and the line that made it
    "anomaly_nan": ("not_finite", {"SqrtBackward0"}, 5),  # sqrt(... + eps)
    "entropy_of_zero_nan": ("not_finite", {"MulBackward0"}, 5),  # torch.special.xlogy
    "sqrt_distance_nan": ("not_finite", {"SqrtBackward0"}, 6),  # sqrt(... + eps)
    "where_sqrt_nan_grad": ("not_finite", {"SqrtBackward0"}, 5),  # x.clamp(min=0).sqrt()
    "log_of_softmax_underflow": ("not_finite", {"LogBackward0"}, 6),  # log_softmax
}


def _marked(trace: Trace, found: Scene) -> set[str]:
    """The scene's nodes by the names the page shows: variables', else ops'."""
    nodes = {n.id: n for graph in trace.graphs for n in graph.nodes}
    return {name for i in found.nodes for name in (nodes[i].names or [nodes[i].name])}


def test_the_mistakes_hold_thirty_reproductions_of_the_errors_a_scene_shows() -> None:
    assert len(SCENES) >= 30 and set(SCENES) <= set(PROGRAMS)


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_scene_marks_where_the_fix_goes(key: str) -> None:
    code = PROGRAMS[key]
    trace = execute(code)
    found = scene(trace, code)
    if key not in SCENES:
        assert found is None, found  # another kind of mistake: its explanation says it
        return
    kind, names, line = SCENES[key]
    assert found is not None, trace.error
    assert (found.kind, _marked(trace, found), found.line) == (kind, names, line)
    for lang in ("en", "zh"):  # every value its words need is there
        said = text(f"scene_{found.kind}", lang, line=found.line, **found.said)
        assert "?" not in said.replace("？", ""), said


def test_a_saved_value_changed_in_place_is_said_so_not_freed() -> None:
    trace = execute(PROGRAMS["inplace_modified_saved"])
    saved = next(n.saved for n in trace.graph.nodes if n.name == "SigmoidBackward0")
    assert saved == {"result": MODIFIED}
    twice = execute(PROGRAMS["backward_twice"])
    assert FREED in {v for n in twice.graph.nodes for v in (n.saved or {}).values()}


def test_a_run_without_an_autograd_error_has_no_scene() -> None:
    for code in ("x = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n",
                 "print(undefined)\n", "x = torch.ones(2)\ny = x[5]\n"):
        assert scene(execute(code), code) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graph_page_marks_the_scene_and_says_where_the_fix_goes(lang: str) -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.switch_page("pages/2_Graph.py").run()
    at.session_state["graph.code"] = PROGRAMS["relu_inplace_after_tanh"]
    at.button(key="graph.run").click().run()
    assert not at.exception
    warning = next(w.value for w in at.warning if "TanhBackward0" in w.value)
    assert warning == text("scene_inplace", lang, line=7, op="`TanhBackward0`", tensor="`h`",
                           saved="`0`", now="`1`")
    assert "h = torch.nn.functional.relu(h, inplace=True)" in [c.value for c in at.code]
    picture, _ = graph_viewer(at)  # the SVG the page drew: the two nodes outlined
    nodes = [part.split("<!--")[0] for part in picture.split('class="node">')[1:]]
    outlined = [re.search(r"<title>(\w+)</title>", node)[1] for node in nodes  # type: ignore[index]
                if f'stroke="{MARK}"' in node]
    assert len(outlined) == 2, outlined  # TanhBackward0 and h: their ids, as drawn


@pytest.mark.parametrize("message", [
    "modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, "
    f"is at version {'9' * 5000}; expected version 0 instead.",
    "modified by an inplace operation: [x [" + "1, " * 10_000 + "1]] is at version 1; "
    "expected version 0", "Trying to backward through the graph a second time" * 100,
    "grad can be implicitly created only for scalar outputs",
    "a leaf Variable that requires grad is being used in an in-place operation."])
def test_a_forged_message_names_no_scene_it_cannot_back_and_never_breaks(message: str) -> None:
    # What a run sends is checked (explorer.trace.check), but its words are its own.
    trace = Trace.from_dict({"ok": False, "error": {"type": "RuntimeError", "message": message,
                                                     "line": 99}})
    found = scene(trace, "x = 1\n" * 3)
    assert found is None or (found.line in (None, 99) and not found.nodes), found



def test_a_long_freed_chain_names_each_op_once_with_its_count() -> None:
    code = ("w = torch.tensor(0.5, requires_grad=True)\nh = torch.zeros(1)\n"
            "for i in range(60):\n    h = torch.sigmoid(w * h + 1)\n"
            "    if i >= 56:\n        h.sum().backward()\n")
    trace = execute(code)
    found = scene(trace, code)
    assert found is not None and len(found.nodes) > 100, found
    said = [part.rsplit(" ×", 1) for part in found.said["nodes"].split(", ")]
    assert len({part[0] for part in said}) == len(said) <= 3  # Sigmoid, Mul, Add: once each
    assert sum(int(part[1]) if len(part) == 2 else 1 for part in said) == len(found.nodes)
