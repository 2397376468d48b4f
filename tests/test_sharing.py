"""The NumPy page: share/copy verdicts and changed cells from real runs, and the page itself."""

from __future__ import annotations

import pytest
from msgspec.structs import replace
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.trace import Trace, Variables
from explorer.trace.schema import Variable
from explorer.views.sharing import (
    PRESETS,
    array_names,
    cells,
    changed_cells,
    changed_pair,
    default_pair,
    last_change,
    preset,
    shares_memory,
    variable_changes,
)


@pytest.fixture(scope="module")
def traces(pool: WorkerPool) -> dict[str, Trace]:
    """Every preset, run for real."""
    return {p.key: pool.run(p.code) for p in PRESETS}


def _step(trace: Trace, code: str, source: str) -> int:
    """The index of the step that ran the line starting with `source`."""
    line = next(n for n, text in enumerate(code.splitlines(), 1) if text.startswith(source))
    return next(i for i, step in enumerate(trace.steps) if step.line == line)


def _around(trace: Trace, index: int) -> tuple[Variables, Variables]:
    return trace.steps[index].variables, trace.steps[index - 1].variables if index else {}


def _grid(rows: int, columns: int) -> set[tuple[int, ...]]:
    return {(r, c) for r in range(rows) for c in range(columns)}


ALL3, ALL5 = ({(i,) for i in range(n)} for n in (3, 5))

# preset, the statement that just ran, the pair, shares?, cells changed on each side
CASES = [
    ("tensor-to-numpy", "b = a.numpy()", ("a", "b"), True, set(), ALL5),
    ("tensor-to-numpy", "a.add_(1)", ("a", "b"), True, ALL5, ALL5),
    ("tensor-to-numpy", "print(b)", ("a", "b"), True, set(), set()),
    ("numpy-to-tensor", "b=torch.from_numpy(a)", ("b", "a"), True, ALL5, set()),
    ("numpy-to-tensor", "np.add(a,1,out=a)", ("b", "a"), True, ALL5, ALL5),
    ("tensor-vs-as-tensor", "a[0] = 7", ("t", "a"), False, set(), {(0,)}),
    ("tensor-vs-as-tensor", "a[0] = 7", ("s", "a"), True, {(0,)}, {(0,)}),
    ("rebind-breaks-link", "a += 1", ("a", "b"), True, ALL3, ALL3),
    ("rebind-breaks-link", "a = a + 1", ("a", "b"), False, ALL3, set()),
    ("dtype-copies", "x.add_(1)", ("x", "d"), False, ALL3, set()),
    ("dtype-copies", "x.add_(1)", ("x", "f"), False, ALL3, set()),
    ("dtype-copies", "x.add_(1)", ("x", "n"), True, ALL3, ALL3),
    ("views-share", "x.mul_(10)", ("x", "n"), True, _grid(2, 3), _grid(3, 2)),
    ("views-share", "x.mul_(10)", ("t", "col"), True, _grid(3, 2), {(0,), (1,)}),
    ("views-share", "x.mul_(10)", ("x", "c"), True, _grid(2, 3), {(0,), (1,)}),
    ("contiguous-copies", "c = t.contiguous()", ("t", "c"), False, set(), _grid(3, 2)),
    ("contiguous-copies", "x.mul_(10)", ("t", "c"), False, _grid(3, 2), set()),
    ("contiguous-copies", "x.mul_(10)", ("x", "n"), False, _grid(2, 3), set()),
    ("requires-grad-detach", "n = x.detach()", ("x", "n"), True, set(), ALL3),
    ("requires-grad-detach", "    x.mul_(2)", ("x", "n"), True, ALL3, ALL3),  # in its block
    ("cuda-cpu-copy", "x.add_(1)", ("x", "n"), True, ALL3, ALL3),  # the CPU branch, here
    ("char-tensor", "c.add_(1)", ("c", "n"), True, ALL3, ALL3),
]


def test_every_preset_is_checked() -> None:
    assert {case[0] for case in CASES} == {p.key for p in PRESETS}


@pytest.mark.parametrize(("key", "source", "pair", "shares", "left", "right"), CASES,
                         ids=[f"{c[0]}:{c[1]}:{'-'.join(c[2])}" for c in CASES])
def test_verdict_and_changed_cells_of_each_preset(
        traces: dict[str, Trace], key: str, source: str, pair: tuple[str, str], shares: bool,
        left: set[tuple[int, ...]], right: set[tuple[int, ...]]) -> None:
    trace = traces[key]
    now, before = _around(trace, _step(trace, preset(key).code, source))
    a, b = now[pair[0]], now[pair[1]]
    assert shares_memory(a, b) is shares
    assert shares_memory(b, a) is shares
    assert variable_changes(a, before.get(pair[0])) == left
    assert variable_changes(b, before.get(pair[1])) == right


