"""Fixtures for client unit tests: `fake_broker(handler)` starts a scripted loopback broker."""

from __future__ import annotations

import pytest
from client_fake_broker import FakeBroker, Handler


@pytest.fixture
def fake_broker():
    started: list[FakeBroker] = []

    def start(handler: Handler) -> FakeBroker:
        b = FakeBroker(handler)
        started.append(b)
        return b

    yield start
    for b in started:
        b.close()
