"""The wire between the server and a worker: length-prefixed JSON messages, never pickle."""

from __future__ import annotations

import dataclasses
import json
import socket
import struct
from typing import Any

from explorer.limits import Limits

HEADER = struct.Struct("!Q")


def send(sock: socket.socket, payload: bytes) -> None:
    """One length-prefixed message."""
    sock.sendall(HEADER.pack(len(payload)) + payload)


def recv(sock: socket.socket, max_bytes: int) -> bytes:
    """One length-prefixed message; ConnectionError if the peer left or it is too large."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    if size > max_bytes:
        raise ConnectionError(f"message of {size:,} bytes is over the {max_bytes:,} byte cap")
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


def job_message(code: str, device: str, limits: Limits, seed: int | None, threads: int) -> bytes:
    """The JSON a parent sends for one run."""
    job: dict[str, Any] = {"code": code, "device": device, "seed": seed, "threads": threads,
                           "limits": dataclasses.asdict(limits)}
    return json.dumps(job).encode()
