"""What autograd keeps across a loop's rounds (explorer.views.carried), in rounds stepped or
not, and the scene of an error inside a loop drawn on the round's own graph, its fix where it
says (explorer.views.scene)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from explorer.content.i18n import text
from explorer.record.execute import execute
from explorer.trace import Trace
from explorer.views.carried import alive
from explorer.views.scene import scene
from tests.programs import RNN as RNN_READ_FIRST
from tests.test_pages import _graph, _text

TOTAL = ("w = torch.tensor([1.0, 2.0], requires_grad=True)\ntotal = 0\n"
         "for i in range(4):\n    loss = (w * (i + 1)).sum()\n    total = total + loss\n")
DETACHED = TOTAL.replace("total + loss", "total + loss.item()")
RNN = ("torch.manual_seed(0)\nW = torch.randn(3, 3, requires_grad=True)\nh = torch.zeros(3)\n"
       "for t in range(3):\n    h = torch.tanh(W @ h)\n    loss = h.sum()\n    loss.backward()\n")
RUNNING = """w = torch.tensor([0.5, -0.3], requires_grad=True)
x = torch.tensor([1.0, 2.0])
total_loss = 0
for i in range({rounds}):
    pred = (w * x).sum()
    loss = (pred - 1.0) ** 2
    total_loss += loss
"""
# Backward through a freed graph inside a loop, each carried differently (or not at all).
CARRIED = {
    "state read first, then made anew": RNN_READ_FIRST,
    "a list read by each round's loss": """w = torch.tensor(2.0, requires_grad=True)
losses = []
for i in range(3):
    loss = (w * i - 1) ** 2
    losses.append(loss)
    sum(losses).backward()
""",
}
# ...and made before the loop, with a counter and a list that carry no graph into the next round.
OUTSIDE = """w = torch.tensor(2.0, requires_grad=True)
y = w * 3
count = 0
losses = []
for i in range(3):
    loss = (y - i) ** 2
    losses.append(loss)
    loss.backward()
    count += 1
"""


def _at(trace: Trace, line: int, round_: int) -> int:
    """The index of the step after `line` in round `round_` of the program's one loop."""
    return next(i for i, s in enumerate(trace.steps)
                if s.line == line and s.rounds and s.rounds[-1].round == round_)


def test_a_running_total_keeps_every_rounds_graph_and_the_chain_grows() -> None:
    trace = execute(TOTAL)
    counts = [alive(trace, _at(trace, 5, r)) for r in (1, 2, 3, 4)]
    assert [a.nodes for a in counts] == [3, 6, 9, 12]  # Sum, Mul and an Add more each round
    total = [next(k for k in a.keepers if k.names == ("total",)) for a in counts[1:]]
    assert [(k.first, k.last) for k in total] == [(1, 1), (1, 2), (1, 3)]
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
    assert [(k.names, k.first, k.last) for k in living.keepers] == [(("loss",), 1, 1)]
    assert "round 1" in living.keepers[0].said("en")


@pytest.mark.parametrize(("kept", "holder"), [
    ("losses.append(loss)", "losses"), ("losses = (*losses, loss)", "losses"),
    ("by[i] = loss", "by")])
def test_a_list_tuple_or_dict_of_losses_keeps_every_rounds_graph(kept: str, holder: str) -> None:
    code = ("w = torch.tensor([1.0, 2.0], requires_grad=True)\nlosses, by = [], {}\n"
            f"for i in range(4):\n    loss = (w * (i + 1)).sum()\n    {kept}\n")
    trace = execute(code)
    counts = [alive(trace, _at(trace, 5, r)) for r in (1, 2, 3, 4)]
    assert [a.nodes for a in counts] == [2, 4, 6, 8]  # each round's Sum and Mul, all alive
    assert [[(k.names, k.nodes, k.first, k.last) for k in a.keepers] for a in counts] == [
        [], [((holder,), 2, 1, 1)], [((holder,), 4, 1, 2)], [((holder,), 6, 1, 3)]]
    names = {name for n in trace.graphs[trace.steps[-1].graph].nodes for name in n.names or ()}
    assert names == {"w", "loss", *(f"{holder}[{k}]" for k in ("0", "1", "2"))} if (
        holder == "losses") else {"w", "loss", "by[0]", "by[1]", "by[2]"}


@pytest.mark.parametrize("top", [True, False], ids=["top-level", "in-a-function"])
def test_a_while_loop_says_what_its_rounds_keep(top: bool) -> None:
    loop = ("losses = []\nstep = 0\nwhile step < 5:\n    loss = (w * w).sum()\n"
            "    losses.append(loss)\n    step += 1\n")
    code = "w = torch.tensor([1.0, 2.0], requires_grad=True)\n" + (loop if top else (
        "def f():\n" + "".join(f"    {line}\n" for line in loop.splitlines()) + "f()\n"))
    trace = execute(code)
    line = 6 if top else 7  # losses.append(loss)
    living = alive(trace, _at(trace, line, 5))
    assert living.nodes == 10 and [(k.names, k.nodes, k.first, k.last) for k in living.keepers] \
        == [(("losses",), 8, 1, 4)]


