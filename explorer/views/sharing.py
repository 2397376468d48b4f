"""Tensors and NumPy arrays side by side: do two variables share memory, which cells changed.

Pure logic for the NumPy page, no Streamlit. The verdict comes from the memory the worker
recorded for each variable (`memory`: [first byte, end) of its elements), never from how the
variables were made. The presets are the lessons people trip over, in English and Chinese:
data in `content/numpy.toml`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from itertools import pairwise, product
from pathlib import Path
from typing import Any

from explorer.content.examples import by_key
from explorer.trace import Trace, Variables
from explorer.trace.schema import Variable

Cell = tuple[int, ...]  # the index of one element: () for a 0-d value, (i,) or (i, j)...
ARRAYS = ("tensor", "ndarray")
FILE = Path(__file__).parents[1] / "content" / "numpy.toml"  # the presets


def is_array(info: Variable | None) -> bool:
    """True for a tensor's or an ndarray's description."""
    return info is not None and info.kind in ARRAYS


def overlap(a: Variable, b: Variable) -> tuple[int, int] | None:
    """The bytes [start, end) that both variables' elements span, or None if they are apart.

    Like `np.may_share_memory`: extents that overlap count, on the same device only (a CUDA
    tensor's addresses are GPU memory, so it never shares with a NumPy array).
    """
    if not (is_array(a) and is_array(b)) or a.device != b.device:
        return None
    if a.memory is None or b.memory is None:
        return None
    start, end = max(a.memory[0], b.memory[0]), min(a.memory[1], b.memory[1])
    return (start, end) if start < end else None


def shares_memory(a: Variable, b: Variable) -> bool:
    """True if the two variables' elements overlap in memory: a write to one shows in the other."""
    return overlap(a, b) is not None


def cells(values: Any) -> dict[Cell, Any]:
    """Every element of a nested value list by its index, in row-major order."""
    if not isinstance(values, list):
        return {(): values}
    return {(i, *index): value for i, row in enumerate(values)
            for index, value in cells(row).items()}


def _shape(values: Any) -> list[int]:
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return shape


def changed_cells(now_values: Any, before_values: Any) -> set[Cell]:
    """The cells of `now_values` that differ from `before_values` (None: it did not exist).

    When the nesting differs (a new shape, or a different leading block of a truncated
    tensor) every cell counts as changed.
    """
    now = cells(now_values)
    if before_values is None or _shape(now_values) != _shape(before_values):
        return set(now)
    before = cells(before_values)
    return {index for index, value in now.items()
            if index not in before or before[index] != value}


def variable_changes(now: Variable | None, before: Variable | None) -> set[Cell]:
    """The cells of a variable that changed in one step; a new kind or shape changes them all."""
    if not is_array(now):
        return set()
    same = is_array(before) and before.shape == now.shape
    return changed_cells(now.values, before.values if same else None)


def changed_pair(now: Variables, before: Variables) -> tuple[str, str | None] | None:
    """The tensors and arrays a step changed, as a pair to compare: the first it changed, and
    one sharing its memory (a write through either shows in both), else the next it changed;
    None if it changed none."""
    changed = [name for name, info in now.items()
               if info is not before.get(name) and _changed(info, before.get(name))]
    if not changed:
        return None
    first = now[changed[0]]
    sharing = [name for name, info in now.items()
               if name != changed[0] and is_array(info) and shares_memory(first, info)]
    return changed[0], next(iter(sharing or changed[1:]), None)


def _changed(now: Variable, before: Variable | None) -> bool:
    """Whether `variable_changes` has cells, told by comparing the lists whole: a step may
    bring a thousand variables, each of thousands of values, at every rerun."""
    if not is_array(now) or now.values == []:
        return False
    return not (is_array(before) and before.shape == now.shape and before.values == now.values)


def array_names(trace: Trace) -> list[str]:
    """Names that hold a tensor or an array at some step, in order of first appearance."""
    names: dict[str, None] = {}
    for step in trace.steps:
        names.update((name, None) for name, info in step.variables.items() if is_array(info))
    return list(names)


def default_pair(trace: Trace, code: str) -> tuple[str | None, str | None]:
    """The pair to show first: the preset's own, else the first tensor and array that share
    memory at the end, else the first tensor and the first array.

    Without both kinds, the first two tensors or arrays; missing names are None.
    """
    final = trace.variables
    lesson = preset_for(code)
    if lesson is not None and all(name in final for name in lesson.pair):
        return lesson.pair
    tensors = [name for name, info in final.items() if info.kind == "tensor"]
    arrays = [name for name, info in final.items() if info.kind == "ndarray"]
    linked = (pair for pair in product(tensors, arrays)
              if shares_memory(final[pair[0]], final[pair[1]]))
    if pair := next(linked, None):
        return pair
    if tensors and arrays:
        return tensors[0], arrays[0]
    either = [*tensors, *arrays, None, None]
    return either[0], either[1]


def last_change(trace: Trace, left: str | None, right: str | None) -> int:
    """The last step where either variable of the pair changed or the verdict flipped."""
    states = [{}, *(step.variables for step in trace.steps)]
    changes = [index for index, (before, now) in enumerate(pairwise(states))
               if _verdict(now, left, right) != _verdict(before, left, right)
               or any(now.get(name) is not before.get(name)  # unchanged: the same object
                      and variable_changes(now.get(name), before.get(name))
                      for name in (left, right))]
    return changes[-1] if changes else len(trace.steps) - 1


def _verdict(variables: Variables, left: str | None, right: str | None) -> bool | None:
    a, b = variables.get(left), variables.get(right)
    return shares_memory(a, b) if is_array(a) and is_array(b) else None


@dataclass(frozen=True)
class Preset:
    """One lesson of the NumPy page: a short program and what it teaches."""

    key: str
    title: dict[str, str]  # {"en": ..., "zh": ...}
    caption: dict[str, str]  # one or two sentences that teach, {"en": ..., "zh": ...}
    code: str
    pair: tuple[str, str]  # the two names shown side by side first


def load(file: Path = FILE) -> tuple[Preset, ...]:
    """The presets of `file`, in its order; `program` names a program of the examples."""
    with open(file, "rb") as presets:
        listed = tomllib.load(presets)["preset"]
    return tuple(Preset(key=entry["key"], title=entry["title"], caption=entry["caption"],
                        code=by_key(entry["program"]).code if "program" in entry
                        else entry["code"], pair=tuple(entry["pair"]))
                 for entry in listed)


PRESETS: tuple[Preset, ...] = load()
_BY_KEY = {preset.key: preset for preset in PRESETS}


def preset(key: str) -> Preset:
    """The preset called `key`."""
    return _BY_KEY[key]


def preset_for(code: str) -> Preset | None:
    """The preset whose program is exactly `code`, if any."""
    return next((p for p in PRESETS if p.code == code), None)
