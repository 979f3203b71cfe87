"""Controller over a LocalMetadataStore in a temp dir: topic lifecycle, validation, restart, leadership."""

from __future__ import annotations

import uuid

import pytest
from controller_harness import TIMEOUT, Harness

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import (
    ErrorCode,
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicExceptionError,
    NotControllerError,
    TopicAlreadyExistsError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller import Controller
from kafkapy.controller.controller_events import CreatableTopic
from kafkapy.controller.local_store import LocalMetadataStore


@pytest.fixture
def h(tmp_path):
    harness = Harness(str(tmp_path))
    yield harness
    harness.stop()


def test_startup_sets_cluster_and_controller(h: Harness) -> None:
    assert h.controller.is_active and h.controller.epoch == 1
    assert h.cache.get_controller_id() == 0
    assert h.cache.get_cluster_id() == h.store.get_cluster_id() and len(h.cache.get_cluster_id()) == 22
    assert [b.id for b in h.cache.get_alive_brokers()] == [0]


def test_create_topic_elects_local_leader(h: Harness) -> None:
    result = h.create(("orders", 3, 1, None, {"retention.ms": "1000"}))["orders"]
    assert result.error is None and isinstance(result.topic_id, uuid.UUID)
    assert result.num_partitions == 3 and result.replication_factor == 1
    assert result.assignment == {0: [0], 1: [0], 2: [0]}
    assert h.store.get_topic("orders").topic_id == result.topic_id
    assert h.store.get_topic_config("orders") == {"retention.ms": "1000"}
    states = h.rec.states()
    assert [(s.topic, s.partition, s.leader, s.leader_epoch, s.isr, s.replicas, s.is_new) for s in states] == [
        ("orders", p, 0, 0, (0,), (0,), True) for p in range(3)]
    assert all(s.topic_id == result.topic_id and s.controller_epoch == 1 for s in states)
    assert h.cache.get_topic_id("orders") == result.topic_id
    assert h.cache.get_topic_name(result.topic_id) == "orders"
    md = h.cache.get_topic_metadata(["orders", "missing"])
    assert len(md) == 1 and md[0].error_code == ErrorCode.NONE
    assert [(p.partition, p.leader, p.leader_epoch, p.replicas, p.isr, p.error_code) for p in md[0].partitions] == [
        (p, 0, 0, [0], [0], 0) for p in range(3)]
    stored = h.store.get_partition_states("orders")
    assert stored[2].leader_and_isr.isr == (0,) and stored[2].controller_epoch == 1


def test_defaults_from_broker_config(tmp_path) -> None:
    harness = Harness(str(tmp_path), config={"num.partitions": "4", "default.replication.factor": 1})
    try:
        result = harness.create(CreatableTopic("t"))["t"]
        assert result.error is None and result.num_partitions == 4
    finally:
        harness.stop()


def test_validation_errors(h: Harness) -> None:
    h.create(("a.b", 1, 1, None, {}))
    res = h.create(
        ("a.b", 1, 1, None, {}),
        ("a_b", 1, 1, None, {}),
        ("bad name", 1, 1, None, {}),
        ("x" * 250, 1, 1, None, {}),
        ("..", 1, 1, None, {}),
        ("rf", 1, 2, None, {}),
        ("np", 0, 1, None, {}),
        ("both", 1, 1, {0: [0]}, {}),
        ("cfg", 1, 1, None, {"bad.config": "1"}),
        ("nullcfg", 1, 1, None, {"retention.ms": None}),
        ("gap", -1, -1, {0: [0], 2: [0]}, {}),
        ("dup", -1, -1, {0: [0, 0]}, {}),
    )
    assert isinstance(res["a.b"].error, TopicAlreadyExistsError)
    assert str(res["a.b"].error) == "Topic 'a.b' already exists."
    assert isinstance(res["a_b"].error, InvalidTopicExceptionError)
    assert str(res["a_b"].error) == "Topic 'a_b' collides with existing topics: a.b"
    assert isinstance(res["bad name"].error, InvalidTopicExceptionError)
    assert isinstance(res["x" * 250].error, InvalidTopicExceptionError)
    assert isinstance(res[".."].error, InvalidTopicExceptionError)
    assert isinstance(res["rf"].error, InvalidReplicationFactorError)
    assert str(res["rf"].error) == "Replication factor: 2 larger than available brokers: 1."
    assert isinstance(res["np"].error, InvalidPartitionsError)
    assert isinstance(res["both"].error, InvalidRequestError)
    assert isinstance(res["cfg"].error, InvalidConfigError)
    assert isinstance(res["nullcfg"].error, InvalidConfigError)
    assert isinstance(res["gap"].error, InvalidReplicaAssignmentError)
    assert isinstance(res["dup"].error, InvalidReplicaAssignmentError)
    assert h.store.get_all_topics() == {"a.b"}
    assert h.cache.get_all_topics() == {"a.b"}


def test_validate_only_writes_nothing(h: Harness) -> None:
    res = h.create(("v", 2, 1, None, {"retention.ms": "5"}), validate_only=True)["v"]
    assert res.error is None and res.topic_id is None and res.num_partitions == 2
    assert h.store.get_all_topics() == set() and not h.cache.contains_topic("v") and h.rec.leader_and_isr == []


def test_explicit_assignment_with_unknown_broker_stays_leaderless(h: Harness) -> None:
    res = h.create(("m", -1, -1, {0: [0], 1: [5]}, {}))["m"]
    assert res.error is None and res.assignment == {0: [0], 1: [5]}
    assert h.cache.num_partitions("m") == 1  # partition 1 has no live replica, so no state yet
    assert [s.partition for s in h.rec.states()] == [0]


def test_delete_topic(h: Harness) -> None:
    tid = h.create(("gone", 2, 1, None, {"retention.ms": "1"}))["gone"].topic_id
    res = h.controller.delete_topics(["gone", "nope"]).result(TIMEOUT)
    assert res["gone"] is None and isinstance(res["nope"], UnknownTopicOrPartitionError)
    assert h.store.get_all_topics() == set() and h.store.get_topic_config("gone") == {}
    assert h.store.get_topics_marked_for_deletion() == set()
    assert not h.cache.contains_topic("gone") and h.cache.get_topic_name(tid) is None
    [(broker, _, parts)] = h.rec.stop_replica
    assert broker == 0
    assert [(p.topic, p.partition, p.topic_id, p.delete_partition, p.leader_epoch) for p in parts] == [
        ("gone", 0, tid, True, -2), ("gone", 1, tid, True, -2)]
    # The name can be reused, with a new id.
    assert h.create(("gone", 1, 1, None, {}))["gone"].topic_id not in (None, tid)


def test_delete_disabled(tmp_path) -> None:
    harness = Harness(str(tmp_path), config={"delete.topic.enable": "false"})
    try:
        harness.create(("t", 1, 1, None, {}))
        res = harness.controller.delete_topics(["t"]).result(TIMEOUT)
        assert isinstance(res["t"], TopicDeletionDisabledError)
        assert harness.store.get_all_topics() == {"t"}
    finally:
        harness.stop()


def test_create_partitions(h: Harness) -> None:
    h.create(("p", 2, 1, None, {}))
    h.rec.leader_and_isr.clear()
    assert h.controller.create_partitions("p", 4).result(TIMEOUT) is None
    assert h.store.get_topic("p").assignment == {0: (0,), 1: (0,), 2: (0,), 3: (0,)}
    assert [(s.partition, s.leader, s.is_new) for s in h.rec.states()] == [(2, 0, True), (3, 0, True)]
    assert h.cache.num_partitions("p") == 4
    for new_total, assignment, err, msg in [
        (4, None, InvalidPartitionsError, "Topic already has 4 partitions."),
        (3, None, InvalidPartitionsError, "Topic currently has 4 partitions, which is higher than the requested 3."),
        (6, [[0]], InvalidReplicaAssignmentError, "Increasing the number of partitions by 2 but 1 assignments provided."),
        (5, [[3]], InvalidReplicaAssignmentError, "Unknown broker(s) in replica assignment: 3."),
    ]:
        with pytest.raises(err) as info:
            h.controller.create_partitions("p", new_total, assignment).result(TIMEOUT)
        assert str(info.value) == msg
    with pytest.raises(UnknownTopicOrPartitionError):
        h.controller.create_partitions("nope", 2).result(TIMEOUT)
    assert h.controller.create_partitions("p", 5, [[0]], validate_only=True).result(TIMEOUT) is None
    assert h.cache.num_partitions("p") == 4


def test_alter_configs(h: Harness) -> None:
    h.create(("c", 1, 1, None, {"retention.ms": "1"}))
    h.controller.alter_topic_configs("c", {"cleanup.policy": "compact"}).result(TIMEOUT)
    assert h.store.get_topic_config("c") == {"cleanup.policy": "compact"}
    assert h.controller.topic_config_overrides("c") == {"cleanup.policy": "compact"}
    assert h.rec.config_changes == [("topics", "c", {"cleanup.policy": "compact"})]
    with pytest.raises(InvalidConfigError):
        h.controller.alter_topic_configs("c", {"bad.config": "x"}).result(TIMEOUT)
    with pytest.raises(UnknownTopicOrPartitionError):
        h.controller.alter_topic_configs("nope", {}).result(TIMEOUT)
    h.controller.alter_topic_configs("c", {"retention.ms": "9"}, validate_only=True).result(TIMEOUT)
    assert h.store.get_topic_config("c") == {"cleanup.policy": "compact"}
    h.controller.alter_broker_configs(None, {"log.retention.ms": "7"}).result(TIMEOUT)
    assert h.controller.broker_config_overrides(None) == {"log.retention.ms": "7"}


def test_restart_keeps_topics_ids_and_states(tmp_path) -> None:
    first = Harness(str(tmp_path))
    ids = {name: r.topic_id for name, r in first.create(("a", 2, 1, None, {"retention.ms": "3"}),
                                                         ("b", 1, 1, None, {})).items()}
    first.controller.delete_topics(["b"]).result(TIMEOUT)
    first.stop()

    second = Harness(str(tmp_path))
    try:
        assert second.controller.epoch == 2
        assert second.cache.get_cluster_id() == first.cache.get_cluster_id()
        assert second.cache.get_all_topics() == {"a"} and second.cache.get_topic_id("a") == ids["a"]
        assert second.store.get_topic_config("a") == {"retention.ms": "3"}
        # The leader is alive again: same leader epoch, the broker is told to host its partitions.
        states = second.rec.states()
        assert [(s.topic, s.partition, s.leader, s.leader_epoch, s.is_new, s.controller_epoch) for s in states] == [
            ("a", 0, 0, 0, False, 1), ("a", 1, 0, 0, False, 1)]
        res = second.create(("a", 1, 1, None, {}))
        assert isinstance(res["a"].error, TopicAlreadyExistsError)
    finally:
        second.stop()


def test_restart_resumes_pending_deletion(tmp_path) -> None:
    first = Harness(str(tmp_path))
    first.create(("d", 1, 1, None, {}))
    first.stop()
    LocalMetadataStore(str(tmp_path)).mark_topics_for_deletion(["d"])  # as if we crashed mid-deletion
    second = Harness(str(tmp_path))
    try:
        assert second.store.get_all_topics() == set() and not second.cache.contains_topic("d")
        assert [p.topic for _, _, parts in second.rec.stop_replica for p in parts] == ["d"]
    finally:
        second.stop()


def test_not_running_controller_fails_fast(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    controller = Controller(store, MetadataCache(0), 0, MockTime())
    with pytest.raises(NotControllerError):
        controller.create_topics([("t", 1, 1, None, {})]).result(TIMEOUT)


def test_config_validator_default_is_log_config(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    store.register_broker(Broker.simple(0, "h", 1), 1)
    controller = Controller(store, MetadataCache(0), 0, MockTime())
    controller.startup().result(TIMEOUT)
    try:
        res = controller.create_topics([("t", 1, 1, None, {"no.such.config": "1"}),
                                        ("u", 1, 1, None, {"retention.ms": "abc"}),
                                        ("v", 1, 1, None, {"cleanup.policy": "compact"})]).result(TIMEOUT)
        assert isinstance(res["t"].error, InvalidConfigError)
        assert str(res["t"].error) == "Unknown topic config name: no.such.config"
        assert isinstance(res["u"].error, InvalidConfigError)
        assert res["v"].error is None
    finally:
        controller.shutdown()


def test_topic_partition_objects_in_cache(h: Harness) -> None:
    h.create(("q", 1, 1, None, {}))
    assert h.cache.contains(TopicPartition("q", 0)) and not h.cache.contains(TopicPartition("q", 1))
    node = h.cache.get_partition_leader_endpoint(TopicPartition("q", 0))
    assert (node.id, node.host, node.port) == (0, "127.0.0.1", 9092)


def test_second_controller_is_not_elected_and_shutdown_fails_requests(h: Harness) -> None:
    h.store.register_broker(Broker.simple(1, "127.0.0.1", 9093), 1)
    other = Controller(h.store, MetadataCache(1), 1, MockTime())
    try:
        assert other.startup().result(TIMEOUT) is False and not other.is_active
        with pytest.raises(NotControllerError):
            other.create_topics([("t", 1, 1, None, {})]).result(TIMEOUT)
    finally:
        other.shutdown()
    h.controller.shutdown()
    assert h.store.get_controller_id() is None  # resigned
    with pytest.raises(NotControllerError):
        h.controller.delete_topics(["t"]).result(TIMEOUT)


def test_kafka_config_as_broker_config(tmp_path) -> None:
    from kafkapy.server.kafka_config import KafkaConfig

    harness = Harness(str(tmp_path), config=KafkaConfig({"num.partitions": "3", "delete.topic.enable": "false"}))
    try:
        assert harness.create(("k", -1, -1, None, {}))["k"].num_partitions == 3
        assert isinstance(harness.controller.delete_topics(["k"]).result(TIMEOUT)["k"], TopicDeletionDisabledError)
    finally:
        harness.stop()


def test_delete_topic_with_a_replica_on_an_absent_broker_completes_without_zookeeper(h: Harness) -> None:
    h.create(("stray", -1, -1, {0: [0, 5]}, {}))
    assert h.controller.delete_topics(["stray"]).result(TIMEOUT) == {"stray": None}
    assert h.store.get_all_topics() == set() and h.store.get_topics_marked_for_deletion() == set()
    [(broker, _, parts)] = h.rec.stop_replica
    assert broker == 0 and [(p.topic, p.partition, p.delete_partition) for p in parts] == [("stray", 0, True)]
