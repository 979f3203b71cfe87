"""ZkMetadataStore against a real ZooKeeper: Kafka's znodes and JSON bytes, conditional writes, ephemeral
registrations, watches, the chroot, and the start-up timeout."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.metadata_store import BadVersionError, NodeExistsError
from kafkapy.controller.zk_client import (
    BrokerIdAlreadyRegisteredError,
    ZkMetadataStore,
    ZooKeeperClientTimeoutError,
)


@pytest.fixture
def chroot(zookeeper):
    return f"{zookeeper.connect}/store-{uuid.uuid4().hex[:8]}"


def raw(store: ZkMetadataStore, path: str) -> bytes:
    return store.zk.get(path)[0]


def test_znodes_are_kafkas(chroot) -> None:
    store = ZkMetadataStore(chroot, 6000, 10000)
    try:
        broker = Broker(1, (EndPoint("PLAINTEXT", "127.0.0.1", 9092),), "r1")
        epoch = store.register_broker(broker, 1234)
        assert epoch > 0
        assert json.loads(raw(store, "/brokers/ids/1")) == {
            "features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "endpoints": ["PLAINTEXT://127.0.0.1:9092"], "jmx_port": -1, "port": 9092, "host": "127.0.0.1",
            "version": 5, "timestamp": "1234", "rack": "r1"}
        assert b" " not in raw(store, "/brokers/ids/1")  # compact JSON, as Jackson writes it
        assert store.zk.exists("/brokers/ids/1").ephemeral_owner == store.session_id
        assert store.get_brokers()[1].epoch == epoch
        assert store.try_elect_controller(1, 99) == 1
        assert raw(store, "/controller_epoch") == b"1"
        assert json.loads(raw(store, "/controller")) == {"version": 1, "brokerid": 1, "timestamp": "99"}
        assert store.try_elect_controller(2, 99) is None
        tid = uuid.uuid4()
        store.create_topic("t", tid, {0: [1, 2], 1: [2, 1]}, {"retention.ms": "1000"})
        topic = json.loads(raw(store, "/brokers/topics/t"))
        assert topic["partitions"] == {"0": [1, 2], "1": [2, 1]} and topic["version"] == 3
        assert json.loads(raw(store, "/config/topics/t")) == {"version": 1, "config": {"retention.ms": "1000"}}
        tp = TopicPartition("t", 0)
        created = store.create_partition_states({tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1)})
        assert created[tp].partition_epoch == 0
        assert json.loads(raw(store, "/brokers/topics/t/partitions/0/state")) == {
            "controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]}
        written = store.update_partition_states({tp: LeaderAndIsr(2, 1, (2,), partition_epoch=0)}, 1)
        assert written[tp].partition_epoch == 1
        stale = store.update_partition_states({tp: LeaderAndIsr(1, 2, (1,), partition_epoch=0)}, 1)
        assert isinstance(stale[tp], BadVersionError)
        store.set_topic_config("t", {"retention.ms": "5"})
        changes = store.zk.children("/config/changes")
        assert changes and all(c.startswith("config_change_") for c in changes)
        assert json.loads(raw(store, "/config/changes/" + sorted(changes)[-1])) == {
            "version": 2, "entity_path": "topics/t"}
        store.mark_topics_for_deletion(["t"])
        assert raw(store, "/admin/delete_topics/t") == b""
        store.delete_topic("t")
        assert store.get_topic("t") is None and store.get_topics_marked_for_deletion() == set()
        with pytest.raises(NodeExistsError):
            store.create_topic("u", tid, {0: [1]}, {}) or store.create_topic("u", tid, {0: [1]}, {})
    finally:
        store.close()


def test_duplicate_broker_id_and_watches(chroot) -> None:
    a = ZkMetadataStore(chroot, 6000, 10000)
    b = ZkMetadataStore(chroot, 6000, 10000)
    try:
        fired = threading.Event()
        b.watch_path_children("/brokers/ids", fired.set)
        fired.clear()
        a.register_broker(Broker.simple(0, "127.0.0.1", 1), 1)
        assert fired.wait(10)
        with pytest.raises(BrokerIdAlreadyRegisteredError, match="/brokers/ids/0, node already exists"):
            b.register_broker(Broker.simple(0, "127.0.0.1", 2), 1)
        gone = threading.Event()
        b.watch_path_node("/brokers/ids/0", gone.set)
        gone.clear()
        a.close()  # the session ends: the ephemeral registration goes
        assert gone.wait(10)
        assert b.get_brokers() == {}
    finally:
        b.close()


def test_unreachable_zookeeper_fails_after_connection_timeout() -> None:
    start = time.monotonic()
    with pytest.raises(ZooKeeperClientTimeoutError, match="Timed out waiting for connection"):
        ZkMetadataStore("127.0.0.1:1", 6000, 1500)
    assert 1.0 < time.monotonic() - start < 10


def test_zombie_controller_writes_are_fenced(chroot) -> None:
    """Kafka's checkControllerEpoch: partition-state writes carry the /controller_epoch zkVersion of the
    election; once another controller bumped it, the old one's writes fail with ControllerMovedError."""
    from kafkapy.controller.metadata_store import ControllerMovedError

    zombie = ZkMetadataStore(chroot, 6000, 10000)
    other = ZkMetadataStore(chroot, 6000, 10000)
    try:
        assert zombie.try_elect_controller(0, 1) == 1
        zombie.create_topic("f", uuid.uuid4(), {0: [0]}, {})
        tp = TopicPartition("f", 0)
        zombie.create_partition_states({tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0,)), 1)})
        ok = zombie.update_partition_states({tp: LeaderAndIsr(0, 1, (0,), partition_epoch=0)}, 1)
        assert ok[tp].partition_epoch == 1
        # Another controller got elected (its election bumped /controller_epoch).
        other.zk.set("/controller_epoch", b"2")
        with pytest.raises(ControllerMovedError):
            zombie.update_partition_states({tp: LeaderAndIsr(0, 2, (0,), partition_epoch=1)}, 1)
        assert json.loads(raw(other, "/brokers/topics/f/partitions/0/state"))["leader_epoch"] == 1
    finally:
        zombie.close()
        other.close()
