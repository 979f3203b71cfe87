"""`kafkapy delete-records` (kafka-delete-records.sh, DeleteRecordsCommand).

Prints `Executing records delete operation`, `Records delete operation completed:` and one
`partition: foo-1\\tlow_watermark: 1` (or `partition: foo-1\\terror: <Java error>`) line per partition,
in Kafka's order. --output json: a list of {"topic", "partition", "lowWatermark", "error"}.
A bad offset file: one line on stderr, exit 1.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("delete-records", "This tool helps to delete records of the given partitions down to the "
                   "specified offset.")
    p.add_bootstrap_server(aliases=(), help="REQUIRED: The server to connect to.")
    p.add_argument("--offset-json-file", required=True, metavar="<Offset json file path>",
                   help='REQUIRED: The JSON file with offset per partition. The format to use is: '
                   '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version":1}')
    p.add_command_config(help="A property file containing configs to be passed to Admin Client.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import delete_records as dr
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    try:
        with open(args.offset_json_file, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ToolError(f"{args.offset_json_file} ({e.strerror or e})") from e
    try:
        entries = dr.parse_offset_json(text)
    except dr.DeleteRecordsError as e:
        raise ToolError(str(e)) from e
    admin = admin_client(args.bootstrap_server, props)
    try:
        if not out.json:
            out.line("Executing records delete operation")
            out.flush()
        results = dr.delete_records(admin, entries)
    finally:
        admin.close()
    if out.json:
        out.document(results)
        return 0
    out.line("Records delete operation completed:")
    for r in results:
        if r.error is None:
            out.line(f"partition: {r.topic}-{r.partition}\tlow_watermark: {r.low_watermark}")
        else:
            out.line(f"partition: {r.topic}-{r.partition}\terror: {r.error}")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
