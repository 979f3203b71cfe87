"""`kafkapy get-offsets` (kafka-get-offsets.sh, GetOffsetShell; also `kafka-run-class.sh
kafka.tools.GetOffsetShell`): one `topic:partition:offset` line per partition, sorted as Kafka does.

Errors (stderr, exit 1): `Error occurred: <msg>`; partitions whose lookup fails are skipped with
Kafka's `Skip getting offsets for topic-partition ... due to error: ...` line on stderr.
On a terminal the offsets are a Rich table; piped, Kafka's lines.
--output json: a list of {"topic", "partition", "offset"}.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("get-offsets", "An interactive shell for getting topic-partition offsets.")
    p.add_bootstrap_server(help="REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.")
    p.add_argument("--topic-partitions", metavar="<topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3>",
                   help="Comma separated list of topic-partition patterns to get the offsets for: a topic regex, "
                   "then ':' and a partition, a range N-M (upper exclusive), N- or -M, or nothing for all.")
    p.add_argument("--topic", metavar="<topic>",
                   help="The topic to get the offsets for. It also accepts a regular expression. If not present, all "
                   "authorized topics are queried. Cannot be used if --topic-partitions is present.")
    p.add_argument("--partitions", metavar="<partition ids>",
                   help="Comma separated list of partition ids to get the offsets for. If not present, all partitions "
                   "of the authorized topics are queried. Cannot be used if --topic-partitions is present.")
    p.add_argument("--time", default="latest",
                   metavar="<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp",
                   help="timestamp of the offsets before that (also -4 or earliest-local, -5 or latest-tiered, -6 or "
                   "earliest-pending-upload). Default: latest")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--exclude-internal-topics", action="store_true",
                   help="By default, internal topics are included. If specified, internal topics are excluded.")
    # Pre-3.0 GetOffsetShell flags, accepted and ignored so old scripts keep working.
    p.add_argument("--max-wait-ms", help=argparse.SUPPRESS)
    p.add_argument("--offsets", help=argparse.SUPPRESS)
    from kafkapy.cli.parser_params import offer_flag_values

    offer_flag_values(p, "--time", ("latest", "earliest", "max-timestamp", "earliest-local", "latest-tiered", "-1", "-2", "-3", "-4", "-5"))
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.common.errors import KafkaError
    from kafkapy.tools import get_offsets as g
    from kafkapy.tools.tool_support import admin_client, error_message

    props = load_properties(args.command_config) if args.command_config else {}
    props["client.id"] = "GetOffsetShell"
    try:
        admin = admin_client(args.bootstrap_server, props)
        try:
            result = g.get_offsets(admin, args.topic, args.partitions, args.topic_partitions, args.time,
                                   args.exclude_internal_topics)
        finally:
            admin.close()
    except g.GetOffsetsError as e:
        raise ToolError("Error occurred: " + str(e), prefixed=False) from e
    except KafkaError as e:
        raise ToolError("Error occurred: " + error_message(e), prefixed=False) from e
    for line in result.skipped:
        out.error_line(line)
    if out.json:
        out.document(result.offsets)
    else:
        out.table(["Topic", "Partition", "Offset"], [[o.topic, o.partition, o.offset] for o in result.offsets],
                  lambda: (f"{o.topic}:{o.partition}:{o.offset}" for o in result.offsets))  # fmt: skip
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
