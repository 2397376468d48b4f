"""What autograd keeps across a loop's rounds (explorer.views.carried), and the scene of an
error inside a loop drawn on the round's own graph (explorer.views.scene)."""

from __future__ import annotations

import pytest

from explorer.content.i18n import text
from explorer.record.execute import execute
from explorer.trace import Trace
from explorer.views.carried import alive, made_before_round
from explorer.views.scene import scene
from tests.test_pages import _graph, _text

TOTAL = ("w = torch.tensor([1.0, 2.0], requires_grad=True)\ntotal = 0\n"
         "for i in range(4):\n    loss = (w * (i + 1)).sum()\n    total = total + loss\n")
DETACHED = TOTAL.replace("total + loss", "total + loss.item()")
RNN = ("torch.manual_seed(0)\nW = torch.randn(3, 3, requires_grad=True)\nh = torch.zeros(3)\n"
       "for t in range(3):\n    h = torch.tanh(W @ h)\n    loss = h.sum()\n    loss.backward()\n")


def _at(trace: Trace, line: int, round_: int) -> int:
    """The index of the step after `line` in round `round_` of the program's one loop."""
    return next(i for i, s in enumerate(trace.steps)
                if s.line == line and s.rounds and s.rounds[-1].round == round_)


def test_a_running_total_keeps_every_rounds_graph_and_the_chain_grows() -> None:
    trace = execute(TOTAL)
    counts = [alive(trace, _at(trace, 5, r)) for r in (1, 2, 3, 4)]
    assert [a.nodes for a in counts] == [3, 6, 9, 12]  # Sum, Mul and an Add more each round
    total = [next(k for k in a.keepers if k.name == "total") for a in counts[1:]]
    assert [k.rounds for k in total] == [(1,), (1, 2), (1, 2, 3)]
    assert [k.nodes for k in total] == [3, 6, 9]
    assert "rounds 1–3" in total[-1].said("en") and "第 1–3 轮" in total[-1].said("zh")


def test_a_total_of_plain_numbers_keeps_no_graph() -> None:
    trace = execute(DETACHED)
    for r in (2, 3, 4):
        living = alive(trace, _at(trace, 5, r))
        assert living.nodes == 2 and living.keepers == ()  # this round's Sum and Mul only


def test_a_variable_not_yet_assigned_again_still_holds_the_round_before() -> None:
    trace = execute(DETACHED)
    at_loss = alive(trace, _at(trace, 4, 3))  # `loss` assigned anew: the old one is gone
    assert at_loss.keepers == ()
    code = DETACHED.replace("    loss = (w * (i + 1)).sum()\n",
                            "    y = w * 2\n    loss = (w * (i + 1)).sum()\n")
    trace = execute(code)
    living = alive(trace, _at(trace, 4, 2))  # y is new; `loss` is still round 1's
    assert [(k.name, k.rounds) for k in living.keepers] == [("loss", (1,))]
    assert "round 1" in living.keepers[0].said("en")


def test_a_step_without_a_graph_has_nothing_alive() -> None:
    trace = execute("a = 1\nfor i in range(2):\n    a = a + i\n")
    assert all(alive(trace, i) is None for i in range(len(trace.steps)))


def test_the_scene_of_a_carried_state_marks_the_rounds_before_not_its_own() -> None:
    trace = execute(RNN)
    last = trace.steps[-1]
    assert last.stopped and last.line == 7 and last.rounds[-1].round == 2
    found = scene(trace, RNN)
    assert found is not None and found.kind == "freed_loop" and found.line == 5
    older = made_before_round(trace, len(trace.steps) - 1)
    assert found.nodes and set(found.nodes) <= older  # the freed nodes of round 1
    names = {n.name for n in trace.graphs[last.graph].nodes if n.id in found.nodes}
    assert names == {"TanhBackward0", "MvBackward0"}  # not round 2's, freed by its own call


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graph_page_says_what_is_alive_and_who_keeps_it(lang: str) -> None:
    at = _graph(TOTAL, lang)
    trace = execute(TOTAL)
    index = _at(trace, 5, 3)
    at.session_state["graph.step"] = index + 1
    at.run()
    assert not at.exception
    living = alive(trace, index)
    said = _text(at)
    assert text("alive_nodes", lang, nodes=living.nodes) in said
    assert living.keepers[0].said(lang) in said  # `total` keeps rounds 1–2
