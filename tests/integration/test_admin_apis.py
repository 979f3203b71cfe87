"""Admin APIs over a raw socket against an in-process broker, with kafkapy.protocol message classes.

CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
DescribeCluster, ElectLeaders, List/AlterPartitionReassignments, InitProducerId, DescribeLogDirs and
DeleteRecords, at old and new versions, checking the exact fields Kafka answers with.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import struct
import uuid
from typing import Any

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.header import RequestHeader, decode_response, encode_request
from kafkapy.protocol.messages import (
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    ApiVersionsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    InitProducerIdRequest,
    ListOffsetsRequest,
    ListPartitionReassignmentsRequest,
    ProduceRequest,
)
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

E = ErrorCode
TOPIC_CONFIG, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5


class Wire:
    """One connection speaking Kafka's protocol with the generated message classes."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.correlation = itertools.count(1)

    def call(self, body: Any, version: int) -> Any:
        corr = next(self.correlation)
        self.sock.sendall(encode_request(RequestHeader(body.API_KEY, version, corr, "admin-test"), body))
        size = struct.unpack(">i", self._recv(4))[0]
        got, resp = decode_response(self._recv(size), body.API_KEY, version)
        assert got == corr
        return resp

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed by the broker")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def wire(kafkapy_broker):
    w = Wire(kafkapy_broker.port)
    yield w
    w.close()


def create(wire: Wire, *topics: Any, version: int = 7, validate_only: bool = False, timeout_ms: int = 30000):
    req = CreateTopicsRequest(topics=list(topics), timeout_ms=timeout_ms, validate_only=validate_only)
    return wire.call(req, version).topics


def topic(name: str, partitions: int = 1, rf: int = 1, configs: dict | None = None,
          assignments: dict[int, list[int]] | None = None) -> Any:
    return CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=rf,
        assignments=[CreateTopicsRequest.CreatableReplicaAssignment(partition_index=p, broker_ids=b)
                     for p, b in (assignments or {}).items()],
        configs=[CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])


def produce(wire: Wire, name: str, partition: int, values: list[bytes]) -> int:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    batch = builder.build()
    req = ProduceRequest(acks=-1, timeout_ms=10000, topic_data=[ProduceRequest.TopicProduceData(
        name=name, partition_data=[ProduceRequest.PartitionProduceData(index=partition, records=batch)])])
    resp = wire.call(req, 9)
    part = resp.responses[0].partition_responses[0]
    assert part.error_code == 0
    return len(batch)


def describe_topic(wire: Wire, name: str, version: int = 4, keys: list[str] | None = None, synonyms=True,
                   documentation=False) -> Any:
    req = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=2, resource_name=name, configuration_keys=keys)], include_synonyms=synonyms,
        include_documentation=documentation)
    return wire.call(req, version).results[0]


def by_name(result: Any) -> dict[str, Any]:
    return {c.name: c for c in result.configs}


def syn(entry: Any) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in entry.synonyms]


# -- ApiVersions -------------------------------------------------------------------------------------------------

def test_api_versions_advertise_the_admin_ranges(wire) -> None:
    resp = wire.call(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert {k: ranges[k] for k in (19, 20, 21, 22, 32, 33, 35, 37, 43, 44, 45, 46, 60)} == {
        19: (0, 7), 20: (0, 6), 21: (0, 2), 22: (0, 5), 32: (0, 4), 33: (0, 2), 35: (0, 4), 37: (0, 3),
        43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 60: (0, 1)}


# -- CreateTopics ------------------------------------------------------------------------------------------------

def test_create_topics_v7_returns_partitions_configs_and_topic_id(wire, kafkapy_broker) -> None:
    (res,) = create(wire, topic("ct-v7", 3, 1, {"retention.ms": "3600000", "cleanup.policy": "compact"}))
    assert (res.name, res.error_code, res.error_message) == ("ct-v7", 0, None)
    assert (res.num_partitions, res.replication_factor) == (3, 1)
    cache = kafkapy_broker.server.services.metadata_cache
    assert res.topic_id != ZERO_UUID and res.topic_id == cache.get_topic_id("ct-v7")
    configs = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in res.configs}
    assert configs["retention.ms"] == ("3600000", TOPIC_CONFIG, False, False)
    assert configs["cleanup.policy"] == ("compact", TOPIC_CONFIG, False, False)
    assert configs["segment.bytes"] == ("1073741824", DEFAULT, False, False)
    assert configs["max.message.bytes"] == ("1048588", DEFAULT, False, False)
    assert "internal.segment.bytes" not in configs
    assert cache.num_partitions("ct-v7") == 3


