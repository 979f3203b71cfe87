"""Request/response headers and size-prefixed framing of whole requests and responses.

Byte format: every message on the wire is `int32 size` + header + body.  Request header v0 is
`api_key int16, api_version int16, correlation_id int32` (only ControlledShutdown v0), v1 adds
`client_id` (nullable string, int16 length, never compact), v2 adds a tagged-field section.
Response header v0 is `correlation_id int32`, v1 adds a tagged-field section.  The header version
follows the API version's flexibility, except that ApiVersions responses always use v0 (KIP-511).

Message classes are resolved per api key on first use (`messages.request_class`), so a client that
speaks a few APIs imports only their modules. Pure functions over immutable tables: thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.file_region import FileRegion
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.message import Message
from kafkapy.protocol.messages import request_class, response_class
from kafkapy.protocol.types import (
    INT32,
    ProtocolDecodeError,
    read_nullable_string,
    skip_tagged_fields,
    write_nullable_string,
)

_REQUEST_PREFIX = struct.Struct(">hhi")
_API_VERSIONS = int(ApiKey.API_VERSIONS)
_CONTROLLED_SHUTDOWN = int(ApiKey.CONTROLLED_SHUTDOWN)


class RequestHeaderError(ProtocolDecodeError):
    """A request header the broker cannot serve; carries what could be read of it."""

    def __init__(self, message: str, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(message)
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


class UnknownApiKeyError(RequestHeaderError):
    """The api key is not one Kafka defines: the broker closes the connection."""


class UnsupportedApiVersionError(RequestHeaderError):
    """A known api key at a version outside its range (ApiVersions is exempt: see decode_request_header)."""


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None


def _is_flexible(class_of: Callable[[int], type[Message] | None], api_key: int, api_version: int) -> bool:
    cls = class_of(api_key)
    if cls is None:
        raise UnknownApiKeyError(f"unknown api key {api_key}", api_key, api_version, -1)
    return cls.FLEXIBLE_MIN is not None and api_version >= cls.FLEXIBLE_MIN


def request_header_version(api_key: int, api_version: int) -> int:
    if api_key == _CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    return 2 if _is_flexible(request_class, api_key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == _API_VERSIONS:
        return 0
    return 1 if _is_flexible(response_class, api_key, api_version) else 0


def decode_request_header(frame: Any) -> tuple[RequestHeader, int]:
    """Parse the header of one request (`frame` excludes the size prefix).

    Raises UnknownApiKeyError for keys Kafka does not define and UnsupportedApiVersionError for
    versions outside the generated range - except ApiVersions, whose header is returned whatever
    its version so the broker can answer UNSUPPORTED_VERSION with a v0 body.
    """
    if len(frame) < 8:
        raise ProtocolDecodeError(f"request header truncated ({len(frame)} bytes)")
    api_key, api_version, correlation_id = _REQUEST_PREFIX.unpack_from(frame, 0)
    cls = request_class(api_key)
    if cls is None:
        raise UnknownApiKeyError(f"unknown api key {api_key}", api_key, api_version, correlation_id)
    lo, hi = cls.VALID_VERSIONS
    if not lo <= api_version <= hi and api_key != _API_VERSIONS:
        raise UnsupportedApiVersionError(
            f"{cls.NAME} version {api_version} not in {lo}-{hi}", api_key, api_version, correlation_id
        )
    hv = request_header_version(api_key, api_version)
    pos = 8
    client_id = None
    if hv >= 1:
        client_id, pos = read_nullable_string(frame, pos)
    if hv >= 2:
        pos = skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def decode_request(frame: Any) -> tuple[RequestHeader, Message]:
    """Header and body of one request; the body class comes from request_class(api_key)."""
    header, pos = decode_request_header(frame)
    cls = request_class(header.api_key)
    assert cls is not None  # decode_request_header refused unknown keys
    body, _end = cls.decode_from(frame, pos, header.api_version)
    return header, body


def encode_request_header(header: RequestHeader) -> bytes:
    hv = request_header_version(header.api_key, header.api_version)
    head = _REQUEST_PREFIX.pack(header.api_key, header.api_version, header.correlation_id)
    if hv >= 1:
        head += write_nullable_string(header.client_id)
    if hv >= 2:
        head += b"\x00"
    return head


def encode_request(header: RequestHeader, body_msg: Message) -> bytes:
    """A whole request with its int32 size prefix (client side)."""
    head = encode_request_header(header)
    body = body_msg.encode(header.api_version)
    return INT32.pack(len(head) + len(body)) + head + body


def encode_response(api_key: int, api_version: int, correlation_id: int, body_msg: Message) -> list[bytes | FileRegion]:
    """A whole response with its int32 size prefix, as chunks (FileRegion records stay separate)."""
    head = INT32.pack(correlation_id)
    if response_header_version(api_key, api_version) >= 1:
        head += b"\x00"
    parts = body_msg._encode_parts(api_version)
    try:
        size = len(head) + sum(map(len, parts))
    except TypeError:  # FileRegion parts
        size = len(head) + sum(p.length if isinstance(p, FileRegion) else len(p) for p in parts)
    parts.insert(0, INT32.pack(size) + head)
    try:
        return [b"".join(parts)]
    except TypeError:
        from kafkapy.protocol.message import _merge_chunks

        return _merge_chunks(parts)


def decode_response_header(frame: Any, api_key: int, api_version: int) -> tuple[int, int]:
    """(correlation_id, body_offset) of one response (`frame` excludes the size prefix)."""
    if len(frame) < 4:
        raise ProtocolDecodeError(f"response header truncated ({len(frame)} bytes)")
    correlation_id = INT32.unpack_from(frame, 0)[0]
    pos = 4
    if response_header_version(api_key, api_version) >= 1:
        pos = skip_tagged_fields(frame, pos)
    return correlation_id, pos


def decode_response(frame: Any, api_key: int, api_version: int) -> tuple[int, Message]:
    """(correlation_id, body) of one response; the body class comes from response_class(api_key)."""
    correlation_id, pos = decode_response_header(frame, api_key, api_version)
    cls = response_class(api_key)
    if cls is None:
        raise ProtocolDecodeError(f"unknown api key {api_key}")
    body, _end = cls.decode_from(frame, pos, api_version)
    return correlation_id, body
