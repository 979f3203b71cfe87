"""Test-only start-up hook for broker processes of tests/cluster/test_fault_injection.py (put on their
PYTHONPATH): every outgoing IPv4 TCP connection of the process leaves from KAFKAPY_TEST_SOURCE_ADDRESS
(the broker's own 127.0.0.x) instead of 127.0.0.1, so iptables rules can cut one broker's links by
address: replica fetchers, the controller's channel, the broker-to-controller channel and the ZooKeeper
session alike. Sockets already bound (listeners) are left alone. No byte format; no threads.
"""

from __future__ import annotations

import os
import socket

_SOURCE = os.environ.get("KAFKAPY_TEST_SOURCE_ADDRESS")

if _SOURCE:
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex

    def _bind_source(sock: socket.socket, address: object) -> None:
        if sock.family != socket.AF_INET or sock.type != socket.SOCK_STREAM:
            return
        if isinstance(address, tuple) and not str(address[0]).startswith("127."):
            return
        try:
            if sock.getsockname() == ("0.0.0.0", 0):
                sock.bind((_SOURCE, 0))
        except OSError:
            pass

    def connect(self: socket.socket, address: object) -> None:
        _bind_source(self, address)
        _connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        _bind_source(self, address)
        return _connect_ex(self, address)  # type: ignore[arg-type]

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
