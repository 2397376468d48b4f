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
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.frames import DATA_OPCODES, Frame
from websockets.http11 import Request, Response
from websockets.streams import StreamReader

ASKED, FINISHED = "asked", "finished"
Note = tuple[float, str]  # (time.monotonic(), ASKED or FINISHED)
CHUNK = 1 << 16


class Messages:
    """One direction of a websocket connection, parsed by websockets' own sans-I/O parsers: the
    HTTP upgrade head (a client's request or the server's response), then RFC 6455 frames (a
    client's masked). `message` is given each whole data message, once, and the time its last
    bytes came; pings, pongs and a close are passed over."""

    def __init__(self, message: Callable[[bytes, float], None], from_client: bool) -> None:
        self.message = message
        self.reader = StreamReader()
        self.at = 0.0  # when the bytes being parsed came
        self.parser = self._parse(from_client)
        next(self.parser)  # to its first read

    def feed(self, data: bytes, at: float) -> None:
        self.at = at
        self.reader.feed_data(data)
        next(self.parser)

    def _parse(self, from_client: bool) -> Generator[None, None, None]:
        read = self.reader
        if from_client:
            yield from Request.parse(read.read_line)
        else:
            yield from Response.parse(read.read_line, read.read_exact, read.read_to_eof)
        parts: list[bytes] = []  # of a message sent in several frames
        while True:
            frame = yield from Frame.parse(read.read_exact, mask=from_client)
            if frame.opcode in DATA_OPCODES:
                parts.append(frame.data)
                if frame.fin:
                    self.message(b"".join(parts), self.at)
                    parts = []


def noting(kind: Any, field: str, notes: list[Note], as_: str) -> Callable[[bytes, float], None]:
    """What notes, as `as_`, each message of protobuf class `kind` whose type is `field`."""
    def note(payload: bytes, at: float) -> None:
        message = kind()
        message.ParseFromString(payload)
        if message.WhichOneof("type") == field:
            notes.append((at, as_))
    return note


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                messages: Messages | None) -> None:
    try:
        while data := await reader.read(CHUNK):
            at = time.monotonic()
            writer.write(data)  # forwarded before it is read here
            if messages is not None:
                messages.feed(data, at)
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
        to_app = Messages(noting(BackMsg, "rerun_script", notes, ASKED), from_client=True)
        to_tab = Messages(noting(ForwardMsg, "script_finished", notes, FINISHED),
                          from_client=False)
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