def test_create_topics_errors_per_topic(wire) -> None:
    create(wire, topic("ct-exists"))
    results = create(
        wire,
        topic("ct-exists"),
        topic("ct-dup"), topic("ct-dup"),
        topic("bad name!"),
        topic("ct-zero", 0),
        topic("ct-rf", 1, 3),
        topic("ct-badcfg", configs={"retention.ms": "soon"}),
        topic("ct-unknowncfg", configs={"no.such.config": "1"}),
        topic("ct-both", 2, 1, assignments={0: [0]}),
        topic("ct-badassign", -1, -1, assignments={0: [0], 2: [0]}),
    )
    got = [(r.name, r.error_code, r.error_message) for r in results]
    assert got[0] == ("ct-exists", E.TOPIC_ALREADY_EXISTS, "Topic 'ct-exists' already exists.")
    assert got[1] == got[2] == ("ct-dup", E.INVALID_REQUEST, "Found multiple entries for this topic.")
    assert got[3][:2] == ("bad name!", E.INVALID_TOPIC_EXCEPTION) and "illegal" in got[3][2]
    assert got[4] == ("ct-zero", E.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
    assert got[5] == ("ct-rf", E.INVALID_REPLICATION_FACTOR, "Replication factor: 3 larger than available brokers: 1.")
    assert got[6][:2] == ("ct-badcfg", E.INVALID_CONFIG) and "retention.ms" in got[6][2]
    assert got[7] == ("ct-unknowncfg", E.INVALID_CONFIG, "Unknown topic config name: no.such.config")
    assert got[8] == ("ct-both", E.INVALID_REQUEST, "Both numPartitions or replicationFactor and "
                      "replicasAssignments were set. Both cannot be used at the same time.")
    assert got[9][:2] == ("ct-badassign", E.INVALID_REPLICA_ASSIGNMENT)
    for r in results:
        assert (r.num_partitions, r.replication_factor, r.configs, r.topic_id) == (-1, -1, [], ZERO_UUID)


def test_create_topics_broker_defaults_manual_assignment_and_validate_only(wire, kafkapy_broker) -> None:
    cache = kafkapy_broker.server.services.metadata_cache
    (res,) = create(wire, topic("ct-defaults", -1, -1), version=4)
    assert res.error_code == 0 and cache.num_partitions("ct-defaults") == 1  # num.partitions=1
    (res,) = create(wire, topic("ct-manual", -1, -1, assignments={0: [0], 1: [0]}))
    assert (res.error_code, res.num_partitions, res.replication_factor) == (0, 2, 1)
    assert [cache.get_partition_state(TopicPartition("ct-manual", i)).replicas for i in range(2)] == [(0,), (0,)]
    (res,) = create(wire, topic("ct-validate", 4, 1, {"retention.ms": "5"}), validate_only=True)
    assert (res.error_code, res.num_partitions, res.topic_id) == (0, 4, ZERO_UUID)
    assert {c.name: c.value for c in res.configs}["retention.ms"] == "5"
    assert not cache.contains_topic("ct-validate")


def test_create_topics_old_versions(wire, kafkapy_broker) -> None:
    (res,) = create(wire, topic("ct-v0", 2), version=0)
    assert (res.name, res.error_code) == ("ct-v0", 0)
    (res,) = create(wire, topic("ct-v0"), version=0)
    assert res.error_code == E.TOPIC_ALREADY_EXISTS  # v0 has no error_message field
    (res,) = create(wire, topic("ct-v0"), version=1)
    assert (res.error_code, res.error_message) == (E.TOPIC_ALREADY_EXISTS, "Topic 'ct-v0' already exists.")
    assert kafkapy_broker.server.services.metadata_cache.num_partitions("ct-v0") == 2


# -- DeleteTopics ------------------------------------------------------------------------------------------------

def test_delete_topics_by_name_and_by_id(wire, kafkapy_broker) -> None:
    cache = kafkapy_broker.server.services.metadata_cache
    create(wire, topic("dt-a"), topic("dt-b"))
    resp = wire.call(DeleteTopicsRequest(topic_names=["dt-a", "dt-missing"], timeout_ms=30000), 1)
    assert [(r.name, r.error_code) for r in resp.responses] == [("dt-a", 0), ("dt-missing", E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert not cache.contains_topic("dt-a")
    topic_id = cache.get_topic_id("dt-b")
    unknown = uuid.uuid4()
    req = DeleteTopicsRequest(timeout_ms=30000, topics=[
        DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=topic_id),
        DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=unknown)])
    resp = wire.call(req, 6)
    assert [(r.name, r.topic_id, r.error_code) for r in resp.responses] == [
        ("dt-b", topic_id, 0), (None, unknown, E.UNKNOWN_TOPIC_ID)]
    assert not cache.contains_topic("dt-b")
    req = DeleteTopicsRequest(timeout_ms=1000, topics=[DeleteTopicsRequest.DeleteTopicState(name="x", topic_id=unknown)])
    assert [r.error_code for r in wire.call(req, 6).responses] == [E.INVALID_REQUEST]


def test_delete_topics_disabled_error_depends_on_version(broker_factory) -> None:
    broker = broker_factory(overrides={"delete.topic.enable": "false"})
    wire = Wire(broker.port)
    try:
        create(wire, topic("dt-keep"))
        for version, code in ((2, E.INVALID_REQUEST), (3, E.TOPIC_DELETION_DISABLED)):
            resp = wire.call(DeleteTopicsRequest(topic_names=["dt-keep"], timeout_ms=30000), version)
            assert [(r.name, r.error_code) for r in resp.responses] == [("dt-keep", code)]
        resp = wire.call(DeleteTopicsRequest(topic_names=["dt-keep"], timeout_ms=30000), 5)
        assert resp.responses[0].error_message == "Topic deletion is disabled."
        assert broker.server.services.metadata_cache.contains_topic("dt-keep")
    finally:
        wire.close()


# -- CreatePartitions --------------------------------------------------------------------------------------------

def cp(name: str, count: int, assignments: list[list[int]] | None = None) -> Any:
    return CreatePartitionsRequest.CreatePartitionsTopic(
        name=name, count=count,
        assignments=None if assignments is None else [CreatePartitionsRequest.CreatePartitionsAssignment(
            broker_ids=a) for a in assignments])


def test_create_partitions(wire, kafkapy_broker) -> None:
    cache = kafkapy_broker.server.services.metadata_cache
    create(wire, topic("cp-t", 1))
    resp = wire.call(CreatePartitionsRequest(topics=[cp("cp-t", 3)], timeout_ms=30000, validate_only=True), 3)
    assert [(r.name, r.error_code) for r in resp.results] == [("cp-t", 0)] and cache.num_partitions("cp-t") == 1
    resp = wire.call(CreatePartitionsRequest(topics=[cp("cp-t", 3)], timeout_ms=30000), 0)
    assert [(r.name, r.error_code, r.error_message) for r in resp.results] == [("cp-t", 0, None)]
    assert cache.num_partitions("cp-t") == 3
    req = CreatePartitionsRequest(timeout_ms=30000, topics=[cp("cp-t", 3), cp("cp-dup", 2), cp("cp-dup", 3),
                                                            cp("cp-missing", 2)])
    got = [(r.name, r.error_code, r.error_message) for r in wire.call(req, 2).results]
    assert got == [("cp-t", E.INVALID_PARTITIONS, "Topic already has 3 partitions."),
                   ("cp-dup", E.INVALID_REQUEST, "Duplicate topic in request."),
                   ("cp-missing", E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'cp-missing' does not exist.")]
    req = CreatePartitionsRequest(timeout_ms=30000, topics=[cp("cp-t", 2)])
    assert [(r.error_code, r.error_message) for r in wire.call(req, 1).results] == [
        (E.INVALID_PARTITIONS, "Topic currently has 3 partitions, which is higher than the requested 2.")]
    req = CreatePartitionsRequest(timeout_ms=30000, topics=[cp("cp-t", 5, [[0]])])
    assert [(r.error_code, r.error_message) for r in wire.call(req, 1).results] == [
        (E.INVALID_REPLICA_ASSIGNMENT, "Increasing the number of partitions by 2 but 1 assignments provided.")]
    req = CreatePartitionsRequest(timeout_ms=30000, topics=[cp("cp-t", 4, [[0]])])
    assert [r.error_code for r in wire.call(req, 1).results] == [0] and cache.num_partitions("cp-t") == 4


# -- DescribeConfigs ---------------------------------------------------------------------------------------------

def test_describe_topic_configs_sources_and_synonyms(wire) -> None:
    create(wire, topic("dc-t", configs={"retention.ms": "3600000"}))
    result = describe_topic(wire, "dc-t")
    assert (result.error_code, result.resource_type, result.resource_name) == (0, 2, "dc-t")
    c = by_name(result)
    assert (c["retention.ms"].value, c["retention.ms"].config_source) == ("3600000", TOPIC_CONFIG)
    # Kafka lists the override, then broker synonyms from the primary one (log.retention.ms, unset) on: none.
    assert syn(c["retention.ms"]) == [("retention.ms", "3600000", TOPIC_CONFIG)]
    assert (c["segment.bytes"].value, c["segment.bytes"].config_source, c["segment.bytes"].config_type) == (
        "1073741824", DEFAULT, 3)
    assert syn(c["segment.bytes"]) == [("log.segment.bytes", "1073741824", DEFAULT)]
    assert (c["segment.ms"].value, c["segment.ms"].config_source, syn(c["segment.ms"])) == ("604800000", DEFAULT, [])
    assert syn(c["cleanup.policy"]) == [("log.cleanup.policy", "delete", DEFAULT)] and c["cleanup.policy"].config_type == 7
    assert syn(c["max.message.bytes"]) == [("message.max.bytes", "1048588", DEFAULT)]
    assert (c["remote.storage.enable"].value, syn(c["remote.storage.enable"])) == ("false", [])
    assert all(not e.read_only and not e.is_sensitive and e.documentation is None for e in result.configs)
    assert [e.name for e in result.configs] == sorted(e.name for e in result.configs)


def test_describe_configs_keys_documentation_and_old_versions(wire) -> None:
    create(wire, topic("dc-keys", configs={"cleanup.policy": "compact"}))
    result = describe_topic(wire, "dc-keys", keys=["cleanup.policy", "segment.bytes"], documentation=True)
    assert [e.name for e in result.configs] == ["cleanup.policy", "segment.bytes"]
    assert all(e.documentation for e in result.configs)
    result = describe_topic(wire, "dc-keys", version=1, keys=["segment.bytes"])
    assert [(e.name, e.config_source, e.config_type) for e in result.configs] == [
        ("segment.bytes", DEFAULT, 0)]  # config_type and documentation only from v3
    result = describe_topic(wire, "dc-keys", version=0, keys=["cleanup.policy", "segment.bytes"], synonyms=False)
    assert [(e.name, e.value, e.is_default, e.synonyms) for e in result.configs] == [
        ("cleanup.policy", "compact", False, []), ("segment.bytes", "1073741824", True, [])]


def test_describe_configs_resource_errors(wire) -> None:
    res = DescribeConfigsRequest.DescribeConfigsResource
    req = DescribeConfigsRequest(resources=[
        res(resource_type=2, resource_name="dc-missing", configuration_keys=None),
        res(resource_type=2, resource_name="bad/name", configuration_keys=None),
        res(resource_type=4, resource_name="7", configuration_keys=None),
        res(resource_type=4, resource_name="x", configuration_keys=None),
        res(resource_type=8, resource_name="", configuration_keys=None),
        res(resource_type=32, resource_name="g", configuration_keys=None),
    ], include_synonyms=True)
    got = [(r.resource_type, r.resource_name, r.error_code, r.error_message, r.configs)
           for r in wire.call(req, 4).results]
    assert got[0] == (2, "dc-missing", E.UNKNOWN_TOPIC_OR_PARTITION, None, [])
    assert got[1][2] == E.INVALID_TOPIC_EXCEPTION
    assert got[2] == (4, "7", E.INVALID_REQUEST, "Unexpected broker id, expected 0 or empty string, but received 7", [])
    assert got[3] == (4, "x", E.INVALID_REQUEST, "Broker id must be an integer, but it is: x", [])
    assert got[4] == (8, "", E.INVALID_REQUEST, "Broker id must not be empty", [])
    assert got[5] == (32, "g", E.INVALID_REQUEST, "Unsupported resource type: GROUP", [])


def describe_broker(wire: Wire, name: str, keys: list[str] | None = None, resource_type: int = 4) -> Any:
    req = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=keys)], include_synonyms=True)
    return wire.call(req, 4).results[0]


