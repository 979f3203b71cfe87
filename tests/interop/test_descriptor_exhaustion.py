"""A partition whose log cannot be created for want of descriptors is an error, not a silent leader.

A subprocess broker gets its RLIMIT_NOFILE lowered (prlimit) to a little above what it holds, then a
CreateTopics of 200 partitions runs it out of descriptors part way (EMFILE; a created partition holds one, its
.log: the indexes open lazily). Kafka's answer, as here: the broker answers the failed partitions of the
LeaderAndIsr with KAFKA_STORAGE_ERROR, the controller marks those replicas offline (leader -1, listed in
offline_replicas: Metadata answers LEADER_NOT_AVAILABLE) and records that although the broker is at its limit
(the embedded store's write uses its reserved descriptor), a Produce to any of them gets KAFKA_STORAGE_ERROR,
and every partition that was created takes its first record. Metadata must split the partitions exactly as the
broker's log says it created them or not, and the wait ends as soon as that is settled either way.
A created partition's first append opens its lazy indexes: at the limit that Produce alone answers
KAFKA_STORAGE_ERROR with nothing written (before lazy indexes the broker halted: an I/O error in its only log
dir), and once a descriptor is free the record goes in at offset 0, once.
The acceptor, out of descriptors too, backs off instead of spinning: the idle broker's CPU stays low.
"""

from __future__ import annotations

import os
import re
import resource
import socket
import time
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.messages import CreateTopicsRequest, MetadataRequest, ProduceRequest
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

TOPIC = "fd-starved"
PARTITIONS = 200
HEADROOM = 60
CONTROLLER_FAILED = "Controller event LeaderAndIsrResponseReceived failed"


def batch(value: bytes) -> bytes:
    b = MemoryRecordsBuilder()
    b.append(1_700_000_000_000, None, value)
    return b.build()


def produce(client: Any, partitions: list[int]) -> dict[int, tuple[int, int]]:
    """acks=1, one record b"<partition>" to each; {partition: (error code, base offset)}."""
    request = ProduceRequest(acks=1, timeout_ms=10_000, topic_data=[ProduceRequest.TopicProduceData(
        name=TOPIC, partition_data=[ProduceRequest.PartitionProduceData(index=i, records=batch(b"%d" % i))
                                    for i in partitions])])
    return {p.index: (p.error_code, p.base_offset) for p in client.request(request, 9).responses[0].partition_responses}


def broker_fd(pid: int, port: int, client_port: int) -> int:
    """The broker's descriptor for its end of the loopback connection from `client_port`."""
    wanted = f"0100007F:{port:04X} 0100007F:{client_port:04X}"
    with open("/proc/net/tcp") as f:
        inode = next(line.split()[9] for line in f if " ".join(line.split()[1:3]) == wanted)
    return next(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]")


def outcome(output: str) -> tuple[set[int], set[int]]:
    """(partitions the broker could not create, partitions it leads) per its log."""
    failed = {int(m) for m in re.findall(rf"Could not make 0 leader of {TOPIC}-(\d+)\b", output)}
    led = {int(m) for m in re.findall(rf"\] {TOPIC}-(\d+) is now leader at epoch 0\b", output)}
    return failed, led


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

    # Which partitions the broker could not create (EMFILE) and which it leads, from its own log lines.
    failed, led = outcome(broker.output())
    deadline = time.monotonic() + 30
    while len(failed | led) < PARTITIONS and time.monotonic() < deadline:
        time.sleep(0.05)
        failed, led = outcome(broker.output())
    assert failed and led and failed | led == set(range(PARTITIONS)) and not failed & led, (failed, led)

    while True:  # the controller marks the failed replicas offline right after the answer
        md = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)],
                                            allow_auto_topic_creation=False), 9)
        parts = {p.partition_index: p for p in md.topics[0].partitions}
        offline = sorted(i for i, p in parts.items() if p.error_code != 0)
        if offline == sorted(failed) and all(parts[i].leader_id == -1 for i in offline) \
                or CONTROLLER_FAILED in broker.output() or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert CONTROLLER_FAILED not in broker.output()
    online = sorted(i for i, p in parts.items() if p.error_code == 0)
    assert len(parts) == PARTITIONS
    assert (offline, online) == (sorted(failed), sorted(led))
    for i in offline:
        p = parts[i]
        assert (p.error_code, p.leader_id, p.offline_replicas) == (ErrorCode.LEADER_NOT_AVAILABLE, -1, [0])
    assert all(parts[i].leader_id == 0 and parts[i].offline_replicas == [] for i in online)

    # Every partition in one Produce but `late`: each created one takes its first record at offset 0 (its
    # deferred partition.metadata / leader-epoch entry written and its lazy indexes opened first), each offline
    # one answers KAFKA_STORAGE_ERROR.
    late = max(led)
    answered = produce(client, [i for i in range(PARTITIONS) if i != late])
    assert answered == {i: (0, 0) if i in led else (ErrorCode.KAFKA_STORAGE_ERROR, -1)
                        for i in range(PARTITIONS) if i != late}
    assert broker.proc.poll() is None

    # Out of descriptors, a new connection waits in the backlog; the acceptor must not spin meanwhile.
    spare = wire_client(broker.port)  # its broker-side descriptor is the one freed later
    spare.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 9)  # accepted by now
    spare_fd = broker_fd(broker.pid, broker.port, spare.sock.getsockname()[1])
    used = {int(fd) for fd in os.listdir(f"/proc/{broker.pid}/fd")}
    lowest_free = min(set(range(len(used) + 1)) - used)  # the number the next descriptor would get
    assert spare_fd < lowest_free, (spare_fd, lowest_free)  # so closing it frees a number under the limit
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

    # `late`'s first append cannot open its lazy indexes now: that Produce alone fails, before a byte is
    # written (KAFKA_STORAGE_ERROR, retriable); the log dir, the broker and the other partitions stay up.
    assert produce(client, [late]) == {late: (ErrorCode.KAFKA_STORAGE_ERROR, -1)}
    assert produce(client, [min(led)]) == {min(led): (0, 1)}
    out = broker.output()
    assert f"Error while appending records to {TOPIC}-{late}: [Errno 24]" in out
    assert "Shutdown broker" not in out and broker.proc.poll() is None
    # With a descriptor free again (the spare connection closed) the same record goes in at offset 0, once.
    spare.close()
    answers = [produce(client, [late])[late]]
    deadline = time.monotonic() + 10
    while answers[-1] != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
        answers.append(produce(client, [late])[late])
    assert set(answers[:-1]) <= {(ErrorCode.KAFKA_STORAGE_ERROR, -1)} and answers[-1] == (0, 0), answers
    segment = os.path.join(broker.log_dir, f"{TOPIC}-{late}", "00000000000000000000.log")
    assert os.path.getsize(segment) == len(batch(b"%d" % late))
