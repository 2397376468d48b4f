"""Whether the training page says the loss fell: like with like (explorer.views.curves's
`compared`), on real traces of minibatch and plain loops; and the losses of different lines
drawn apart."""

from __future__ import annotations

from statistics import fmean

from explorer.content.markdown import code_span
from explorer.record.execute import execute
from explorer.trace.schema import Call, Round, Summary
from explorer.views.curves import compared, curves, loss_figure
from explorer.views.training import loss_lines

# Minibatches of two, gradients accumulated over four: neighbouring calls' losses are unlike
# (the first call's is 0.0749, the last's 0.4292), while the mean per epoch falls.
MINIBATCHES = """import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
loss_fn = torch.nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(16, 3)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
for epoch in range(3):
    for i in range(8):
        xb, yb = X[i*2:(i+1)*2], Y[i*2:(i+1)*2]
        loss = loss_fn(model(xb), yb) / 4
        loss.backward()
        if (i + 1) % 4 == 0:
            opt.step()
            opt.zero_grad()
print(model.weight)
"""
PLAIN = """import torch
torch.manual_seed(0)
w = torch.zeros(3, requires_grad=True)
x = torch.randn(20, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
for t in range({rounds}):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= {lr} * w.grad
        w.grad.zero_()
"""


def _losses(code: str) -> tuple[list[float], list[Summary], list[Call]]:
    trace = execute(code)
    assert trace.ok, trace.error
    return [s.value for s in trace.losses], trace.losses, trace.backward


def test_minibatches_compare_the_mean_of_the_first_epoch_with_that_of_the_last() -> None:
    values, losses, full = _losses(MINIBATCHES)
    assert len(values) == 24 and values[-1] > values[0]  # first call against last: it rose
    verdict = compared(losses, full)
    assert verdict is not None and verdict.outer is not None and verdict.outer.name == "epoch"
    assert (verdict.first, verdict.last, verdict.count) == (fmean(values[:8]),
                                                           fmean(values[-8:]), 8)
    assert verdict.fell and round(verdict.first, 3) == 1.172 and round(verdict.last, 3) == 0.336
    assert verdict.said("en") == ("The loss fell from 1.172 to 0.3362 (mean over the "
                                  f"{code_span('epoch')} loop's round 1 → mean over its round 3).")
    assert "循环第 1 轮的平均值 → 第 3 轮的平均值" in verdict.said("zh")


def test_a_short_plain_loop_compares_its_first_call_with_its_last_as_before() -> None:
    for lr, fell in ((0.1, True), (2.0, False)):
        values, losses, full = _losses(PLAIN.format(rounds=8, lr=lr))
        verdict = compared(losses, full)
        assert verdict is not None and verdict.outer is None and verdict.count == 1
        assert (verdict.first, verdict.last, verdict.fell) == (values[0], values[-1], fell)
        assert verdict.said("en").endswith(
            "(first backward call → last)." if fell else
            ", first backward call → last): try a smaller learning rate.")


def test_a_longer_plain_loop_compares_its_first_tenth_with_its_last() -> None:
    values, losses, full = _losses(PLAIN.format(rounds=30, lr=0.1))
    verdict = compared(losses, full)  # one call a round: the loop's rounds are not compared
    assert verdict is not None and verdict.outer is None and verdict.fell
    assert (verdict.first, verdict.last, verdict.count) == (fmean(values[:3]),
                                                           fmean(values[-3:]), 3)
    assert "mean of the first 3 backward calls → mean of the last 3" in verdict.said("en")


def test_epochs_of_unequal_calls_compare_tenths() -> None:
    skipping = MINIBATCHES.replace("        loss = loss_fn", "        if epoch == 0 and i == 0:\n"
                                   "            continue\n        loss = loss_fn")
    values, losses, full = _losses(skipping)
    verdict = compared(losses, full)
    assert len(values) == 23 and verdict is not None and verdict.outer is None
    assert (verdict.first, verdict.last) == (fmean(values[:2]), fmean(values[-2:]))


def _call(number: int, epoch: int) -> Call:
    return Call(call=number, kind="backward", steps=[], leaf_grads=[], value=1.0, roots=[],
                root=None, vector=None, rounds=[Round(line=1, name="epoch", round=epoch, of=2),
                                                Round(line=2, name="i", round=1, of=None)])


def test_epochs_are_compared_only_where_every_recorded_call_is_in_its_round() -> None:
    losses = [Summary(call=n, kind="backward", value=float(n), grad_norms={})
              for n in range(1, 7)]
    agreed = compared(losses, [_call(1, 1), _call(3, 1), _call(4, 2), _call(6, 2)])
    assert agreed is not None and agreed.outer is not None
    assert (agreed.first, agreed.last, agreed.fell) == (2.0, 5.0, False)
    unlike = compared(losses, [_call(1, 1), _call(3, 2), _call(6, 2)])  # 2 then 4 a round
    assert unlike is not None and unlike.outer is None and (unlike.first, unlike.last) == (1, 6)
    assert compared(losses[:1], []) is None


TWO_LOSSES = """import torch
torch.manual_seed(0)
D, G = torch.nn.Linear(2, 1), torch.nn.Linear(3, 2)
d_opt = torch.optim.SGD(D.parameters(), lr=0.1)
g_opt = torch.optim.SGD(G.parameters(), lr=0.1)
for step in range(6):
    fake = G(torch.randn(4, 3))
    d_loss = (D(fake.detach()) - 1).pow(2).mean() + 10
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    g_loss = D(fake).pow(2).mean()
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
"""


def test_the_losses_of_two_backward_lines_are_two_curves_and_no_one_verdict() -> None:
    """A GAN's two losses (around 10, and below 1) on lines 10 and 14: never one zig-zag line
    through both, nor a verdict on their mean; each named by its code."""
    trace = execute(TWO_LOSSES)
    assert [s.line for s in trace.losses] == [10, 14] * 6
    drawn = curves(trace.losses, lines=loss_lines(trace.losses, TWO_LOSSES, "en"))
    assert [line.name for line in drawn.losses] == ["d_loss.backward() · line 10",
                                                    "g_loss.backward() · line 14"]
    first, second = drawn.losses
    assert first.calls == [1, 3, 5, 7, 9, 11] and min(first.values) > 9
    assert second.calls == [2, 4, 6, 8, 10, 12] and max(second.values) < 9
    figure = loss_figure(drawn)
    assert figure.layout.showlegend and len(figure.data) == 2
    assert compared(trace.losses, trace.backward) is None
    one = [s for s in trace.losses if s.line == 10]  # one line alone: one curve, a verdict
    assert [line.name for line in curves(one).losses] == ["loss"]
    assert compared(one, []) is not None


def test_past_ten_backward_lines_one_curve_draws_every_loss() -> None:
    """A program calling backward on 2,000 lines: one line of 120,000 points, reduced, not
    2,000 curves and a legend of 2,000 (and still no verdict)."""
    losses = [Summary(call=i + 1, kind="backward", value=1.0 + i % 7, grad_norms={},
                      line=1 + i % 2000) for i in range(120_000)]
    drawn = curves(losses)
    assert drawn.loss_lines == 2000 and [line.name for line in drawn.losses] == ["loss"]
    assert drawn.losses[0].count == 120_000 and drawn.losses[0].reduced
    assert compared(losses, []) is None
