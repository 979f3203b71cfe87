"""A follower's append that fails with an I/O error takes its log dir offline (KIP-112), as a leader's does: Kafka's
ReplicaFetcherThread gets a KafkaStorageException, marks the partition failed and LogDirFailureChannel takes the
dir offline. ZooKeeper cluster of 2 brokers; broker 1 has two log dirs and follows two partitions led by broker 0,
one in each dir. Broker 1's RLIMIT_FSIZE is lowered (prlimit) below the size the first partition's segment is about
to reach, so its next follower append fails with EFBIG (a real kernel I/O error): that dir goes offline, broker 1
tells the controller (log_dir_event_notification), the controller lists broker 1 as an offline replica of that
partition, DescribeLogDirs answers KAFKA_STORAGE_ERROR for the dir, and the partition in the other dir still
replicates to broker 1 (in the ISR, every record)."""

from __future__ import annotations

import os
import resource
import time

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.errors import KafkaStorageError

ck = pytest.importorskip("confluent_kafka")

LIMIT = 1024 * 1024
VALUE = b"y" * 1000
FAILING, KEPT = "follower-disk", "follower-kept"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    # Preallocated index files stay under the limit (Kafka's default is 10 MiB each).
    c = cluster_factory(1, overrides={"log.index.size.max.bytes": "65536", "offsets.topic.replication.factor": "1",
                                      "transaction.state.log.replication.factor": "1"})
    base = c.brokers[0].log_dir
    c.add_broker(1, overrides={"log.dirs": f"{base}-b1-d1,{base}-b1-d2"})
    c.wait_for(lambda: c.registered_brokers() == [0, 1], 30, what="both brokers registered")
    return c


def produce(bootstrap: str, topic: str, count: int, prefix: str) -> None:
    p = ck.Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5})
    for i in range(count):
        p.produce(topic, value=VALUE[:-16] + f"{prefix}{i:08d}".encode().rjust(16, b"-"), partition=0)
        p.poll(0)
    assert p.flush(30) == 0


def log_dirs_of_broker_1(admin) -> dict:
    return admin.describe_log_dirs([1])[1]


def test_a_follower_append_io_error_takes_its_log_dir_offline(cluster) -> None:
    admin = cluster.admin()
    b1 = cluster.brokers[1]
    _, hard = resource.prlimit(b1.pid, resource.RLIMIT_FSIZE)
    try:
        admin.create_topics([NewTopic(FAILING, replica_assignment={0: [0, 1]}),
                             NewTopic(KEPT, replica_assignment={0: [0, 1]})])
        cluster.wait_for(lambda: all(cluster.describe(t).get(0, (None, [], []))[2] == [0, 1] for t in (FAILING, KEPT)),
                         30, what="broker 1 in both ISRs")
        dirs = log_dirs_of_broker_1(admin)
        where = {tp.topic: path for path, d in dirs.items() for tp in d.replicas}
        assert where[FAILING] != where[KEPT]  # a new log goes to the dir with the fewest (here: none) logs
        failing = where[FAILING]

        resource.prlimit(b1.pid, resource.RLIMIT_FSIZE, (LIMIT, hard))
        produce(cluster.bootstrap, FAILING, 2 * LIMIT // len(VALUE), "f")  # twice what the follower may write

        def offline_replicas() -> list[int]:
            return admin.describe_topics([FAILING])[FAILING].partitions[0].offline_replicas

        cluster.wait_for(lambda: offline_replicas() == [1], 30, what="broker 1 an offline replica of the partition")
        dirs = log_dirs_of_broker_1(admin)
        assert isinstance(dirs[failing].error, KafkaStorageError)
        assert dirs[where[KEPT]].error is None
        assert b1.alive  # one dir is still online: no halt
        out = b1.output()
        assert f"Error while processing data for partition {FAILING}-0 at offset" in out, out[-4000:]
        assert f"Error while writing to log dir {failing}: [Errno 27] File too large" in out, out[-4000:]
        assert out.count("Error in the fetch loop") == 0, out[-4000:]

        # The other dir still replicates: broker 1 stays in the ISR and holds every record.
        produce(cluster.bootstrap, KEPT, 50, "k")
        kept_dir = where[KEPT]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            replicas = log_dirs_of_broker_1(admin)[kept_dir].replicas
            if any(tp.topic == KEPT and info.size > 50 * len(VALUE) for tp, info in replicas.items()):
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"{KEPT} did not replicate to broker 1")
        assert cluster.describe(KEPT)[0][2] == [0, 1]
        assert os.path.isdir(failing)  # offline, not removed
    finally:
        if b1.alive:
            resource.prlimit(b1.pid, resource.RLIMIT_FSIZE, (hard, hard))
        admin.close()
