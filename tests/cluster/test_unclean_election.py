"""Unclean leader election in a cluster: the only ISR member of a partition dies while the other replica is out of
sync; the partition stays leaderless (`topics --describe --unavailable-partitions` lists it) until
`kafkapy leader-election --election-type UNCLEAN` or the topic config `unclean.leader.election.enable=true`
makes the out-of-sync replica the leader."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafkapy.client.admin_types import (
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
)

confluent_kafka = pytest.importorskip("confluent_kafka")
BY_TOOL, BY_CONFIG, STAYS = "unclean-by-tool", "unclean-by-config", "unclean-stays"
TOPICS = (BY_TOOL, BY_CONFIG, STAYS)


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def kafkapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", *args], capture_output=True, text=True,
                          timeout=120)


def test_out_of_sync_replica_leads_only_after_an_unclean_election(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(t, replica_assignment={0: [0, 1]}) for t in TOPICS])
    finally:
        admin.close()
    cluster.wait_for(lambda: all((cluster.partition_state(t, 0) or {}).get("isr") == [0, 1] for t in TOPICS),
                     what="both replicas in sync")
    # Broker 1 stops (leaving the ISR), broker 0 takes more writes alone, then dies: its ISR is [0] only.
    cluster.brokers[1].stop()
    cluster.wait_for(lambda: all(cluster.partition_state(t, 0)["isr"] == [0] for t in TOPICS), what="ISR [0]")
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for t in TOPICS:
        for i in range(10):
            p.produce(t, value=f"{t}-{i}".encode(), partition=0)
    assert p.flush(30) == 0
    del p
    cluster.brokers[0].kill()
    cluster.brokers[1].start()
    cluster.wait_for(lambda: 1 in cluster.registered_brokers() and 0 not in cluster.registered_brokers(), 30,
                     what="broker 1 back, broker 0's session gone")
    cluster.wait_for(lambda: all(cluster.partition_state(t, 0)["leader"] == -1 for t in TOPICS), 30,
                     what="the partitions leaderless")
    assert all(cluster.partition_state(t, 0)["isr"] == [0] for t in TOPICS)  # clean election would lose nothing

    out = kafkapy("topics", "--bootstrap-server", cluster.bootstrap, "--describe", "--unavailable-partitions")
    assert out.returncode == 0, out.stderr
    for t in TOPICS:
        assert f"Topic: {t}\tPartition: 0\tLeader: none\tReplicas: 0,1\tIsr: 0" in out.stdout, out.stdout

    # (a) an explicit unclean election
    out = kafkapy("leader-election", "--bootstrap-server", cluster.bootstrap, "--election-type", "UNCLEAN",
                  "--topic", BY_TOOL, "--partition", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == f"Successfully completed leader election (UNCLEAN) for partitions {BY_TOOL}-0\n"
    state = cluster.partition_state(BY_TOOL, 0)
    assert (state["leader"], state["isr"]) == (1, [1])

    # (b) the topic config turned on: the controller elects at once
    admin = cluster.admin()
    try:
        res = ConfigResource(ConfigResourceType.TOPIC, BY_CONFIG)
        admin.incremental_alter_configs({res: [AlterConfigOp("unclean.leader.election.enable", "true",
                                                             AlterConfigOpType.SET)]})
    finally:
        admin.close()
    cluster.wait_for(lambda: cluster.partition_state(BY_CONFIG, 0)["leader"] == 1, 30, what="the config's election")
    assert cluster.partition_state(BY_CONFIG, 0)["isr"] == [1]

    # with neither, the third topic is still leaderless and listed
    assert cluster.partition_state(STAYS, 0)["leader"] == -1
    out = kafkapy("topics", "--bootstrap-server", cluster.bootstrap, "--describe", "--unavailable-partitions")
    assert out.returncode == 0, out.stderr
    assert f"Topic: {STAYS}\t" in out.stdout and BY_TOOL not in out.stdout and BY_CONFIG not in out.stdout

    # the new leader serves (what it had: broker 0's writes while it was away are lost, as Kafka's unclean
    # election loses them) and takes new writes
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    p.produce(BY_TOOL, value=b"after", partition=0)
    assert p.flush(30) == 0
    # No offset commits: __consumer_offsets (replication factor 3) cannot be created with broker 0 down, so a
    # committing consumer's close() would wait ~45 s for a coordinator that cannot exist.
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "unclean-readers",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(BY_TOOL, 0, 0)])
    got: list[bytes] = []
    for _ in range(30):
        got += [m.value() for m in c.consume(100, 1.0) if m.error() is None]
        if got:
            break
    c.close()
    assert got == [b"after"]
