"""The lesson on per-sample gradients with torch.func: its program runs in the explorer as in
plain PyTorch, in both languages alike; a loop of torch.autograd.grad and vmap(grad) give the
same per-sample gradients, whose mean is the batch's gradient; jacrev and jacfwd give the same
Jacobian; only the loop's and the batch's backward passes are replayed; and every value and
line the text cites is the run's own, the same in English and in Chinese."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES, text
from explorer.content.markdown import code_span
from explorer.pool.worker import WorkerPool
from explorer.trace import Step, Trace
from explorer.trace.notes import english
from explorer.ui.lessons import EDITORS
from tests.test_loop_lessons import (
    _cites,
    _cites_lines,
    _flat,
    _line,
    _number,
    _numbers,
    _plain,
    _said,
    lesson_code,
    run_lessons,
)

# PyTorch's own warning, not the program's: forward mode (jacfwd) loads its rules on first use.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
KEY = "per-sample-gradients"
TENSORS = ("w", "xs", "ys", "loop_grads", "vmap_grads", "batch_loss", "jac_rev", "jac_fwd",
           "hess")
NO_IN_DIMS = ("vmap: Expected all tensors to have the same size in the mapped dimension, "
              "got sizes [2, 4, 4] for the mapped dimension")


@pytest.fixture(scope="module")
def runs(pool: WorkerPool) -> dict[str, Trace]:
    """The lesson's program run as the app runs it, by language."""
    return {lang: trace for (_, lang), trace in run_lessons(pool, (KEY,)).items()}


def _value(values: Any) -> Any:
    """Values as the lesson cites them (`_number`), in lists as the tensor's rows."""
    return [_value(v) for v in values] if isinstance(values, list) else _number(values)


def _in_loss_fn(trace: Trace) -> list[Step]:
    """The steps at the lines of loss_fn: where it was called and not transformed."""
    return [s for s in trace.steps if s.calls == ["loss_fn"]]


def _steps(trace: Trace, call: int) -> list[tuple[str, Any, list[Any]]]:
    """Each engine step of backward call `call`: the node, what it received, what it sent."""
    (found,) = [c for c in trace.backward if c.call == call]
    return [(s.name, [_value(g.values) for g in s.grad_outputs if g],
             [_value(g.values) for g in s.grad_inputs if g]) for s in found.steps]


def _shown(step: Step) -> dict[str, Any]:
    """What the variables table shows of each tensor at `step` (not a function's repr, whose
    address two runs need not share)."""
    return {name: (info.values, info.grad, info.grad_fn, info.requires_grad)
            for name, info in step.variables.items() if info.kind == "tensor"}


def test_the_lessons_program_runs_alike_in_every_language(runs: dict[str, Trace]) -> None:
    for lang in LANGUAGES:
        assert runs[lang].ok, (lang, runs[lang].error)
    en, zh = (runs[lang] for lang in LANGUAGES)
    assert [(s.line, s.rounds, s.calls) for s in en.steps] == [
        (s.line, s.rounds, s.calls) for s in zh.steps]
    assert [_shown(s) for s in en.steps] == [_shown(s) for s in zh.steps]
    assert en.stdout == zh.stdout
    assert [_steps(en, c.call) for c in en.backward] == [_steps(zh, c.call) for c in zh.backward]


def test_the_lessons_program_gives_what_plain_pytorch_gives(runs: dict[str, Trace]) -> None:
    trace = runs["en"]
    printed, namespace = _plain(lesson_code(KEY), trace.threads)
    assert trace.stdout == printed
    tensors = [name for name, info in trace.variables.items() if info.kind == "tensor"]
    assert set(TENSORS) <= set(tensors)
    for name in tensors:
        plain = namespace[name].detach().flatten().tolist()
        assert _flat(trace.variables[name].values) == pytest.approx(plain, rel=1e-6), name
    assert _flat(trace.variables["w"].grad) == namespace["w"].grad.tolist()


