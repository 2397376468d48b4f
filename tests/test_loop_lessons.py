"""The lessons that step inside a loop: their programs run in the explorer with steps inside
the loop (in its rounds), give what plain PyTorch gives, and every value and line their text
cites is the run's own, the same in English and in Chinese."""

from __future__ import annotations

import contextlib
import io
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES
from explorer.pool.worker import WorkerPool
from explorer.trace import Step, Trace
from explorer.trace.graph_view import named_outputs

LOOPS = ("two-layer-by-hand", "gradient-accumulation")
# A number as a text cites it: not a digit of a name (`w1`, `MmBackward0`).
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")


def _said(lesson: lessons.Lesson, lang: str) -> str:
    """What the lesson tells a reader of `lang`: what to look at and its text."""
    return f"{lesson.look[lang]}\n{lesson.text[lang]}"


def _numbers(words: str) -> set[str]:
    return set(NUMBER.findall(words))


def _line(code: str, statement: str) -> int:
    """The line of `code` that holds `statement` (once), comments aside."""
    (found,) = [n for n, line in enumerate(code.splitlines(), 1)
                if statement in line.split("#")[0]]
    return found


def _cites_line(words: str, lang: str, line: int) -> bool:
    """Whether `words` name `line` as a line of the program ("line 42", "Lines 54–55",
    "第 42 行", "第 54–55 行")."""
    pattern = (rf"[Ll]ines? (\d+–)?{line}\b" if lang == "en" else rf"第 (\d+–)?{line}[ –]")
    return re.search(pattern, words) is not None


def _cites(lesson: lessons.Lesson, *numbers: str) -> None:
    for lang in LANGUAGES:
        missing = [n for n in numbers if n not in _numbers(_said(lesson, lang))]
        assert not missing, (lesson.key, lang, missing)


def _cites_lines(lesson: lessons.Lesson, *lines: int) -> None:
    for lang in LANGUAGES:
        for line in lines:
            assert _cites_line(_said(lesson, lang), lang, line), (lesson.key, lang, line)


def _number(value: float) -> str:
    """A value as the lessons cite it: to 4 significant places, no trailing zeros."""
    return f"{value:.4g}"


def run_lessons(pool: WorkerPool, keys: tuple[str, ...]) -> dict[tuple[str, str], Trace]:
    """Each lesson's program run as the app runs it, in each language."""
    found = {}
    for key in keys:
        (program,) = lessons.by_key(key).programs
        for lang in LANGUAGES:
            found[key, lang] = pool.run(program.code_in(lang))
    return found


def lesson_code(key: str, lang: str = "en") -> str:
    """A lesson's program in `lang`."""
    return lessons.by_key(key).programs[0].code_in(lang)


@pytest.fixture(scope="module")
def runs(pool: WorkerPool) -> dict[tuple[str, str], Trace]:
    return run_lessons(pool, LOOPS)


def _inside(trace: Trace, line: int, round_: int | None = None) -> list[Step]:
    """The steps at `line` (in the loop's round `round_`, if given)."""
    return [s for s in trace.steps if s.line == line
            and (round_ is None or (s.rounds and s.rounds[-1].round == round_))]


def _backward(trace: Trace, step: Step) -> Counter[str]:
    """The backward nodes in the graph after `step`, by name."""
    assert step.graph is not None
    return Counter(n.name or "" for n in trace.graphs[step.graph].nodes if n.kind == "backward")


def _freed(trace: Trace, step: Step) -> bool:
    assert step.graph is not None
    return any("freed by backward()" in value for node in trace.graphs[step.graph].nodes
               for value in (node.saved or {}).values())


def _flat(values: Any) -> list[float]:
    return [x for row in values for x in _flat(row)] if isinstance(values, list) else [values]


