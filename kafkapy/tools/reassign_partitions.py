"""kafka-reassign-partitions logic (Kafka 4.x's ReassignPartitionsCommand) over the AdminClient.

File formats and input checks live in tools/reassign_json.py (re-exported names: ReassignError,
TopicPartitionReplica, format_reassignment_json, ANY_LOG_DIR).
Actions return dataclasses (rendered to Kafka's text by kafkapy/cli/reassign_partitions.py):
`generate_assignment` (proposals computed client-side with Kafka's AdminUtils placement, random start
as Kafka's; `rng` injectable), `execute_assignment`, `verify_assignment`, `cancel_assignment`,
`list_reassignments`. Kafka's own throttle bookkeeping (leader/follower.replication.throttled.replicas
per topic, *.replication.throttled.rate per broker, cleared by --verify/--cancel) is reproduced.
Failures raise `ReassignError` with Kafka's message; `terse` ones (Kafka's TerseException) are printed
without "Error: "; `partial` carries what was done before the failure (the CLI prints it first, as Kafka
had). Errors from the cluster propagate as KafkaErrors.
Iteration orders that Kafka takes from Java HashSets/HashMaps are reproduced with tool_support's
java_hash_order. Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkapy.client.admin_api import AdminApi, ReplicaLogDirsApi
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.reassign_json import (
    ANY_LOG_DIR,  # noqa: F401 - re-exported
    Assignment,
    ReassignError,
    TopicPartitionReplica,
    format_reassignment_json,  # noqa: F401 - re-exported
    parse_execute_assignment_args,
    parse_generate_assignment_args,
    parse_partition_reassignment_data,
    reassignment_document,
    replica_sort_key,
    tp_sort_key,
)
from kafkapy.tools.tool_support import java_hash_order, java_string_hash, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin_types import PartitionReassignment, TopicDescription, TopicPartitionInfo
    from kafkapy.common.replica_assignment import BrokerMetadata

BROKER_LEVEL_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                          "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_LEVEL_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment.")


# --- cluster lookups -------------------------------------------------------------------------------


def _unknown_topic(message: str) -> Exception:
    from kafkapy.common.errors import UnknownTopicOrPartitionError

    return UnknownTopicOrPartitionError(message)


def _describe_topics(admin: AdminApi, topics: Iterable[str]) -> dict[str, TopicDescription]:
    """Descriptions of `topics`; the first missing one (in Java HashMap order) fails as Kafka's does."""
    from kafkapy.common.errors import UnknownTopicOrPartitionError

    names = java_hash_order(list(dict.fromkeys(topics)), java_string_hash)
    if not names:
        return {}
    described = admin.describe_topics(names, raise_errors=False)
    out = {}
    for name in names:
        d = described[name]
        if isinstance(d.error, UnknownTopicOrPartitionError):
            raise _unknown_topic(f"Topic {name} not found.")
        if d.error is not None:
            raise d.error
        out[name] = d
    return out


def _replicas_of(info: TopicPartitionInfo) -> list[int]:
    return list(info.replica_ids) if info.replica_ids else [n.node_id for n in info.replicas]


def get_replica_assignment_for_topics(admin: AdminApi, topics: list[str]) -> Assignment:
    """Current assignment of every partition of `topics`, in the order of Kafka's HashMap."""
    res: Assignment = {}
    for name, d in _describe_topics(admin, topics).items():
        for info in d.partitions:
            res[TopicPartition(name, info.partition)] = _replicas_of(info)
    order = java_hash_order(list(res), lambda tp: topic_partition_hash(tp.topic, tp.partition))
    return {tp: res[tp] for tp in order}


def get_replica_assignment_for_partitions(admin: AdminApi, partitions: Iterable[TopicPartition]) -> Assignment:
    wanted = set(partitions)
    res: Assignment = {}
    for name, d in _describe_topics(admin, (tp.topic for tp in wanted)).items():
        for info in d.partitions:
            tp = TopicPartition(name, info.partition)
            if tp in wanted:
                res[tp] = _replicas_of(info)
    missing = wanted - set(res)
    if missing:
        ordered = java_hash_order(list(missing), lambda tp: topic_partition_hash(tp.topic, tp.partition))
        raise _unknown_topic("Unable to find partition: " + ", ".join(map(str, ordered)))
    return res


