"""kafka-preferred-replica-election logic (Kafka 2.x's deprecated PreferredReplicaLeaderElectionCommand,
AdminClient path): a PREFERRED election through tools/leader_election.py, with that tool's own wording.

Kafka 2.8's lines: `Successfully completed preferred leader election for partitions t-0, t-1`,
`Preferred replica already elected for partitions <...>`, `Error completing preferred leader election for
partition: t-0: <Java exception>`, then `N preferred replica(s) could not be elected`. Kafka's "already
elected" line lists the *succeeded* partitions (an upstream slip: usually an empty list); scripts match that
exact text, so it is reproduced. The JSON file is the same `{"partitions": [...]}` format, with errors
worded "Preferred replica election data ...". Without a file every partition is tried.
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import leader_election as le

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

DEPRECATION_LINE = "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405"
DATA_NAME = "Preferred replica election data"
# Kafka 2.8 sets these on the admin client unconditionally (timeout = 30 s).
REQUEST_TIMEOUT_MS = 30000
DEFAULT_API_TIMEOUT_MS = 60000


def parse_election_json(text: str) -> list[TopicPartition]:
    return le.parse_election_json(text, DATA_NAME)


def elect_preferred_leaders(admin: AdminClient, partitions: list[TopicPartition] | None) -> le.ElectionResult:
    return le.elect_leaders(admin, "PREFERRED", partitions)


def succeeded_line(result: le.ElectionResult) -> str:
    return "Successfully completed preferred leader election for partitions " + ", ".join(map(str, result.succeeded))


def noop_line(result: le.ElectionResult) -> str:
    return "Preferred replica already elected for partitions " + ", ".join(map(str, result.succeeded))


def failed_line(result: le.ElectionResult, tp: TopicPartition) -> str:
    from kafkapy.tools.tool_support import java_error_text

    return f"Error completing preferred leader election for partition: {tp}: {java_error_text(result.failed[tp])}"


def failure_message(result: le.ElectionResult) -> str:
    return f"{len(result.failed)} preferred replica(s) could not be elected"