def test_each_preset_runs_shows_its_pair_and_opens_where_the_pair_last_changed(
        traces: dict[str, Trace]) -> None:
    opening = {"tensor-to-numpy": "a.add_(1)", "numpy-to-tensor": "np.add(a,1,out=a)",
               "rebind-breaks-link": "a = a + 1", "requires-grad-detach": "    x.mul_(2)"}
    for p in PRESETS:
        trace = traces[p.key]
        assert trace.ok or p.key == "requires-grad-detach", (p.key, trace.error)
        assert default_pair(trace, p.code) == p.pair
        assert set(p.pair) <= set(array_names(trace))
        if p.key in opening:
            assert last_change(trace, *p.pair) == _step(trace, p.code, opening[p.key])


def test_numpy_of_a_tensor_that_requires_grad_fails_with_pytorchs_message(
        traces: dict[str, Trace]) -> None:
    trace, code = traces["requires-grad-detach"], preset("requires-grad-detach").code
    error = trace.error
    assert error is not None and error.type == "RuntimeError"
    assert "Can't call numpy() on Tensor that requires grad" in error.message
    assert code.splitlines()[error.line - 1].startswith("m = x.numpy()")
    assert "detach" in error.explanation.en and "detach" in error.explanation.zh


def test_the_outdated_chartensor_note_and_the_cpu_branch(traces: dict[str, Trace]) -> None:
    char = traces["char-tensor"].variables
    assert (char["c"].dtype, char["n"].dtype) == ("torch.int8", "int8")
    assert char["n"].values == [2, 2, 2]
    cuda = traces["cuda-cpu-copy"]
    assert cuda.variables["x"].device == "cpu"  # no GPU here: the if-branch was skipped


def test_a_cuda_tensor_never_shares_with_an_array(traces: dict[str, Trace]) -> None:
    final = traces["cuda-cpu-copy"].variables
    assert shares_memory(final["x"], final["n"])
    on_gpu = replace(final["x"], device="cuda:0")  # the same addresses, in GPU memory
    assert not shares_memory(on_gpu, final["n"])
    assert not shares_memory(final["n"], on_gpu)


def test_empty_and_non_array_values_never_share(pool: WorkerPool) -> None:
    final = pool.run("e = torch.ones(0)\nf = e.numpy()\nk = 3\nx = torch.ones(2)\n"
                     "y = x.numpy()\n").variables
    assert not shares_memory(final["e"], final["f"])  # no elements, no bytes to share
    assert not shares_memory(final["k"], final["x"])
    assert shares_memory(final["x"], final["y"])


def test_a_shape_change_changes_every_cell_even_when_the_shown_block_is_equal(
        pool: WorkerPool) -> None:
    trace = pool.run("x = torch.zeros(3000)\nx = torch.zeros(4000)\nx[5] = 1\n")
    (one, two, three) = (step.variables["x"] for step in trace.steps)
    assert one.truncated and two.truncated and one.values == two.values
    assert variable_changes(two, one) == set(cells(two.values))
    assert len(variable_changes(two, one)) == len(two.values) >= 1000
    assert variable_changes(three, two) == {(5,)}  # the same shape: only what changed


def test_changed_cells_of_nested_scalar_and_reshaped_values() -> None:
    assert changed_cells([[1, 2], [3, 4]], [[1, 2], [3, 5]]) == {(1, 1)}
    assert changed_cells([[1, 2], [3, 4]], [1, 2, 3, 4]) == _grid(2, 2)
    assert changed_cells([1, 2, 3], [1, 2]) == {(0,), (1,), (2,)}
    assert changed_cells(2.0, 1.0) == {()}
    assert changed_cells(1.0, 1.0) == set()
    assert changed_cells(["nan", 1.0], ["nan", 2.0]) == {(1,)}
    assert changed_cells([1.0], None) == {(0,)}
    assert changed_cells([], []) == set()


def test_pairing_is_by_name_at_each_step_and_defaults_to_a_tensor_and_an_array(
        pool: WorkerPool) -> None:
    code = ("a = np.ones(2)\nk = 1\nt = torch.zeros(2)\nb = torch.from_numpy(a)\n"
            "a = np.ones(2)\n")
    trace = pool.run(code)
    assert array_names(trace) == ["a", "t", "b"]
    assert default_pair(trace, code) == ("t", "a")
    shared, rebound = (_around(trace, i)[0] for i in (3, 4))
    assert shares_memory(shared["b"], shared["a"])
    assert not shares_memory(rebound["b"], rebound["a"])  # `a` now names another array
    linked = "h = torch.ones(2)\narr = np.zeros(3)\nt = torch.from_numpy(arr)\nc = t.clone()\n"
    assert default_pair(pool.run(linked), linked) == ("t", "arr")  # the pair that shares
    only_tensors = pool.run("x = torch.ones(2)\ny = x * 2\n")
    assert default_pair(only_tensors, "") == ("x", "y")
    assert default_pair(pool.run("k = 1\n"), "") == (None, None)


# ---- the page, through Streamlit's AppTest ------------------------------------------------

def _numpy_page(lang: str = "en") -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/3_NumPy.py").run()
    assert not at.exception
    return at


def _run(at: AppTest) -> AppTest:
    at.button(key="numpy.run").click().run()
    assert not at.exception
    return at


@pytest.mark.parametrize(("lang", "title", "badge"), [("en", "Tensor ↔ NumPy", "shares memory"),
                                                      ("zh", "Tensor ↔ NumPy", "共享内存")])
