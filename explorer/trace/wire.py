"""The wire between the server and a worker: length-prefixed JSON messages, never pickle. A
run's answer is written by msgspec (explorer.trace.check reads it into the Trace's types)."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import re
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import msgspec

from explorer.safety.limits import Limits
from explorer.safety.places import HOLDERS, PYTHON
from explorer.trace.check import MAX_CONTAINERS, PLAIN
from explorer.trace.schema import VERSION, Graph, SentGraph

if TYPE_CHECKING:
    from explorer.trace import Trace

HEADER = struct.Struct("!Q")
# A message's length with this bit set: a progress update, at most MAX_PROGRESS_BYTES (a
# backward call's summary is ~1 KB), which the server may drop unread.
PROGRESS = 1 << 63
MAX_PROGRESS_BYTES = 64 << 10
# A run's answer: the largest seed program's is 1.3 MB; a larger one thins itself to fit
# (explorer.record.thin).
MAX_RESULT_BYTES = 16 << 20
# Where Python, the libraries and the app are installed, longest first: a run's output names
# none of them (a module's repr, a traceback's file names).
INSTALLED = sorted({os.path.join(p, "").encode() for p in PYTHON | HOLDERS}, key=len,
                   reverse=True)
LONE = re.compile("[\ud800-\udfff]")  # a UTF-16 surrogate on its own: not text
SURROGATE = re.compile(rb"\\[uU][dD][89a-fA-F]")  # a JSON escape of one: what makes a LONE
REPLACEMENT = "\ufffd"
MAX_DEPTH = 100  # lists and objects inside one another: a Trace needs ~70 (64-d values)


def send(sock: socket.socket, payload: bytes, progress: bool = False) -> None:
    """One length-prefixed message (`progress`: marked as a progress update)."""
    sock.sendall(HEADER.pack(len(payload) | (PROGRESS if progress else 0)) + payload)


class TooLarge(ConnectionError):
    """A message over the receiver's cap: refused before any of it is read."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"message of {size:,} bytes is over the {cap:,} byte cap")
        self.size = size


def recv(sock: socket.socket, max_bytes: int) -> bytes:
    """One length-prefixed message, no progress update; ConnectionError if the peer left,
    TooLarge if it is, BadAnswer if it is a progress update."""
    size, update = header(sock)
    if update:
        raise BadAnswer("a progress update came where none may")
    return body(sock, size, max_bytes)


def header(sock: socket.socket) -> tuple[int, bool]:
    """The size of the next message and whether it is a progress update."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    return size & ~PROGRESS, bool(size & PROGRESS)


def body(sock: socket.socket, size: int, max_bytes: int) -> bytes:
    """The next `size` bytes: a message's body; TooLarge, before any is read, over `max_bytes`."""
    if size > max_bytes:
        raise TooLarge(size, max_bytes)
    return _exactly(sock, size)


def skip(sock: socket.socket, size: int) -> None:
    """Read and drop the next `size` bytes, a piece at a time into one small buffer."""
    scrap = bytearray(min(size, 1 << 16))
    while size:
        got = sock.recv_into(scrap, min(size, len(scrap)))
        if not got:
            raise ConnectionError("the other side closed the connection")
        size -= got


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def job_message(code: str, device: str, limits: Limits, seed: int | None, threads: int,
                keep: tuple[int, ...] = (), place: str | None = None,
                rounds: tuple[tuple[int, int], ...] = ()) -> bytes:
    """The JSON a parent sends for one run (`keep`: backward calls to record in full;
    `place`: the name of the directory an unlocked run makes for itself; `rounds`: loops'
    rounds to step through, each (loop, round over the run))."""
    job: dict[str, Any] = {"code": code, "device": device, "seed": seed, "threads": threads,
                           "limits": dataclasses.asdict(limits), "keep": list(keep),
                           "rounds": [list(r) for r in rounds], "dir": place}
    return json.dumps(job).encode()


def trace_message(trace: Trace) -> bytes:
    """The JSON a child answers with (see `parts`)."""
    return message(parts(trace))


def saved(trace: Trace) -> bytes:
    """The Trace as a file to keep: as a run sends it (a step names only the variables it
    changed, a graph only the nodes it changed: backprop ninja's first exercise is 59 MiB whole
    and 2.8 MiB so), with the format's version. `Trace.from_json` reads it back whole."""
    return message({"version": b"%d" % VERSION} | parts(trace))


def parts(trace: Trace, fields: frozenset[str] | None = None) -> dict[str, bytes]:
    """The answer's fields (all, or those named) as the JSON that crosses the wire."""
    answer = trace.to_dict()
    del answer["graph"], answer["version"]  # for readers of a saved Trace
    answer["graphs"] = _shared(answer["graphs"])
    _changed(answer)
    return {name: encode(value if name == "graphs" else finite(value))  # graphs: whole numbers
            for name, value in answer.items() if fields is None or name in fields}


def message(fields: dict[str, bytes]) -> bytes:
    """The answer made of its `fields`' JSON, naming no path of the server's (`print(torch)`,
    anomaly tracebacks)."""
    payload = b"{" + b", ".join(b'"%s": %s' % (name.encode(), value)
                                for name, value in fields.items()) + b"}"
    for place in INSTALLED:
        payload = payload.replace(place, "…".encode())
    return payload


def encode(value: Any) -> bytes:
    """`value` (`finite`: JSON has no NaN) as JSON: a value the snapshot left as an object (a
    function in an object array...) as its type's name, so that nothing a program made fails
    the answer and no program code (a Module's `extra_repr`) runs to make it; a lone surrogate
    (`chr(0xd800)`) as U+FFFD."""
    try:
        return _ENCODER.encode(value)
    except UnicodeEncodeError:  # only a lone surrogate fails: the rare answer that holds one
        text = json.dumps(value, ensure_ascii=False, default=_stand_in)
        return LONE.sub(REPLACEMENT, text).encode()


