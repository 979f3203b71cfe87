"""kafka-topics logic (TopicCommand): create, list, describe, alter (add partitions) and delete topics.

Works over kafkapy.client.admin.AdminClient with any Kafka broker. Returns dataclasses; the text
(Kafka 4.x's exact lines) is rendered by kafkapy.cli.topics. Kafka's rules kept here: `--topic` is a
regex (TopicFilter.IncludeList) except for --create; internal topics are listed unless
--exclude-internal; the describe order is the Java HashMap order Kafka's admin client returns;
`Configs:` lists non-default entries in the order of Java's Config map; the replication factor is the
first partition's (minus replicas being added by a reassignment); the --under-replicated-partitions,
--unavailable-partitions, --under-min-isr-partitions, --at-min-isr-partitions and
--topics-with-overrides filters are TopicCommand's.

Failures are `TopicCommandError` (Kafka prints "Error while executing topic command : <msg>") or
`TopicArgumentError` (Kafka's IllegalArgumentException: the message alone).
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.internal_topics import is_internal_topic
from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import IncludeList, java_hash_order, java_string_hash

if TYPE_CHECKING:
    from kafkapy.client.admin_api import AdminApi
    from kafkapy.client.admin_types import PartitionReassignment
    from kafkapy.common.topic_partition import TopicPartition

SHORT_MAX = 32767
COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
    "collide. To avoid issues it is best to use either, but not both."
)


class TopicCommandError(ToolFailure):
    """A failure Kafka reports as "Error while executing topic command : <message>"."""


class TopicArgumentError(ToolFailure):
    """Kafka's IllegalArgumentException: printed as the bare message."""


# --- options and results ----------------------------------------------------------------------------


@dataclass
class CreateTopicOptions:
    topic: str
    partitions: int | None = None
    replication_factor: int | None = None
    replica_assignment: dict[int, list[int]] | None = None
    configs: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass
class CreatedTopic:
    topic: str
    created: bool  # False when it existed and --if-not-exists was given
    warning: str | None = None


@dataclass
class DescribeOptions:
    topic: str | None = None
    exclude_internal: bool = False
    if_exists: bool = False
    under_replicated_partitions: bool = False
    unavailable_partitions: bool = False
    under_min_isr_partitions: bool = False
    at_min_isr_partitions: bool = False
    topics_with_overrides: bool = False
    topic_id: str | None = None  # --topic-id (wins over --topic unless it is the zero id)

    @property
    def describe_configs(self) -> bool:
        return not (self.unavailable_partitions or self.under_replicated_partitions
                    or self.under_min_isr_partitions or self.at_min_isr_partitions)

    @property
    def describe_partitions(self) -> bool:
        return not self.topics_with_overrides


@dataclass
class PartitionDescription:
    topic: str
    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]
    adding_replicas: list[int] | None = None  # None: no reassignment in progress
    removing_replicas: list[int] | None = None
    elr: list[int] | None = None  # None: the broker does not report ELR (printed "N/A")
    last_known_elr: list[int] | None = None


@dataclass
class TopicDescription:
    name: str
    topic_id: str | None  # Kafka's base64 Uuid text; None for the zero id
    partition_count: int
    replication_factor: int
    configs: list[tuple[str, str | None]]  # non-default entries, in Kafka's printing order
    partitions: list[PartitionDescription]  # the partition lines to print
    print_header: bool = True


# --- helpers ----------------------------------------------------------------------------------------


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """`1:2,2:3` -> {0: [1, 2], 1: [2, 3]} with TopicCommand's checks."""
    result: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(b.strip()) for b in part.split(":")]
        except ValueError as e:
            raise TopicCommandError(f'For input string: "{part}"') from e
        dupes = sorted({b for b in brokers if brokers.count(b) > 1})
        if dupes:
            raise TopicCommandError(
                "Partition replica lists may not contain duplicate entries: " + ",".join(map(str, dupes)))
        result[i] = brokers
        if len(brokers) != len(result[0]):
            raise TopicCommandError(f"Partition {i} has different replication factor: {brokers}")
    return result


def parse_topic_configs(items: list[str]) -> dict[str, str]:
    """`--config k=v` values: exactly one '=' (spaces around it allowed), as TopicCommand demands."""
    import re

    out: dict[str, str] = {}
    for item in items:
        parts = re.split(r"\s*=\s*", item)
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise TopicArgumentError(
                'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".')
        out[parts[0].strip()] = parts[1].strip()
    return out


def _topic_id_text(topic_id: uuid.UUID | None) -> str | None:
    from kafkapy.protocol.types import uuid_to_str

    if topic_id is None or topic_id.int == 0:
        return None
    return uuid_to_str(topic_id)


