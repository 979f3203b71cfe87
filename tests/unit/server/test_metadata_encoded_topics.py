"""Metadata answers write each unchanged topic's bytes once per version (MetadataTopicCache.encoded_list and
the encoder's PreEncodedList path): the bytes equal a plain encoding in every Metadata version; a topic that
changes is encoded afresh; a list holding a topic the cache did not build (a per-principal copy, an error
topic) is encoded element by element."""

from __future__ import annotations

import copy
import uuid

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import UpdateMetadataPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.protocol.header import decode_response, encode_response
from kafkapy.protocol.messages import MetadataResponse
from kafkapy.server.metadata_topic_cache import MetadataTopicCache

B0 = Broker(0, (EndPoint("PLAINTEXT", "h0", 9092),), None, 5)
IDS = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}


def ps(topic: str, p: int, leader: int, isr=(0,)) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic, p, 1, leader, 3, tuple(isr), 7, (0,), ())


def response(topics) -> MetadataResponse:
    return MetadataResponse(throttle_time_ms=0, brokers=[MetadataResponse.MetadataResponseBroker(
        node_id=0, host="h0", port=9092, rack=None)], cluster_id="cid", controller_id=0, topics=topics)


def wire(topics, version: int) -> bytes:
    return encode_response(3, version, 7, response(topics))[0]


def test_encoded_list_bytes_equal_plain_encoding_in_every_version(monkeypatch) -> None:
    cache = MetadataCache(0, "cid")
    cache.update_metadata(0, 1, [B0], [ps("a", p, 0) for p in range(5)] + [ps("b", 0, 0)], IDS)
    topics = MetadataTopicCache(cache)
    listed = topics.topics(None, "PLAINTEXT", False, True)
    for version in range(14):
        assert wire(topics.encoded_list(listed), version) == wire(list(listed), version)
    # Encoded once per version: a second answer does not encode the topics again.
    calls: list[int] = []
    real = MetadataResponse.MetadataResponseTopic.encode
    monkeypatch.setattr(MetadataResponse.MetadataResponseTopic, "encode",
                        lambda self, v: calls.append(v) or real(self, v))
    assert wire(topics.encoded_list(topics.topics(None, "PLAINTEXT", False, True)), 12) == wire(list(listed), 12)
    assert calls == []

    cache.update_metadata(0, 1, None, [ps("a", 1, -1)], None)  # topic a changes: a new object, encoded anew
    changed = topics.topics(None, "PLAINTEXT", False, True)
    assert changed[1] is listed[1] and changed[0] is not listed[0]
    assert wire(topics.encoded_list(changed), 12) == wire(list(changed), 12)
    assert calls == [12]
    assert decode_response(wire(topics.encoded_list(changed), 12)[4:], 3, 12)[1].topics[0].partitions[1].leader_id \
        == -1


def test_a_topic_not_from_the_cache_falls_back_to_plain_encoding() -> None:
    cache = MetadataCache(0, "cid")
    cache.update_metadata(0, 1, [B0], [ps("a", 0, 0), ps("b", 0, 0)], IDS)
    topics = MetadataTopicCache(cache)
    listed = topics.topics(None, "PLAINTEXT", False, True)
    mixed = [listed[0], copy.copy(listed[1])]
    mixed[1].topic_authorized_operations = 8
    encoded = topics.encoded_list(mixed)
    assert encoded.encoded(10) is None
    assert wire(encoded, 10) == wire(list(mixed), 10)
    assert decode_response(wire(encoded, 10)[4:], 3, 10)[1].topics[1].topic_authorized_operations == 8