def get_broker_metadata(admin: AdminApi, brokers: list[int], enable_rack_awareness: bool) -> list[BrokerMetadata]:
    """The listed brokers the cluster knows (unknown ids are dropped, as Kafka does), sorted by id."""
    from kafkapy.common.replica_assignment import BrokerMetadata

    wanted = set(brokers)
    nodes = sorted((n for n in admin.describe_cluster().nodes if n.node_id in wanted), key=lambda n: n.node_id)
    results = [BrokerMetadata(n.node_id, n.rack if enable_rack_awareness else None) for n in nodes]
    rackless = sum(1 for b in results if b.rack is None)
    if enable_rack_awareness and rackless not in (0, len(results)):
        raise ReassignError("Not all brokers have rack information. Add --disable-rack-aware in command line to "
                            "make replica assignment without rack information.")
    return results


def calculate_assignment(current: Assignment, brokers: list[BrokerMetadata], rng: random.Random | None = None) -> Assignment:
    """Kafka's calculateAssignment: per topic, AdminUtils placement of as many partitions as the topic has,
    with the replication factor of its first partition (in HashMap order)."""
    from kafkapy.common.errors import KafkaError
    from kafkapy.common.replica_assignment import assign_replicas_to_brokers

    by_topic: dict[str, list[tuple[TopicPartition, list[int]]]] = {}
    for tp, replicas in current.items():
        by_topic.setdefault(tp.topic, []).append((tp, replicas))
    proposed: Assignment = {}
    for topic in java_hash_order(list(by_topic), java_string_hash):
        entries = by_topic[topic]
        try:
            placed = assign_replicas_to_brokers(brokers, len(entries), len(entries[0][1]), rng=rng)
        except KafkaError as e:
            raise ReassignError(e.message or str(e)) from e
        for partition, replicas in placed.items():
            proposed[TopicPartition(topic, partition)] = replicas
    return proposed


# --- results ---------------------------------------------------------------------------------------


@dataclass
class GenerateResult:
    current: Assignment
    proposed: Assignment

    def __json__(self) -> dict[str, Any]:
        return {"currentAssignment": reassignment_document(self.current),
                "proposedAssignment": reassignment_document(self.proposed)}


@dataclass
class ExecuteResult:
    current: Assignment = field(default_factory=dict)
    throttle_warning: bool = False
    inter_broker_throttle: int | None = None  # set (B/s) when --throttle was applied
    log_dir_throttle: int | None = None
    started: list[TopicPartition] = field(default_factory=list)
    moves_started: list[tuple[TopicPartitionReplica, str]] = field(default_factory=list)

    def __json__(self) -> dict[str, Any]:
        return {"currentAssignment": reassignment_document(self.current),
                "interBrokerThrottle": self.inter_broker_throttle, "logDirThrottle": self.log_dir_throttle,
                "started": [{"topic": tp.topic, "partition": tp.partition} for tp in self.started],
                "logDirMovesStarted": [{"topic": r.topic, "partition": r.partition, "broker": r.broker_id,
                                        "logDir": d} for r, d in self.moves_started]}


@dataclass
class PartitionReassignmentState:
    current_replicas: list[int]
    target_replicas: list[int]
    done: bool


@dataclass
class LogDirMoveState:
    """kind: completed | active | cancelled | missing_log_dir | missing_replica (Kafka's *MoveState)."""

    kind: str
    target_log_dir: str
    current_log_dir: str | None = None
    future_log_dir: str | None = None

    @property
    def done(self) -> bool:
        return self.kind != "active"