@contextlib.contextmanager
def _threads(count: int) -> Iterator[None]:
    """torch's thread count set to `count` (MKL's float sums depend on it), then put back."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _plain(code: str, threads: int) -> tuple[str, dict[str, Any]]:
    """What plain PyTorch prints for `code`, seeded as the explorer seeds a run, and its
    variables at the end."""
    namespace: dict[str, Any] = {}
    out = io.StringIO()
    with _threads(threads), contextlib.redirect_stdout(out):
        torch.manual_seed(0)
        exec(compile(code, "<plain>", "exec"), namespace)
    return out.getvalue(), namespace


@pytest.mark.parametrize("key", LOOPS)
def test_a_loop_lessons_program_steps_inside_its_loop_in_every_language(
        runs: dict[tuple[str, str], Trace], key: str) -> None:
    code = lesson_code(key)
    loop = _line(code, "for ")
    for lang in LANGUAGES:
        trace = runs[key, lang]
        assert trace.ok, trace.error
        inner = [s for s in trace.steps if s.rounds]
        assert len(inner) > 10 and all(s.within == loop for s in inner), lang
        assert {s.rounds[0].line for s in inner} == {loop}  # type: ignore[index]
        assert {s.rounds[0].round for s in inner} >= {1, 2}  # type: ignore[index]
        assert len({s.line for s in inner}) >= 4  # lines of the loop's body, not only one
    en, zh = (runs[key, lang] for lang in LANGUAGES)
    assert [(s.line, s.rounds) for s in en.steps] == [(s.line, s.rounds) for s in zh.steps]
    assert en.stdout == zh.stdout


@pytest.mark.parametrize("key", LOOPS)
def test_a_loop_lessons_program_gives_what_plain_pytorch_gives(
        runs: dict[tuple[str, str], Trace], key: str) -> None:
    trace = runs[key, "en"]
    printed, namespace = _plain(lesson_code(key), trace.threads)
    assert trace.stdout == printed
    for name, info in trace.variables.items():
        if info.kind == "tensor":
            plain = namespace[name].detach().flatten().tolist()
            assert _flat(info.values) == pytest.approx(plain, rel=1e-6), name


@pytest.mark.parametrize("key", LOOPS)
def test_a_loop_lesson_cites_the_same_numbers_in_english_and_chinese(key: str) -> None:
    lesson = lessons.by_key(key)
    assert lesson.page in (lessons.GRAPH, lessons.PLAYGROUND)  # pages that step a program
    en, zh = (_numbers(_said(lesson, lang)) for lang in LANGUAGES)
    assert en == zh, (en - zh, zh - en)


def test_the_two_layer_lesson_cites_what_its_run_shows(
        runs: dict[tuple[str, str], Trace]) -> None:
    lesson, code, trace = lessons.by_key("two-layer-by-hand"), lesson_code("two-layer-by-hand"), \
        runs["two-layer-by-hand", "en"]
    forward, loss, backward, update, zero, printed = (_line(code, s) for s in (
        "y_pred = relu(", "loss = (", "loss.backward()", "w1 -= ", "w1.grad.zero_()",
        "print(t, "))
    _cites_lines(lesson, forward, loss, backward, update, update + 1, zero, printed)
    assert "N, D_in, H, D_out = 4, 3, 5, 2" in code and "learning_rate = 1e-6" in code
    assert "for t in range(500):" in code
    _cites(lesson, "4", "3", "5", "2", "500")
    # Each round's first line of the loop is `relu = MyReLU.apply`: where the mark comes back.
    alias = _line(code, "relu = MyReLU.apply")
    loop = [s for s in trace.steps if not s.calls]  # the loop's own lines, not MyReLU's
    starts = [s for s, before in zip(loop[1:], loop, strict=False)
              if s.rounds and s.rounds != before.rounds]
    assert len(starts) == 16 and {s.line for s in starts} == {alias}
    _cites_lines(lesson, alias)
    for lang in LANGUAGES:
        assert "1e-6" in _said(lesson, lang)

    # Round 1: the forward graph, the loss on top, backward frees it and writes w1.grad.
    (made,) = _inside(trace, forward, 1)
    before = trace.steps[trace.steps.index(made) - 1]
    assert (before.calls, before.line) == (["MyReLU.forward"], _line(code, "return input.clamp"))
    assert before.locals is not None and before.locals["return"].shape == [4, 5]
    assert _backward(trace, made) == Counter(MmBackward0=2, MyReLUBackward=1, AccumulateGrad=2)
    (lost,) = _inside(trace, loss, 1)
    nodes = _backward(trace, lost)
    assert nodes - _backward(trace, made) == Counter(SubBackward0=1, PowBackward0=1,
                                                     SumBackward0=1)
    assert lost.variables["w1"].grad is None and lost.variables["w1"].version == 0
    first = lost.variables["loss"].values
    assert trace.losses[0].value == pytest.approx(first)
    _cites(lesson, str(before.line), str(sum(_backward(trace, made).values())),
           str(sum(nodes.values())), f"{first:.2f}")
    (freed,) = _inside(trace, backward, 1)
    graph = trace.graphs[freed.graph]  # type: ignore[index]
    assert _freed(trace, freed) and not [n for n in graph.nodes if n.kind == "saved"]
    assert any(n.kind == "saved" for n in trace.graphs[lost.graph].nodes)  # type: ignore[index]
    grad = freed.variables["w1"].grad
    assert (len(grad), len(grad[0])) == (3, 5) and any(_flat(grad))
    (updated,) = _inside(trace, update, 1)
    assert _backward(trace, updated) == nodes and updated.variables["w1"].version == 1
    (zeroed,) = _inside(trace, zero, 1)
    assert _flat(zeroed.variables["w1"].grad) == [0.0] * 15
    _cites(lesson, "0", "1")

    # Round 2: a new y_pred graph while `loss` still holds round 1's, gone once loss is new.
    (again,) = _inside(trace, forward, 2)
    outputs = named_outputs(trace.graphs[again.graph])  # type: ignore[index]
    assert {"y_pred", "loss"} <= set(outputs) and _freed(trace, again)
    assert _backward(trace, again)["MyReLUBackward"] == 2
    (new,) = _inside(trace, loss, 2)
    assert not _freed(trace, new) and _backward(trace, new) == nodes

    # The rounds kept, and what the print gives.
    kept = sorted({s.rounds[-1].round for s in _inside(trace, backward)})  # type: ignore[index]
    assert kept == [*range(1, 11), 20, 40, 80, 160, 320, 500]
    assert {s.variables["t"].values for s in _inside(trace, backward, 500)} == {499}
    assert "rounds 1–10, 20, 40, 80, 160, 320 and 500" in _said(lesson, "en")
    assert "第 1–10、20、40、80、160、320 轮和最后的第 500 轮" in _said(lesson, "zh")
    lines = dict(line.split() for line in trace.stdout.splitlines())
    assert list(lines) == ["99", "199", "299", "399", "499"]
    _cites(lesson, "99", f"{float(lines['99']):.2f}", "499", f"{float(lines['499']):.2f}")


def test_the_gradient_accumulation_lesson_cites_what_its_run_shows(
        runs: dict[tuple[str, str], Trace]) -> None:
    key = "gradient-accumulation"
    lesson, code, trace = lessons.by_key(key), lesson_code(key), runs[key, "en"]
    loss, backward, check, step, zero = (_line(code, s) for s in (
        "loss = (", ".backward()", "if (i + 1)", "optimizer.step()", "optimizer.zero_grad()"))
    _cites_lines(lesson, loss, backward, check, step, zero)
    assert "accum_steps = 2" in code and "for i in range(4):" in code and "lr=0.01" in code
    _cites(lesson, "2", "4", "0.01")

    assert trace.steps[0].variables.get("w") is None
    first = _inside(trace, backward, 1)[0]
    assert trace.steps[trace.steps.index(first) - 1].variables["w"].grad is None
    grads = [_flat(_inside(trace, backward, r)[0].variables["w"].grad)[0] for r in range(1, 5)]
    assert [_number(g) for g in grads] == ["-5", "-30", "-8.5", "-15.3"]
    losses = [_inside(trace, loss, r)[0].variables["loss"].values for r in (1, 2)]
    assert [_number(v) for v in losses] == ["10", "50"]
    # Each batch's own gradient is twice what it adds (its loss is halved).
    batches = [2 * grads[0], 2 * (grads[1] - grads[0])]
    assert [_number(b) for b in batches] == ["-10", "-50"]
    assert grads[1] == pytest.approx(sum(batches) / 2)
    _cites(lesson, *(_number(g) for g in grads), *(_number(v) for v in losses),
           *(_number(b) for b in batches), _number(grads[1] - grads[0]))

    for r, w in ((2, "0.3"), (4, "0.453")):
        (stepped,) = _inside(trace, step, r)
        assert _number(_flat(stepped.variables["w"].values)[0]) == w
        (cleared,) = _inside(trace, zero, r)
        assert cleared.variables["w"].grad is None  # zero_grad(): None, not zeros
        _cites(lesson, w)
    assert sorted(s.rounds[-1].round for s in _inside(trace, step)) == [2, 4]  # type: ignore
    assert sorted(s.rounds[-1].round for s in _inside(trace, zero)) == [2, 4]  # type: ignore
    assert [s.variables["i"].values for s in _inside(trace, backward)] == [0, 1, 2, 3]
    _cites(lesson, "0", "1", "2", "3")


def test_without_accumulation_the_grad_never_grows_past_one_batch(pool: WorkerPool) -> None:
    """What the lesson asks the learner to try: zero_grad() moved out of the `if`."""
    code = lesson_code("gradient-accumulation")
    moved = code.replace("        optimizer.zero_grad()", "    optimizer.zero_grad()")
    assert moved != code
    trace = pool.run(moved)
    assert trace.ok, trace.error
    before = [s for s in trace.steps if s.line == _line(code, "loss = (")]
    after = [s for s in trace.steps if s.line == _line(code, ".backward()")]
    assert [s.variables["w"].grad for s in before] == [None] * 4
    assert [_number(_flat(s.variables["w"].grad)[0]) for s in after][:2] == ["-5", "-25"]