def test_variables_that_keep_the_same_nodes_are_told_together() -> None:
    trace = execute("w = torch.ones(2, requires_grad=True)\nh = w\nsaved = {}\n"
                    "for i in range(3):\n    h = h * 2\n    saved[i] = h\n")
    (keeper,) = alive(trace, _at(trace, 6, 3)).keepers  # h's chain, and the dict holding it
    assert (keeper.names, keeper.nodes, keeper.first, keeper.last) == (("h", "saved"), 2, 1, 2)
    assert keeper.said("en").startswith("`h`, `saved` all keep the same 2 nodes")
    assert keeper.said("zh").startswith("`h`、`saved` 都让循环第 1–2 轮")


def test_a_step_without_a_graph_has_nothing_alive() -> None:
    trace = execute("a = 1\nfor i in range(2):\n    a = a + i\n")
    assert all(alive(trace, i) is None for i in range(len(trace.steps)))


def test_the_scene_of_a_carried_state_marks_the_rounds_before_not_its_own() -> None:
    trace = execute(RNN)
    last = trace.steps[-1]
    assert last.stopped and last.line == 7 and last.rounds[-1].round == 2
    found = scene(trace, RNN)
    assert found is not None and found.kind == "freed_loop" and found.line == 5
    marked = [n for n in trace.graphs[last.graph].nodes if n.id in found.nodes]
    assert marked and all(n.seq < last.rounds[-1].began for n in marked)  # made in round 1
    names = {n.name for n in marked}
    assert names == {"TanhBackward0", "MvBackward0"}  # not round 2's, freed by its own call


def _reachable_ops(t: torch.Tensor) -> int:
    """The backward nodes behind `t` but its leaves', counted in plain PyTorch."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen and type(node).__name__ != "AccumulateGrad":
            seen.add(node)
            stack.extend(u for u, _ in node.next_functions)
    return len(seen)


@pytest.mark.parametrize("rounds", [20, 30, 100])
def test_what_a_running_total_keeps_counts_the_rounds_not_stepped_too(rounds: int) -> None:
    namespace: dict = {"torch": torch}
    exec(RUNNING.format(rounds=rounds - 1), namespace)  # noqa: S102 - plain PyTorch
    before = _reachable_ops(namespace["total_loss"])  # what the last round finds alive
    trace = execute(RUNNING.format(rounds=rounds))
    index = _at(trace, 7, rounds)
    assert trace.steps[index - 3].rounds[-1].round < rounds - 1  # the round before: not stepped
    total = next(k for k in alive(trace, index).keepers if k.names == ("total_loss",))
    assert (total.nodes, total.first, total.last) == (before, 1, rounds - 1)
    assert f"rounds 1–{rounds - 1}" in total.said("en")
    at_pred = alive(trace, _at(trace, 5, rounds))  # `loss` still holds the round before's,
    assert [k.names for k in at_pred.keepers] == [("total_loss",)]  # all kept by `total_loss` too


def _detached(code: str, names: list[str], line: int) -> str:
    """`code` with the scene's advice taken: each of `names` read detached on `line`."""
    tree = ast.parse(code)

    class Detach(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in names and node.lineno == line and isinstance(node.ctx, ast.Load):
                return ast.Call(ast.Attribute(node, "detach", ast.Load()), [], [])
            return node

        def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
            target = node.target
            if isinstance(target, ast.Name) and target.id in names and node.lineno == line:
                read = ast.Name(target.id, ast.Load(), lineno=line)
                return ast.Assign([target], ast.BinOp(self.visit(read), node.op, node.value))
            return self.generic_visit(node)

    return ast.unparse(ast.fix_missing_locations(Detach().visit(tree)))


MISTAKES = Path(__file__).parent / "learner_programs" / "mistakes"


@pytest.mark.parametrize("code", [*CARRIED.values(), *(
    path.read_text() for path in sorted(MISTAKES.glob("*.py")))], ids=[*CARRIED, *(
        path.stem for path in sorted(MISTAKES.glob("*.py")))])
def test_a_carried_graph_is_cut_where_the_scene_says_and_the_program_then_runs(code: str) -> None:
    found = scene(execute(code), code)
    if found is None or found.kind != "freed_loop":
        return
    fixed = _detached(code, found.said["name"].split(", "), found.line)
    assert fixed != ast.unparse(ast.parse(code))
    exec(compile(fixed, "<fixed>", "exec"), {"torch": torch, "__name__": "fixed"})  # noqa: S102


def test_the_scene_names_what_carries_the_graph_and_only_that() -> None:
    found = [scene(execute(code), code) for code in CARRIED.values()]
    assert [(f.kind, f.said["name"], f.line) for f in found] == [
        ("freed_loop", "h", 7), ("freed_list", "losses", 5)]
    outside = scene(execute(OUTSIDE), OUTSIDE)  # not `count`, not a list no round reads
    assert (outside.kind, outside.line, outside.said["nodes"]) == (
        "freed_outside", 2, "MulBackward0")


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