@dataclass
class VerifyResult:
    partitions: dict[TopicPartition, PartitionReassignmentState]
    partitions_ongoing: bool
    moves: dict[TopicPartitionReplica, LogDirMoveState]
    moves_ongoing: bool
    cleared_brokers: list[int] | None = None  # throttles cleared (None: left alone)
    cleared_topics: list[str] | None = None

    def __json__(self) -> dict[str, Any]:
        return {
            "partitions": [{"topic": tp.topic, "partition": tp.partition,
                            "state": _partition_state_name(s),
                            "currentReplicas": s.current_replicas, "targetReplicas": s.target_replicas}
                           for tp, s in sorted(self.partitions.items(), key=lambda e: tp_sort_key(e[0]))],
            "partitionsOngoing": self.partitions_ongoing,
            "logDirMoves": [{"topic": r.topic, "partition": r.partition, "broker": r.broker_id, "state": m.kind,
                             "targetLogDir": m.target_log_dir, "currentLogDir": m.current_log_dir,
                             "futureLogDir": m.future_log_dir}
                            for r, m in sorted(self.moves.items(), key=lambda e: replica_sort_key(e[0]))],
            "logDirMovesOngoing": self.moves_ongoing,
            "throttlesClearedOnBrokers": self.cleared_brokers, "throttlesClearedOnTopics": self.cleared_topics,
        }


def _partition_state_name(s: PartitionReassignmentState) -> str:
    if not s.done:
        return "in_progress"
    return "completed" if s.current_replicas == s.target_replicas else "not_active"


@dataclass
class CancelResult:
    cancelled: list[TopicPartition] = field(default_factory=list)
    moves_cancelled: list[tuple[TopicPartitionReplica, str]] = field(default_factory=list)
    partitions_done: bool = False  # stages reached (a failure's partial result says how far it got)
    moves_done: bool = False
    cleared_brokers: list[int] | None = None
    cleared_topics: list[str] | None = None

    def __json__(self) -> dict[str, Any]:
        return {"cancelled": [{"topic": tp.topic, "partition": tp.partition} for tp in self.cancelled],
                "logDirMovesCancelled": [{"topic": r.topic, "partition": r.partition, "broker": r.broker_id,
                                          "logDir": d} for r, d in self.moves_cancelled],
                "throttlesClearedOnBrokers": self.cleared_brokers, "throttlesClearedOnTopics": self.cleared_topics}


# --- actions ---------------------------------------------------------------------------------------


def generate_assignment(admin: AdminApi, topics_json: str, broker_list: str, enable_rack_awareness: bool = True,
                        rng: random.Random | None = None) -> GenerateResult:
    brokers, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = get_replica_assignment_for_topics(admin, topics)
    metadata = get_broker_metadata(admin, brokers, enable_rack_awareness)
    return GenerateResult(current, calculate_assignment(current, metadata, rng))


def _alter_configs(admin: AdminApi, ops: Mapping[tuple[str, str], list[tuple[str, str | None]]]) -> None:
    """incrementalAlterConfigs: {(\"broker\"|\"topic\", name): [(config, value or None = DELETE)]}."""
    from kafkapy.client.admin_types import (
        AlterConfigOp,
        AlterConfigOpType,
        ConfigResource,
        ConfigResourceType,
    )

    if not ops:
        return
    kinds = {"broker": ConfigResourceType.BROKER, "topic": ConfigResourceType.TOPIC}
    admin.incremental_alter_configs({
        ConfigResource(kinds[kind], name): [
            AlterConfigOp(key, value, AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET)
            for key, value in entries]
        for (kind, name), entries in ops.items()})


class PartitionMove(NamedTuple):
    sources: set[int]
    destinations: set[int]


def calculate_proposed_move_map(current_reassignments: Mapping[TopicPartition, PartitionReassignment], proposed: Assignment,
                                current: Assignment) -> dict[str, dict[int, PartitionMove]]:
    moves: dict[str, dict[int, PartitionMove]] = {}
    for tp, r in current_reassignments.items():
        adding = set(r.adding_replicas)
        moves.setdefault(tp.topic, {})[tp.partition] = PartitionMove(set(r.replicas) - adding, adding)
    for tp, replicas in proposed.items():
        part_moves = moves.setdefault(tp.topic, {})
        if tp.partition in part_moves:
            sources = set(part_moves[tp.partition].sources)
        elif tp in current:
            sources = set(current[tp])
        else:
            raise ReassignError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        part_moves[tp.partition] = PartitionMove(sources, set(replicas) - sources)
    return moves


