"""A TCP relay in front of the app that notes what a browser's websocket carries, on the wire.

The calibration (explorer.bench.classroom) times Chromium's tabs two ways: in the tab, as a
learner feels it, and here, as the server sees the tab's session. Each tab gets a port of its
own; the relay forwards every byte unchanged, at once, and notes on the machine's monotonic
clock when the tab asked for a run (a BackMsg `rerun_script`) and when a script finished (a
ForwardMsg `script_finished`). It runs in a process of its own, so that no other work of the
benchmark (Playwright's) delays what it notes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ASKED, FINISHED = "asked", "finished"
Note = tuple[float, str]  # (time.monotonic(), ASKED or FINISHED)
CHUNK = 1 << 16


class Frames:
    """One direction of a websocket connection, read after its HTTP head (RFC 6455 frames,
    a client's masked); `message` is given each whole message and the time its last bytes
    came."""

    def __init__(self, message: Callable[[bytes, float], None]) -> None:
        self.message = message
        self.buffer = bytearray()
        self.head = True  # the HTTP request or response before the frames
        self.parts: list[bytes] = []  # of a message sent in several frames

    def feed(self, data: bytes, at: float) -> None:
        self.buffer += data
        if self.head:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            del self.buffer[:end + 4]
            self.head = False
        while (frame := self._frame()) is not None:
            final, opcode, payload = frame
            if opcode in (0, 1, 2):  # continuation, text, binary; not ping, pong or close
                self.parts.append(payload)
                if final:
                    self.message(b"".join(self.parts), at)
                    self.parts = []

    def _frame(self) -> tuple[bool, int, bytes] | None:
        """The next whole frame taken from the buffer (final?, opcode, payload), or None."""
        buffer = self.buffer
        if len(buffer) < 2:
            return None
        size, at = buffer[1] & 0x7F, 2
        if size >= 126:
            at += 2 if size == 126 else 8
            if len(buffer) < at:
                return None
            size = int.from_bytes(buffer[2:at], "big")
        masked = bool(buffer[1] & 0x80)
        mask, at = bytes(buffer[at:at + 4]) if masked else b"", at + 4 * masked
        if len(buffer) < at + size:
            return None
        payload = bytes(buffer[at:at + size])
        final, opcode = bool(buffer[0] & 0x80), buffer[0] & 0x0F
        del buffer[:at + size]
        if masked and size:
            key = (mask * (size // 4 + 1))[:size]
            payload = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(
                size, "big")
        return final, opcode, payload


def noting(kind: Any, field: str, notes: list[Note], as_: str) -> Callable[[bytes, float], None]:
    """What notes, as `as_`, each message of protobuf class `kind` whose type is `field`."""
    def note(payload: bytes, at: float) -> None:
        message = kind()
        message.ParseFromString(payload)
        if message.WhichOneof("type") == field:
            notes.append((at, as_))
    return note


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                frames: Frames | None) -> None:
    try:
        while data := await reader.read(CHUNK):
            at = time.monotonic()
            writer.write(data)  # forwarded before it is read here
            if frames is not None:
                frames.feed(data, at)
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _forward(upstream: tuple[str, int], notes: list[Note], reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> None:
    """One connection of a tab: every byte to the app and back; a websocket's runs noted."""
    try:
        up_reader, up_writer = await asyncio.open_connection(*upstream)
    except OSError:
        writer.close()
        return
    first = await reader.read(CHUNK)
    up_writer.write(first)
    to_app = to_tab = None
    if first.startswith(b"GET /_stcore/stream"):  # the websocket: its runs are noted
        to_app = Frames(noting(BackMsg, "rerun_script", notes, ASKED))
        to_tab = Frames(noting(ForwardMsg, "script_finished", notes, FINISHED))
        to_app.feed(first, time.monotonic())
    await asyncio.gather(_pump(reader, up_writer, to_app), _pump(up_reader, writer, to_tab))


def _serve(upstream: tuple[str, int], tabs: int, control: Connection) -> None:
    """The relay's process: `tabs` ports, each forwarding to `upstream`; sends the ports on
    `control`, then, when told to stop, each port's notes."""
    async def main() -> None:
        notes: dict[int, list[Note]] = {}
        servers = []
        for _ in range(tabs):
            seen: list[Note] = []
            server = await asyncio.start_server(
                lambda r, w, seen=seen: _forward(upstream, seen, r, w), "127.0.0.1", 0)
            servers.append(server)
            notes[server.sockets[0].getsockname()[1]] = seen
        control.send(list(notes))
        await asyncio.to_thread(control.recv)
        for server in servers:
            server.close()
        control.send(notes)

    asyncio.run(main())


class Relays:
    """The running relay: `ports` (one per tab) and, once it has stopped, `notes` per port."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.notes: dict[int, list[Note]] = {}


@contextmanager
def relays(url: str, tabs: int) -> Iterator[Relays]:
    """`tabs` relays to the app at `url` (http://127.0.0.1:PORT), in a process of their own
    until the block ends; their notes are there after it."""
    host, port = url.removeprefix("http://").split(":")
    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    process = spawn.Process(target=_serve, args=((host, int(port)), tabs, theirs), daemon=True)
    process.start()
    try:
        running = Relays(ours.recv())
        yield running
        ours.send("stop")
        running.notes = ours.recv()
    finally:
        process.kill()
        process.join()


def latency(notes: list[Note], since: float, until: float) -> float | None:
    """Seconds from the first run asked for in [since, until] to the last script finished in
    it (None if either is missing)."""
    asked_at = [t for t, kind in notes if kind == ASKED and since <= t <= until]
    done_at = [t for t, kind in notes if kind == FINISHED and since <= t <= until]
    if not asked_at or not done_at or done_at[-1] < asked_at[0]:
        return None
    return done_at[-1] - asked_at[0]