def _error_text(err: BaseException) -> str:
    from kafkapy.common.errors import KafkaError

    if isinstance(err, KafkaError) and err.message:
        return err.message
    from kafkapy.tools.tool_support import error_message

    return error_message(err)


def get_topics(admin: AdminApi, topic: str | None, exclude_internal: bool) -> list[str]:
    """Sorted topic names matching the --topic regex (all topics without one)."""
    names = sorted(admin.list_topics(include_internal=not exclude_internal))
    if topic is None:
        return [t for t in names if not (exclude_internal and is_internal_topic(t))]
    include = IncludeList(topic)
    return [t for t in names if include.is_topic_allowed(t, exclude_internal)]


def _ensure_topic_exists(found: list[str], requested: str | None, require: bool) -> None:
    if requested and require and not found:
        raise TopicArgumentError(f"Topic '{requested}' does not exist as expected")


# --- actions ----------------------------------------------------------------------------------------


def create_topic(admin: AdminApi, opts: CreateTopicOptions) -> CreatedTopic:
    from kafkapy.client.admin import NewTopic
    from kafkapy.common.errors import KafkaError, TopicAlreadyExistsError

    warning = COLLISION_WARNING if ("." in opts.topic or "_" in opts.topic) else None
    rf = opts.replication_factor
    if rf is not None and (rf > SHORT_MAX or rf < 1):
        raise TopicArgumentError(f"The replication factor must be between 1 and {SHORT_MAX} inclusive")
    if opts.partitions is not None and opts.partitions < 1:
        raise TopicArgumentError("The partitions must be greater than 0")
    if opts.replica_assignment:
        new = NewTopic(opts.topic, replica_assignment=opts.replica_assignment, configs=dict(opts.configs))
    else:
        new = NewTopic(opts.topic, -1 if opts.partitions is None else opts.partitions,
                       -1 if rf is None else rf, configs=dict(opts.configs))
    try:
        admin.create_topics([new])
    except TopicAlreadyExistsError as e:
        if opts.if_not_exists:
            return CreatedTopic(opts.topic, False, warning)
        raise TopicCommandError(_error_text(e) if e.message else f"Topic '{opts.topic}' already exists.") from e
    except KafkaError as e:
        raise TopicCommandError(_error_text(e)) from e
    return CreatedTopic(opts.topic, True, warning)


def list_topics(admin: AdminApi, topic: str | None = None, exclude_internal: bool = False) -> list[str]:
    try:
        return get_topics(admin, topic, exclude_internal)
    except ToolFailure:
        raise
    except Exception as e:  # noqa: BLE001 - Kafka reports every failure through one line
        raise TopicCommandError(_error_text(e)) from e


def alter_topic(
    admin: AdminApi,
    topic: str,
    partitions: int,
    replica_assignment: dict[int, list[int]] | None = None,
    if_exists: bool = False,
    exclude_internal: bool = False,
) -> list[str]:
    """Increase the partition count of every matching topic; returns the topics altered."""
    from kafkapy.client.admin import NewPartitions
    from kafkapy.common.errors import KafkaError

    topics = list_topics(admin, topic, exclude_internal)
    _ensure_topic_exists(topics, topic, not if_exists)
    if not topics:
        return []
    try:
        new: dict[str, NewPartitions] = {}
        if replica_assignment:
            current = admin.describe_topics(topics)
            for name in topics:
                start = len(current[name].partitions)
                extra = [replica_assignment[p] for p in sorted(replica_assignment) if p >= start]
                new[name] = NewPartitions(partitions, extra)
        else:
            new = {name: NewPartitions(partitions) for name in topics}
        admin.create_partitions(new)
    except KafkaError as e:
        raise TopicCommandError(_error_text(e)) from e
    return topics


def delete_topics(admin: AdminApi, topic: str, if_exists: bool = False, exclude_internal: bool = False) -> list[str]:
    from kafkapy.common.errors import KafkaError

    topics = list_topics(admin, topic, exclude_internal)
    _ensure_topic_exists(topics, topic, not if_exists)
    # Kafka 2.x's ZooKeeper path refused this; 3.x's AdminClient path does not. Deleting __consumer_offsets
    # loses every group's offsets, so both paths refuse it, and before anything is deleted.
    internal = [t for t in topics if is_internal_topic(t)]
    if internal:
        raise TopicCommandError(
            f"Topic {internal[0]} is a kafka internal topic and is not allowed to be marked for deletion.")
    if topics:
        try:
            admin.delete_topics(topics)
        except KafkaError as e:
            raise TopicCommandError(_error_text(e)) from e
    return topics


def _reassignments(admin: AdminApi, tps: list[Any]) -> Mapping[TopicPartition, PartitionReassignment]:
    from kafkapy.common.errors import ClusterAuthorizationFailedError, UnsupportedVersionError

    if not tps:
        return {}
    try:
        return admin.list_partition_reassignments(tps)
    except (UnsupportedVersionError, ClusterAuthorizationFailedError):
        return {}