def test_a_loop_and_vmap_give_each_samples_gradient_and_their_mean_is_the_batchs(
        runs: dict[str, Trace]) -> None:
    end = runs["en"].variables
    w, xs, ys = (torch.tensor(end[name].values) for name in ("w", "xs", "ys"))
    loop_grads, vmap_grads = (torch.tensor(end[name].values) for name in ("loop_grads",
                                                                          "vmap_grads"))
    assert loop_grads.shape == (4, 2) and torch.equal(loop_grads, vmap_grads)
    # Each sample's gradient of its own squared error, 2 · error · x, as PyTorch gives it.
    for x, y, row in zip(xs, ys, loop_grads, strict=True):
        at = w.clone().requires_grad_()
        ((x @ at - y) ** 2).backward()
        assert torch.equal(at.grad, row)
        assert torch.equal(2 * (x @ w - y) * x, row)
    # Their mean is the gradient of the batch's mean loss: w.grad after one backward().
    assert torch.equal(loop_grads.mean(dim=0), torch.tensor(end["w"].grad))
    batch = w.clone().requires_grad_()
    ((xs @ batch - ys) ** 2).mean().backward()
    assert torch.equal(batch.grad, loop_grads.mean(dim=0))
    # The per-sample gradients differ from the mean: the batch's gradient is none of them,
    # and the second and the third pull w in roughly opposite directions.
    assert not any(torch.allclose(row, batch.grad) for row in loop_grads)
    assert torch.cosine_similarity(loop_grads[1], loop_grads[2], dim=0) < -0.5


def test_jacrev_and_jacfwd_give_the_same_jacobian_the_per_sample_gradients(
        runs: dict[str, Trace]) -> None:
    end = runs["en"].variables
    jac_rev, jac_fwd, loop_grads, hess = (torch.tensor(end[name].values) for name in (
        "jac_rev", "jac_fwd", "loop_grads", "hess"))
    assert jac_rev.shape == (4, 2) and torch.allclose(jac_rev, jac_fwd)
    assert torch.equal(jac_rev, loop_grads)  # row i: the gradient of sample i's loss
    w, xs, ys = (torch.tensor(end[name].values) for name in ("w", "xs", "ys"))

    def losses(at: torch.Tensor) -> torch.Tensor:
        return (xs @ at - ys) ** 2

    assert torch.allclose(torch.autograd.functional.jacobian(losses, w), jac_rev)
    # A linear model's squared error: the Hessian of the mean loss is 2 / N · xsᵀ xs.
    assert torch.allclose(hess, 2 / len(xs) * xs.T @ xs)
    assert torch.allclose(torch.autograd.functional.hessian(lambda at: losses(at).mean(), w),
                          hess)
    assert _value(hess.tolist()) == [["7.5", "4"], ["4", "3.5"]]


def test_the_lesson_cites_the_same_numbers_in_english_and_chinese() -> None:
    lesson = lessons.by_key(KEY)
    assert lesson.page == lessons.PLAYGROUND
    en, zh = (_numbers(_said(lesson, lang)) for lang in LANGUAGES)
    assert en == zh, (en - zh, zh - en)


