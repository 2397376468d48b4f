"""msgspec's messages about a run's answer, in plain words: "Expected `int` >= 0, got `str` -
at `$.steps[0].line`" reads "a step's line is not a whole number ≥ 0". Pure."""

from __future__ import annotations

import re

import msgspec

from explorer.trace import schema

# The record at a path (its list indices and keys as `[]`), named.
RECORDS = {"$.error": "the error", "$.steps[]": "a step", "$.variables[]": "a variable",
           "$.steps[].variables[]": "a variable", "$.graphs[]": "a graph",
           "$.graphs[].nodes[]": "a node", "$.graphs[].edges[]": "an edge",
           "$.backward[]": "a backward call", "$.backward[].steps[]": "a backward step",
           "$.backward[].steps[].grad_outputs[]": "a gradient",
           "$.backward[].steps[].grad_inputs[]": "a gradient",
           "$.backward[].leaf_grads[]": "a .grad written",
           "$.backward[].leaf_grads[].grad": "a gradient",
           "$.backward[].retained[]": "a retained .grad written",
           "$.backward[].retained[].grad": "a gradient",
           "$.backward[].returned[]": "a gradient grad() returned",
           "$.backward[].returned[].grad": "a gradient",
           "$.losses[]": "a backward call's summary"}
WORDS = {"int": "a whole number", "float": "a number", "str": "text", "bool": "true or false",
         "array": "a list", "object": "an object", "null": "null"}
MATCHING = {schema.NON_FINITE: "a number",  # a Real's non-finite text
            schema.NODE_ID: "a node id (letters, digits, `_`, `.`, `[`, `]`)"}
BOUNDS = {">=": "≥", "<=": "≤", "of length <=": "of at most", "of length >=": "of at least"}
BOUND = re.compile(r" (?P<how>(?:of length )?[<>]=) (?P<count>\d+)$")
EXPECTED = re.compile(r"Expected `(?P<want>[^`]*)`(?P<bound>.*?)(?:, got `[^`]*`)?"
                      r"(?: - at `(?P<path>[^`]*)`)?$")
MISSING = re.compile(r"Object missing required field `(?P<field>[^`]*)`(?: - at `(?P<path>.*)`)?$")
ENUM = re.compile(r"Invalid enum value (?P<value>.*?)(?: - at `(?P<path>[^`]*)`)?$")
STEP = re.compile(r"\.\w+|\[[^\][]*\]")


def plain(error: msgspec.ValidationError, root: str = "the answer") -> str:
    """msgspec's message (`Expected int >= 0, got str - at $.steps[0].line`) in plain words
    (`a step's line is not a whole number ≥ 0`), `root` being the whole decoded."""
    text = str(error)
    if found := MISSING.match(text):
        return f"{_record(found['path'] or '$', root)[0]} has no {found['field']}"
    if found := EXPECTED.match(text):
        want = found["want"].split(" | ")
        if "float" in want and "str" in want:
            want.remove("str")  # a Real's non-finite text
        words = " or ".join(WORDS.get(w, w) for w in want)
        if bound := BOUND.match(found["bound"]):
            words += f" {BOUNDS[bound['how']]} {int(bound['count']):,}"
        for pattern, said in MATCHING.items():
            if found["bound"] == f" matching regex {pattern!r}":
                words = said
        return _is_not(found["path"] or "$", root, words)
    if found := ENUM.match(text):
        return _is_not(found["path"] or "$", root, f"one it may be ({found['value'][:40]})")
    return text


def _is_not(path: str, root: str, words: str) -> str:
    record, field, inside = _record(path, root)
    if not field:
        return f"{record} is not {words}"
    return f"{record}'s {field} {'holds what is' if inside else 'is'} not {words}"


def _record(path: str, root: str) -> tuple[str, str, bool]:
    """The record a path is in, named, its field, and whether the path goes inside it."""
    steps = STEP.findall(path[1:])
    general = ["$"] + [s if s.startswith(".") else "[]" for s in steps]
    for at in range(len(general), 0, -1):
        name = RECORDS.get("".join(general[:at])) if at > 1 else root
        if name:
            rest = steps[at - 1:]
            field = rest[0][1:] if rest and rest[0].startswith(".") else ""
            return name, field, len(rest) > 1
    return root, "", False
