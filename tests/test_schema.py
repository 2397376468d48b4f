"""The Trace's typed public form (explorer.trace.schema): `python -m explorer schema` prints it
with the format's version; every Trace the app makes fits it key for key (tests/test_corpus.py
holds the whole learner corpus to it); a saved Trace of another version is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import msgspec
import pytest

from explorer.content.examples import EXAMPLES
from explorer.record.execute import execute
from explorer.trace import Trace
from explorer.trace.schema import VERSION, conforms
from tests.conftest import ROOT


def exactly(trace: Trace) -> None:
    """`trace`'s public form fits the schema, and the schema names every key of it."""
    fits(json.loads(trace.to_json()))


def fits(data: dict[str, Any]) -> None:
    """`data` fits the schema, and the schema names every key of it."""
    read = conforms(data)
    assert json.dumps(read, sort_keys=True) == json.dumps(data, sort_keys=True)


def test_the_schema_command_prints_the_typed_form_with_its_version() -> None:
    done = subprocess.run([sys.executable, "-m", "explorer", "schema"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    schema = json.loads(done.stdout)
    assert schema["version"] == VERSION and schema["$ref"] == "#/$defs/Trace"
    trace = schema["$defs"]["Trace"]
    assert trace["properties"]["version"] == {"const": VERSION}
    assert set(trace["required"]) >= {"ok", "steps", "graphs", "backward", "version"}
    assert {"Variable", "Graph", "Node", "Edge", "Call", "EngineStep", "Gradient"} <= set(
        schema["$defs"])


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_every_presets_trace_is_the_typed_form(example: Any) -> None:
    exactly(execute(example.code))


def test_a_key_the_schema_does_not_name_or_a_wrong_type_is_caught() -> None:
    data = json.loads(execute("x = torch.ones(2, requires_grad=True)\n(x * 2).sum()"
                              ".backward()\n").to_json())
    data["variables"]["x"]["undocumented"] = 1
    with pytest.raises(AssertionError):
        fits(data)
    del data["variables"]["x"]["undocumented"]
    data["backward"][0]["steps"][0]["name"] = 3
    with pytest.raises(msgspec.ValidationError, match=r"\$\.backward\[0\]\.steps\[0\]\.name"):
        fits(data)


def test_a_saved_trace_of_another_version_is_refused_with_the_reason() -> None:
    saved = json.loads(execute("x = 1\n").to_json())
    assert saved["version"] == VERSION and Trace.from_dict(saved).ok
    refused = Trace.from_dict(saved | {"version": VERSION + 1})
    assert not refused.ok and refused.error is not None
    assert f"format version {VERSION}, which this explorer reads" in refused.error.message
    assert not refused.steps and not refused.variables  # nothing of it is taken
