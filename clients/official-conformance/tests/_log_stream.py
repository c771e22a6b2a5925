"""The engine log stream (``…:stream_logs``), read as the official integration tests read it.

The official tests open ``ws[s]://<host>/v1/<engine>:stream_logs?follow=true`` with
``Authorization: Bearer <token>`` through the ``websocket-client`` package and read text messages
one at a time; the test environment holds no WebSocket package, so this is the client side of
RFC 6455 for text frames, written out.
"""

from __future__ import annotations

import base64
import os
import socket
import struct
from typing import Optional
from urllib.parse import urlparse


class LogStream:
    """An open stream: ``status`` is the handshake's HTTP status (101 when it opened)."""

    def __init__(self, sock: socket.socket, status: int, rest: bytes) -> None:
        self.sock = sock
        self.status = status
        self._buffer = rest

    def _read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the stream ended inside a frame")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def recv(self) -> Optional[str]:
        """The next text message, or None once the server closed the stream."""
        while True:
            try:
                first, second = self._read(2)
            except ConnectionError:
                return None
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            payload = self._read(length)
            if opcode == 0x8:
                return None
            if opcode == 0x1:
                return payload.decode("utf-8")

    def close(self) -> None:
        mask = os.urandom(4)
        body = struct.pack("!H", 1000)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(body))
        try:
            self.sock.sendall(bytes([0x88, 0x80 | len(body)]) + mask + masked)
        except OSError:
            pass
        self.sock.close()


def open_log_stream(server_url: str, engine_name: str, token: Optional[str], follow: bool = True) -> LogStream:
    url = urlparse(server_url)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET /v1/{engine_name}:stream_logs?follow={'true' if follow else 'false'} HTTP/1.1",
        f"Host: {url.netloc}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else 0
    stream = LogStream(sock, status, rest)
    if status != 101:
        sock.close()
    return stream