def test_describe_broker_configs_static_and_default(broker_factory) -> None:
    broker = broker_factory(overrides={"log.segment.bytes": "2097152", "log.retention.hours": "24",
                                       "my.custom.key": "hello"})
    wire = Wire(broker.port)
    try:
        result = describe_broker(wire, "0")
        assert result.error_code == 0
        c = by_name(result)
        seg = c["log.segment.bytes"]
        assert (seg.value, seg.config_source, seg.read_only, seg.config_type) == ("2097152", STATIC, False, 3)
        assert syn(seg) == [("log.segment.bytes", "2097152", STATIC), ("log.segment.bytes", "1073741824", DEFAULT)]
        hours = c["log.retention.hours"]
        assert syn(hours) == [("log.retention.hours", "24", STATIC), ("log.retention.hours", "168", DEFAULT)]
        assert (c["log.retention.ms"].value, syn(c["log.retention.ms"])) == (None, [])
        bid = c["broker.id"]
        assert (bid.read_only, bid.config_source, syn(bid)) == (True, DEFAULT, [("broker.id", "-1", DEFAULT)])
        assert (c["ssl.key.password"].is_sensitive, c["ssl.key.password"].value) == (True, None)
        custom = c["my.custom.key"]  # a key Kafka has no type for: reported as possibly sensitive
        assert (custom.is_sensitive, custom.value, custom.config_source, custom.config_type) == (True, None, STATIC, 0)
        assert describe_broker(wire, "", ["log.segment.bytes"]).configs == []  # no dynamic defaults yet
        create(wire, topic("dc-static"))
        t = by_name(describe_topic(wire, "dc-static"))
        assert (t["segment.bytes"].value, t["segment.bytes"].config_source) == ("2097152", STATIC)
        assert syn(t["segment.bytes"]) == [("log.segment.bytes", "2097152", STATIC),
                                           ("log.segment.bytes", "1073741824", DEFAULT)]
        # As Kafka does: the primary synonym log.retention.ms is unset, so no synonym is listed.
        assert (t["retention.ms"].value, t["retention.ms"].config_source, syn(t["retention.ms"])) == (
            "86400000", DEFAULT, [])
    finally:
        wire.close()