def calculate_leader_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    return {topic: ",".join(sorted({f"{p}:{s}" for p, m in parts.items() for s in m.sources}))
            for topic, parts in moves.items()}


def calculate_follower_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    return {topic: ",".join(sorted({f"{p}:{d}" for p, m in parts.items() for d in m.destinations
                                    if d not in m.sources}))
            for topic, parts in moves.items()}


def calculate_reassigning_brokers(moves: Mapping[str, Mapping[int, PartitionMove]]) -> list[int]:
    return sorted({b for parts in moves.values() for m in parts.values() for b in m.sources | m.destinations})


def _verify_broker_ids(admin: AdminApi, brokers: Iterable[int]) -> None:
    known = {n.node_id for n in admin.describe_cluster().nodes}
    for broker in java_hash_order(list(dict.fromkeys(brokers)), lambda v: v):
        if broker not in known:
            raise ReassignError(f"Unknown broker id {broker}")


def _raise_reassignment_errors(results: Mapping[TopicPartition, Exception | None], cancelling: bool = False) -> None:
    """Kafka's TerseExceptions for per-partition AlterPartitionReassignments failures."""
    from kafkapy.tools.tool_support import error_message

    errors = {tp: e for tp, e in results.items() if e is not None}
    if not errors:
        return
    lines = "\n".join(f"{tp}: {error_message(errors[tp])}" for tp in sorted(errors, key=tp_sort_key))
    if cancelling:
        head = f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:"
    else:
        head = "Error reassigning partition(s):"
    raise ReassignError(f"{head}\n{lines}", terse=True)


def execute_assignment(admin: AdminApi, reassignment_json: str, additional: bool = False, inter_broker_throttle: int = -1,
                       log_dir_throttle: int = -1, timeout_ms: int = 10000, time: Any = None) -> ExecuteResult:
    proposed, proposed_replicas = parse_execute_assignment_args(reassignment_json)
    log_dirs = _log_dirs_api(admin, bool(proposed_replicas), "Moving replicas between log directories (\"log_dirs\" "
                             "other than \"any\")")
    current_reassignments = admin.list_partition_reassignments()
    if not additional and current_reassignments:
        raise ReassignError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE, terse=True)
    _verify_broker_ids(admin, (b for replicas in proposed.values() for b in replicas))
    current = get_replica_assignment_for_partitions(admin, proposed)
    result = ExecuteResult(current={tp: current[tp] for tp in proposed if tp in current})
    try:
        if inter_broker_throttle >= 0 or log_dir_throttle >= 0:
            result.throttle_warning = True
            if inter_broker_throttle >= 0:
                moves = calculate_proposed_move_map(current_reassignments, proposed, current)
                leader, follower = calculate_leader_throttles(moves), calculate_follower_throttles(moves)
                _alter_configs(admin, {("topic", t): [(TOPIC_LEVEL_THROTTLES[0], leader[t]),
                                                      (TOPIC_LEVEL_THROTTLES[1], follower[t])]
                                       for t in java_hash_order(list(leader), java_string_hash)})
                _alter_configs(admin, {("broker", str(b)): [(BROKER_LEVEL_THROTTLES[0], str(inter_broker_throttle)),
                                                            (BROKER_LEVEL_THROTTLES[1], str(inter_broker_throttle))]
                                       for b in calculate_reassigning_brokers(moves)})
                result.inter_broker_throttle = inter_broker_throttle
            if log_dir_throttle >= 0:
                movers = sorted({r.broker_id for r in proposed_replicas})
                _alter_configs(admin, {("broker", str(b)): [(BROKER_LEVEL_THROTTLES[2], str(log_dir_throttle))]
                                       for b in movers})
                result.log_dir_throttle = log_dir_throttle
        _raise_reassignment_errors(admin.alter_partition_reassignments(dict(proposed)))
        result.started = sorted(proposed, key=tp_sort_key)
        if log_dirs is not None and proposed_replicas:
            result.moves_started = _execute_moves(log_dirs, proposed_replicas, timeout_ms, time)
    except Exception as e:
        e.partial = result  # type: ignore[attr-defined]  # the CLI prints what was done first
        raise
    return result


