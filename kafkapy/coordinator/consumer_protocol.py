"""The consumer protocol's subscription bytes as the group coordinator reads them (Kafka's ConsumerProtocol).

A consumer group member's JoinGroup metadata is int16 version + ConsumerProtocolSubscription struct;
versions above the newest known are read at the newest (later versions only append fields). The
coordinator needs only the subscribed topics (OffsetDelete refuses subscribed topics).

Thread-safety: stateless functions.
"""

from __future__ import annotations

import struct

from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages.data import ConsumerProtocolSubscription

_INT16 = struct.Struct(">h")


def parse_subscription_topics(metadata: bytes | memoryview) -> list[str] | None:
    """Topics of a ConsumerProtocolSubscription, or None when it does not parse."""
    if len(metadata) < 2:
        return None
    (version,) = _INT16.unpack_from(metadata, 0)
    if version < 0:
        return None
    version = min(version, ConsumerProtocolSubscription.VALID_VERSIONS[1])
    try:
        return list(ConsumerProtocolSubscription.decode(memoryview(metadata)[2:], version).topics)
    except (ProtocolDecodeError, ValueError):
        return None