def test_describe_broker_loggers(wire) -> None:
    logging.getLogger("kafka.test.AdminLogger").setLevel(logging.DEBUG)
    result = describe_broker(wire, "0", resource_type=8)
    c = by_name(result)
    assert result.error_code == 0 and "root" in c
    assert (c["kafka.test.AdminLogger"].value, c["kafka.test.AdminLogger"].config_source) == ("DEBUG", 6)


# -- AlterConfigs / IncrementalAlterConfigs ----------------------------------------------------------------------

def alter(wire: Wire, resource_type: int, name: str, configs: dict[str, str | None], version: int = 2,
          validate_only: bool = False) -> Any:
    req = AlterConfigsRequest(validate_only=validate_only, resources=[AlterConfigsRequest.AlterConfigsResource(
        resource_type=resource_type, resource_name=name,
        configs=[AlterConfigsRequest.AlterableConfig(name=k, value=v) for k, v in configs.items()])])
    (r,) = wire.call(req, version).responses
    return r.error_code, r.error_message


def overrides(broker: Any, name: str) -> dict[str, str]:
    return broker.server.services.controller.topic_config_overrides(name)


def test_alter_configs_replaces_topic_overrides(wire, kafkapy_broker) -> None:
    create(wire, topic("ac-t", configs={"retention.ms": "1000", "cleanup.policy": "compact"}))
    assert alter(wire, 2, "ac-t", {"segment.ms": "60000", "retention.bytes": None}) == (0, None)
    assert overrides(kafkapy_broker, "ac-t") == {"segment.ms": "60000"}
    c = by_name(describe_topic(wire, "ac-t"))
    assert (c["retention.ms"].value, c["retention.ms"].config_source) == ("604800000", DEFAULT)
    assert (c["segment.ms"].value, c["segment.ms"].config_source) == ("60000", TOPIC_CONFIG)
    assert alter(wire, 2, "ac-t", {"retention.ms": "5"}, validate_only=True, version=0) == (0, None)
    assert overrides(kafkapy_broker, "ac-t") == {"segment.ms": "60000"}
    assert alter(wire, 2, "ac-t", {"nope": "1"}) == (E.INVALID_CONFIG, "Unknown topic config name: nope")
    code, message = alter(wire, 2, "ac-t", {"retention.ms": "x"})
    assert code == E.INVALID_CONFIG and "retention.ms" in message
    assert alter(wire, 2, "ac-missing", {"retention.ms": "1"}) == (E.UNKNOWN_TOPIC_OR_PARTITION,
                                                                   "Topic ac-missing does not exist.")
    assert alter(wire, 8, "0", {"root": "INFO"}) == (
        E.INVALID_REQUEST, "AlterConfigs is only supported for topics and brokers, but resource type is BROKER_LOGGER")
    assert overrides(kafkapy_broker, "ac-t") == {"segment.ms": "60000"}


