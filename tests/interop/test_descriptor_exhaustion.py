"""A partition whose log cannot be created for want of descriptors is an error, not a silent leader.

A subprocess broker gets its RLIMIT_NOFILE lowered (prlimit) to a little above what it holds, then a
CreateTopics of 200 partitions runs it out of descriptors part way (EMFILE). Kafka's answer, as here: the
broker answers the failed partitions of the LeaderAndIsr with KAFKA_STORAGE_ERROR, the controller marks
those replicas offline (leader -1, listed in offline_replicas: Metadata answers LEADER_NOT_AVAILABLE), a
Produce to one of them gets KAFKA_STORAGE_ERROR, and every partition that was created takes writes.
The acceptor, out of descriptors too, backs off instead of spinning: the idle broker's CPU stays low.
"""

from __future__ import annotations

import os
import resource
import socket
import time

from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.messages import CreateTopicsRequest, MetadataRequest, ProduceRequest
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

TOPIC = "fd-starved"
PARTITIONS = 200
HEADROOM = 60


def batch(value: bytes) -> bytes:
    b = MemoryRecordsBuilder()
    b.append(1_700_000_000_000, None, value)
    return b.build()


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_partitions_beyond_the_descriptor_limit_are_offline(broker_process, wire_client) -> None:
    broker = broker_process()
    client = wire_client(broker.port)
    held = len(os.listdir(f"/proc/{broker.pid}/fd"))
    resource.prlimit(broker.pid, resource.RLIMIT_NOFILE, (held + HEADROOM, held + HEADROOM))

    created = client.request(CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=TOPIC, num_partitions=PARTITIONS, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=30_000), 5)
    assert created.topics[0].error_code == 0

    deadline = time.monotonic() + 30
    while True:  # the controller marks the failed replicas offline right after answering
        md = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)],
                                            allow_auto_topic_creation=False), 9)
        parts = {p.partition_index: p for p in md.topics[0].partitions}
        offline = sorted(i for i, p in parts.items() if p.error_code != 0)
        if offline and all(parts[i].leader_id == -1 for i in offline) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    online = sorted(i for i, p in parts.items() if p.error_code == 0)
    assert len(parts) == PARTITIONS
    assert offline and online, (offline, online)
    for i in offline:
        p = parts[i]
        assert (p.error_code, p.leader_id, p.offline_replicas) == (ErrorCode.LEADER_NOT_AVAILABLE, -1, [0])
    assert all(parts[i].leader_id == 0 and parts[i].offline_replicas == [] for i in online)

    produce = ProduceRequest(acks=1, timeout_ms=10_000, topic_data=[ProduceRequest.TopicProduceData(
        name=TOPIC, partition_data=[ProduceRequest.PartitionProduceData(index=online[0], records=batch(b"ok")),
                                    ProduceRequest.PartitionProduceData(index=offline[0], records=batch(b"no"))])])
    answered = {p.index: (p.error_code, p.base_offset) for p in client.request(produce, 9).responses[0].partition_responses}
    assert answered == {online[0]: (0, 0), offline[0]: (ErrorCode.KAFKA_STORAGE_ERROR, -1)}

    # Out of descriptors, a new connection waits in the backlog; the acceptor must not spin meanwhile.
    used = {int(fd) for fd in os.listdir(f"/proc/{broker.pid}/fd")}
    lowest_free = min(set(range(len(used) + 1)) - used)  # the number the next descriptor would get
    resource.prlimit(broker.pid, resource.RLIMIT_NOFILE, (lowest_free, lowest_free))
    extra = socket.create_connection(("127.0.0.1", broker.port))
    try:
        start = cpu_seconds(broker.pid)
        time.sleep(2.0)
        assert cpu_seconds(broker.pid) - start < 0.5
    finally:
        extra.close()
    assert "Error while accepting connection" in broker.output()
    assert broker.proc.poll() is None
