"""The server's TCP sockets send at once: TCP_NODELAY on the listener (inherited by what it
accepts later) and on connections already open; other sockets untouched and all still open."""

from __future__ import annotations

import socket

from explorer.serve.nodelay import send_at_once


def _nodelay(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


def test_every_tcp_socket_sends_at_once_and_stays_open() -> None:
    listener = socket.socket()  # as Streamlit makes its own: no IPPROTO_TCP named
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    early = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    local, other = socket.socketpair()
    try:
        assert not any(map(_nodelay, (listener, early, accepted)))
        assert send_at_once.__wrapped__() >= 3  # the cached call may have run in this process
        assert all(map(_nodelay, (listener, early, accepted)))
        later = socket.create_connection(listener.getsockname())
        served, _ = listener.accept()
        with later, served:
            assert _nodelay(served)  # inherited from the listener
            served.sendall(b"ping")
            assert later.recv(4) == b"ping"
        accepted.sendall(b"still open")  # the copies closed, the sockets did not
        assert early.recv(10) == b"still open"
        local.sendall(b"unix")
        assert other.recv(4) == b"unix"
    finally:
        for sock in (listener, early, accepted, local, other):
            sock.close()