def incremental(wire: Wire, resource_type: int, name: str, ops: list[tuple[str, int, str | None]],
                validate_only: bool = False, version: int = 1) -> tuple[int, str | None]:
    Req = IncrementalAlterConfigsRequest
    req = Req(validate_only=validate_only, resources=[Req.AlterConfigsResource(
        resource_type=resource_type, resource_name=name,
        configs=[Req.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])])
    (r,) = wire.call(req, version).responses
    return r.error_code, r.error_message


SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def test_incremental_alter_topic_configs(wire, kafkapy_broker) -> None:
    create(wire, topic("iac-t", configs={"retention.ms": "1000"}))
    assert incremental(wire, 2, "iac-t", [("segment.ms", SET, "70000"), ("retention.ms", DELETE, None),
                                          ("cleanup.policy", APPEND, "compact")], version=0) == (0, None)
    assert overrides(kafkapy_broker, "iac-t") == {"segment.ms": "70000", "cleanup.policy": "delete,compact"}
    assert incremental(wire, 2, "iac-t", [("cleanup.policy", SUBTRACT, "delete")]) == (0, None)
    assert overrides(kafkapy_broker, "iac-t")["cleanup.policy"] == "compact"
    assert incremental(wire, 2, "iac-t", [("cleanup.policy", APPEND, "compact")]) == (0, None)
    assert overrides(kafkapy_broker, "iac-t")["cleanup.policy"] == "compact"
    assert incremental(wire, 2, "iac-t", [("segment.ms", APPEND, "1")]) == (
        E.INVALID_CONFIG, "Can't APPEND to key segment.ms because its type is not LIST.")
    assert incremental(wire, 2, "iac-t", [("segment.ms", SET, "1"), ("segment.ms", DELETE, None)]) == (
        E.INVALID_REQUEST, "Error due to duplicate config keys")
    assert incremental(wire, 2, "iac-t", [("bogus", SET, "1")]) == (E.INVALID_CONFIG, "Unknown topic config name: bogus")
    assert incremental(wire, 2, "iac-t", [("segment.ms", SET, "1")], validate_only=True) == (0, None)
    assert incremental(wire, 2, "iac-missing", [("segment.ms", SET, "1")]) == (
        E.UNKNOWN_TOPIC_OR_PARTITION, "Topic iac-missing does not exist.")
    assert overrides(kafkapy_broker, "iac-t") == {"segment.ms": "70000", "cleanup.policy": "compact"}
    c = by_name(describe_topic(wire, "iac-t"))
    assert (c["cleanup.policy"].value, syn(c["cleanup.policy"])) == (
        "compact", [("cleanup.policy", "compact", TOPIC_CONFIG), ("log.cleanup.policy", "delete", DEFAULT)])


