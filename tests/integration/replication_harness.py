"""In-process brokers for replication tests, with the test acting as the cluster's controller.

`InProcessCluster` starts KafkaServer instances on port 0 with their own tmp log dirs (each with its
embedded store, which knows none of the test's topics). `TestController` plays Kafka's controller
over the wire: UpdateMetadata / LeaderAndIsr / StopReplica requests on each broker's listener (the
broker's real handlers), and it is every broker's AlterIsrManager: it accepts each ISR proposal (bumping
the partition epoch, as the ZooKeeper write's zkVersion would) from its own thread and records it.
"""

from __future__ import annotations

import struct
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kafkapy.client.connection import BrokerConnection
from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.kafka_server import KafkaServer

CONTROLLER_EPOCH = 7
BASE = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "log.retention.check.interval.ms": "300000",
    "replica.fetch.wait.max.ms": "100",
    "replica.fetch.backoff.ms": "100",
    "auto.create.topics.enable": "false",
}


@dataclass
class PartitionAssignment:
    leader: int
    leader_epoch: int
    isr: list[int]
    replicas: list[int]
    partition_epoch: int = 0


@dataclass
class TopicState:
    topic_id: uuid.UUID
    partitions: dict[int, PartitionAssignment] = field(default_factory=dict)


class TestController:
    """The controller of an InProcessCluster (and every broker's AlterIsrManager)."""

    __test__ = False

    def __init__(self, cluster: InProcessCluster, epoch: int = CONTROLLER_EPOCH) -> None:
        self.cluster = cluster
        self.epoch = epoch
        self.topics: dict[str, TopicState] = {}
        self.proposals: list[tuple[TopicPartition, LeaderAndIsr]] = []
        self.accept_isr_changes = True
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="test-controller")

    # -- AlterIsrManager -------------------------------------------------------------------------------

    def submit(self, tp: TopicPartition, proposed: LeaderAndIsr, controller_epoch: int) -> Future[Any]:
        with self._lock:
            self.proposals.append((tp, proposed))
        return self._executor.submit(self._decide, tp, proposed)

    def _decide(self, tp: TopicPartition, proposed: LeaderAndIsr) -> Any:
        from kafkapy.common.errors import InvalidUpdateVersionError

        with self._lock:
            a = self.topics[tp.topic].partitions[tp.partition]
            if not self.accept_isr_changes or proposed.partition_epoch != a.partition_epoch:
                return InvalidUpdateVersionError("stale partition epoch")
            a.isr = list(proposed.isr)
            a.partition_epoch += 1
            return proposed.with_partition_epoch(a.partition_epoch)

    def isr(self, topic: str, partition: int = 0) -> list[int]:
        with self._lock:
            return list(self.topics[topic].partitions[partition].isr)

    # -- requests over the wire --------------------------------------------------------------------------

    def send(self, broker_id: int, request: Any, version: int | None = None) -> Any:
        server = self.cluster.servers[broker_id]
        conn = BrokerConnection(-1, "127.0.0.1", server.bound_port(), client_id="test-controller")
        conn.connect()
        try:
            return conn.request(request, version)
        finally:
            conn.close()

    def update_metadata(self, broker_ids: list[int] | None = None, version: int = 7) -> None:
        brokers = [UpdateMetadataRequest.UpdateMetadataBroker(id=i, endpoints=[
            UpdateMetadataRequest.UpdateMetadataEndpoint(port=s.bound_port(), host="127.0.0.1", listener="PLAINTEXT",
                                                         security_protocol=0)])
            for i, s in sorted(self.cluster.servers.items())]
        topics = [UpdateMetadataRequest.UpdateMetadataTopicState(topic_name=name, topic_id=t.topic_id, partition_states=[
            UpdateMetadataRequest.UpdateMetadataPartitionState(
                topic_name=name, partition_index=p, controller_epoch=self.epoch, leader=a.leader,
                leader_epoch=a.leader_epoch, isr=a.isr, zk_version=a.partition_epoch, replicas=a.replicas)
            for p, a in sorted(t.partitions.items())]) for name, t in self.topics.items()]
        request = UpdateMetadataRequest(controller_id=0, controller_epoch=self.epoch, broker_epoch=-1,
                                        topic_states=topics, live_brokers=brokers)
        for i in broker_ids if broker_ids is not None else sorted(self.cluster.servers):
            assert self.send(i, request, version).error_code == 0

    def leader_and_isr(self, topic: str, partitions: list[int] | None = None, broker_ids: list[int] | None = None,
                       version: int = 5, epoch: int | None = None) -> dict[int, Any]:
        """Send the current state of the topic's partitions to their replicas; {broker: response}."""
        t = self.topics[topic]
        chosen = sorted(t.partitions) if partitions is None else partitions
        targets = sorted({r for p in chosen for r in t.partitions[p].replicas})
        out = {}
        for b in targets if broker_ids is None else broker_ids:
            states = [LeaderAndIsrRequest.LeaderAndIsrPartitionState(
                topic_name=topic, partition_index=p, controller_epoch=self.epoch, leader=a.leader,
                leader_epoch=a.leader_epoch, isr=a.isr, partition_epoch=a.partition_epoch, replicas=a.replicas,
                is_new=False) for p in chosen if b in (a := t.partitions[p]).replicas]
            leaders = sorted({t.partitions[p].leader for p in chosen})
            grouped = [LeaderAndIsrRequest.LeaderAndIsrTopicState(topic_name=topic, topic_id=t.topic_id,
                                                                  partition_states=states)]
            request = LeaderAndIsrRequest(
                controller_id=0, controller_epoch=self.epoch if epoch is None else epoch, broker_epoch=-1, type=0,
                topic_states=grouped if version >= 2 else [], ungrouped_partition_states=[] if version >= 2 else states,
                live_leaders=[LeaderAndIsrRequest.LeaderAndIsrLiveLeader(
                    broker_id=ld, host_name="127.0.0.1", port=self.cluster.servers[ld].bound_port())
                    for ld in leaders if ld in self.cluster.servers])
            out[b] = self.send(b, request, version)
        return out

    def create_topic(self, topic: str, assignment: dict[int, list[int]]) -> None:
        """Assignment {partition: replicas}: the first replica leads at epoch 0 with the full ISR."""
        self.topics[topic] = TopicState(uuid.uuid4(), {
            p: PartitionAssignment(replicas[0], 0, list(replicas), list(replicas)) for p, replicas in assignment.items()})
        self.update_metadata()
        for response in self.leader_and_isr(topic).values():
            assert response.error_code == 0

    def elect(self, topic: str, partition: int, leader: int, isr: list[int] | None = None) -> None:
        """A leader change (new leader epoch), sent to the replicas and then to every broker's metadata."""
        with self._lock:
            a = self.topics[topic].partitions[partition]
            a.leader = leader
            a.leader_epoch += 1
            a.partition_epoch += 1
            if isr is not None:
                a.isr = list(isr)
        self.leader_and_isr(topic, [partition], broker_ids=[b for b in a.replicas if b in self.cluster.servers])
        self.update_metadata()

    def stop_replica(self, broker_id: int, topic: str, partition: int, delete: bool, version: int = 3) -> Any:
        a = self.topics[topic].partitions[partition]
        request = StopReplicaRequest(controller_id=0, controller_epoch=self.epoch, broker_epoch=-1, topic_states=[
            StopReplicaRequest.StopReplicaTopicState(topic_name=topic, partition_states=[
                StopReplicaRequest.StopReplicaPartitionState(partition_index=partition, leader_epoch=a.leader_epoch,
                                                             delete_partition=delete)])])
        return self.send(broker_id, request, version)

    def close(self) -> None:
        self._executor.shutdown(wait=True)


