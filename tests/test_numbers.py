"""Numbers are written as `print(tensor)` writes them, everywhere: one function decides."""

from __future__ import annotations

import random
import re

import pytest
import torch

from explorer.runner.snapshot import tensor_values
from explorer.views.numbers import written, written_each
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
    rows = variable_rows({"w": {"kind": "tensor", "shape": [1], "values": [0.10000000149011612],
                                "grad": [9.999999747378752e-05]}})
    assert (rows[0]["value"], rows[0][".grad"]) == ("`[0.1000]`", "`[1.0000e-04]`")


def test_values_past_the_limit_are_left_off_whole() -> None:
    values = [0.8399, -0.1234, 2.5, 1.0, 7.25]
    for limit in range(8, 40):
        shown = preview(values, limit)
        kept = shown.removesuffix("]").removesuffix("…").removesuffix(", ")
        assert all(v in _printed(torch.tensor(values)) for v in kept.strip("[").split(", ") if v)
        assert not re.search(r"\d…", shown), shown
    assert preview(0.6 + 0.8j, 4) == "0.6000+0.8000j"  # one number: whole, however long
