"""Garbage in, ProtocolDecodeError out: decoders never leak IndexError/struct.error/MemoryError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import instances

from kafkapy.protocol.framing import FrameDecoder, FrameTooLargeError, InvalidFrameError
from kafkapy.protocol.header import decode_request
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages import REQUEST_CLASSES, RESPONSE_CLASSES

_S = settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

HOT = [(REQUEST_CLASSES[k], v) for k, v in ((0, 3), (0, 9), (0, 12), (1, 4), (1, 12), (1, 17), (3, 0), (3, 12),
                                            (18, 3), (8, 9), (9, 9), (11, 9))]
HOT += [(RESPONSE_CLASSES[k], v) for k, v in ((0, 9), (1, 12), (1, 16), (3, 12), (18, 0), (18, 4))]


def _decode_or_error(cls, version, raw: bytes) -> None:
    try:
        cls.decode(raw, version)
    except ProtocolDecodeError:
        pass


@pytest.mark.parametrize(("cls", "version"), HOT, ids=[f"{c.NAME}-v{v}" for c, v in HOT])
def test_random_bytes(cls, version) -> None:
    @_S
    @given(st.binary(max_size=200))
    def run(raw: bytes) -> None:
        _decode_or_error(cls, version, raw)

    run()


@pytest.mark.parametrize(("cls", "version"), HOT, ids=[f"{c.NAME}-v{v}" for c, v in HOT])
def test_mutated_valid_encodings(cls, version) -> None:
    @_S
    @given(instances(cls, version), st.data())
    def run(msg, data) -> None:
        raw = bytearray(msg.encode(version))
        if not raw:
            return
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(raw) - 1))
            raw[i] = data.draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]))
        _decode_or_error(cls, version, bytes(raw))

    run()


@_S
@given(st.binary(max_size=120))
def test_random_request_frames(raw: bytes) -> None:
    try:
        decode_request(raw)
    except ProtocolDecodeError:
        pass


@_S
@given(st.lists(st.binary(max_size=20), max_size=10))
def test_frame_decoder_random_stream(chunks: list[bytes]) -> None:
    fd = FrameDecoder(64)
    try:
        for c in chunks:
            fd.feed(c)
            while fd.next_frame() is not None:
                pass
    except (FrameTooLargeError, InvalidFrameError):
        pass
