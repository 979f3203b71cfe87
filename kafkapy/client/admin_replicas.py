"""The partition and replica operations behind AdminClient's methods of the same names (functions over
the AdminClient's AdminCalls): offsets, delete-records, log dirs, leader elections and reassignments.

Routing: ListOffsets and DeleteRecords go to each partition's leader (client/partition_leader.py:
a result or an error per partition, retriable errors retried within the call's timeout), DescribeLogDirs
to each broker asked about, ElectLeaders and (Alter|List)PartitionReassignments to the controller.
Thread-safety: as AdminClient (blocking calls, safe from several threads).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafkapy.client import admin_types as T
from kafkapy.client.admin_calls import AdminCalls, error_or_none
from kafkapy.client.admin_types import (
    ElectionType,
    ListOffsetsResultInfo,
    LogDirDescription,
    PartitionReassignment,
    ReplicaInfo,
)
from kafkapy.client.errors import error_from_code
from kafkapy.client.offset_fetcher import list_offsets_by_partition
from kafkapy.client.partition_leader import call_partition_leaders
from kafkapy.common.errors import ErrorCode, KafkaError, NotControllerError, UnsupportedVersionError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M

# ------------------------------------------------------------------------------------------
# offsets and records

def list_offsets(
    calls: AdminCalls,
    specs: Mapping[TopicPartition, int | str],
    isolation_level: str = "read_uncommitted",
    timeout_ms: float | None = None,
    raise_errors: bool = True,
) -> dict[TopicPartition, ListOffsetsResultInfo | None | KafkaError]:
    timestamps = {TopicPartition(*tp): T.OffsetSpec.parse(s) for tp, s in specs.items()}
    found = list_offsets_by_partition(calls.client, timestamps, calls.timeout(timeout_ms),
                                      1 if isolation_level == "read_committed" else 0, refresh_metadata=True)
    out: dict[TopicPartition, ListOffsetsResultInfo | None | KafkaError] = {}
    for tp, o in found.items():
        if isinstance(o, KafkaError):
            out[tp] = o
        else:
            out[tp] = None if o is None else ListOffsetsResultInfo(o.offset, o.timestamp, o.leader_epoch)
    if raise_errors:
        for v in out.values():
            if isinstance(v, KafkaError):
                raise v
    return out

def delete_records(
    calls: AdminCalls, offsets: Mapping[TopicPartition, int], timeout_ms: float | None = None, raise_errors: bool = True
) -> dict[TopicPartition, int | KafkaError]:
    timeout = calls.timeout(timeout_ms)

    def send(node: int, parts: dict[TopicPartition, int], remaining_ms: int) -> dict[TopicPartition, Any]:
        def build(version: int) -> Any:
            R = M.DeleteRecordsRequest
            topics: dict[str, list] = {}
            for tp, offset in parts.items():
                topics.setdefault(tp.topic, []).append(
                    R.DeleteRecordsPartition(partition_index=tp.partition, offset=offset))
            return R(topics=[R.DeleteRecordsTopic(name=t, partitions=p) for t, p in topics.items()],
                     timeout_ms=int(timeout))

        resp = calls.client.request(node, build, remaining_ms, api_key=21)
        return {
            TopicPartition(t.name, p.partition_index):
                error_or_none(p.error_code, f"partition {t.name}-{p.partition_index}") or p.low_watermark
            for t in resp.topics for p in t.partitions
        }

    pending = {TopicPartition(*tp): o for tp, o in offsets.items()}
    out = call_partition_leaders(calls.client, pending, send, timeout, "deleteRecords",
                                 fail_unknown_topics=True, refresh_first=True)
    if raise_errors:
        for v in out.values():
            if isinstance(v, KafkaError):
                raise v
    return out

def describe_log_dirs(
    calls: AdminCalls, brokers: Iterable[int] | None = None, topics: Mapping[str, list[int]] | None = None,
    timeout_ms: float | None = None,
) -> dict[int, dict[str, LogDirDescription]]:
    timeout = calls.timeout(timeout_ms)
    deadline = calls.time.milliseconds() + timeout
    if brokers is None:
        brokers = sorted(calls.metadata([], deadline).brokers)
    out: dict[int, dict[str, LogDirDescription]] = {}
    for broker in brokers:
        def build(version: int) -> Any:
            R = M.DescribeLogDirsRequest
            return R(topics=None if topics is None else [
                R.DescribableLogDirTopic(topic=t, partitions=list(p)) for t, p in topics.items()
            ])

        def handle(resp: M.DescribeLogDirsResponse) -> dict[str, LogDirDescription]:
            if resp.error_code:
                raise error_from_code(resp.error_code)
            dirs: dict[str, LogDirDescription] = {}
            for r in resp.results:
                d = LogDirDescription(r.log_dir, error_or_none(r.error_code),
                                      total_bytes=None if r.total_bytes < 0 else r.total_bytes,
                                      usable_bytes=None if r.usable_bytes < 0 else r.usable_bytes)
                for t in r.topics:
                    for p in t.partitions:
                        d.replicas[TopicPartition(t.name, p.partition_index)] = ReplicaInfo(
                            p.partition_size, p.offset_lag, p.is_future_key)
                dirs[r.log_dir] = d
            return dirs

        out[broker] = calls.call(broker, build, 35, calls.remaining(deadline), handle, "describeLogDirs")
    return out

def alter_replica_log_dirs(calls: AdminCalls, assignment: Mapping[Any, str], timeout_ms: float | None = None
                           ) -> dict[Any, KafkaError | None]:
    """AlterReplicaLogDirs to each replica's broker. Keys are (topic, partition, broker_id) replicas (Kafka's
    TopicPartitionReplica: attributes topic, partition, broker_id); the value is the destination log dir."""
    timeout = calls.timeout(timeout_ms)
    deadline = calls.time.milliseconds() + timeout
    by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
    for replica, path in assignment.items():
        by_broker.setdefault(replica.broker_id, {}).setdefault(path, {}).setdefault(replica.topic, []).append(
            replica.partition)
    out: dict[Any, KafkaError | None] = {}
    for broker, dirs in by_broker.items():
        def build(version: int, dirs: dict[str, dict[str, list[int]]] = dirs) -> Any:
            R = M.AlterReplicaLogDirsRequest
            return R(dirs=[R.AlterReplicaLogDir(path=path, topics=[R.AlterReplicaLogDirTopic(name=t, partitions=ps)
                                                                    for t, ps in topics.items()])
                           for path, topics in dirs.items()])

        def handle(resp: M.AlterReplicaLogDirsResponse) -> dict[TopicPartition, KafkaError | None]:
            return {TopicPartition(t.topic_name, p.partition_index): error_or_none(p.error_code)
                    for t in resp.results for p in t.partitions}

        try:
            codes = calls.call(broker, build, 34, calls.remaining(deadline), handle, "alterReplicaLogDirs")
        except KafkaError as e:
            codes = {}
            for replica in assignment:
                if replica.broker_id == broker:
                    out[replica] = e
        for replica in assignment:
            if replica.broker_id == broker and replica not in out:
                tp = TopicPartition(replica.topic, replica.partition)
                out[replica] = codes[tp] if tp in codes else error_from_code(
                    -1, f"The response from broker {broker} did not contain a result for replica {replica}")
    return out

# ------------------------------------------------------------------------------------------
# leaders and reassignments

def elect_leaders(
    calls: AdminCalls,
    election_type: ElectionType = ElectionType.PREFERRED,
    partitions: Iterable[TopicPartition] | None = None,
    timeout_ms: float | None = None,
) -> dict[TopicPartition, KafkaError | None]:
    timeout = calls.timeout(timeout_ms)
    tps = None if partitions is None else [TopicPartition(*tp) for tp in partitions]

    def build(version: int) -> Any:
        R = M.ElectLeadersRequest
        if tps is None:
            parts = None
        else:
            by_topic: dict[str, list[int]] = {}
            for tp in tps:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            parts = [R.TopicPartitions(topic=t, partitions=p) for t, p in by_topic.items()]
        if version == 0 and election_type != ElectionType.PREFERRED:
            raise UnsupportedVersionError("unclean election needs ElectLeaders v1")
        return R(election_type=int(election_type), topic_partitions=parts, timeout_ms=int(timeout))

    def handle(resp: M.ElectLeadersResponse) -> dict[TopicPartition, KafkaError | None]:
        code = resp.error_code
        if code == ErrorCode.NOT_CONTROLLER:
            raise NotControllerError()
        if code:
            raise error_from_code(code)
        return {
            TopicPartition(r.topic, p.partition_id): error_or_none(p.error_code, p.error_message)
            for r in resp.replica_election_results for p in r.partition_result
        }

    return calls.call(calls.controller, build, 43, timeout, handle, "electLeaders")

def alter_partition_reassignments(
    calls: AdminCalls, reassignments: Mapping[TopicPartition, list[int] | None], timeout_ms: float | None = None,
) -> dict[TopicPartition, KafkaError | None]:
    timeout = calls.timeout(timeout_ms)

    def build(version: int) -> Any:
        R = M.AlterPartitionReassignmentsRequest
        by_topic: dict[str, list] = {}
        for tp, replicas in reassignments.items():
            by_topic.setdefault(tp[0], []).append(R.ReassignablePartition(
                partition_index=tp[1], replicas=None if replicas is None else list(replicas)))
        return R(timeout_ms=int(timeout),
                 topics=[R.ReassignableTopic(name=t, partitions=p) for t, p in by_topic.items()])

    def handle(resp: M.AlterPartitionReassignmentsResponse) -> dict[TopicPartition, KafkaError | None]:
        if resp.error_code == ErrorCode.NOT_CONTROLLER:
            raise NotControllerError()
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        return {
            TopicPartition(t.name, p.partition_index): error_or_none(p.error_code, p.error_message)
            for t in resp.responses for p in t.partitions
        }

    return calls.call(calls.controller, build, 45, timeout, handle, "alterPartitionReassignments")

def list_partition_reassignments(
    calls: AdminCalls, partitions: Iterable[TopicPartition] | None = None, timeout_ms: float | None = None,
) -> dict[TopicPartition, PartitionReassignment]:
    timeout = calls.timeout(timeout_ms)
    tps = None if partitions is None else [TopicPartition(*tp) for tp in partitions]

    def build(version: int) -> Any:
        R = M.ListPartitionReassignmentsRequest
        if tps is None:
            return R(timeout_ms=int(timeout), topics=None)
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return R(timeout_ms=int(timeout), topics=[
            R.ListPartitionReassignmentsTopics(name=t, partition_indexes=p) for t, p in by_topic.items()])

    def handle(resp: M.ListPartitionReassignmentsResponse) -> dict[TopicPartition, PartitionReassignment]:
        if resp.error_code == ErrorCode.NOT_CONTROLLER:
            raise NotControllerError()
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        return {
            TopicPartition(t.name, p.partition_index): PartitionReassignment(
                list(p.replicas), list(p.adding_replicas), list(p.removing_replicas))
            for t in resp.topics for p in t.partitions
        }

    return calls.call(calls.controller, build, 46, timeout, handle, "listPartitionReassignments")