def test_dynamic_broker_configs(broker_factory) -> None:
    broker = broker_factory()
    wire = Wire(broker.port)
    try:
        assert incremental(wire, 4, "", [("log.retention.ms", SET, "7200000")]) == (0, None)
        assert incremental(wire, 4, "0", [("min.insync.replicas", SET, "1")]) == (0, None)
        c = by_name(describe_broker(wire, "0"))
        assert (c["log.retention.ms"].value, c["log.retention.ms"].config_source) == ("7200000", DYNAMIC_DEFAULT)
        assert syn(c["min.insync.replicas"]) == [("min.insync.replicas", "1", DYNAMIC_BROKER),
                                                 ("min.insync.replicas", "1", DEFAULT)]
        assert [(e.name, e.value, e.config_source) for e in describe_broker(wire, "").configs] == [
            ("log.retention.ms", "7200000", DYNAMIC_DEFAULT)]
        create(wire, topic("dyn-t"))
        t = by_name(describe_topic(wire, "dyn-t"))
        assert (t["retention.ms"].value, t["retention.ms"].config_source, syn(t["retention.ms"])) == (
            "7200000", DYNAMIC_DEFAULT, [("log.retention.ms", "7200000", DYNAMIC_DEFAULT),
                                         ("log.retention.hours", "168", DEFAULT)])
        assert incremental(wire, 4, "0", [("broker.id", SET, "3")]) == (
            E.INVALID_REQUEST, "Cannot update these configs dynamically: Set(broker.id)")
        assert incremental(wire, 4, "0", [("log.segment.bytes", SET, "12")])[0] == E.INVALID_REQUEST
        assert alter(wire, 4, "", {}) == (0, None)  # AlterConfigs replaces: clears the defaults
        assert describe_broker(wire, "").configs == []
        # Stored in the metadata store: still there after a restart.
        broker.restart()
        wire.close()
        wire = Wire(broker.port)
        c = by_name(describe_broker(wire, "0", ["min.insync.replicas", "log.retention.ms"]))
        assert (c["min.insync.replicas"].config_source, c["log.retention.ms"].config_source) == (DYNAMIC_BROKER, DEFAULT)
    finally:
        wire.close()


