"""The backward pass as the engine really ran it, and the animation made from it."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from explorer.content.rules import rule
from explorer.record.execute import execute
from explorer.trace.graph_view import view
from explorer.trace.notes import english
from explorer.trace.schema import Round
from explorer.views.animation import CAPTION, MAX_FRAMES, NUMBERS, figure, frames_of
from explorer.views.export import animation_view
from explorer.views.present import compact
from explorer.views.render import positions, svg
from tests.programs import MY_RELU, SEED

# The seed's MyReLU, telling when the engine runs its backward.
MY_RELU = MY_RELU.replace("input, = ctx.saved_tensors",
                          'print("my backward ran")\n        input, = ctx.saved_tensors')


def _values(grad: dict) -> np.ndarray:
    return np.array(grad.values, dtype=float)


def test_the_seed_pass_in_engine_order_with_the_engines_values() -> None:
    trace = execute(SEED)
    (call,) = trace.backward
    steps = call.steps
    assert [s.name for s in steps] == ["MeanBackward0", "MulBackward0", "MulBackward0",
                                          "AddBackward0", "AccumulateGrad"]
    received = [float(_values(s.grad_outputs[0]).flat[0]) for s in steps]
    assert received == [1.0, 0.25, 0.75, 4.5, 4.5]
    into_add = [g for g in steps[2].grad_inputs if g and g.to == steps[3].node]
    assert [float(_values(g).flat[0]) for g in into_add] == [2.25, 2.25]  # summed to 4.5
    (written,) = call.leaf_grads
    assert np.all(_values(written.grad) == 4.5) and written.after == 5
    graph_ids = {n.id for n in trace.graphs[call.graph].nodes}
    assert {s.node for s in steps} <= graph_ids and call.root in graph_ids


def test_the_vector_jacobian_product_equals_the_leaf_gradient() -> None:
    code = ("x = torch.randn(3, requires_grad=True)\ny = x * 2\nwhile y.data.norm() < 1000:\n"
            "    y = y * 2\nv = torch.tensor([0.1, 1.0, 0.0001])\ny.backward(v)\n")
    trace = execute(code)
    v = np.array(trace.backward[0].vector)
    np.testing.assert_allclose(v, [0.1, 1.0, 0.0001], rtol=1e-6)
    recorded = _values(trace.backward[0].leaf_grads[0].grad)
    np.testing.assert_allclose(recorded, trace.variables["x"].grad)
    assert len(trace.backward) == 1  # no extra backward pass was run to build J
    torch.manual_seed(0)  # the same program in plain PyTorch, for an independent Jacobian
    x = torch.randn(3)

    def f(t: torch.Tensor) -> torch.Tensor:
        y = t * 2
        while y.data.norm() < 1000:
            y = y * 2
        return y

    jac = torch.autograd.functional.jacobian(f, x).numpy()  # J, built here, not by the app
    np.testing.assert_allclose(v @ jac, recorded, rtol=1e-6)


def test_a_vector_without_gradient_is_refused_and_nothing_runs() -> None:
    trace = execute("x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n")
    assert "grad can be implicitly created only for scalar outputs" in trace.error.message
    assert trace.backward[0].steps == [] and trace.backward[0].leaf_grads == []


def test_gradients_accumulate_across_calls_until_zeroed() -> None:
    code = SEED.replace("out.backward()", "out.backward(retain_graph=True)\n"
                        "out.backward(retain_graph=True)\nx.grad.zero_()\nout.backward()")
    trace = execute(code)
    assert trace.ok, trace.error
    written = [float(_values(c.leaf_grads[0].grad).flat[0]) for c in trace.backward]
    assert written == [4.5, 9.0, 4.5]


def test_backward_twice_without_retain_graph_fails_with_an_explanation() -> None:
    trace = execute(SEED + "out.backward()\n")
    assert trace.error.line == 6
    assert "retain_graph" in trace.error.explanation.en
    assert len(trace.backward) == 2 and len(trace.backward[0].steps) == 5


@pytest.mark.parametrize(("code", "raised"), [
    (SEED + "out.backward()\n", [None, True]),  # its graph was freed by the first
    ("x = torch.ones(3)\ny = (x * 2).sum()\ny.backward()\n", [True]),  # nothing needs grad
    ("x = torch.ones(3, requires_grad=True)\nfor t in range(2):\n    (x * 2).sum().backward()\n"
     "    if t:\n        x.grad.foo\n", [None, None]),  # a later line raised, not the call
    ("x = torch.ones(3, requires_grad=True)\ny = x * 2\ntry:\n    y.backward()\n"
     "except RuntimeError:\n    print('caught')\n", [True]),  # raised, and the program caught it
])
def test_a_call_that_raised_says_so(code: str, raised: list[bool | None]) -> None:
    trace = execute(code)
    assert [call.raised for call in trace.backward] == raised


CARRIED = ("W = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)\nh = torch.zeros(2)\n"
           "for step in range(3):\n    h_prev = h\n    h = torch.tanh(W @ h_prev + step)\n"
           "    h.sum().backward()\n")


def test_the_node_a_call_stopped_at_raised_and_is_not_drawn_done() -> None:
    trace = execute(CARRIED)  # round 2 walks back into round 1's freed graph
    first, second = trace.backward
    assert not any(s.raised for s in first.steps) and second.raised
    stopped = second.steps[-1]
    assert [s for s in second.steps if s.raised] == [stopped]
    assert stopped.name == "TanhBackward0" and stopped.grad_inputs == []
    assert stopped.node in {s.node for s in first.steps}  # round 1's, freed by the first call
    shown = view(trace.graphs[second.graph])
    chart = figure(second, positions(shown.dot), svg(shown.dot), shown.groups,
                   at=len(second.steps) - 1, animated=False)
    done = {(x, y) for trace_ in chart.data[:2] for x, y in zip(trace_.x, trace_.y, strict=True)}
    box = positions(shown.dot)["nodes"][stopped.node]
    assert len(done) == len(second.steps) - 1 and (box[0], box[1]) not in done
    assert "TanhBackward0 raised the error" in chart.data[CAPTION].text[0]
    # A call that fails before any node runs stops at none.
    (refused,) = execute("x = torch.ones(3)\n(x * 2).sum().backward()\n").backward
    assert refused.raised and not any(s.raised for s in refused.steps)


def test_a_call_that_raised_outside_the_calls_kept_is_kept_with_its_graph() -> None:
    loop = ("w = torch.tensor([0.5, -0.5], requires_grad=True)\nfor i in range(30):\n"
            "    loss = (w * 3).sum() ** 2\n    loss.backward()\n    if i {test}:\n"
            "        {call}\n")
    trace = execute(loop.format(test="== 14", call="loss.backward()"))
    raised = trace.backward[-1]  # call 16, in round 15: not among calls 1–10, 20, 40…
    assert (raised.call, raised.raised, raised.steps) == (16, True, [])
    assert [r.round for r in raised.rounds] == [15] and raised.graph is not None
    assert any(n.name == "PowBackward0" for n in trace.graphs[raised.graph].nodes)
    caught = execute(loop.format(test="> 0", call="try:\n            loss.backward()\n"
                                 "        except RuntimeError:\n            pass"))
    assert caught.ok and sum(1 for c in caught.backward if c.raised and not c.steps) == 10


def test_non_leaf_grad_is_none_unless_retained() -> None:
    trace = execute(SEED)
    assert trace.variables["y"].grad is None and trace.variables["x"].grad is not None
    kept = execute(SEED.replace("out = z.mean()", "y.retain_grad()\nout = z.mean()"))
    assert np.all(np.array(kept.variables["y"].grad) == 4.5)


def test_a_retained_grad_is_recorded_as_its_node_begins_as_pytorch_writes_it() -> None:
    # y's hook changes what y.grad keeps; the second call adds to it; grad() writes it too;
    # z is not in the third call's graph, and a leaf retains nothing of its own
    code = ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\ny.retain_grad()\n"
            "y.register_hook(lambda g: g + 100)\nz = (y * y).sum()\nz.retain_grad()\n"
            "z.backward(retain_graph=True)\nz.backward(retain_graph=True)\n"
            "w = torch.autograd.grad((y * 3).sum(), x)\n")
    trace = execute(code)
    assert trace.ok, trace.error
    x = torch.tensor([1.0, 2.0], requires_grad=True)  # the same, in plain PyTorch
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g + 100)
    z = (y * y).sum()
    z.retain_grad()
    z.backward(retain_graph=True)
    plain = [{"z": z.grad.tolist(), "y": y.grad.tolist()}]
    z.backward(retain_graph=True)
    plain.append({"z": z.grad.tolist(), "y": y.grad.tolist()})
    torch.autograd.grad((y * 3).sum(), x)
    plain.append({"y": y.grad.tolist()})
    assert plain[-1] == {"y": [311.0, 319.0]}  # (2y + 100) twice, then 3 + 100
    for call, expected in zip(trace.backward, plain, strict=True):
        assert {" = ".join(g.names): g.grad.values for g in call.retained} == expected
        for g in call.retained:  # written as its node began: the step that runs it
            assert call.steps[g.after - 1].node == g.node
            (made,) = [n for n in trace.graphs[call.graph].nodes if n.id == g.leaf]
            assert made.names == g.names and made.grad_fn == call.steps[g.after - 1].name


def test_a_retained_grad_is_written_beside_its_tensor_when_its_node_begins() -> None:
    trace = execute(SEED.replace("out = z.mean()", "z.retain_grad()\nout = z.mean()"))
    call, fig = _figure(trace)
    (retained,) = call.retained
    said = [{n for n in _numbers(frame) or [] if n.startswith(".grad")} for frame in fig.frames]
    assert said[-1] == {".grad = 4.5000", ".grad = 0.2500"}  # x's, and dout/dz = 1/4 each
    step = retained.after - 1  # written as z's node began, and not before
    assert ".grad = 0.2500" in said[step] and ".grad = 0.2500" not in said[step - 1]
    hover = next(t for t in fig.data if t.customdata is not None)
    assert hover.hovertext[list(hover.customdata).index(retained.leaf)] == (
        ".grad = [[0.2500, 0.2500], [0.2500, 0.2500]]")


def test_a_custom_function_runs_its_own_backward_in_the_pass() -> None:
    code = MY_RELU + ("x = torch.tensor([-1.0, 2.0], requires_grad=True)\n"
                      "s = (MyReLU.apply(x) * 3).sum()\ns.backward()\n")
    trace = execute(code)
    assert trace.stdout == "my backward ran\n"
    names = [s.name for s in trace.backward[0].steps]
    assert "MyReLUBackward" in names
    assert trace.variables["x"].grad == [0.0, 3.0]
    assert "you wrote" in rule("MyReLUBackward", custom=True)


def test_autograd_grad_is_recorded_and_library_internals_are_not() -> None:
    code = ("x = torch.ones(2, requires_grad=True)\ny = (x ** 3).sum()\n"
            "g, = torch.autograd.grad(y, x)\n"
            "j = torch.autograd.functional.jacobian(lambda t: t * 2, torch.ones(3))\n")
    trace = execute(code)
    assert [c.kind for c in trace.backward] == ["grad"]
    assert trace.variables["g"].values == [3.0, 3.0]
    assert trace.backward[0].leaf_grads == []  # grad() returns, it writes no .grad


def test_what_autograd_grad_returned_is_recorded_input_by_input() -> None:
    code = ("x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "w = torch.tensor([3.0, -1.0], requires_grad=True)\n"
            "unused = torch.ones(1, requires_grad=True)\ny = x * x * w\n"
            "gx, gw, gu = torch.autograd.grad(y, [x, w, unused], torch.tensor([1.0, 0.5]),"
            " allow_unused=True)\n"
            "a = torch.tensor(2.0, requires_grad=True)\n"
            "b = torch.tensor(-1.0, requires_grad=True)\nloss = (a * b) ** 2\n"
            "ga, gb = torch.autograd.grad(loss, (p for p in [a, b]), create_graph=True)\n"
            "for i in range(12):\n    a.grad = b.grad = None\n"
            "    ((a * b) ** 2).backward(inputs=iter([a, b]))\n")
    trace = execute(code)
    assert trace.ok, trace.error
    first, second = trace.backward[:2]
    assert [(r.names, r.grad.values if r.grad else None) for r in first.returned] == [
        (["x"], [6.0, -2.0]), (["w"], [1.0, 2.0]), (["unused"], None)]  # vᵀ(2xw), vᵀx², none
    # Inputs as generators, read once for PyTorch and the record alike: 2ab², 2a²b, in every
    # call (from call 11, not recorded in full, from the leaves' .grad).
    assert [(r.names, r.grad.values) for r in second.returned] == [(["a"], 4.0), (["b"], -8.0)]
    assert [s.grad_norms for s in trace.losses[2:]] == [{"a": 4.0, "b": 8.0}] * 12
    assert all(call.returned is None for call in trace.backward[2:])  # backward() returns None


def test_a_long_training_loop_records_its_first_calls_then_ever_further_apart() -> None:
    code = ("w = torch.ones(3, requires_grad=True)\nfor i in range(50):\n"
            "    loss = (w * i).sum()\n    loss.backward()\n")
    trace = execute(code)
    assert [c.call for c in trace.backward] == [*range(1, 11), 20, 40, 50]  # 50: the last
    assert trace.backward[-1].rounds == [Round(line=2, name="i", round=50, of=50, loop_began=0,
                                               previous_began=96, began=98)]  # 2 nodes a round
    assert any("50 times" in note for note in english(trace.notes))
    # every call is summarised, those not recorded in full too: after call k, each of w.grad's
    # three elements is 0 + 1 + … + (k - 1)
    assert [s.value for s in trace.losses] == [3.0 * i for i in range(50)]
    assert [s.grad_norms["w"] for s in trace.losses] == pytest.approx(
        [3 ** 0.5 * k * (k - 1) / 2 for k in range(1, 51)])
    full = {c.call: c.leaf_grads[0].grad.norm for c in trace.backward}
    assert all(full[k] == trace.losses[k - 1].grad_norms["w"] for k in full)


def test_a_call_asked_for_is_recorded_in_full() -> None:
    code = ("w = torch.ones(2, requires_grad=True)\nfor i in range(1000):\n"
            "    w.grad = None\n    (w * 2).sum().backward()\n")
    trace = execute(code, keep=(999,))
    assert [c.call for c in trace.backward] == [*range(1, 11), 20, 40, 80, 160, 320, 640,
                                                   999, 1000]  # 1000: the last round's
    called = trace.backward[-2]
    assert [s.name for s in called.steps] == ["SumBackward0", "MulBackward0",
                                                    "AccumulateGrad"]
    assert called.leaf_grads[0].grad.values == [2.0, 2.0]
    assert len(trace.losses) == 1000


def test_a_light_call_names_the_gradients_it_wrote_and_no_other() -> None:
    # After the first ten, calls are light (but for 20 and each loop's last): their norms are
    # read once the engine is done, for the leaves it wrote, as the full calls' hooks see them.
    code = ("a = torch.ones(2, requires_grad=True)\nb = torch.ones(2, requires_grad=True)\n"
            "for i in range(10):\n"
            "    (a * b).sum().backward()\n"  # b.grad = [10, 10] from here on
            "for i in range(6):\n"
            "    (a * b * 3).sum().backward(inputs=[a])\n"  # b.grad stays as it was
            "for i in range(6):\n"
            "    torch.autograd.grad((a * b).sum(), [a, b])\n"  # writes no .grad: call 20 too
            "c = torch.ones(2, requires_grad=True)\n"
            "c.register_post_accumulate_grad_hook(lambda t: setattr(t, 'grad', None))\n"
            "for i in range(3):\n"
            "    (c * 2).sum().backward()\n")
    trace = execute(code)
    assert trace.ok, trace.error
    assert [c.call for c in trace.backward] == [*range(1, 11), 16, 20, 22, 25]
    norms = [s.grad_norms for s in trace.losses]
    assert norms[9] == pytest.approx({"a": 10 * 2 ** 0.5, "b": 10 * 2 ** 0.5})
    assert norms[10:16] == [pytest.approx({"a": 2 ** 0.5 * (10 + 3 * k)}) for k in range(1, 7)]
    assert norms[16:22] == [{}] * 6
    assert norms[22:] == [{}] * 3  # the program's hook cleared c.grad


@pytest.mark.parametrize("scale", [1e20, 1e-30, 3.0])
def test_a_gradient_norm_holds_where_single_precision_squares_would_not(scale: float) -> None:
    # w.grad is `scale` four times: its norm is 2 * scale, though scale² overflows float32
    # (1e40) or vanishes in it (1e-60); light calls (after the first ten) and full ones agree
    code = (f"w = torch.ones(4, requires_grad=True)\nfor i in range(12):\n"
            f"    w.grad = None\n    (w * {scale!r}).sum().backward()\n")
    trace = execute(code)
    assert trace.ok, trace.error
    expected = pytest.approx([2 * scale] * 12, rel=1e-6, abs=0)
    assert [s.grad_norms["w"] for s in trace.losses] == expected
    biggest = trace.backward[0].leaf_grads[0].grad.max_abs
    assert biggest == pytest.approx(scale, rel=1e-6, abs=0)


def test_every_rule_names_the_ops_the_lessons_use() -> None:
    for name in ("AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "PowBackward0",
                 "MeanBackward0", "SumBackward0", "MmBackward0", "ReluBackward0",
                 "ClampMinBackward0", "SigmoidBackward0", "TanhBackward0", "ExpBackward0",
                 "LogBackward0", "ViewBackward0", "ExpandBackward0", "IndexBackward0",
                 "AccumulateGrad"):
        assert "chain rule for its op" not in rule(name), name
        assert rule(name, "zh") != rule(name)


def _figure(trace: dict, at: int | None = None) -> tuple:
    call = trace.backward[0]
    shown = animation_view(trace, call)
    return call, figure(call, positions(shown.dot), svg(shown.dot), shown.groups, at=at)


def assert_plotly_checks(chart: go.Figure) -> None:
    """`chart` (made without plotly's checks) is what plotly, checking it, makes of it."""
    made = chart.to_dict()
    assert go.Figure(made).to_dict() == made


@pytest.mark.parametrize("code", [SEED, MY_RELU + (
    "x = torch.randn(3, requires_grad=True)\nMyReLU.apply(x).sum().backward()\n"), (
    "x = torch.ones(4, requires_grad=True)\ny = x\nfor i in range(300):\n"
    "    y = y * 1.001\nout = y.sum()\nout.backward()\n")], ids=["seed", "relu", "batched"])
def test_the_figures_are_what_plotly_checked_would_make(code: str) -> None:
    trace = execute(code)
    call = trace.backward[-1]
    shown = view(trace.graphs[call.graph], call.roots, show_saved=False,
                 show_attrs=False)
    layout, picture = positions(shown.dot), svg(shown.dot)
    for at in (None, 0, len(call.steps) - 1):
        for animated in (True, False):
            assert_plotly_checks(figure(call, layout, picture, shown.groups, at=at,
                                        animated=animated))
    assert_plotly_checks(figure(call, layout, picture, shown.groups, numbers=True, lang="zh"))


def test_the_animation_highlights_each_node_as_the_engine_runs_it() -> None:
    trace = execute(SEED)
    call, fig = _figure(trace)
    layout = positions(view(trace.graphs[call.graph], call.roots, show_saved=False,
                            show_attrs=False).dot)
    assert len(fig.frames) == 5
    for frame, step in zip(fig.frames, call.steps, strict=True):
        outline = frame.data[1]
        x, y, _, _ = layout["nodes"][step.node]
        xs = [v for v in outline.x if v is not None]
        assert min(xs) < x < max(xs), step.name
        assert step.name in frame.data[-1].text[0]
    assert len(fig.frames[-1].data[2].x) == 1  # the gold star on x
    _, at_two = _figure(trace, at=1)
    assert at_two.layout.sliders[0].active == 1 and "MulBackward0" in at_two.data[CAPTION].text[0]


def _numbers(frame: object) -> list[str] | None:
    """The numbers a frame writes on the picture; None if it leaves them as they were (a
    frame lists only the traces it changes)."""
    texts = dict(zip(frame.traces, frame.data, strict=True))
    return [t for t in texts[NUMBERS].text if t] if NUMBERS in texts else None


def test_the_engines_numbers_are_written_where_and_when_it_made_them() -> None:
    trace = execute(SEED)
    call, fig = _figure(trace)
    said: list[str] = []
    accumulators = {g.node for g in call.leaf_grads}
    into_grads = []  # what the engine sent to AccumulateGrad: the .grad says it, once
    for frame, step in zip(fig.frames, call.steps, strict=True):
        new = _numbers(frame)[len(said):]
        sent = [compact(g.values) for g in step.grad_inputs if g and g.to
                and g.to not in accumulators]
        into_grads += [compact(g.values) for g in step.grad_inputs if g and g.to in accumulators]
        assert new and set(sent) <= set(new), (step.name, new)
        said += new
    # d out/dz = 1/4, times 3, times 2y = 6, summed over y's two uses, then x.grad. A number
    # is written once: the 4.5 AddBackward0 sent to AccumulateGrad, and AccumulateGrad to x,
    # is the .grad beside x; the sum is written short: in full it has no room off the edges.
    assert into_grads == ["4.5000"]
    assert said == ["1.", "0.2500", "0.7500", "2.2500", "2.2500", "Σ = 4.5000",
                    ".grad = 4.5000"]
    assert said[-1] == f".grad = {compact(trace.variables['x'].grad)}"
    # Every number has its place from the first frame on (plotly animated without a redraw
    # puts new text in a corner); empty until it is said.
    places = {(tuple(f.data[f.traces.index(NUMBERS)].x), tuple(f.data[f.traces.index(NUMBERS)].y))
              for f in fig.frames}
    assert len(places) == 1 and len(next(iter(places))[0]) == len(said)


def test_numbers_can_be_left_off_and_are_by_default_on_big_graphs() -> None:
    trace = execute(SEED)
    call = trace.backward[0]
    shown = view(trace.graphs[call.graph], call.roots, show_saved=False,
                 show_attrs=False)
    quiet = figure(call, positions(shown.dot), svg(shown.dot), shown.groups, numbers=False)
    assert _numbers(quiet.frames[0]) == [] and all(
        _numbers(frame) in ([], None) for frame in quiet.frames)
    code = ("x = torch.ones(4, requires_grad=True)\nys = [x * float(i) for i in range(50)]\n"
            "out = sum(y.sum() for y in ys)\nout.backward()\n")
    _, big = _figure(execute(code))
    assert _numbers(big.frames[0]) == [] and all(
        _numbers(frame) in ([], None) for frame in big.frames)


@pytest.mark.parametrize(("values", "shown"), [
    (1.0, "1."), ([[0.25, 0.25], [0.25, 0.25]], "0.2500"), ([1.0, 2.0, 3.0], "[1., 2., 3.]"),
    ([0.5] * 200, "0.5000"), (list(range(30)), "[0, 1, 2, 3, 4, 5, 6, 7, …]"), ([], "[]"),
    ([0.8399, 0.1, 2.5], "[0.8399, 0.1000, 2.5000]"),
    ("<values too many to show>", "'<values too many to show>'")])
def test_compact_writes_a_tensor_in_a_few_characters(values: object, shown: str) -> None:
    assert compact(values) == shown


def test_a_larger_tensor_is_written_as_its_shape_and_norm() -> None:
    assert compact([[3.0, 4.0], [0.0, 0.0]], [2, 2]) == "[[3., 4.], [0., 0.]]"  # few: in full
    assert compact([3.0, 4.0] + [0.0] * 7, [9]) == "9 ‖5.‖"  # more: the norm of its values
    # Values cut short: the norm of all of them, and never "all the same" from a few.
    assert compact([1.0] * 4, [1000], norm=31.62, truncated=True) == "1000 ‖31.6200‖"
    # A few values are written whole, however long; a grid a row a line, if asked.
    assert compact([0.8399, -0.1234, 2.5, 1.0], [4]) == "[0.8399, -0.1234, 2.5000, 1.0000]"
    assert compact([[0.5, 1.0], [2.0, 3.0]], [2, 2], rows=True) == (
        "[[0.5000, 1.0000],\n [2.0000, 3.0000]]")
    no_norm = compact([[1.0, "nan"], [2.0, 3.0]] * 3, [6, 2])  # a value that is not a number
    assert no_norm == "[[1., nan], [2., 3.], […]]"


def test_a_1000_node_pass_is_batched_into_a_small_figure() -> None:
    code = ("x = torch.ones(4, requires_grad=True)\ny = x\nfor i in range(1000):\n"
            "    y = y * 1.001\nout = y.sum()\nout.backward()\n")
    trace = execute(code)
    call, fig = _figure(trace)
    assert len(call.steps) == 1002  # SumBackward0, 1000 × MulBackward0, AccumulateGrad
    assert len(fig.frames) == len(frames_of(1002)) <= MAX_FRAMES
    size = len(json.dumps(fig.to_plotly_json(), default=str))
    assert size < 3_000_000, size


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_each_step_says_it_ran_on_cuda() -> None:
    trace = execute(SEED, device="cuda")
    assert {g.device for s in trace.backward[0].steps for g in s.grad_outputs if g} == {
        "cuda:0"}


def _library_calls(code: str) -> int:
    said = [n for n in english(execute(code).notes) if "inside library functions" in n]
    return int(said[0].split()[0]) if said else 0


def test_backward_calls_made_inside_library_functions_are_said_not_replayed() -> None:
    jacrev = "j = torch.func.jacrev(torch.sin)(torch.zeros(2))\n"
    own = "x = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
    hessian = "h = torch.autograd.functional.hessian(lambda v: (v ** 3).sum(), x)\n"
    trace = execute(jacrev + own + hessian)
    assert trace.ok, trace.error
    assert [c.call for c in trace.backward] == [1]  # the program's own call alone
    counts = [_library_calls(jacrev), _library_calls(own + hessian)]
    assert min(counts) >= 1 and _library_calls(jacrev + own + hessian) == sum(counts)
    assert _library_calls(own) == 0
