"""Golden traces: the Trace of every preset program, kept in tests/golden/<key>.json with its
graphs' DOT in tests/golden/<key>.gv (every graph in order, as graphviz reads a file of
several), so that any change of behaviour shows up as a reviewable diff. `pytest
tests/test_golden.py --update-golden` writes them anew.

A Trace is normalised before it is kept or compared, so that it is the same on every machine:
no timings; object and memory addresses become tokens in order of first appearance (which
values share an address is kept); arrays longer than LONG values keep their first values,
count and sum; programs that print uninitialised memory (`torch.empty`) have their numbers
blanked. Runs use one torch thread and the arithmetic of any x86 CPU (SAME_ARITHMETIC); numbers
compare within REL.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.content.examples import EXAMPLES, by_key
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits

GOLDEN = Path(__file__).parent / "golden"
PROGRAMS = [example.key for example in EXAMPLES]
LONG, KEPT, REL = 64, 8, 1e-4
SAME_ARITHMETIC = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
NUMBER = re.compile(r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)", re.IGNORECASE)


def normalised(trace: dict[str, Any], blank_numbers: bool) -> Any:
    """`trace` (as JSON data) made machine-independent, as the module's docstring says."""
    def walk(value: Any, key: str = "", tokens: dict[int, str] | None = None) -> Any:
        if key == "elapsed_ms":
            return 0
        if key in ("variables", "locals"):  # addresses name sharing within one snapshot
            tokens = {}
        if tokens is not None and key in {"data_ptr", "memory"} and value is not None:
            start = value if key == "data_ptr" else value[0]
            name = tokens.setdefault(start, f"@{len(tokens) + 1}")
            return name if key == "data_ptr" else [name, value[1] - value[0]]
        if blank_numbers and key in {"values", "grad"} and value is not None:
            return "#"
        if isinstance(value, str):
            text = ADDRESS.sub("@", value)
            return "".join(NUMBER.sub("#", text).split()) if blank_numbers else text
        if isinstance(value, dict):
            return {k: walk(v, k, tokens) for k, v in value.items()}
        if isinstance(value, list):
            flat = list(_flatten(value))
            if key in {"values", "grad"} and len(flat) > LONG and all(
                    isinstance(v, int | float) for v in flat):
                return {"first": flat[:KEPT], "count": len(flat), "sum": math.fsum(flat)}
            return [walk(v, key, tokens) for v in value]
        return value

    return walk(trace)


def _flatten(value: Any) -> Iterator[Any]:
    for item in value:
        if isinstance(item, list):
            yield from _flatten(item)
        else:
            yield item


def same(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Where `actual` differs from `expected` (numbers within REL), as readable paths."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [d for k in sorted(set(expected) | set(actual))
                for d in same(expected.get(k), actual.get(k), f"{where}.{k}")]
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in same(e, a, f"{where}[{i}]")]
    if isinstance(expected, float | int) and isinstance(actual, float | int) and not (
            isinstance(expected, bool) or isinstance(actual, bool)):
        close = math.isclose(expected, actual, rel_tol=REL, abs_tol=1e-6)
        return [] if close else [f"{where}: {expected!r} != {actual!r}"]
    return [] if expected == actual else [f"{where}: {expected!r:.200} != {actual!r:.200}"]


@pytest.fixture(scope="module")
def golden_pool() -> Iterator[WorkerPool]:
    # The run's behaviour, not its speed: a busy machine must not reach the time limit. Its
    # arithmetic as on any x86 CPU: a training loop's numbers drift apart from one to another.
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SAME_ARITHMETIC.items():
            patch.setenv(name, value)
        pool = WorkerPool(size=1, threads=1, limits=Limits(time_s=60), kept_bytes=0)
        yield pool
        pool.close()


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_lesson_program_behaves_as_its_golden_trace(key: str, golden_pool: WorkerPool,
                                                        request: pytest.FixtureRequest) -> None:
    code = by_key(key).code
    trace = golden_pool.run(code)
    assert trace.threads == 1
    actual = normalised(json.loads(trace.to_json()), "torch.empty(" in code or
                        "torch.Tensor(" in code)
    drawn = pictures(actual)
    path, dots = GOLDEN / f"{key}.json", GOLDEN / f"{key}.gv"
    if request.config.getoption("--update-golden"):
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                        encoding="utf-8")
        dots.unlink(missing_ok=True)
        if drawn:
            dots.write_text(drawn, encoding="utf-8")
    assert path.exists(), f"no golden trace for {key}: run with --update-golden"
    differences = same(json.loads(path.read_text(encoding="utf-8")), actual)
    assert not differences, "\n".join(differences[:20])
    assert (dots.read_text(encoding="utf-8") if dots.exists() else "") == drawn  # no graph: none


def pictures(trace: dict[str, Any]) -> str:
    """The DOT of every graph of `trace` (normalised), in order, each headed by its number,
    taken out of it; `graph`, the last step's copy, becomes that number."""
    if trace["graph"] is not None:
        trace["graph"] = f"graphs[{trace['steps'][-1]['graph']}]"
    return "".join(f"// graphs[{number}]\n" + (graph.pop("dot") or "// not drawn\n")
                   for number, graph in enumerate(trace["graphs"]))


def test_every_golden_picture_is_dot_that_graphviz_reads_whole() -> None:
    for path in sorted(GOLDEN.glob("*.gv")):
        text = path.read_text(encoding="utf-8")
        read = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True,
                              timeout=60, check=False)
        assert read.returncode == 0 and not read.stderr, (path.name, read.stderr)
        assert read.stdout.count("digraph") == text.count("digraph {") > 0, path.name


def test_a_golden_trace_catches_a_change() -> None:
    expected = normalised({"stdout": "tensor([1.0000])", "elapsed_ms": 3.0, "variables": {
        "x": {"data_ptr": 140000000000, "memory": [140000000000, 140000000004],
              "values": [1.0]}}}, False)
    assert expected == {"stdout": "tensor([1.0000])", "elapsed_ms": 0, "variables": {
        "x": {"data_ptr": "@1", "memory": ["@1", 4], "values": [1.0]}}}
    assert normalised({"stdout": "<Node object at 0x7f3a2b1c0d90>\ntensor([ 1.5,  -2.])"},
                      True) == {"stdout": "<Nodeobjectat@>tensor([#,#])"}
    changed = json.loads(json.dumps(expected))
    changed["variables"]["x"]["values"] = [1.001]
    assert same(expected, changed) == [".variables.x.values[0]: 1.0 != 1.001"]
    assert same(expected, json.loads(json.dumps(expected))) == []