def test_incremental_alter_broker_loggers(wire) -> None:
    name = "kafka.test.IncrementalLogger"
    logger = logging.getLogger(name)
    try:
        assert incremental(wire, 8, "0", [(name, SET, "TRACE")]) == (0, None)
        assert logger.level == 5
        assert by_name(describe_broker(wire, "0", [name], resource_type=8))[name].value == "TRACE"
        assert incremental(wire, 8, "0", [(name, DELETE, None)]) == (0, None)
        assert logger.level == logging.NOTSET
        assert incremental(wire, 8, "0", [("no.such.logger.anywhere", SET, "INFO")]) == (
            E.INVALID_CONFIG, "Logger no.such.logger.anywhere does not exist!")
        assert incremental(wire, 8, "0", [(name, SET, "LOUD")])[0] == E.INVALID_CONFIG
        assert incremental(wire, 8, "0", [("root", DELETE, None)]) == (
            E.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")
        assert incremental(wire, 8, "0", [(name, APPEND, "INFO")]) == (
            E.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER resource")
    finally:
        logger.setLevel(logging.NOTSET)


# -- DescribeCluster / ElectLeaders / reassignments --------------------------------------------------------------

def test_describe_cluster(wire, kafkapy_broker) -> None:
    cache = kafkapy_broker.server.services.metadata_cache
    for version in (0, 1):
        resp = wire.call(DescribeClusterRequest(include_cluster_authorized_operations=False), version)
        assert (resp.error_code, resp.cluster_id, resp.controller_id) == (0, cache.get_cluster_id(), 0)
        assert [(b.broker_id, b.host, b.port, b.rack) for b in resp.brokers] == [(0, "127.0.0.1", kafkapy_broker.port,
                                                                                 None)]
        assert resp.cluster_authorized_operations == -2147483648
    resp = wire.call(DescribeClusterRequest(include_cluster_authorized_operations=True), 1)
    # Kafka's cluster operations: CREATE_TOKENS / DESCRIBE_TOKENS (13, 14) belong to the USER resource.
    assert resp.cluster_authorized_operations == sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
    resp = wire.call(DescribeClusterRequest(endpoint_type=2), 1)
    assert (resp.error_code, resp.brokers) == (E.MISMATCHED_ENDPOINT_TYPE, [])
    resp = wire.call(DescribeClusterRequest(endpoint_type=9), 1)
    assert (resp.error_code, resp.error_message) == (E.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9")


def test_elect_leaders(wire) -> None:
    create(wire, topic("el-t", 2))
    TP = ElectLeadersRequest.TopicPartitions
    for version in (0, 1, 2):
        req = ElectLeadersRequest(election_type=0, timeout_ms=30000,
                                  topic_partitions=[TP(topic="el-t", partitions=[0, 1]), TP(topic="el-no", partitions=[0])])
        resp = wire.call(req, version)
        got = {(r.topic, p.partition_id): (p.error_code, p.error_message)
               for r in resp.replica_election_results for p in r.partition_result}
        assert resp.error_code == 0
        assert got == {("el-t", 0): (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                       ("el-t", 1): (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                       ("el-no", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition el-no-0 does not exist.")}
    resp = wire.call(ElectLeadersRequest(election_type=1, timeout_ms=30000, topic_partitions=None), 2)
    assert (resp.error_code, resp.replica_election_results) == (0, [])  # nothing needed an election


def test_partition_reassignments(wire) -> None:
    create(wire, topic("ra-t", 1))
    resp = wire.call(ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None), 0)
    assert (resp.error_code, resp.topics) == (0, [])
    Req = AlterPartitionReassignmentsRequest
    req = Req(timeout_ms=30000, topics=[
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=0, replicas=[0])]),
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=0, replicas=None)]),
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=0, replicas=[0, 0])]),
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=0, replicas=[0, 5])]),
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=0, replicas=[])]),
        Req.ReassignableTopic(name="ra-t", partitions=[Req.ReassignablePartition(partition_index=7, replicas=[0])]),
    ])
    resp = wire.call(req, 0)
    got = [(p.error_code, p.error_message) for t in resp.responses for p in t.partitions]
    assert resp.error_code == 0
    assert got == [(0, None), (E.NO_REASSIGNMENT_IN_PROGRESS, None),
                   (E.INVALID_REPLICA_ASSIGNMENT, "Duplicate replica ids in partition reassignment replica list: List(0, 0)"),
                   (E.INVALID_REPLICA_ASSIGNMENT, "Replica assignment has brokers that are not alive. Replica list: "
                                                  "List(5), live broker list: List(0)"),
                   (E.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment."),
                   (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")]


# -- InitProducerId ----------------------------------------------------------------------------------------------

def test_init_producer_id_idempotent(wire, kafkapy_broker) -> None:
    ids = []
    for version in range(6):
        resp = wire.call(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), version)
        assert (resp.error_code, resp.producer_epoch) == (0, 0)
        ids.append(resp.producer_id)
    assert ids == list(range(ids[0], ids[0] + 6))
    # An idempotent producer asking again with its id and epoch gets a fresh id (Kafka's rule).
    resp = wire.call(InitProducerIdRequest(transactional_id=None, producer_id=ids[-1], producer_epoch=0), 4)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (0, ids[-1] + 1, 0)
    resp = wire.call(InitProducerIdRequest(transactional_id=None, producer_id=5, producer_epoch=-1), 3)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (E.INVALID_REQUEST, -1, -1)
    resp = wire.call(InitProducerIdRequest(transactional_id="", transaction_timeout_ms=1000), 1)
    assert resp.error_code == E.INVALID_REQUEST
    if kafkapy_broker.server.services.transaction_coordinator is None:
        resp = wire.call(InitProducerIdRequest(transactional_id="txn", transaction_timeout_ms=1000), 1)
        assert resp.error_code == E.COORDINATOR_NOT_AVAILABLE


def test_producer_ids_survive_a_restart(broker_factory) -> None:
    broker = broker_factory()
    wire = Wire(broker.port)
    try:
        first = wire.call(InitProducerIdRequest(transactional_id=None), 0).producer_id
        second = wire.call(InitProducerIdRequest(transactional_id=None), 0).producer_id
        assert (first, second) == (0, 1)
        broker.restart()
        wire.close()
        wire = Wire(broker.port)
        assert wire.call(InitProducerIdRequest(transactional_id=None), 0).producer_id == 1000  # the next block
    finally:
        wire.close()


# -- DescribeLogDirs / DeleteRecords -----------------------------------------------------------------------------

def test_describe_log_dirs(wire, kafkapy_broker) -> None:
    create(wire, topic("ld-t", 2), topic("ld-other", 1))
    size = produce(wire, "ld-t", 1, [b"a" * 100, b"b" * 50])
    log_dir = os.path.abspath(kafkapy_broker.log_dir)
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    resp = wire.call(DescribeLogDirsRequest(topics=[T(topic="ld-t", partitions=[0, 1])]), 4)
    (result,) = resp.results
    assert (resp.error_code, result.error_code, result.log_dir) == (0, 0, log_dir)
    assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
    topics = {t.name: [(p.partition_index, p.partition_size, p.offset_lag, p.is_future_key) for p in t.partitions]
              for t in result.topics}
    assert topics["ld-t"] == [(0, 0, 0, False), (1, size, 0, False)]
    assert topics["ld-other"] == []  # hosted here, not asked for: listed without partitions, as in Kafka
    resp = wire.call(DescribeLogDirsRequest(topics=None), 0)
    (result,) = resp.results
    names = {t.name: len(t.partitions) for t in result.topics}
    assert names["ld-t"] == 2 and names["ld-other"] == 1


def list_earliest(wire: Wire, name: str, partition: int) -> int:
    req = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name=name, partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=partition, timestamp=-2)])])
    return wire.call(req, 1).topics[0].partitions[0].offset


