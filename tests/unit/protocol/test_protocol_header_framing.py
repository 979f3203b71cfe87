"""Request/response headers and the FrameDecoder."""

from __future__ import annotations

import pytest

from kafkapy.protocol.api_keys import API_NAMES, ApiKey
from kafkapy.protocol.framing import FrameDecoder, FrameTooLargeError, InvalidFrameError
from kafkapy.protocol.header import (
    RequestHeader,
    UnknownApiKeyError,
    UnsupportedApiVersionError,
    decode_request_header,
    decode_response,
    decode_response_header,
    encode_request,
    encode_response,
    request_header_version,
    response_header_version,
)
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages import (
    ApiVersionsResponse,
    ControlledShutdownRequest,
    FetchResponse,
    MetadataResponse,
    ProduceRequest,
)

H = bytes.fromhex


def test_api_keys() -> None:
    assert ApiKey.PRODUCE == 0 and ApiKey.FETCH == 1 and ApiKey.LIST_OFFSETS == 2 and ApiKey.METADATA == 3
    assert ApiKey.API_VERSIONS == 18 and ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS == 50
    assert API_NAMES[18] == "ApiVersions"


def test_header_versions() -> None:
    assert request_header_version(ApiKey.PRODUCE, 8) == 1
    assert request_header_version(ApiKey.PRODUCE, 9) == 2
    assert request_header_version(ApiKey.CONTROLLED_SHUTDOWN, 0) == 0
    assert request_header_version(ApiKey.CONTROLLED_SHUTDOWN, 1) == 1
    assert request_header_version(ApiKey.API_VERSIONS, 3) == 2
    assert response_header_version(ApiKey.API_VERSIONS, 3) == 0
    assert response_header_version(ApiKey.FETCH, 11) == 0
    assert response_header_version(ApiKey.FETCH, 12) == 1


def test_decode_request_header_v1_v2_and_v0() -> None:
    frame = H("0000 0008 00000005 0002") + b"id" + b"body"
    header, pos = decode_request_header(frame)
    assert header == RequestHeader(0, 8, 5, "id") and frame[pos:] == b"body"
    frame = H("0000 0009 00000005 ffff 01 07 01 00") + b"body"  # null client id + an unknown header tag
    header, pos = decode_request_header(frame)
    assert header == RequestHeader(0, 9, 5, None) and frame[pos:] == b"body"
    cs = encode_request(RequestHeader(7, 0, 3, "ignored"), ControlledShutdownRequest(broker_id=1))
    assert cs == H("0000000c 0007 0000 00000003 00000001")
    header, pos = decode_request_header(cs[4:])
    assert header == RequestHeader(7, 0, 3, None) and pos == 8


def test_unknown_api_key_and_unsupported_version() -> None:
    with pytest.raises(UnknownApiKeyError) as e:
        decode_request_header(H("03e7 0000 0000002a 0000"))
    assert (e.value.api_key, e.value.api_version, e.value.correlation_id) == (999, 0, 42)
    assert isinstance(e.value, ProtocolDecodeError)
    with pytest.raises(UnsupportedApiVersionError) as e2:
        decode_request_header(H("0000 0063 0000002b 0000"))
    assert (e2.value.api_key, e2.value.api_version, e2.value.correlation_id) == (0, 99, 43)
    with pytest.raises(ProtocolDecodeError):
        decode_request_header(H("0000 00"))


def test_api_versions_with_too_high_version_still_decodes_header() -> None:
    header, pos = decode_request_header(H("0012 0063 0000002c 0003") + b"cli" + H("00") + b"rest")
    assert header == RequestHeader(18, 99, 44, "cli") and pos == 14


def test_encode_response_header_versions() -> None:
    body = ApiVersionsResponse(error_code=35, api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, max_version=4)])
    chunks = encode_response(18, 3, 9, body)
    assert body.encode(3) == H("0023 02 0012 0000 0004 00 00000000 00")
    assert chunks == [H("00000013 00000009") + body.encode(3)]  # header v0 even at v3
    meta = MetadataResponse()
    chunks = encode_response(3, 9, 10, meta)
    raw = chunks[0]
    assert raw[:9] == len(raw[4:]).to_bytes(4, "big") + H("0000000a 00")
    assert decode_response_header(raw[4:], 3, 9) == (10, 5)
    assert decode_response(raw[4:], 3, 9) == (10, meta)
    corr, fetch = decode_response(encode_response(1, 4, 11, FetchResponse())[0][4:], 1, 4)
    assert corr == 11 and fetch == FetchResponse()


def test_frame_decoder_splits_and_joins() -> None:
    frames = [b"a" * 5, b"", b"xyz" * 100]
    stream = b"".join(len(f).to_bytes(4, "big") + f for f in frames)
    for step in (1, 3, 7, len(stream)):
        fd = FrameDecoder(1000)
        got = []
        for i in range(0, len(stream), step):
            fd.feed(stream[i : i + step])
            while (f := fd.next_frame()) is not None:
                got.append(bytes(f))
        assert got == frames and fd.buffered_bytes == 0


def test_frame_decoder_copies_mutable_buffers() -> None:
    buf = bytearray(H("00000003") + b"abc")
    fd = FrameDecoder(10)
    fd.feed(memoryview(buf))
    buf[4:7] = b"zzz"
    assert bytes(fd.next_frame()) == b"abc"


def test_frame_decoder_rejects_before_reading_the_body() -> None:
    fd = FrameDecoder(100)
    fd.feed(H("00000065"))  # 101 > 100: refused as soon as the size is known
    with pytest.raises(FrameTooLargeError) as e:
        fd.next_frame()
    assert e.value.size == 101
    fd = FrameDecoder(100)
    fd.feed(H("7fffffff"))
    with pytest.raises(FrameTooLargeError):
        fd.next_frame()
    fd = FrameDecoder(100)
    fd.feed(H("ffffffff"))
    with pytest.raises(InvalidFrameError):
        fd.next_frame()
    fd = FrameDecoder(100)
    fd.feed(H("0000"))
    assert fd.next_frame() is None


def test_request_round_trip_through_frames() -> None:
    body = ProduceRequest(acks=1, timeout_ms=100, topic_data=[])
    raw = encode_request(RequestHeader(0, 9, 77, "c"), body) * 2
    fd = FrameDecoder(1 << 20)
    fd.feed(raw)
    for _ in range(2):
        frame = fd.next_frame()
        header, pos = decode_request_header(frame)
        assert header.correlation_id == 77
        assert ProduceRequest.decode_from(frame, pos, 9)[0] == body
    assert fd.next_frame() is None