def test_the_lesson_cites_what_its_run_shows(runs: dict[str, Trace]) -> None:
    lesson, code, trace = lessons.by_key(KEY), lesson_code(KEY), runs["en"]
    error, per_sample, stack, vmapped, check, batch, backward, mean, rev, fwd, same, hessian, \
        printed = (_line(code, s) for s in (
            "error = x @ w - y", "g, = torch.autograd.grad(loss_fn(w, x, y), w)",
            "loop_grads = torch.stack(grads)",
            "vmap_grads = torch.func.vmap(torch.func.grad(loss_fn), in_dims=(None, 0, 0))",
            "print(torch.allclose(loop_grads, vmap_grads))",
            "batch_loss = loss_fn(w, xs, ys).mean()", "batch_loss.backward()",
            "print(torch.allclose(loop_grads.mean(dim=0), w.grad))",
            "jac_rev = torch.func.jacrev(losses)(w)", "jac_fwd = torch.func.jacfwd(losses)(w)",
            "print(torch.allclose(jac_rev, jac_fwd))",
            "hess = torch.func.hessian(lambda w: losses(w).mean())(w)", "print(hess)"))
    _cites_lines(lesson, error, per_sample, stack, vmapped, check, batch, backward, mean, rev,
                 fwd, same, hessian, printed)
    assert "w = torch.tensor([1.0, -1.0], requires_grad=True)" in code
    assert len(trace.variables["xs"].values) == 4
    _cites(lesson, "1", "-1", "4")

    # Line 9 is a step in each of the loop's 4 rounds and in the batch's call, and nowhere
    # inside the transforms: 5 steps in all, each followed by the `return` of line 10.
    stepped = _in_loss_fn(trace)
    assert [s.line for s in stepped] == [error, error + 1] * 5
    assert all("return" in s.locals for s in stepped[1::2])  # type: ignore[operator]
    inside = stepped[::2]
    loop = _line(code, "for x, y in zip(xs, ys, strict=True):")
    assert [s.rounds[-1].round for s in inside[:4]] == [1, 2, 3, 4]  # type: ignore[index]
    assert {s.rounds[-1].line for s in inside[:4]} == {loop}  # type: ignore[index]
    assert inside[4].rounds is None and inside[4].within == batch
    errors = [_value(s.locals["error"].values) for s in inside]  # type: ignore[index]
    assert errors == ["-1", "-2", "2", "1", ["-1", "-2", "2", "1"]]
    _cites(lesson, "-2", "2")
    for lang, frame in (("en", "*Local variables of loss_fn()*"), ("zh", "“loss_fn() 的局部变量”")):
        assert frame in _said(lesson, lang), lang
        assert text("locals_of", lang, call="loss_fn()") in frame

    # Line 16: each round's g, one sample's gradient, stacked on line 18 into loop_grads.
    grads = [_value(s.variables["g"].values) for s in trace.steps if s.line == per_sample]
    rows = [["-2", "-2"], ["-4", "-8"], ["8", "4"], ["6", "2"]]
    assert grads == rows
    assert all(s.variables["g"].grad_fn is None for s in trace.steps if s.line == per_sample)
    _cites(lesson, "-4", "-8", "8", "6")

    # Line 21, one step: vmap_grads has loop_grads' rows; it keeps a graph to w, g does not.
    (step,) = [s for s in trace.steps if s.line == vmapped]
    before = trace.steps[trace.steps.index(step) - 1]
    assert before.line == stack and before.calls is None  # no line of loss_fn in between
    shown = step.variables["vmap_grads"]
    assert _value(shown.values) == _value(step.variables["loop_grads"].values) == rows
    assert shown.grad_fn == "MulBackward0" and shown.requires_grad
    assert step.variables["loop_grads"].grad_fn is None
    for lang in LANGUAGES:
        assert "MulBackward0" in _said(lesson, lang), lang
    # What ran inside, on the Graph page: grad's graph at level 2 inside vmap (level 1), of
    # loss_fn on one sample, with the nodes of a loop round's call and one number out.
    (made,) = [p for p in trace.library if p.line == vmapped]
    assert ([(w.transform, w.level) for w in made.within], made.level) == (
        [("vmap", 1), ("grad", 2)], 2)
    graph = trace.graphs[made.graph]
    ops = [n.name for n in graph.nodes if n.kind == "backward" and n.name != "AccumulateGrad"]
    (first,) = [c for c in trace.backward if c.call == 1]
    assert ops == [s.name for s in first.steps]
    assert [n.shape for n in graph.nodes if n.kind == "output"] == [[]]
    for lang in LANGUAGES:
        assert all(op in _said(lesson, lang) for op in ops), lang
        assert text("library_title", lang) in _said(lesson, lang), lang
    _cites(lesson, "2", "1")

    # Lines 25–27: the batch's mean loss and its one backward(), call #5.
    (lost,) = [s for s in trace.steps if s.line == batch]
    assert _value(lost.variables["batch_loss"].values) == "2.5"
    assert lost.variables["w"].grad is None
    (done,) = [s for s in trace.steps if s.line == backward]
    assert _value(done.variables["w"].grad) == ["2", "-1"]
    _cites(lesson, "2.5", "0.25", "5")

    # The Backward pass page: the loop's 4 grads in their rounds, then the batch's backward;
    # nothing of the transforms.
    assert [(c.call, c.kind) for c in trace.backward] == [
        (1, "grad"), (2, "grad"), (3, "grad"), (4, "grad"), (5, "backward")]
    assert [c.rounds[-1].round for c in trace.backward[:4]] == [1, 2, 3, 4]  # type: ignore
    assert trace.backward[4].rounds is None
    for call, (error_, row) in enumerate(zip(["-1", "-2", "2", "1"], rows, strict=True), 1):
        twice = _number(2 * float(error_))
        assert _steps(trace, call) == [("PowBackward0", ["1"], [twice]),
                                       ("SubBackward0", [twice], [twice]),
                                       ("DotBackward0", [twice], [row])]
    assert _steps(trace, 5) == [
        ("MeanBackward0", ["1"], [["0.25"] * 4]),
        ("PowBackward0", [["0.25"] * 4], [["-0.5", "-1", "1", "0.5"]]),
        ("SubBackward0", [["-0.5", "-1", "1", "0.5"]], [["-0.5", "-1", "1", "0.5"]]),
        ("MvBackward0", [["-0.5", "-1", "1", "0.5"]], [["2", "-1"]]),
        ("AccumulateGrad", [["2", "-1"]], [])]
    # the transforms' own backward passes ran inside torch.func: said, not replayed
    (note,) = english(trace.notes)
    assert "inside library functions" in note and "not replayed" in note
    for lang in LANGUAGES:
        said = _said(lesson, lang)
        assert all(f"#{c}" in said for c in (1, 4, 5)), lang
        assert all(name in said for name in (
            "PowBackward0", "SubBackward0", "DotBackward0", "MeanBackward0", "MvBackward0")), lang

    # Lines 35–39: the Jacobian, 4 × 2, by both modes, and the Hessian.
    end = trace.variables
    assert _value(end["jac_rev"].values) == _value(end["jac_fwd"].values) == rows
    assert end["jac_rev"].shape == [4, 2]
    assert _value(end["hess"].values) == [["7.5", "4"], ["4", "3.5"]]
    assert all(end[name].grad_fn for name in ("jac_rev", "jac_fwd", "hess"))
    _cites(lesson, "7.5", "3.5")

    # What it prints: True three times, then the Hessian.
    assert trace.stdout.splitlines()[:3] == ["True"] * 3
    assert trace.stdout.splitlines()[3].startswith("tensor([[7.5000, 4.0000],")
    for lang in LANGUAGES:
        assert "True" in _said(lesson, lang), lang