def test_delete_records(wire) -> None:
    create(wire, topic("dr-t", 2))
    produce(wire, "dr-t", 0, [b"v%d" % i for i in range(10)])
    DT, DP = DeleteRecordsRequest.DeleteRecordsTopic, DeleteRecordsRequest.DeleteRecordsPartition
    req = DeleteRecordsRequest(timeout_ms=30000, topics=[
        DT(name="dr-t", partitions=[DP(partition_index=0, offset=4), DP(partition_index=1, offset=5),
                                    DP(partition_index=9, offset=0)]),
        DT(name="dr-missing", partitions=[DP(partition_index=0, offset=1)])])
    resp = wire.call(req, 0)
    got = [(t.name, p.partition_index, p.low_watermark, p.error_code) for t in resp.topics for p in t.partitions]
    assert got == [("dr-t", 0, 4, 0), ("dr-t", 1, -1, E.OFFSET_OUT_OF_RANGE), ("dr-t", 9, -1, E.UNKNOWN_TOPIC_OR_PARTITION),
                   ("dr-missing", 0, -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert list_earliest(wire, "dr-t", 0) == 4
    req = DeleteRecordsRequest(timeout_ms=30000, topics=[DT(name="dr-t", partitions=[DP(partition_index=0, offset=-1)])])
    resp = wire.call(req, 2)
    assert [(p.low_watermark, p.error_code) for p in resp.topics[0].partitions] == [(10, 0)]
    assert list_earliest(wire, "dr-t", 0) == 10
