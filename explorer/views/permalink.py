"""Permalinks: what a page shows, as URL query parameters, and back. Pure: no Streamlit.

The program travels zlib-compressed in URL-safe base64 (`code=z…`); every other value is
plain text, checked against what it may be. `read` refuses a whole link that is too long,
corrupt, or that unpacks to more than a program may be (`LinkError`); a single value that
is not what it should be is dropped and named, and the rest of the link still works.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import zlib
from collections.abc import Callable, Mapping
from typing import Any

MAX_QUERY = 16_000  # characters of a link's parameters together (names and values)
MAX_CODE = 64 * 1024  # bytes a program may unpack to
DEFLATE = "z"  # the code's format: zlib, then URL-safe base64 without padding


class LinkError(ValueError):
    """A link that can't be opened. `key` names the reason in the interface text."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


def encode_code(code: str) -> str:
    """`code` as a short URL-safe token."""
    packed = base64.urlsafe_b64encode(zlib.compress(code.encode(), 9)).rstrip(b"=")
    return DEFLATE + packed.decode("ascii")


def decode_code(token: str) -> str:
    """The program in `token`; LinkError if it is not one `encode_code` made, or too big."""
    if not token.startswith(DEFLATE):
        raise LinkError("link_corrupt")
    try:
        packed = base64.urlsafe_b64decode(token[1:] + "=" * (-len(token[1:]) % 4))
    except (binascii.Error, ValueError):
        raise LinkError("link_corrupt") from None
    unpacker = zlib.decompressobj()
    try:
        code = unpacker.decompress(packed, MAX_CODE + 1)  # never more than this, however packed
    except zlib.error:
        raise LinkError("link_corrupt") from None
    if len(code) > MAX_CODE or unpacker.unconsumed_tail:
        raise LinkError("link_too_big", limit=MAX_CODE // 1024)
    if not unpacker.eof or unpacker.unused_data:
        raise LinkError("link_corrupt")
    try:
        return code.decode()
    except UnicodeDecodeError:
        raise LinkError("link_corrupt") from None


def _integer(low: int, high: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        if not (value.isascii() and value.isdecimal() and len(value) <= len(str(high))):
            raise ValueError(value)
        number = int(value)
        if not low <= number <= high:
            raise ValueError(value)
        return number
    return parse


def _number(low: float, high: float) -> Callable[[str], float]:
    def parse(value: str) -> float:
        number = float(value) if len(value) <= 24 else math.nan
        if not low <= number <= high:  # NaN fails this too
            raise ValueError(value)
        return number
    return parse


def _loop_round(value: str) -> tuple[int, int]:
    """`loop.round`: a loop of the program (0: the first written) and one of its rounds."""
    loop, _, at = value.partition(".")
    return _integer(0, 10_000)(loop), _integer(1, 10 ** 9)(at)


def _flag(value: str) -> bool:
    if value not in ("0", "1"):
        raise ValueError(value)
    return value == "1"


def _matching(pattern: re.Pattern[str]) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(value)
        return value
    return parse


def _names(value: str) -> list[str]:
    names = value.split(",") if value else []
    if len(names) > 32 or not all(NAME.fullmatch(name) for name in names):
        raise ValueError(value)
    return names


# A variable's or a graph node's name as the pages show it: printable, short, no comma.
NAME = re.compile(r"[^\x00-\x1f\x7f,]{1,100}")
name = _matching(NAME)
LANG, DEVICE, TAB = (re.compile(r"en|zh"), re.compile(r"cpu|cuda(:\d{1,2})?"),
                     re.compile(r"check|graph|backward"))  # TAB: the custom Function page's

# Every parameter a page may put in its link, and how to read its value.
FIELDS: dict[str, Callable[[str], Any]] = {
    "code": decode_code,
    "lang": _matching(LANG),
    "device": _matching(DEVICE),
    "step": _integer(1, 1_000_000),  # the program step shown
    "last": _loop_round,  # a loop's last round, stepped through by a run asked for it
    "inspect": name,  # the variable looked inside
    "roots": _names,  # the graph's chosen outputs
    "saved": _flag, "attrs": _flag, "expand": _flag, "values": _flag,  # the graph's options
    "fold": _names,  # the modules the graph draws as one node each
    "order": _integer(1, 64),  # the one derivative order the graph draws
    "library": _integer(1, 64),  # the library function's pass drawn (0, the first: none)
    "node": name,  # the graph node whose details are open
    "tab": _matching(TAB),
    "call": _integer(1, 1_000_000),  # the backward call replayed
    "replay": _integer(1, 1_000_000),  # its place: statements, then engine steps
    "predict": _flag,  # the Backward page asks before it shows (never the answers)
    "ask": _names,  # what it asks: a lesson's `x.grad`, `y`
    "left": name, "right": name,  # the NumPy page's pair
    # the training page's: settings of links made before it had an editor, then its run
    "n": _integer(1, 512), "d_in": _integer(1, 4096), "h": _integer(1, 1024),
    "d_out": _integer(1, 256), "lr": _number(0.0, 1.0), "iters": _integer(1, 2000),
    "trained": _flag, "k": _integer(1, 1_000_000), "opened": _flag,
}


def read(query: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The values of a link's known parameters, and the names of those dropped as invalid.
    Unknown parameters are ignored. LinkError for a link too long or a program unreadable."""
    if sum(len(k) + len(v) for k, v in query.items()) > MAX_QUERY:
        raise LinkError("link_too_long", limit=MAX_QUERY)
    values: dict[str, Any] = {}
    dropped = []
    for param, value in query.items():
        parse = FIELDS.get(param)
        if parse is None:
            continue
        if param == "code":
            values[param] = parse(value)  # an unreadable program spoils the whole link
            continue
        try:
            values[param] = parse(value)
        except ValueError:
            dropped.append(param)
    return values, dropped


def show(param: str, value: Any) -> str:
    """`value` of `param` as its link writes it (what `read` reads back)."""
    if param not in FIELDS:
        raise KeyError(param)
    if param == "code":
        return encode_code(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if param == "last":
        return "{}.{}".format(*value)
    if isinstance(value, list | tuple):
        return ",".join(value)
    return str(value)
