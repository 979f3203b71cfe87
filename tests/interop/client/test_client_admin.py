"""AdminClient against a real Kafka-protocol broker."""

from __future__ import annotations

import time
import uuid

import pytest

from kafkapy.client.admin import (
    AdminClient,
    AlterConfigOp,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
    TopicPartition,
)
from kafkapy.client.connection import our_version_range
from kafkapy.common.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError


@pytest.fixture
def admin(broker: str):
    a = AdminClient({"bootstrap.servers": broker, "default.api.timeout.ms": 10000})
    yield a
    a.close()


def _require(admin: AdminClient, api_key: int) -> None:
    node = admin.client.least_loaded_node()
    if api_key not in admin.api_versions(node):
        pytest.skip(f"broker does not support api key {api_key}")


def test_create_describe_delete_topic(admin: AdminClient, topic_name: str) -> None:
    result = admin.create_topics([NewTopic(topic_name, 3, 1)])
    assert result[topic_name].error is None
    assert result[topic_name].topic_id is None or isinstance(result[topic_name].topic_id, uuid.UUID)

    listed = admin.list_topics()
    assert topic_name in listed
    assert listed[topic_name].is_internal is False

    desc = admin.describe_topics([topic_name])[topic_name]
    assert desc.name == topic_name
    assert [p.partition for p in desc.partitions] == [0, 1, 2]
    cluster = admin.describe_cluster()
    broker_ids = {n.node_id for n in cluster.nodes}
    for p in desc.partitions:
        assert p.leader is not None and p.leader.node_id in broker_ids
        assert len(p.replicas) == 1 and p.replica_ids == [p.leader.node_id]
        assert p.isr_ids == [p.leader.node_id]
    assert desc.topic_id != uuid.UUID(int=0)
    assert listed[topic_name].topic_id == desc.topic_id

    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic(topic_name, 1, 1)])

    deleted = admin.delete_topics([topic_name])
    assert deleted[topic_name].error is None
    assert topic_name not in admin.list_topics()
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topics([topic_name])
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.describe_topics([topic_name])


def test_create_topic_errors_returned_when_not_raising(admin: AdminClient, topic_name: str) -> None:
    admin.create_topics([NewTopic(topic_name, 1, 1)])
    res = admin.create_topics([NewTopic(topic_name, 1, 1)], raise_errors=False)
    assert isinstance(res[topic_name].error, TopicAlreadyExistsError)
    assert res[topic_name].error.code == 36


def test_create_partitions(admin: AdminClient, topic_name: str) -> None:
    _require(admin, 37)
    admin.create_topics([NewTopic(topic_name, 2, 1)])
    assert admin.create_partitions({topic_name: 5}) == {topic_name: None}
    desc = admin.describe_topics([topic_name])[topic_name]
    assert len(desc.partitions) == 5


def test_describe_and_alter_topic_configs(admin: AdminClient, topic_name: str) -> None:
    admin.create_topics([NewTopic(topic_name, 1, 1, configs={"retention.ms": "123456"})])
    res = ConfigResource(ConfigResourceType.TOPIC, topic_name)
    config = admin.describe_configs([res])[res]
    assert config.error is None
    assert config.entries["retention.ms"].value == "123456"

    assert admin.incremental_alter_configs({res: [AlterConfigOp("retention.ms", "654321")]}) == {res: None}
    config = admin.describe_configs([res], include_synonyms=True, include_documentation=True)[res]
    assert config.entries["retention.ms"].value == "654321"


def test_describe_cluster_and_api_versions(admin: AdminClient) -> None:
    cluster = admin.describe_cluster()
    assert cluster.nodes
    versions = admin.broker_api_versions()
    assert {n.node_id for n in versions} == {n.node_id for n in cluster.nodes}
    for node_versions in versions.values():
        # ApiVersions negotiation: usable = min(ours, theirs) for every API both sides know.
        for key, (lo, hi) in node_versions.versions.items():
            ours = our_version_range(key) if key in node_versions.ours else None
            if ours is None:
                continue
            expected = min(hi, ours[1])
            if expected >= max(lo, ours[0]):
                assert node_versions.usable(key) == expected
        assert node_versions.usable(0) is not None  # Produce
        assert node_versions.usable(1) is not None  # Fetch