def _log_dirs_api(admin: AdminApi, needed: bool, what: str) -> ReplicaLogDirsApi | None:
    """`admin` as the log-dir API when it has it (the --bootstrap-server path); `what` fails when `needed` and
    it has not (Kafka 2.x's --zookeeper path)."""
    if isinstance(admin, ReplicaLogDirsApi):
        return admin
    if needed:
        raise ReassignError(f"{what} needs the AlterReplicaLogDirs API: use --bootstrap-server")
    return None


def _execute_moves(admin: ReplicaLogDirsApi, replicas: Mapping[TopicPartitionReplica, str], timeout_ms: int,
                   time: Any) -> list[tuple[TopicPartitionReplica, str]]:
    """Kafka's executeMoves: retry AlterReplicaLogDirs every 100 ms until each replica's move started."""
    from kafkapy.common.time import SYSTEM

    time = time or SYSTEM
    start = time.milliseconds()
    pending = dict(replicas)
    started: list[tuple[TopicPartitionReplica, str]] = []
    for _ in range(1_000_000):  # bounded by the timeout below; the count is only a backstop
        results = admin.alter_replica_log_dirs(dict(pending))
        done = sorted((r for r, e in results.items() if e is None and r in pending), key=replica_sort_key)
        started += [(r, pending.pop(r)) for r in done]
        if not pending:
            return started
        if time.milliseconds() >= start + timeout_ms:
            break
        time.sleep(100)
    names = ",".join(str(r) for r in sorted(pending, key=replica_sort_key))
    raise ReassignError(f"Timed out before log directory move{'' if len(pending) == 1 else 's'} could be started "
                        f"for: {names}", terse=True)


def find_partition_reassignment_states(
        admin: AdminApi, targets: list[tuple[TopicPartition, list[int]]]
) -> tuple[dict[TopicPartition, PartitionReassignmentState], bool]:
    from kafkapy.common.errors import UnknownTopicOrPartitionError

    ongoing = admin.list_partition_reassignments()
    states: dict[TopicPartition, PartitionReassignmentState] = {}
    missing_topics = {tp.topic for tp, _ in targets if tp not in ongoing}
    described = admin.describe_topics(sorted(missing_topics), raise_errors=False) if missing_topics else {}
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = PartitionReassignmentState(list(ongoing[tp].replicas), target, False)
            continue
        d = described[tp.topic]
        if isinstance(d.error, UnknownTopicOrPartitionError):
            states[tp] = PartitionReassignmentState([], target, True)
            continue
        if d.error is not None:
            raise d.error
        # Kafka reads partitions().get(partition); a partition past the end counts as unknown.
        info = next((p for p in d.partitions if p.partition == tp.partition), None)
        states[tp] = PartitionReassignmentState(_replicas_of(info) if info else [], target, True)
    return states, bool(ongoing)


def describe_replica_log_dirs(admin: ReplicaLogDirsApi, replicas: Iterable[TopicPartitionReplica]
                              ) -> dict[TopicPartitionReplica, tuple[str | None, str | None]]:
    """(current log dir, future log dir) of each replica, from DescribeLogDirs on its broker."""
    from kafkapy.common.errors import KafkaStorageError

    by_broker: dict[int, dict[str, list[int]]] = {}
    wanted = list(replicas)
    for r in wanted:
        by_broker.setdefault(r.broker_id, {}).setdefault(r.topic, []).append(r.partition)
    out: dict[TopicPartitionReplica, tuple[str | None, str | None]] = {r: (None, None) for r in wanted}
    for broker, topics in by_broker.items():
        dirs = admin.describe_log_dirs([broker], topics)[broker]
        for path, d in dirs.items():
            if isinstance(d.error, KafkaStorageError):
                continue  # an offline log dir lists no replicas
            for tp, info in d.replicas.items():
                r = TopicPartitionReplica(tp.topic, tp.partition, broker)
                if r in out:
                    current, future = out[r]
                    out[r] = (current, path) if info.is_future else (path, future)
    return out


