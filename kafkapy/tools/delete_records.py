"""kafka-delete-records logic (DeleteRecordsCommand): delete records below per-partition offsets.

Input: `{"partitions":[{"topic":"foo","partition":1,"offset":1}],"version":1}` (version defaults to 1;
offset -1 means the high watermark). Duplicate partitions are refused ("Offset json file contains
duplicate topic partitions: foo-1"). Results come in the order Kafka prints them (the admin client's
HashMap keyed by TopicPartition): a new low watermark, or the Java error text
(`org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range
of offsets maintained by the server.`); the admin client answers partitions of missing topics with
UnknownTopicOrPartitionException at once, as Kafka's does.
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import java_hash_order, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient


class DeleteRecordsError(ToolFailure):
    """A bad offset JSON file (Kafka's AdminOperationException / AdminCommandFailedException)."""


@dataclass(frozen=True)
class DeleteResult:
    topic: str
    partition: int
    low_watermark: int | None
    error: str | None = None


def parse_offset_json(text: str) -> list[tuple[str, int, int]]:
    """[(topic, partition, offset)] in file order; raises on duplicates and malformed input."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise DeleteRecordsError("The input string is not a valid JSON") from e
    if not isinstance(doc, dict):
        raise DeleteRecordsError("The input string is not a valid JSON")
    version = doc.get("version", 1)
    if version != 1:
        raise DeleteRecordsError(f"Not supported version field value {version}")
    if "partitions" not in doc:
        raise DeleteRecordsError("Missing partitions field")
    entries: list[tuple[str, int, int]] = []
    for p in doc["partitions"] or []:
        try:
            topic, partition, offset = p["topic"], p["partition"], p["offset"]
        except (KeyError, TypeError) as e:
            raise DeleteRecordsError(f"No such field exists: {e}") from e
        if not isinstance(topic, str) or not isinstance(partition, int) or not isinstance(offset, int):
            raise DeleteRecordsError(f"Invalid partition entry: {json.dumps(p)}")
        entries.append((topic, partition, offset))
    seen: dict[tuple[str, int], int] = {}
    for t, p, _ in entries:
        seen[(t, p)] = seen.get((t, p), 0) + 1
    dupes = [f"{t}-{p}" for (t, p), n in seen.items() if n > 1]
    if dupes:
        raise DeleteRecordsError("Offset json file contains duplicate topic partitions: " + ",".join(dupes))
    return entries


def delete_records(admin: AdminClient, entries: list[tuple[str, int, int]]) -> list[DeleteResult]:
    from kafkapy.common.errors import KafkaError
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.tools.tool_support import java_error_text

    wanted = {TopicPartition(t, p): o for t, p, o in entries}
    try:
        answered = admin.delete_records(wanted, raise_errors=False)
    except KafkaError as e:
        answered = dict.fromkeys(wanted, e)
    results: dict[Any, DeleteResult] = {}
    for tp in wanted:
        value = answered.get(tp)
        if isinstance(value, int):
            results[tp] = DeleteResult(tp.topic, tp.partition, value)
        else:
            err = value if isinstance(value, BaseException) else KafkaError("no response for this partition")
            results[tp] = DeleteResult(tp.topic, tp.partition, None, java_error_text(err, default_message=True))
    order = java_hash_order(list(wanted), lambda tp: topic_partition_hash(tp.topic, tp.partition), sizing="sized")
    return [results[tp] for tp in order]