class InProcessCluster:
    def __init__(self, base_dir: str, n: int, overrides: dict[str, str] | None = None) -> None:
        self.base_dir = base_dir
        self.overrides = dict(overrides or {})
        self.servers: dict[int, KafkaServer] = {}
        self.controller = TestController(self)
        for i in range(n):
            self.start(i)

    def log_dir(self, broker_id: int) -> str:
        return f"{self.base_dir}/broker-{broker_id}"

    def start(self, broker_id: int, extra: dict[str, str] | None = None) -> KafkaServer:
        props = dict(BASE)
        props.update(self.overrides)
        props.update(extra or {})
        props.update({"broker.id": str(broker_id), "log.dirs": self.log_dir(broker_id)})
        server = KafkaServer(KafkaConfig(props), alter_isr_manager=self.controller)
        server.startup()
        self.servers[broker_id] = server
        return server

    def stop(self, broker_id: int) -> None:
        server = self.servers.pop(broker_id)
        server.shutdown()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{s.bound_port()}" for s in self.servers.values())

    def close(self) -> None:
        for i in list(self.servers):
            self.stop(i)
        self.controller.close()


_BATCH_HEAD = struct.Struct(">qi")


def log_bytes_below(server: KafkaServer, tp: TopicPartition, end_offset: int) -> bytes:
    """The partition's segment file bytes, concatenated, holding every batch whose last offset is below
    end_offset (whole batches: the byte-identity check between replicas)."""
    partition = server.replica_manager.get_partition(tp)
    assert partition is not None and partition.log is not None
    out = bytearray()
    for segment in partition.log.segments:
        with open(segment.log.path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 12 <= len(data):
            base, size = _BATCH_HEAD.unpack_from(data, pos)
            if size <= 0 or pos + 12 + size > len(data):
                break
            last_delta = struct.unpack_from(">i", data, pos + 23)[0]
            if base + last_delta >= end_offset:
                return bytes(out)
            out += data[pos:pos + 12 + size]
            pos += 12 + size
    return bytes(out)
