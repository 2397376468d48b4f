"""Every pattern the server matches against text a run or a visitor controls, and the worst
time each takes on text made to make it backtrack.

Python's `re` backtracks: `(?:\\d{1,18}(?:, )?){0,64}` tried every way to split 37 digits
among its repeats for minutes, holding the server's interpreter, which every visitor shares.
So each pattern is attacked as ReDoS checkers do: for every repeat in it, a prefix that
leads to the repeat, the repeat's body pumped many times, and a character that fails what
follows; and that prefix and one round of the body over and over (`shape '[` repeated made
`shape '(\\[.*?\\])' is invalid` read on to the end from each one: quadratic). The pump
grows until the text is as long as the longest text the server matches
(`explorer.trace.check.MAX_MESSAGE`: a run's text is cut to it before any pattern reads it);
a pattern whose worst time there stays small is safe whatever the text.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from re import _constants as sre  # the parser's own names for the parts of a pattern
from re import _parser
from typing import Any

import explorer
from explorer.content import explain, rules
from explorer.trace.check import MAX_MESSAGE

BOUND_S = 0.1  # the most one match may hold the server's interpreter
INSIDE = ("explorer.record", "explorer.safety.guards", "explorer.bench")  # not the server
FAILS = ("!", "\n", "\x00")  # what ends an attack: characters most patterns then refuse
# What comes before it: nothing, or text to search past (`re` matches a literal prefix at the
# text's start by another way, which took 2 µs where the same text after it took 70 ms).
LEADS = ("", "text before ")
REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


@dataclass(frozen=True)
class Worst:
    """A pattern's slowest attack: its length in characters and the seconds one search took."""

    seconds: float
    length: int


def server_patterns() -> dict[str, re.Pattern[Any]]:
    """The server's patterns by where they are: each module's compiled constants (in lists,
    tuples and dicts too), and those the content's data files hold."""
    found: dict[str, re.Pattern[Any]] = {}
    for module in _server_modules():
        for name, value in vars(module).items():
            for i, pattern in enumerate(_compiled(value)):
                found[f"{module.__name__}.{name}" + (f"[{i}]" if i else "")] = pattern
    found |= {f"errors.toml[{i}]": rule.pattern for i, rule in enumerate(explain._rules())}
    found |= {f"rules.toml[{entry['op']}]": entry["name"] for entry in rules._rules()["rule"]}
    return found


def worst(pattern: re.Pattern[Any], cap: int = MAX_MESSAGE, bound: float = BOUND_S) -> Worst:
    """The slowest search of `pattern` over the attacks on it up to `cap` characters; the
    first attack past `bound` ends the search for worse ones."""
    slowest = Worst(0.0, 0)
    for text in attacks(pattern, cap):
        subject = text.encode("utf-8", "surrogatepass") if isinstance(
            pattern.pattern, bytes) else text
        start = time.perf_counter()
        pattern.search(subject)
        taken = time.perf_counter() - start
        if taken > slowest.seconds:
            slowest = Worst(taken, len(text))
        if taken > bound:
            break
    return slowest


def attacks(pattern: re.Pattern[Any], cap: int) -> Iterator[str]:
    """Texts that make a backtracking matcher try hardest, shortest first: for each repeat,
    its prefix, its body pumped, then a failing character (each after LEADS); and its prefix
    and body over and over, each copy a start from which a search may read to the end."""
    source = pattern.pattern
    text = source.decode("latin-1") if isinstance(source, bytes) else source
    tree = _parser.parse(text, pattern.flags & ~re.UNICODE if isinstance(source, bytes)
                         else pattern.flags)
    pumps = sorted({(prefix, pump) for prefix, pump in _pumps(list(tree), "") if pump})
    # Two rounds more at a time while short (an exponential pattern doubles its time with
    # each), then twice as many, up to the cap.
    counts = [*range(2, 64, 2), *(64 << i for i in range(cap.bit_length()))]
    for count in counts:
        texts = [prefix + pump * min(count, cap // len(pump)) for prefix, pump in pumps
                 if len(pump) * _before(count) < cap]
        texts += [(prefix + pump) * min(count, cap // len(prefix + pump)) for prefix, pump
                  in pumps if prefix and len(prefix + pump) * _before(count) < cap]
        if not texts:
            return
        yield from (lead + text + fail for text in texts for lead in LEADS for fail in FAILS)


def _before(count: int) -> int:
    """The round of pumping before `count` (`attacks`' counts)."""
    return count - 2 if count <= 64 else count // 2


def _pumps(items: list[tuple[Any, Any]], before: str) -> Iterator[tuple[str, str]]:
    """(what leads to it, one round of its body) for every repeat in `items`, at any depth."""
    for i, (op, av) in enumerate(items):
        here = before + _sample(items[:i])
        if op in REPEATS:
            yield here, _sample(list(av[2]))
            yield from _pumps(list(av[2]), here)
        elif op is sre.SUBPATTERN:
            yield from _pumps(list(av[3]), here)
        elif op is sre.ATOMIC_GROUP:
            yield from _pumps(list(av), here)
        elif op is sre.BRANCH:
            for branch in av[1]:
                yield from _pumps(list(branch), here)


def _sample(items: list[tuple[Any, Any]]) -> str:
    """The shortest text each part of `items` takes (the first branch, repeats at their
    least, a character of each set), as a prefix or a pump is made of."""
    out = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.NOT_LITERAL:
            out.append("a" if av != ord("a") else "b")
        elif op is sre.ANY:
            out.append("a")
        elif op is sre.IN:
            out.append(next((c for c in CANDIDATES if _in(c, av)), "a"))
        elif op is sre.SUBPATTERN:
            out.append(_sample(list(av[3])))
        elif op is sre.ATOMIC_GROUP:
            out.append(_sample(list(av)))
        elif op is sre.BRANCH:
            out.append(_sample(list(av[1][0])))
        elif op in REPEATS:
            out.append(_sample(list(av[2])) * max(av[0], 0))
    return "".join(out)


CANDIDATES = "a0 _!x.,:-\t\"'`["
CATEGORIES = {sre.CATEGORY_DIGIT: str.isdigit, sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
              sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
              sre.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
              sre.CATEGORY_SPACE: str.isspace, sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace()}


def _in(char: str, members: list[tuple[Any, Any]]) -> bool:
    """Whether `char` is in the set `members` (a parsed `[...]`)."""
    negate = any(op is sre.NEGATE for op, _ in members)
    inside = any(op is sre.LITERAL and chr(av) == char
                 or op is sre.RANGE and av[0] <= ord(char) <= av[1]
                 or op is sre.CATEGORY and CATEGORIES.get(av, lambda c: False)(char)
                 for op, av in members)
    return inside != negate


def _server_modules() -> Iterator[Any]:
    """Every module of the package the server runs: all but the run's side and the bench."""
    for info in pkgutil.walk_packages(explorer.__path__, "explorer."):
        if not info.name.startswith(INSIDE) and not info.name.endswith("__main__"):
            yield importlib.import_module(info.name)


def _compiled(value: Any) -> list[re.Pattern[Any]]:
    """The compiled patterns `value` is or holds (a module's constant)."""
    if isinstance(value, re.Pattern):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, re.Pattern)]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, re.Pattern)]
    return []
