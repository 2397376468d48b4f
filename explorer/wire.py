"""The wire between the server and a worker: length-prefixed JSON messages, never pickle."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import struct
import sys
from typing import Any

from explorer.limits import Limits
from explorer.trace import Trace

HEADER = struct.Struct("!Q")
# Where Python, the libraries and the app are installed, longest first: a run's output names
# none of them (a module's repr, a traceback's file names).
INSTALLED = sorted({os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))}, key=len, reverse=True)
SURROGATE = re.compile(rb"\\[uU][dD][89a-fA-F]")  # a JSON escape of a UTF-16 surrogate


def send(sock: socket.socket, payload: bytes) -> None:
    """One length-prefixed message."""
    sock.sendall(HEADER.pack(len(payload)) + payload)


class TooLarge(ConnectionError):
    """A message over the receiver's cap: refused before any of it is read."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"message of {size:,} bytes is over the {cap:,} byte cap")
        self.size = size


def recv(sock: socket.socket, max_bytes: int) -> bytes:
    """One length-prefixed message; ConnectionError if the peer left, TooLarge if it is."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    if size > max_bytes:
        raise TooLarge(size, max_bytes)
    return _exactly(sock, size)


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
                keep: tuple[int, ...] = (), place: str = "run", lock: bool = True) -> bytes:
    """The JSON a parent sends for one run (`keep`: backward calls to record in full;
    `place`: the name of the run's private directory; `lock`: raise `explorer.confine`)."""
    job: dict[str, Any] = {"code": code, "device": device, "seed": seed, "threads": threads,
                           "limits": dataclasses.asdict(limits), "keep": list(keep),
                           "dir": place, "lock": lock}
    return json.dumps(job).encode()


def trace_message(trace: Trace) -> bytes:
    """The JSON a child answers with. A value the snapshot left as an object (a function in an
    object array...) goes as its type's name, a lone surrogate (`chr(0xd800)`) as `?`: the
    answer never fails on what a program made, and no program code (a Module's `extra_repr`)
    runs to make it."""
    text = json.dumps(trace.to_dict(), ensure_ascii=False,
                      default=lambda value: f"<{type(value).__name__}>")
    for place in INSTALLED:  # `print(torch)`, anomaly tracebacks: where the server keeps things
        text = text.replace(place, "…")
    return text.encode(errors="replace")


def decode(payload: bytes) -> dict[str, Any]:
    """A worker's message (untrusted) as a JSON object; ValueError if it is none. Bytes that
    are not UTF-8 and escaped lone surrogates become replacement characters, and nesting
    deeper than Python's recursion limit is refused, not a crash."""
    try:
        value = json.loads(payload.decode(errors="replace"))
    except RecursionError:
        raise ValueError("the message is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("the message is not a JSON object")
    return _scrubbed(value) if SURROGATE.search(payload) else value


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode(errors="replace").decode()
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    if isinstance(value, dict):
        return {_scrubbed(key): _scrubbed(item) for key, item in value.items()}
    return value