def _stand_in(value: Any) -> Any:
    """What an object JSON has no form for goes as: a record as its fields, a subclass of text
    or a number as its value (read by the base type's own method: none of the program's
    runs), anything else as its type's name."""
    if issubclass(type(value), msgspec.Struct):  # for json, when a lone surrogate needs it
        return msgspec.to_builtins(value, enc_hook=_stand_in)
    for kind, base in BASES.items():
        if issubclass(type(value), kind):
            return base(value)
    return f"<{type(value).__name__}>"


BASES = {str: str.__str__, int: int.__int__, float: float.__float__}
_ENCODER = msgspec.json.Encoder(enc_hook=_stand_in)


def finite(value: Any) -> Any:
    """`value` with every non-finite float in it as its text (`nan`, `inf`, `-inf`), as the
    snapshot writes one; copied only where one is."""
    if issubclass(type(value), float):  # read by math's own functions: none of a program's
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else "inf" if math.copysign(1, value) > 0 else "-inf"
    if isinstance(value, list):
        if PLAIN.issuperset(map(type, value)) and all(  # numbers only (most of a Trace)
                math.isfinite(v) for v in value if type(v) is float):
            return value
        new = [finite(v) for v in value]
        return value if all(a is b for a, b in zip(new, value, strict=True)) else new
    if isinstance(value, dict):
        changed = {k: new for k, v in value.items()
                   if isinstance(v, Walked) and (new := finite(v)) is not v}
        return value | changed if changed else value
    if isinstance(value, msgspec.Struct):
        changed = {k: new for k in value.__struct_fields__
                   if isinstance(v := getattr(value, k), Walked) and (new := finite(v)) is not v}
        return msgspec.structs.replace(value, **changed) if changed else value
    return value


Walked = float | list | dict | msgspec.Struct  # what may hold a float


@contextmanager
def uncollected() -> Iterator[None]:
    """Python's cyclic garbage collector held off in this block, which makes many small
    dicts and lists and no cycles (a graph walked, an answer decoded and checked): a
    collection in the middle finds nothing and walks every object of the process (reading a
    2,000-node graph's answer took twice as long in the server)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _shared(graphs: list[Graph]) -> list[SentGraph]:
    """`graphs` as they cross the wire: a node the graph before holds unchanged goes as its
    id alone (a run draws its graph after every statement, and most of it stays the same;
    explorer.trace.check puts the node back)."""
    sent, before = [], {}
    for graph in graphs:
        nodes = [node.id if before.get(node.id) == node else node for node in graph.nodes]
        sent.append(SentGraph(dot=graph.dot, nodes=nodes, edges=graph.edges,
                              packed=graph.packed, note=graph.note))
        before = {node.id: node for node in graph.nodes}
    return sent


def _changed(answer: dict[str, Any]) -> None:
    """The answer's variables as they cross the wire, in place: one a step describes as the
    step before did goes as null, and so does one the end describes as the last step did (a
    statement changes a few names, and a record of every name at every statement grows as
    their product; explorer.trace.check puts them back)."""
    before: dict[str, Any] = {}
    for step in answer["steps"]:
        step["variables"], before = _against(step["variables"], before), step["variables"]
    answer["variables"] = _against(answer["variables"], before)


def _against(variables: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {name: None if before.get(name) == info else info for name, info in variables.items()}


class BadAnswer(ValueError):
    """A worker's message that is no JSON object a worker would send."""


def decode(payload: bytes) -> dict[str, Any]:
    """A worker's message (untrusted) as a JSON object; BadAnswer (a ValueError) if it is none.
    Bytes that are not UTF-8 and lone surrogates (escaped as `\\ud800`) become U+FFFD, and
    nesting deeper than MAX_DEPTH is refused, never a RecursionError, and so are more than
    MAX_CONTAINERS lists and objects (counted by their opening brackets, before decoding)."""
    if payload.count(b"{") + payload.count(b"[") > MAX_CONTAINERS:
        raise BadAnswer(f"the message holds more than {MAX_CONTAINERS:,} lists and objects")
    try:
        value = json.loads(payload.decode(errors="replace"))
    except RecursionError:
        raise BadAnswer(_too_deep()) from None
    except ValueError as error:  # not JSON, or a number too long to read
        raise BadAnswer(f"the message is not JSON ({str(error)[:200]})") from None
    if not isinstance(value, dict):
        raise BadAnswer("the message is not a JSON object")
    _clean(value, surrogates=SURROGATE.search(payload) is not None)
    return value


def _clean(message: dict[str, Any], surrogates: bool) -> None:
    """Check `message`'s depth and, if it may hold `surrogates` (only a JSON escape makes
    one), replace them in its strings, in place, without recursion (the message is as deep
    as a forger likes)."""
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadAnswer(_too_deep())
        if isinstance(value, dict):
            if surrogates:
                for key in [k for k in value if LONE.search(k)]:
                    value[LONE.sub(REPLACEMENT, key)] = value.pop(key)
            items: Any = value.items()
        elif PLAIN.issuperset(map(type, value)):
            continue  # numbers only (most of a Trace): nothing inside
        else:
            items = enumerate(value)
        for place, item in items:
            if isinstance(item, dict | list):
                stack.append((item, depth + 1))
            elif surrogates and isinstance(item, str) and LONE.search(item):
                value[place] = LONE.sub(REPLACEMENT, item)


def _too_deep() -> str:
    return f"the message is nested more than {MAX_DEPTH} levels deep"
