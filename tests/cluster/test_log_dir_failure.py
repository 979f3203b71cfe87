"""A failed log dir in a ZooKeeper cluster (KIP-112), 2 brokers, broker 1 with two log dirs: the dir holding the
leader replica of a partition becomes a file (Kafka's LogDirFailureTest mechanism; the broker's next
high-watermark checkpoint write fails with a real ENOTDIR), broker 1 takes the dir offline and writes Kafka's
/log_dir_event_notification/log_dir_event_<seq>, the controller resends LeaderAndIsr, broker 1 answers
KAFKA_STORAGE_ERROR and leadership moves to broker 0 (broker 1 listed among the offline replicas); `log-dirs`
reports KAFKA_STORAGE_ERROR for the dir, the partition in broker 1's other dir is still led there, and every
acknowledged record is read back."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from kafkapy.cli.log_dirs import main as log_dirs_main
from kafkapy.client.admin import AdminClient
from kafkapy.client.admin_types import NewTopic
from kafkapy.common.errors import KafkaStorageError

ck = pytest.importorskip("confluent_kafka")


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    c = cluster_factory(2, overrides={"replica.high.watermark.checkpoint.interval.ms": "300"})
    b1 = c.brokers[1]
    b1.stop()
    b1.overrides["log.dirs"] = f"{b1.log_dir},{b1.log_dir}-second"
    b1.start()
    c.wait_for(lambda: c.registered_brokers() == [0, 1], 30, what="broker 1 back")
    return c


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2})
    for v in values:
        p.produce(topic, value=v, partition=0)
    assert p.flush(30) == 0


def read(bootstrap: str, topic: str, n: int) -> list[bytes]:
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{topic}-{time.time()}",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([ck.TopicPartition(topic, 0, 0)])
    out: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(out) < n:
        assert time.monotonic() < deadline, f"read {len(out)} of {n}"
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            out.append(m.value())
    c.close()
    return out


def test_failed_log_dir_moves_leadership(cluster, capsys) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    try:
        admin.create_topics([NewTopic("lost-disk", replica_assignment={0: [1, 0]}),
                             NewTopic("kept-disk", replica_assignment={0: [1, 0]})])
        cluster.wait_for(lambda: all(cluster.describe(t).get(0, (None,))[0] == 1 for t in ("lost-disk", "kept-disk")),
                         30, what="broker 1 leads both")
        dirs = admin.describe_log_dirs([1])[1]
        where = {tp.topic: path for path, d in dirs.items() for tp in d.replicas}
        if where["lost-disk"] == where["kept-disk"]:  # put them on different disks
            other = next(p for p in dirs if p != where["lost-disk"])
            from kafkapy.tools.reassign_json import TopicPartitionReplica

            assert admin.alter_replica_log_dirs({TopicPartitionReplica("kept-disk", 0, 1): other}) == {
                TopicPartitionReplica("kept-disk", 0, 1): None}
            cluster.wait_for(lambda: any(tp.topic == "kept-disk" and not i.is_future
                                         for tp, i in admin.describe_log_dirs([1])[1][other].replicas.items()), 20,
                             what="kept-disk moved to the other dir")
        failing = where["lost-disk"]
        before = [f"before-{i}".encode() for i in range(20)]
        produce(cluster.bootstrap, "lost-disk", before)
        cluster.wait_for(lambda: cluster.describe("lost-disk")[0][2] == [1, 0], 20, what="both in the ISR")

        shutil.move(failing, failing + ".gone")
        with open(failing, "w"):
            pass
        cluster.wait_for(lambda: cluster.describe("lost-disk")[0][0] == 0, 30, what="leadership moved to broker 0")
        md = admin.describe_topics(["lost-disk"])["lost-disk"].partitions[0]
        assert md.offline_replicas == [1]
        assert cluster.describe("kept-disk")[0][0] == 1  # its disk is fine
        assert isinstance(admin.describe_log_dirs([1])[1][failing].error, KafkaStorageError)
        assert cluster.zk().get_children("/log_dir_event_notification") == []  # the controller consumed it

        after = [f"after-{i}".encode() for i in range(20)]
        produce(cluster.bootstrap, "lost-disk", after)
        assert read(cluster.bootstrap, "lost-disk", 40) == before + after

        assert log_dirs_main(["--bootstrap-server", cluster.bootstrap, "--describe", "--broker-list", "1"]) == 0
        out = capsys.readouterr().out.splitlines()
        doc = json.loads(out[-1])
        failed = [d for d in doc["brokers"][0]["logDirs"] if d["logDir"] == failing]
        assert failed and failed[0]["error"] == "org.apache.kafka.common.errors.KafkaStorageException"
        assert failed[0]["partitions"] == []
    finally:
        admin.close()
