"""The variables table's cells (explorer.views.present.variable_rows): each column reads as its
values do, whatever the other rows hold; and names said once each, counted."""

from __future__ import annotations

import pandas as pd
import torch

from explorer.pool.worker import WorkerPool
from explorer.record.snapshot import describe
from explorer.views.present import counted, variable_rows


def test_the_version_column_writes_integers_as_integers_and_none_as_nothing() -> None:
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        for _ in range(19):
            w.add_(1)
    with torch.inference_mode():
        made = torch.ones(2)
    rows = variable_rows({"w": describe(w, 10), "z": describe(torch.zeros(1), 10),
                          "m": describe(made, 10), "n": describe(3, 10)})
    assert [row["_version"] for row in rows] == ["19", "0", "", ""]
    assert pd.DataFrame(rows)["_version"].tolist() == ["19", "0", "", ""]  # as st.table shows


def test_an_objects_multi_line_repr_reads_on_one_line_without_quotes() -> None:
    sgd = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    value = variable_rows({"opt": describe(sgd, 100)})[0]["value"]
    assert value == "`SGD ( Parameter Group 0 dampening: 0 di…`"  # 40 characters at most
    rows = variable_rows({"xs": describe([1, 2], 100), "s": describe("a\nb", 100),
                          "d": describe(torch.device("cpu"), 100)})
    assert [row["value"] for row in rows] == ["`[1, 2]`", "`'a\\nb'`", "`cpu`"]


def test_counted_names_each_once_in_order_with_its_count() -> None:
    assert counted(["b", "a", "b", "c", "b"]) == "b ×3, a, c"
    assert counted([]) == ""


def test_a_module_is_marked_changed_when_its_parameters_or_their_grads_change(
        pool: WorkerPool) -> None:
    """A module's repr stays the same through a training step; what its parameters hold does
    not, and the table marks it: after backward, the optimizer's step and zero_grad alone.
    Reading them runs none of the program's own methods (this subclass's would print)."""
    trace = pool.run(
        "class Net(torch.nn.Linear):\n"
        "    def parameters(self, recurse=True):\n        print('ran')\n"
        "        return super().parameters(recurse)\n"
        "    def named_parameters(self, *args, **kwargs):\n        print('ran')\n"
        "        return super().named_parameters(*args, **kwargs)\n"
        "model = torch.nn.Sequential(Net(2, 1))\n"
        "opt = torch.optim.SGD(torch.nn.Module.parameters(model), lr=0.1)\n"
        "loss = model(torch.ones(3, 2)).sum()\nloss.backward()\nopt.step()\nn = 1\n"
        "opt.zero_grad()\nmodel.zero_grad()\n")
    marked = {}
    for before, step in zip(trace.steps, trace.steps[1:], strict=False):
        rows = variable_rows(step.variables, before.variables)
        marked[step.line] = [r["name"].removeprefix("● ") for r in rows if r["name"][0] == "●"]
    assert marked == {8: ["model"], 9: ["opt"], 10: ["loss"], 11: ["model"], 12: ["model"],
                      13: ["n"], 14: ["model"], 15: []}
    assert "ran" not in trace.stdout


def test_functions_classes_and_containers_read_as_the_program_wrote_them(
        pool: WorkerPool) -> None:
    """A function by its parameters, a class by its bases, a library's function by where it
    lives, a dict's keys and a set's items in the order print shows them, each container's
    length in the type column; nothing of the program's runs to say so (a key's `__lt__`
    would print, and sorting would call it)."""
    trace = pool.run(
        "def f(w, x=2, *rest, scale, **more):\n    return w\n"
        "def k(a, /, b, *, c=None):\n    return a\n"
        "def outer():\n    def inner(t):\n        return t\n    return inner\n"
        "g = lambda t: t * 2\ninner = outer()\nclass Net(torch.nn.Module):\n    pass\n"
        "class Key:\n    def __lt__(self, other):\n        print('compared')\n        return True\n"
        "relu, act = torch.relu, torch.nn.functional.relu\n"
        "d = {'b': 1, 'a': 2, Key(): 3}\ns = {Key(), Key()}\nxs = [1, 2, 3]\n"
        "scalar = torch.tensor(1.0)\n")
    rows = {r["name"]: (r["type"], r["value"].strip("`")) for r in variable_rows(
        trace.variables, None, "zh")}
    assert rows["f"] == ("function", "f(w, x=2, *rest, scale, **more)")
    assert rows["k"] == ("function", "k(a, /, b, *, c=None)")
    assert rows["inner"] == ("function", "outer.inner(t)")
    assert rows["g"] == ("function", "lambda t")
    assert rows["Net"] == ("class", "class Net(Module)")
    assert rows["relu"] == ("function", "torch.relu")
    assert rows["act"] == ("function", "torch.nn.functional.relu")
    assert rows["d"][0] == "dict 3" and rows["d"][1].startswith("{'b': 1, 'a': 2, <")
    assert rows["s"][0] == "set 2" and rows["xs"][0] == "list 3"
    assert rows["scalar"][0] == "tensor 标量"
    assert "compared" not in trace.stdout
