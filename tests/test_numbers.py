"""Numbers are written as `print(tensor)` writes them, everywhere: one function decides."""

from __future__ import annotations

import random
import re

import pytest
import torch

from explorer.record.snapshot import tensor_values
from explorer.trace.schema import Variable
from explorer.views.numbers import PRECISION, exact, full_decimals, written, written_each
from explorer.views.present import preview, variable_rows


def _printed(t: torch.Tensor) -> str:
    """What print(t) shows inside `tensor(…)`, on one line without its alignment spaces."""
    inside = re.sub(r"\s+", " ", str(t)).removeprefix("tensor(").split(", dtype")[0]
    return re.sub(r"\[ +", "[", inside.removesuffix(")")).replace(",", ", ").replace(",  ", ", ")


def _tensors() -> list[torch.Tensor]:
    rng = random.Random(0)
    out = [torch.tensor(0.1), torch.tensor(1e-4), torch.zeros(3), torch.tensor([2.0, -0.0]),
           torch.empty(0), torch.tensor([float("nan"), 1.5, float("-inf")]),
           torch.tensor([0.0, 9e-45]), torch.tensor([1e10, 1.0]), torch.tensor(0.6 + 0.8j),
           torch.tensor([[1e-5j, 3 + 0j]]), torch.tensor([1, -2, 3]), torch.tensor([True])]
    for _ in range(300):
        n, scale = rng.randint(1, 6), 10.0 ** rng.randint(-8, 10)
        kind = rng.choice(["float", "whole", "mixed", "complex"])
        if kind == "complex":
            out.append(torch.complex(torch.randn(n) * scale, torch.randn(n)))
        elif kind == "whole":
            out.append(torch.tensor([float(rng.randint(-3000, 3000)) for _ in range(n)]))
        else:
            values = [rng.gauss(0, 1) * (scale if kind == "float" else rng.choice([1, scale]))
                      for _ in range(n)]
            out.append(torch.tensor(values, dtype=rng.choice([torch.float32, torch.float64])))
    return out


@pytest.mark.parametrize("t", _tensors(), ids=lambda t: str(t.dtype))
def test_values_are_written_as_print_writes_the_tensor(t: torch.Tensor) -> None:
    values, _ = tensor_values(t, 100)  # what a run sends: floats widened to double
    assert written(values) == _printed(t)


def test_float_noise_is_gone_from_every_table() -> None:
    noisy = torch.tensor([0.1, 1e-4]).double().tolist()  # 0.10000000149011612, …
    assert written(noisy) == "[1.0000e-01, 1.0000e-04]"
    assert written_each([[0.10000000149011612], [0.5]]) == [["0.1000"], ["0.5000"]]
    rows = variable_rows({"w": Variable(kind="tensor", shape=[1], values=[0.10000000149011612],
                                        grad=[9.999999747378752e-05])})
    assert (rows[0]["value"], rows[0][".grad"]) == ("`[0.1000]`", "`[1.0000e-04]`")


def test_values_past_the_limit_are_left_off_whole() -> None:
    values = [0.8399, -0.1234, 2.5, 1.0, 7.25]
    for limit in range(8, 40):
        shown = preview(values, limit)
        kept = shown.removesuffix("]").removesuffix("…").removesuffix(", ")
        assert all(v in _printed(torch.tensor(values)) for v in kept.strip("[").split(", ") if v)
        assert not re.search(r"\d…", shown), shown
    assert preview(0.6 + 0.8j, 4) == "0.6000+0.8000j"  # one number: whole, however long


def _reals() -> list[torch.Tensor]:
    """Float tensors of every float dtype, their values needing few or many decimals."""
    rng = torch.Generator().manual_seed(0)
    return [t for t in _tensors() if t.is_floating_point()] + [
        torch.randn(5, generator=rng).to(dtype) * 10.0 ** k
        for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
        for k in (-6, 0, 3)] + [torch.tensor([0.1, 1 / 3]), torch.tensor(1 / 3).double()]


@pytest.mark.parametrize("t", _reals(), ids=lambda t: str(t.dtype))
def test_values_in_full_are_print_at_the_fewest_decimals_that_read_back(t: torch.Tensor) -> None:
    values, _ = tensor_values(t, 100)
    shown, decimals = exact(values, str(t.dtype)), full_decimals(values, str(t.dtype))
    assert shown == _printed_at(t, decimals)  # as print(t) writes it at that precision
    assert _reads_back(shown, t)  # every value, exactly
    if decimals > PRECISION:  # and no fewer decimals would do
        assert not _reads_back(_printed_at(t, decimals - 1), t)


def _printed_at(t: torch.Tensor, precision: int) -> str:
    """`_printed` with torch.set_printoptions(precision=precision)."""
    torch.set_printoptions(precision=precision)
    try:
        return _printed(t)
    finally:
        torch.set_printoptions(profile="default")


def _reads_back(shown: str, t: torch.Tensor) -> bool:
    """Whether the numbers written in `shown`, read as `t`'s dtype, are `t`'s values."""
    numbers = re.findall(r"-?(?:\d+\.\d*(?:e[-+]\d+)?|nan|inf)", shown)
    back = torch.tensor([float(n) for n in numbers], dtype=t.dtype)
    return torch.equal(back.isnan(), t.flatten().isnan()) and torch.equal(
        back.nan_to_num(), t.flatten().nan_to_num())


def test_a_leading_block_in_full_says_where_the_rest_would_be() -> None:
    assert exact([[0.5, 1.0], [2.0, 3.0]], shape=[5, 2]) == \
        "[[0.5000, 1.0000], [2.0000, 3.0000], …]"
    assert exact([[0.5, 1.0]], shape=[3, 9]) == "[[0.5000, 1.0000, …], …]"
    assert exact([[0.5, 1.0]], "torch.float32", [1, 2]) == "[[0.5000, 1.0000]]"  # whole