def test_the_page_runs_the_seed_example_in_both_languages(lang: str, title: str,
                                                          badge: str) -> None:
    at = _numpy_page(lang)
    assert at.title[0].value == title
    assert at.selectbox(key="numpy.lesson").value == "tensor-to-numpy"
    assert preset("tensor-to-numpy").caption[lang] == at.info[0].value
    _run(at)
    assert [at.selectbox(key=f"numpy.{side}.widget").value for side in ("left", "right")] == [
        "a", "b"]
    assert at.success[0].value.startswith(f"**{badge}**")
    assert not at.warning
    assert "a.add_(1)" in [code.value for code in at.code]  # opened where b changed


def test_a_preset_loads_runs_and_the_badge_follows_the_steps() -> None:
    at = _numpy_page()
    at.selectbox(key="numpy.lesson").set_value("rebind-breaks-link").run()
    assert at.session_state["numpy.code"] == preset("rebind-breaks-link").code
    _run(at)
    assert "a = a + 1  # new tensor: link gone" in [code.value for code in at.code]
    assert at.warning[0].value.startswith("**separate copy**")
    assert not at.success
    at.button(key="numpy.step.back").click().run()
    assert "a += 1     # in place: b follows" in [code.value for code in at.code]
    assert at.success[0].value.startswith("**shares memory**")


def test_the_learner_picks_the_pair() -> None:
    at = _numpy_page()
    at.selectbox(key="numpy.lesson").set_value("tensor-vs-as-tensor").run()
    _run(at)
    assert at.warning[0].value.startswith("**separate copy**")  # t = torch.tensor(a)
    at.selectbox(key="numpy.left.widget").set_value("s").run()
    assert not at.exception
    assert at.success[0].value.startswith("**shares memory**")  # s = torch.as_tensor(a)


def test_the_error_preset_shows_pytorchs_message_and_the_last_good_step() -> None:
    at = _numpy_page("zh")
    at.selectbox(key="numpy.lesson").set_value("requires-grad-detach").run()
    at.button(key="numpy.run").click().run()
    assert not at.exception
    assert at.error[0].value == "第 6 行出现 RuntimeError"
    assert any("Can't call numpy() on Tensor that requires grad" in c.value for c in at.code)
    assert at.success[0].value.startswith("**共享内存**")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_that_changes_another_pair_says_so_and_shows_it_at_a_click(lang: str) -> None:
    at = _numpy_page(lang)
    at.session_state["numpy.code"] = (
        "t = torch.arange(4.0)\na = t.numpy()\na[0] = 10.0\nb = np.array([1.0, 2.0, 3.0])\n"
        "u = torch.from_numpy(b)\nu += 1\nprint(t, a)\n")
    _run(at)
    assert [at.session_state[f"numpy.{side}"] for side in ("left", "right")] == ["t", "a"]
    assert not [i for i in at.info if "`u`" in i.value]  # a step that changed t and a
    lines = [s.line for s in at.session_state["numpy.trace"].steps]
    at.session_state["numpy.step"] = lines.index(6) + 1  # u += 1: b changes with it
    at.run()
    names = text("names_separator", lang).join(["`b`", "`u`"])  # in the program's order
    assert text("numpy_elsewhere", lang, names=names) in [i.value for i in at.info]
    at.button(key="numpy.moved").click().run()
    assert [at.selectbox(key=f"numpy.{side}.widget").value for side in ("left", "right")] == [
        "b", "u"]
    assert at.success[0].value.startswith(f"**{text('numpy_shares', lang)}**")
    assert not [i for i in at.info if "`u`" in i.value]


def test_what_a_step_changed_is_told_as_its_cells_tell_it() -> None:
    base = {"shape": [2], "dtype": "float32", "device": "cpu", "numel": 2, "truncated": False}
    t = Variable(kind="tensor", values=[1.0, 2.0], data_ptr=64, memory=[64, 72], **base)
    a = Variable(kind="ndarray", values=[1.0, 2.0], data_ptr=64, memory=[64, 72], **base)
    c = Variable(kind="tensor", values=[1.0, 2.0], data_ptr=128, memory=[128, 136], **base)
    same = Variable(kind="tensor", values=[1.0, 2.0], data_ptr=64, memory=[64, 72], **base)
    empty = Variable(kind="tensor", values=[], data_ptr=0, memory=[0, 0],
                     **base | {"shape": [0], "numel": 0})
    before = {"t": t, "a": a, "c": c}
    for now, pair in [({"t": same, "a": a, "c": c}, None),  # an equal tensor: nothing changed
                      ({"t": t, "a": a, "c": c, "e": empty}, None),  # no cells to change
                      ({"t": t, "a": a, "c": replace(c, values=[1.0, 5.0])}, ("c", None)),
                      ({"t": replace(t, values=[3.0, 2.0]), "a": replace(a, values=[3.0, 2.0]),
                        "c": c}, ("t", "a"))]:  # shared memory: both, paired
        assert changed_pair(now, before) == pair
        assert bool(pair) == any(variable_changes(now[n], before.get(n)) for n in now)