def test_without_in_dims_vmap_maps_w_too_and_stops(pool: WorkerPool) -> None:
    """What the lesson asks the learner to try: in_dims=(None, 0, 0) taken out of line 21."""
    code = lesson_code(KEY)
    cut = code.replace(", in_dims=(None, 0, 0))(w, xs, ys)", ")(w, xs, ys)")
    assert cut != code
    trace = pool.run(cut)
    assert trace.error is not None and trace.error.message == NO_IN_DIMS
    assert trace.error.line == _line(code, "vmap_grads = ")
    lesson = lessons.by_key(KEY)
    for lang in LANGUAGES:
        assert NO_IN_DIMS in lesson.text[lang], lang
    _cites(lesson, "0", "2", "4")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_playground_shows_loss_fns_locals_in_the_loop(runs: dict[str, Trace],
                                                          lang: str) -> None:
    lesson = lessons.by_key(KEY)
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params["lang"] = lang
    at.run()
    at.button(key=f"lesson.{lesson.key}.{lesson.examples[0]}").click().run()
    assert not at.exception
    page = EDITORS[lesson.page]
    assert page == "playground" and at.session_state[f"{page}.trace"].ok
    first = _in_loss_fn(runs[lang])[0]
    at.session_state[f"{page}.step"] = runs[lang].steps.index(first) + 1
    at.run()
    assert not at.exception
    heading = f"**{text('locals_of', lang, call=code_span('loss_fn()'))}**"
    assert heading in [m.value for m in at.markdown]
