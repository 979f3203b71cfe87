"""AdminClient against a scripted fake broker: routing to broker ids the metadata snapshot does not name
yet, and per-partition results of list_offsets / delete_records (missing topics fail fast).

The fake broker answers Metadata with one broker (node 1, itself) and the topics a test declares.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from client_fake_broker import api_versions_response

from kafkapy.client.admin import AdminClient, ConfigResource, ConfigResourceType, ListOffsetsResultInfo
from kafkapy.client.connection import our_version_range
from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.client.offset_fetcher import list_offsets
from kafkapy.common.errors import (
    ErrorCode,
    KafkaError,
    OffsetOutOfRangeError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M

TABLE = {k: our_version_range(k) for k in (2, 3, 18, 21, 32, 35)}


def cluster_handler(port_of: dict[str, int], topics: dict[str, int], answer: Any,
                    table: dict[int, tuple[int, int]] = TABLE) -> Any:
    """Metadata names node 1 (this broker) and `topics` ({name: partitions}, all led by node 1)."""

    def handle(header: Any, body: Any) -> Any:
        if header.api_key == 18:
            return api_versions_response(table)
        if header.api_key == 3:
            R = M.MetadataResponse
            wanted = None if body.topics is None else [t.name for t in body.topics]
            names = sorted(topics) if wanted is None else wanted
            return R(brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port_of["port"], rack=None)],
                     cluster_id="fake", controller_id=1, topics=[
                         R.MetadataResponseTopic(name=n, error_code=0 if n in topics else 3, partitions=[
                             R.MetadataResponsePartition(partition_index=p, leader_id=1, leader_epoch=0,
                                                         replica_nodes=[1], isr_nodes=[1])
                             for p in range(topics.get(n, 0))])
                         for n in names])
        return answer(header, body)

    return handle


@pytest.fixture
def cluster(fake_broker):
    """start(topics, answer) -> AdminClient bootstrapped at a fake broker that calls itself node 1."""
    admins: list[AdminClient] = []

    def start(topics: dict[str, int], answer: Any, table: dict[int, tuple[int, int]] = TABLE,
              **configs: Any) -> tuple[AdminClient, Any]:
        port_of: dict[str, int] = {}
        broker = fake_broker(cluster_handler(port_of, topics, answer, table))
        port_of["port"] = broker.port
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.port}", "retry.backoff.ms": 10,
                             "retry.backoff.max.ms": 50, **configs})
        admins.append(admin)
        return admin, broker

    yield start
    for a in admins:
        a.close()


def describe_configs_answer(header: Any, body: Any) -> Any:
    R = M.DescribeConfigsResponse
    return R(results=[R.DescribeConfigsResult(
        error_code=0, error_message=None, resource_type=r.resource_type, resource_name=r.resource_name,
        configs=[R.DescribeConfigsResourceResult(name="log.retention.hours", value="168", read_only=False,
                                                 config_source=5, is_sensitive=False)])
        for r in body.resources])


def test_broker_resource_refreshes_metadata_for_an_unknown_broker_id(cluster) -> None:
    admin, broker = cluster({}, describe_configs_answer)
    assert admin.client.node_address(1) is None  # only the bootstrap node so far
    res = ConfigResource(ConfigResourceType.BROKER, "1")
    config = admin.describe_configs([res], timeout_ms=5000)[res]
    assert config.entries["log.retention.hours"].value == "168"
    assert [k for k, _v, _b in broker.requests] == [18, 3, 18, 32]  # bootstrap, metadata, then node 1 itself
    assert admin.api_versions(node_id=1, timeout_ms=5000)[32] == TABLE[32]


def test_broker_id_missing_from_fresh_metadata_times_out_as_java(cluster) -> None:
    admin, broker = cluster({}, describe_configs_answer)
    res = ConfigResource(ConfigResourceType.BROKER, "7")
    start = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="Timed out waiting for a node assignment. Call: describeConfigs"):
        admin.describe_configs([res], timeout_ms=300)
    assert time.monotonic() - start < 3
    assert 32 not in [k for k, _v, _b in broker.requests]
    assert sum(k == 3 for k, _v, _b in broker.requests) >= 2  # refreshed on every attempt


def sent(broker: Any, api_key: int) -> list[list[tuple[str, int]]]:
    """The partitions of each request with api_key the broker received, in order."""
    return [[(t.name, p.partition_index) for t in body.topics for p in t.partitions]
            for k, _v, body in broker.requests if k == api_key]


def list_offsets_answer(script: dict[tuple[str, int], list[tuple[int, int]]]) -> Any:
    """Answers ListOffsets from script {(topic, partition): [(error_code, offset), ...]} (one per ask)."""

    def answer(header: Any, body: Any) -> Any:
        R = M.ListOffsetsResponse
        topics = []
        for t in body.topics:
            parts = []
            for p in t.partitions:
                steps = script[(t.name, p.partition_index)]
                code, offset = steps.pop(0) if len(steps) > 1 else steps[0]
                parts.append(R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code,
                                                            timestamp=-1, offset=offset, leader_epoch=4))
            topics.append(R.ListOffsetsTopicResponse(name=t.name, partitions=parts))
        return R(topics=topics)

    return answer


def test_list_offsets_gives_each_partition_its_result_or_error(cluster) -> None:
    script = {("t", 0): [(0, 5)], ("t", 1): [(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, -1)],
              ("t", 2): [(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1), (0, 9)], ("t", 3): [(0, -1)]}
    admin, broker = cluster({"t": 4}, list_offsets_answer(script))
    tps = [TopicPartition("t", p) for p in range(4)]
    start = time.monotonic()
    found = admin.list_offsets(dict.fromkeys(tps, "latest"), timeout_ms=10_000, raise_errors=False)
    assert time.monotonic() - start < 3
    assert found[tps[0]] == ListOffsetsResultInfo(5, -1, 4)
    assert type(found[tps[1]]).__name__ == "UnsupportedForMessageFormatError"
    assert found[tps[2]] == ListOffsetsResultInfo(9, -1, 4)  # NOT_LEADER_OR_FOLLOWER is retried
    assert found[tps[3]] is None  # no such offset
    assert sent(broker, 2) == [[("t", 0), ("t", 1), ("t", 2), ("t", 3)], [("t", 2)]]
    with pytest.raises(KafkaError) as err:
        admin.list_offsets({tps[0]: "earliest", tps[1]: "earliest"}, timeout_ms=10_000)
    assert err.value.code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


def test_list_offsets_retries_an_unknown_partition_until_the_timeout(cluster) -> None:
    admin, broker = cluster({"t": 1}, list_offsets_answer({("t", 0): [(0, 2)]}))
    found = admin.list_offsets({TopicPartition("t", 0): -2, TopicPartition("t", 1): -2}, timeout_ms=300,
                               raise_errors=False)
    assert found[TopicPartition("t", 0)] == ListOffsetsResultInfo(2, -1, 4)
    assert isinstance(found[TopicPartition("t", 1)], UnknownTopicOrPartitionError)
    assert sent(broker, 2) == [[("t", 0)]]
    assert sum(k == 3 for k, _v, _b in broker.requests) >= 2  # metadata asked again while waiting


def test_list_offsets_fails_only_the_specs_a_leader_cannot_answer(cluster) -> None:
    table = {**TABLE, 2: (1, 6)}  # no max-timestamp lookups (v7)
    admin, broker = cluster({"t": 2}, list_offsets_answer({("t", 0): [(0, 7)], ("t", 1): [(0, 3)]}), table)
    found = admin.list_offsets({TopicPartition("t", 0): "max-timestamp", TopicPartition("t", 1): "latest"},
                               timeout_ms=5000, raise_errors=False)
    assert isinstance(found[TopicPartition("t", 0)], UnsupportedVersionError)
    assert found[TopicPartition("t", 1)] == ListOffsetsResultInfo(3, -1, 4)
    assert [v for k, v, _b in broker.requests if k == 2] == [6]


def test_consumer_lookup_raises_the_first_error(cluster) -> None:
    admin, _broker = cluster({"t": 1}, list_offsets_answer({("t", 0): [(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, -1)]}))
    with pytest.raises(KafkaError) as err:
        list_offsets(admin.client, {TopicPartition("t", 0): -1}, 5000)
    assert err.value.code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
    with pytest.raises(KafkaTimeoutError, match="Failed to get offsets by times in 200ms"):
        list_offsets(admin.client, {TopicPartition("absent", 0): -1}, 200)


def delete_records_answer(header: Any, body: Any) -> Any:
    R = M.DeleteRecordsResponse
    return R(topics=[R.DeleteRecordsTopicResult(name=t.name, partitions=[
        R.DeleteRecordsPartitionResult(partition_index=p.partition_index,
                                       low_watermark=p.offset if p.offset <= 10 else -1,
                                       error_code=0 if p.offset <= 10 else ErrorCode.OFFSET_OUT_OF_RANGE)
        for p in t.partitions]) for t in body.topics])


def test_delete_records_fails_missing_topics_and_partitions_at_once(cluster) -> None:
    admin, broker = cluster({"t": 2}, delete_records_answer)
    start = time.monotonic()
    out = admin.delete_records({TopicPartition("t", 0): 3, TopicPartition("t", 1): 99, TopicPartition("gone", 0): 1,
                                TopicPartition("t", 5): 1}, timeout_ms=30_000, raise_errors=False)
    assert time.monotonic() - start < 3  # not retried until the timeout
    assert out[TopicPartition("t", 0)] == 3
    assert isinstance(out[TopicPartition("t", 1)], OffsetOutOfRangeError)
    assert isinstance(out[TopicPartition("gone", 0)], UnknownTopicOrPartitionError)
    assert isinstance(out[TopicPartition("t", 5)], UnknownTopicOrPartitionError)
    assert sent(broker, 21) == [[("t", 0), ("t", 1)]]
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_records({TopicPartition("gone", 0): 1}, timeout_ms=30_000)