def _replication_factor(replicas: list[int], reassignment: Any) -> int:
    if reassignment is not None:
        changing = set(reassignment.adding_replicas) | set(reassignment.removing_replicas)
        if any(r in changing for r in replicas):
            return len(reassignment.replicas) - len(reassignment.adding_replicas)
    return len(replicas)


def describe_topics(admin: AdminApi, opts: DescribeOptions) -> list[TopicDescription]:
    from kafkapy.client.admin import ConfigResource, ConfigResourceType, ConfigSource, TopicPartition
    from kafkapy.common.errors import KafkaError

    topics = _topics_to_describe(admin, opts)
    if not topics:
        return []
    try:
        described = admin.describe_topics(topics)
        # Kafka iterates the HashMap its admin client returns (new HashMap<>(n) keyed by name).
        order = java_hash_order(list(described), java_string_hash, sizing="sized")
        resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in order]
        configs = admin.describe_configs(resources)
        live = {n.node_id for n in admin.describe_cluster().nodes}
        tps = [TopicPartition(name, p.partition) for name in order for p in described[name].partitions]
        reassignments = _reassignments(admin, tps)
    except KafkaError as e:
        raise TopicCommandError(_error_text(e)) from e

    results: list[TopicDescription] = []
    for name in order:
        td = described[name]
        config = configs[ConfigResource(ConfigResourceType.TOPIC, name)]
        entries = list(config.entries.values())
        # Java's Config keeps entries in a HashMap: that is the order `Configs:` prints them in.
        entries = java_hash_order(entries, lambda e: java_string_hash(e.name))
        non_default = [(e.name, e.value) for e in entries if e.source != ConfigSource.DEFAULT_CONFIG]
        min_isr_entry = config.entries.get("min.insync.replicas")
        try:
            min_isr = int(min_isr_entry.value) if min_isr_entry is not None and min_isr_entry.value else 1
        except ValueError:
            min_isr = 1
        partitions = sorted(td.partitions, key=lambda p: p.partition)
        lines: list[PartitionDescription] = []
        if opts.describe_partitions:
            for p in partitions:
                ra = reassignments.get(TopicPartition(name, p.partition))
                leader = p.leader.node_id if p.leader is not None else None
                replicas = [n.node_id for n in p.replicas]
                isr = [n.node_id for n in p.isr]
                desc = PartitionDescription(
                    name, p.partition, leader, replicas, isr,
                    None if ra is None else list(ra.adding_replicas),
                    None if ra is None else list(ra.removing_replicas),
                    None, None,  # ELR / last known ELR: KRaft's (KIP-966); a ZooKeeper-era describe has none
                )
                if _should_print(opts, desc, ra, min_isr, live):
                    lines.append(desc)
        first_ra = reassignments.get(TopicPartition(name, partitions[0].partition)) if partitions else None
        rf = _replication_factor([n.node_id for n in partitions[0].replicas], first_ra) if partitions else 0
        header = opts.describe_configs and (not opts.topics_with_overrides or bool(non_default))
        if not header and not lines:
            continue
        results.append(TopicDescription(
            name, _topic_id_text(td.topic_id), len(td.partitions), rf, non_default, lines, header))
    return results


def _topics_to_describe(admin: AdminApi, opts: DescribeOptions) -> list[str]:
    from kafkapy.protocol.types import uuid_from_str

    if opts.topic_id:
        try:
            wanted = uuid_from_str(opts.topic_id)
        except ValueError as e:
            raise TopicCommandError(f"Invalid topic id: {opts.topic_id}") from e
        if wanted.int != 0:
            listings = admin.list_topics(include_internal=not opts.exclude_internal)
            found = [name for name, t in listings.items() if t.topic_id == wanted]
            if not found and not opts.if_exists:
                raise TopicArgumentError(f"TopicId '{opts.topic_id}' does not exist as expected")
            return found
    topics = list_topics(admin, opts.topic, opts.exclude_internal)
    _ensure_topic_exists(topics, opts.topic, not opts.if_exists)
    return topics


def _should_print(opts: DescribeOptions, p: PartitionDescription, ra: Any, min_isr: int, live: set[int]) -> bool:
    if opts.describe_configs:
        return True
    has_leader = p.leader is not None
    if opts.under_replicated_partitions and _replication_factor(p.replicas, ra) - len(p.isr) > 0:
        return True
    if opts.unavailable_partitions and (not has_leader or p.leader not in live):
        return True
    if opts.under_min_isr_partitions and (not has_leader or len(p.isr) < min_isr):
        return True
    return bool(opts.at_min_isr_partitions and min_isr == len(p.isr))
