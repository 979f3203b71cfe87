"""MetadataTopicCache: a topic's Metadata response part is reused while its state is unchanged and rebuilt
when its partitions, the alive brokers or its id change; deleted topics disappear."""

from __future__ import annotations

import uuid

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LEADER_DURING_DELETE, UpdateMetadataPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import ErrorCode
from kafkapy.server.metadata_topic_cache import MetadataTopicCache

B0 = Broker(0, (EndPoint("PLAINTEXT", "h0", 9092),), None, 5)
B1 = Broker(1, (EndPoint("PLAINTEXT", "h1", 9092),), None, 6)
IDS = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}


def ps(topic: str, p: int, leader: int, isr=(0, 1)) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic, p, 1, leader, 3, tuple(isr), 7, (0, 1), ())


def summary(topic) -> tuple:
    return (topic.name, topic.topic_id, [(p.partition_index, p.error_code, p.leader_id, p.isr_nodes)
                                         for p in topic.partitions])


def test_reused_until_the_topic_changes() -> None:
    cache = MetadataCache(0, "cid")
    cache.update_metadata(0, 1, [B0, B1], [ps("a", 0, 0), ps("a", 1, 1), ps("b", 0, 1)], IDS)
    topics = MetadataTopicCache(cache)
    first = topics.topics(None, "PLAINTEXT", False, True)
    assert [summary(t) for t in first] == [
        ("a", IDS["a"], [(0, 0, 0, [0, 1]), (1, 0, 1, [0, 1])]),
        ("b", IDS["b"], [(0, 0, 1, [0, 1])]),
    ]
    again = topics.topics(None, "PLAINTEXT", False, True)
    assert again[0] is first[0] and again[1] is first[1]
    assert topics.topics(["b", "missing", "b"], "PLAINTEXT", False, True) == [first[1]]

    cache.update_metadata(0, 1, None, [ps("a", 1, 0, isr=(0,))], None)  # only topic a changes
    changed = topics.topics(None, "PLAINTEXT", False, True)
    assert changed[1] is first[1]
    assert summary(changed[0]) == ("a", IDS["a"], [(0, 0, 0, [0, 1]), (1, 0, 0, [0])])

    cache.update_metadata(0, 1, [B0], [], None)  # broker 1 gone: every topic is rebuilt
    gone = topics.topics(None, "PLAINTEXT", False, True)
    assert summary(gone[1]) == ("b", IDS["b"], [(0, ErrorCode.LEADER_NOT_AVAILABLE, -1, [0, 1])])
    assert gone[0] is not changed[0]

    cache.update_metadata(0, 1, None, [ps("b", 0, LEADER_DURING_DELETE)], None)
    assert [t.name for t in topics.topics(None, "PLAINTEXT", False, True)] == ["a"]
    assert topics.topics(["b"], "PLAINTEXT", False, True) == []
