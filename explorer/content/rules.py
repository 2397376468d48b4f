"""Each backward node's local derivative rule, in words and math (English and Chinese).

`rule(name)` takes a node's class name (`MulBackward0`, `AccumulateGrad`, a custom
Function's `MyReLUBackward`) and says what the node does with the gradient it receives.
The rules are data: `content/rules.toml`, tried in its order.
"""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path
from typing import Any

FILE = Path(__file__).parent / "rules.toml"


@functools.cache
def _rules() -> dict[str, Any]:
    """rules.toml with each rule's `op` compiled to match a whole node name."""
    with open(FILE, "rb") as file:
        data = tomllib.load(file)
    for entry in data["rule"]:
        entry["name"] = re.compile(f"^{entry['op']}(Backward\\d*)?$")
    return data


def rule(name: str, lang: str = "en", custom: bool = False) -> str:
    """The local derivative rule of a backward node called `name`."""
    data = _rules()
    if custom:
        return _in(data["custom"], lang)
    for entry in data["rule"]:
        if entry["name"].match(name):
            return _in(entry, lang)
    return _in(data["unknown"], lang)


def _in(entry: dict[str, str], lang: str) -> str:
    return entry["zh"] if lang == "zh" else entry["en"]