def test_list_offsets_empty_topic(admin: AdminClient, topic_name: str) -> None:
    admin.create_topics([NewTopic(topic_name, 2, 1)])
    tps = [TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)]
    earliest = admin.list_offsets(dict.fromkeys(tps, "earliest"))
    latest = admin.list_offsets(dict.fromkeys(tps, "latest"))
    assert {tp: r.offset for tp, r in earliest.items()} == {tps[0]: 0, tps[1]: 0}
    assert {tp: r.offset for tp, r in latest.items()} == {tps[0]: 0, tps[1]: 0}


def _produce(broker: str, topic: str, n: int, partition: int = 0) -> None:
    from kafkapy.client.producer import KafkaProducer

    p = KafkaProducer({"bootstrap.servers": broker})
    try:
        for i in range(n):
            p.send(topic, b"v%d" % i, partition=partition, timestamp=1_000_000 + i * 10)
        p.flush(30)
    finally:
        p.close(10)


def test_offsets_and_delete_records(admin: AdminClient, broker: str, broker_kind: str, topic_name: str) -> None:
    if broker_kind == "tansu":
        pytest.skip("Tansu panics on DeleteRecords / max-timestamp and misreports latest offsets")
    admin.create_topics([NewTopic(topic_name, 1, 1)])
    _produce(broker, topic_name, 20)
    tp = TopicPartition(topic_name, 0)
    assert admin.list_offsets({tp: "latest"})[tp].offset == 20
    assert admin.list_offsets({tp: 1_000_050})[tp].offset == 5
    assert admin.list_offsets({tp: 1_000_050})[tp].timestamp == 1_000_050
    mts = admin.list_offsets({tp: "max-timestamp"})[tp]
    assert (mts.offset, mts.timestamp) == (19, 1_000_190)
    assert admin.list_offsets({tp: 9_999_999})[tp] is None  # no record at or after that time
    assert admin.delete_records({tp: 7}) == {tp: 7}
    assert admin.list_offsets({tp: "earliest"})[tp].offset == 7
    # Per-partition results: a missing topic fails at once, the other partitions still get their answers.
    gone = TopicPartition(f"{topic_name}-missing", 0)
    start = time.monotonic()
    out = admin.delete_records({tp: 9, TopicPartition(topic_name, 3): 1, gone: 1}, raise_errors=False)
    assert out[tp] == 9
    assert isinstance(out[gone], UnknownTopicOrPartitionError)
    assert isinstance(out[TopicPartition(topic_name, 3)], UnknownTopicOrPartitionError)
    assert time.monotonic() - start < 5  # default.api.timeout.ms is 10 s: not retried until then
    found = admin.list_offsets({tp: "earliest", TopicPartition(topic_name, 3): "earliest"}, timeout_ms=500,
                               raise_errors=False)
    assert found[tp].offset == 9
    assert isinstance(found[TopicPartition(topic_name, 3)], UnknownTopicOrPartitionError)


def test_describe_log_dirs(admin: AdminClient, broker: str, topic_name: str) -> None:
    _require(admin, 35)
    admin.create_topics([NewTopic(topic_name, 2, 1)])
    _produce(broker, topic_name, 5)
    dirs = admin.describe_log_dirs()
    assert dirs
    replicas = {tp: info for d in next(iter(dirs.values())).values() for tp, info in d.replicas.items()}
    assert replicas[TopicPartition(topic_name, 0)].size > 0
    assert replicas[TopicPartition(topic_name, 1)].size == 0


def test_elect_leaders_and_reassignments(admin: AdminClient, topic_name: str) -> None:
    _require(admin, 43)
    admin.create_topics([NewTopic(topic_name, 1, 1)])
    tp = TopicPartition(topic_name, 0)
    result = admin.elect_leaders(partitions=[tp])
    # The preferred leader already leads: Kafka answers ELECTION_NOT_NEEDED (84).
    assert set(result) == {tp}
    assert result[tp] is None or result[tp].code == 84
    _require(admin, 46)
    assert tp not in admin.list_partition_reassignments([tp])
