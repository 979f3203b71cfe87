"""Round trips of every generated message class at every version it claims (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from protocol_strategies import instances

from kafkapy.protocol.framing import FrameDecoder
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages import (
    REQUEST_CLASSES,
    RESPONSE_CLASSES,
    data,
    group_coordinator,
    transaction_coordinator,
)
from kafkapy.protocol.types import INT32

CLASSES = list(REQUEST_CLASSES.values()) + list(RESPONSE_CLASSES.values())
for mod in (data, group_coordinator, transaction_coordinator):
    CLASSES += [getattr(mod, n) for n in sorted(dir(mod)) if getattr(getattr(mod, n), "TYPE", None) and n[0] != "_"]
CASES = [(c, v) for c in CLASSES for v in range(c.VALID_VERSIONS[0], c.VALID_VERSIONS[1] + 1)]

_SETTINGS = settings(
    max_examples=12, deadline=None, database=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _truncation_points(n: int) -> list[int]:
    if n <= 64:
        return list(range(n))
    return sorted({0, 1, 2, 3, n // 3, n // 2, n - 3, n - 2, n - 1})


def check_round_trip(cls, version, msg) -> None:
    raw = msg.encode(version)
    decoded = cls.decode(raw, version)
    assert decoded == msg
    assert decoded.encode(version) == raw
    # trailing bytes are ignored, offsets are honoured
    again, end = cls.decode_from(b"\x07" * 3 + raw + b"\x00\x01trailing", 3, version)
    assert again == msg and end == len(raw) + 3
    # truncated input always raises ProtocolDecodeError
    for k in _truncation_points(len(raw)):
        with pytest.raises(ProtocolDecodeError):
            cls.decode(raw[:k], version)
    # one byte at a time through a FrameDecoder
    framed = INT32.pack(len(raw)) + raw
    fd = FrameDecoder(max_frame_bytes=1 << 20)
    frames = []
    for i in range(len(framed)):
        fd.feed(framed[i : i + 1])
        f = fd.next_frame()
        if f is not None:
            frames.append(f)
    assert len(frames) == 1 and bytes(frames[0]) == raw
    assert cls.decode(frames[0], version) == msg


@pytest.mark.parametrize(("cls", "version"), CASES, ids=[f"{c.NAME}-v{v}" for c, v in CASES])
def test_round_trip(cls, version) -> None:
    @_SETTINGS
    @given(instances(cls, version))
    def run(msg) -> None:
        check_round_trip(cls, version, msg)

    run()


def test_every_api_has_request_and_response() -> None:
    assert set(REQUEST_CLASSES) == set(RESPONSE_CLASSES)
    for key, req in REQUEST_CLASSES.items():
        resp = RESPONSE_CLASSES[key]
        assert req.API_KEY == resp.API_KEY == key
        assert req.TYPE == "request" and resp.TYPE == "response"
        assert req.NAME.endswith("Request") and resp.NAME.endswith("Response")