def find_log_dir_move_states(admin: AdminApi, targets: Mapping[TopicPartitionReplica, str]
                             ) -> dict[TopicPartitionReplica, LogDirMoveState]:
    if not targets:
        return {}
    log_dirs = _log_dirs_api(admin, True, "Verifying log directory moves")
    assert log_dirs is not None  # _log_dirs_api raised otherwise
    infos = describe_replica_log_dirs(log_dirs, targets)
    states = {}
    for r, target in targets.items():
        if r not in infos:
            states[r] = LogDirMoveState("missing_replica", target)
            continue
        current, future = infos[r]
        if current is None:
            states[r] = LogDirMoveState("missing_log_dir", target)
        elif future is None:
            states[r] = LogDirMoveState("completed" if current == target else "cancelled", target, current)
        else:
            states[r] = LogDirMoveState("active", target, current, future)
    return states


def clear_all_throttles(admin: AdminApi, targets: list[tuple[TopicPartition, list[int]]]) -> tuple[list[int], list[str]]:
    """Kafka's clearAllThrottles: every broker of the cluster and of the targets, every target topic; returns
    both in the order Kafka prints them (its HashSets')."""
    brokers = [n.node_id for n in admin.describe_cluster().nodes]
    brokers += [b for _, replicas in targets for b in replicas]
    broker_order = java_hash_order(list(dict.fromkeys(brokers)), lambda v: v)
    topic_order = java_hash_order(list(dict.fromkeys(tp.topic for tp, _ in targets)), java_string_hash)
    _alter_configs(admin, {("broker", str(b)): [(k, None) for k in BROKER_LEVEL_THROTTLES] for b in broker_order})
    _alter_configs(admin, {("topic", t): [(k, None) for k in TOPIC_LEVEL_THROTTLES] for t in topic_order})
    return broker_order, topic_order


def verify_assignment(admin: AdminApi, reassignment_json: str, preserve_throttles: bool = False) -> VerifyResult:
    targets, target_log_dirs = parse_partition_reassignment_data(reassignment_json)
    states, parts_ongoing = find_partition_reassignment_states(admin, targets)
    moves = find_log_dir_move_states(admin, target_log_dirs)
    moves_ongoing = not all(m.done for m in moves.values())
    result = VerifyResult(states, parts_ongoing, moves, moves_ongoing)
    if not parts_ongoing and not moves_ongoing and not preserve_throttles:
        try:
            result.cleared_brokers, result.cleared_topics = clear_all_throttles(admin, targets)
        except Exception as e:
            e.partial = result  # type: ignore[attr-defined]
            raise
    return result


def cancel_assignment(admin: AdminApi, reassignment_json: str, preserve_throttles: bool = False,
                      timeout_ms: int = 10000, time: Any = None) -> CancelResult:
    targets, target_replicas = parse_partition_reassignment_data(reassignment_json)
    result = CancelResult()
    try:
        listed = admin.list_partition_reassignments(list(dict.fromkeys(tp for tp, _ in targets)))
        reassigning = [tp for tp, r in listed.items() if not r.adding_replicas or r.removing_replicas]
        if reassigning:
            _raise_reassignment_errors(admin.alter_partition_reassignments(dict.fromkeys(reassigning)),
                                       cancelling=True)
            result.cancelled = sorted(reassigning, key=tp_sort_key)
        result.partitions_done = True
        active = {r: m.current_log_dir for r, m in find_log_dir_move_states(admin, target_replicas).items()
                  if m.kind == "active"}
        if active:
            log_dirs = _log_dirs_api(admin, True, "Cancelling log directory moves")
            assert log_dirs is not None  # _log_dirs_api raised otherwise
            result.moves_cancelled = _execute_moves(log_dirs, {r: d for r, d in active.items() if d is not None},
                                                    timeout_ms, time)
        result.moves_done = True
        if not preserve_throttles:
            result.cleared_brokers, result.cleared_topics = clear_all_throttles(admin, targets)
    except Exception as e:
        e.partial = result  # type: ignore[attr-defined]
        raise
    return result


def list_reassignments(admin: AdminApi) -> dict[TopicPartition, PartitionReassignment]:
    """Ongoing reassignments (PartitionReassignment per partition), sorted by topic then partition."""
    ongoing = admin.list_partition_reassignments()
    return {tp: ongoing[tp] for tp in sorted(ongoing, key=tp_sort_key)}
