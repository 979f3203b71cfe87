"""`kafkapy streams-application-reset` (kafka-streams-application-reset.sh, Kafka's StreamsResetter).

Flags are Kafka's (--application-id, --input-topics, --intermediate-topics, --internal-topics, one of
--to-offset / --to-earliest / --to-latest / --to-datetime / --by-duration / --shift-by / --from-file,
--dry-run, --force, --bootstrap-server (deprecated --bootstrap-servers), --config-file). Text output is
Kafka's lines; a failure prints `ERROR: <java exception>: <message>` on stderr, exit 1, as the tool does.
--output json: one document (the StreamsResetResult). Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkapy.cli.command import ToolParser, UsageError, run

_SCENARIOS = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest", "from_file", "shift_by")


def _list(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


def build_parser() -> ToolParser:
    p = ToolParser("streams-application-reset",
                   "This tool helps to quickly reset an application in order to reprocess its data from scratch.")
    p.add_argument("--application-id", required=True, metavar="id",
                   help="The Kafka Streams application ID (application.id).")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED unless --bootstrap-servers(deprecated) is specified. The server(s) to connect to. "
                   "(default: localhost:9092)")
    p.add_argument("--bootstrap-servers", metavar="urls",
                   help="DEPRECATED: Comma-separated list of broker urls with format: HOST1:PORT1,HOST2:PORT2")
    for flag, text in (
        ("--input-topics", "Comma-separated list of user input topics. For these topics, the tool by default will "
         "reset the offset to the earliest available offset."),
        ("--intermediate-topics", "Comma-separated list of intermediate user topics. For these topics, the tool "
         "will skip to the end."),
        ("--internal-topics", "Comma-separated list of internal topics to delete. Must be a subset of the internal "
         "topics marked for deletion by the default behaviour (do a dry-run without this option to view these "
         "topics)."),
    ):
        p.add_argument(flag, metavar="list", action="append", default=[], help=text)
    p.add_argument("--to-offset", type=int, help="Reset offsets to a specific offset.")
    p.add_argument("--to-datetime", help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
    p.add_argument("--by-duration", help="Reset offsets to offset by duration from current timestamp. "
                   "Format: 'PnDTnHnMnS'")
    p.add_argument("--to-earliest", action="store_true", help="Reset offsets to earliest offset.")
    p.add_argument("--to-latest", action="store_true", help="Reset offsets to latest offset.")
    p.add_argument("--from-file", help="Reset offsets to values defined in CSV file.")
    p.add_argument("--shift-by", type=int, metavar="number-of-offsets",
                   help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative")
    p.add_argument("--config-file", metavar="file name",
                   help="Property file containing configs to be passed to admin clients and embedded consumer.")
    p.add_argument("--force", action="store_true",
                   help="Force the removal of members of the consumer group (intended to remove stopped members if "
                   "a long session timeout was used).")
    p.add_argument("--dry-run", action="store_true",
                   help="Display the actions that would be performed without executing the reset commands.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    given = [s for s in _SCENARIOS if getattr(args, s) not in (None, False)]
    if len(given) > 1:
        a, b = given[0].replace("_", "-"), given[1].replace("_", "-")
        raise UsageError(f'Option "[{a}]" can\'t be used with option "[{b}]"')
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import streams_resetter as sr
    from kafkapy.tools.tool_support import admin_client

    props = dict(load_properties(args.config_file)) if args.config_file else {}
    bootstrap = args.bootstrap_server or args.bootstrap_servers or "localhost:9092"
    opts = sr.ResetOptions(
        application_id=args.application_id,
        input_topics=[t for v in args.input_topics for t in _list(v)],
        intermediate_topics=[t for v in args.intermediate_topics for t in _list(v)],
        internal_topics=[t for v in args.internal_topics for t in _list(v)],
        to_offset=args.to_offset, to_earliest=args.to_earliest, to_latest=args.to_latest, shift_by=args.shift_by,
        to_datetime=args.to_datetime, by_duration=args.by_duration, from_file=args.from_file,
        dry_run=args.dry_run, force=args.force, auto_offset_reset=props.get("auto.offset.reset", "latest"),
    )

    def say(line: str) -> None:
        if not out.json:
            out.line(line)

    def warn(line: str) -> None:
        sys.stderr.write(line + "\n")

    admin = admin_client(bootstrap, props)
    try:
        result = sr.StreamsResetter(admin, opts, say, warn).run()
    except sr.StreamsResetError as e:
        out.flush()
        out.error_line(f"ERROR: {e.java_text()}")
        return 1
    finally:
        admin.close()
    if out.json:
        out.document(result)
    return result.exit_code


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
