"""LocalMetadataStore: Kafka's ZooKeeper JSON shapes in one atomically rewritten file, ephemeral brokers."""

from __future__ import annotations

import json
import os
import threading
import uuid

import pytest

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.local_store import METADATA_FILE_NAME, LocalMetadataStore
from kafkapy.controller.metadata_store import BadVersionError, NodeExistsError, NoNodeError
from kafkapy.controller.path_store import broker_from_json, broker_json
from kafkapy.zk import zk_data


def nodes_on_disk(path: str) -> dict:
    with open(os.path.join(path, METADATA_FILE_NAME)) as f:
        return json.load(f)["nodes"]


def test_kafka_uuid_text_form() -> None:
    u = uuid.UUID("6a1f3c5e-0000-4000-8000-00000000abcd")
    text = zk_data.uuid_to_kafka_str(u)
    assert len(text) == 22 and "=" not in text
    assert zk_data.uuid_from_kafka_str(text) == u
    assert zk_data.uuid_to_kafka_str(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"
    r = zk_data.random_kafka_uuid()
    assert r.version == 4 and not zk_data.uuid_to_kafka_str(r).startswith("-")


def test_cluster_id_created_once(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    assert store.get_cluster_id() is None
    assert store.get_or_create_cluster_id("abc") == "abc"
    assert store.get_or_create_cluster_id("other") == "abc"
    assert nodes_on_disk(str(tmp_path))["/cluster/id"]["data"] == {"version": "1", "id": "abc"}
    assert LocalMetadataStore(str(tmp_path)).get_cluster_id() == "abc"


def test_topic_znodes_have_kafka_shapes(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    tid = uuid.uuid4()
    store.create_topic("t1", tid, {0: [0, 1], 1: [1, 0]}, {"cleanup.policy": "compact"})
    nodes = nodes_on_disk(str(tmp_path))
    assert nodes["/brokers/topics/t1"]["data"] == {
        "partitions": {"0": [0, 1], "1": [1, 0]}, "topic_id": zk_data.uuid_to_kafka_str(tid),
        "adding_replicas": {}, "removing_replicas": {}, "version": 3}
    assert nodes["/config/topics/t1"]["data"] == {"version": 1, "config": {"cleanup.policy": "compact"}}
    with pytest.raises(NodeExistsError):
        store.create_topic("t1", uuid.uuid4(), {0: [0]}, {"retention.ms": "1"})
    assert store.get_topic_config("t1") == {"cleanup.policy": "compact"}  # the failed create changed nothing
    topic = store.get_topic("t1")
    assert topic is not None and topic.topic_id == tid and topic.assignment == {0: (0, 1), 1: (1, 0)}
    assert store.get_all_topics() == {"t1"}

    topic = store.add_partitions("t1", {2: [0, 1], 0: [9]})
    assert topic.assignment == {0: (0, 1), 1: (1, 0), 2: (0, 1)}  # existing partitions are not rewritten
    assert store.get_topic("t1").version == 1


def test_partition_states_versioned(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    store.create_topic("t", uuid.uuid4(), {0: [0], 1: [0]}, {})
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    created = store.create_partition_states({
        tp0: LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0,)), 3),
        tp1: LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0,)), 3)})
    assert created[tp0] == LeaderAndIsr(0, 0, (0,), partition_epoch=0)
    again = store.create_partition_states({tp0: LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0,)), 3)})
    assert isinstance(again[tp0], NodeExistsError)
    assert nodes_on_disk(str(tmp_path))["/brokers/topics/t/partitions/0/state"]["data"] == {
        "controller_epoch": 3, "leader": 0, "version": 1, "leader_epoch": 0, "isr": [0]}

    new = LeaderAndIsr(-1, 1, (0,), LeaderRecoveryState.RECOVERING, partition_epoch=0)
    stale = LeaderAndIsr(0, 5, (0,), partition_epoch=7)
    result = store.update_partition_states({tp0: new, tp1: stale}, controller_epoch=4)
    assert result[tp0] == LeaderAndIsr(-1, 1, (0,), LeaderRecoveryState.RECOVERING, partition_epoch=1)
    assert isinstance(result[tp1], BadVersionError)
    states = store.get_partition_states("t")
    assert states[0] == LeaderIsrAndControllerEpoch(result[tp0], 4)
    assert states[1].leader_and_isr.partition_epoch == 0
    data = nodes_on_disk(str(tmp_path))["/brokers/topics/t/partitions/0/state"]["data"]
    assert data["leader_recovery_state"] == 1
    missing = store.update_partition_states({TopicPartition("nope", 0): new}, 4)
    assert isinstance(missing[TopicPartition("nope", 0)], NoNodeError)


