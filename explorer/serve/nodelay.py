"""The server's TCP connections send each message at once: TCP_NODELAY, Nagle's algorithm off.

Streamlit's server binds its listening socket itself and serves it with uvicorn on asyncio,
which turns Nagle's algorithm off only on sockets made with `IPPROTO_TCP` named: this one
is made without, so it stays on. A rerun sends many small messages; with Nagle on, those
after the first wait for the browser's delayed ACK (40 ms on Linux) and a page arrives in
bursts tens of milliseconds late (README "Benchmark"). Set on the listening socket, the option
is inherited by every connection accepted afterwards (Linux does so); connections already
open get it too. Pure standard library; where /proc is missing, nothing is done.
"""

from __future__ import annotations

import functools
import os
import socket
import stat

FDS = "/proc/self/fd"


@functools.cache
def send_at_once() -> int:
    """Turn Nagle's algorithm off on every TCP socket of this process, once; how many."""
    done = 0
    try:
        names = os.listdir(FDS)
    except OSError:
        return 0
    for name in names:
        try:
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode) and _no_delay(int(name)):
                done += 1
        except OSError:  # closed meanwhile
            continue
    return done


def _no_delay(fd: int) -> bool:
    """Set TCP_NODELAY on the socket `fd` if it is a TCP one, through a copy of `fd`."""
    copy = os.dup(fd)
    try:
        sock = socket.socket(fileno=copy)
    except OSError:
        os.close(copy)
        return False
    with sock:  # closes the copy, not the socket
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or (
                sock.type != socket.SOCK_STREAM):
            return False
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return True