def test_delete_topic_removes_everything(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    store.create_topic("t", uuid.uuid4(), {0: [0]}, {"retention.ms": "5"})
    store.create_partition_states({TopicPartition("t", 0): LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0,)), 1)})
    store.mark_topics_for_deletion(["t"])
    store.mark_topics_for_deletion(["t"])  # idempotent
    assert store.get_topics_marked_for_deletion() == {"t"}
    assert nodes_on_disk(str(tmp_path))["/admin/delete_topics/t"]["data"] is None
    store.delete_topic("t")
    assert store.get_all_topics() == set()
    assert store.get_partition_states("t") == {}
    assert store.get_topic_config("t") == {}
    assert store.get_topics_marked_for_deletion() == set()
    assert [p for p in nodes_on_disk(str(tmp_path)) if "/t" in p] == []
    store.delete_topic("t")  # deleting again is harmless


def test_brokers_are_ephemeral_and_epochs_grow(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    changes = []
    store.watch_brokers(lambda: changes.append(1))
    b = Broker(0, (EndPoint("PLAINTEXT", "127.0.0.1", 9092), EndPoint("INTERNAL", "10.0.0.1", 9093)), "r1")
    e1 = store.register_broker(b, 1000)
    got = store.get_brokers()[0]
    assert got.endpoints == b.endpoints and got.rack == "r1" and got.epoch == e1
    e2 = store.register_broker(b, 2000)
    assert e2 > e1 and changes
    assert "/brokers/ids/0" not in nodes_on_disk(str(tmp_path))
    store.close()
    reopened = LocalMetadataStore(str(tmp_path))
    assert reopened.get_brokers() == {}
    assert reopened.register_broker(b, 3000) > e2
    reopened.unregister_broker(0)
    assert reopened.get_brokers() == {}


def test_broker_json_shape() -> None:
    b = Broker(1, (EndPoint("PLAINTEXT", "h", 9092),), None)
    data = broker_json(b, 5)
    assert data == {"features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
                    "endpoints": ["PLAINTEXT://h:9092"], "jmx_port": -1, "port": 9092,
                    "host": "h", "version": 5, "timestamp": "5"}
    assert broker_from_json(1, data, 9) == b.with_epoch(9)
    racked = Broker(1, (EndPoint("PLAINTEXT", "h", 9092),), "r1")
    assert broker_json(racked, 5)["rack"] == "r1"  # Kafka writes "rack" only when broker.rack is set


def test_controller_election_and_epoch(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    assert store.get_controller_epoch() == 0
    assert store.try_elect_controller(0, 1) == 1
    assert store.get_controller_id() == 0
    assert store.try_elect_controller(1, 1) is None
    store.resign_controller(1)  # not the holder: no effect
    assert store.get_controller_id() == 0
    store.close()
    reopened = LocalMetadataStore(str(tmp_path))
    assert reopened.get_controller_id() is None  # ephemeral
    assert reopened.try_elect_controller(0, 2) == 2  # epoch persisted
    assert nodes_on_disk(str(tmp_path))["/controller_epoch"]["data"] == 2


def test_configs_topic_and_broker(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    store.set_broker_config(None, {"log.retention.ms": "100"})
    store.set_broker_config(1, {"log.cleaner.threads": "2"})
    store.set_topic_config("x", {"a": "1"})
    store.set_topic_config("x", {})
    assert store.get_broker_config(None) == {"log.retention.ms": "100"}
    assert store.get_broker_config(1) == {"log.cleaner.threads": "2"}
    assert store.get_topic_config("x") == {}
    nodes = nodes_on_disk(str(tmp_path))
    assert nodes["/config/brokers/<default>"]["data"] == {"version": 1, "config": {"log.retention.ms": "100"}}


def test_atomic_file_and_no_tmp_left(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    store.create_topic("t", uuid.uuid4(), {0: [0]}, {})
    assert sorted(os.listdir(tmp_path)) == [METADATA_FILE_NAME]


def test_concurrent_writers(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))

    def create(i: int) -> None:
        for j in range(5):
            store.create_topic(f"t{i}-{j}", uuid.uuid4(), {0: [0]}, {})

    threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(LocalMetadataStore(str(tmp_path)).get_all_topics()) == 20
