"""`kafkapy replica-verification` (kafka-replica-verification.sh, ReplicaVerificationTool).

Flags: --broker-list (REQUIRED; --bootstrap-server accepted too), --topics-include (Java regex, default
'.*'; --topic-white-list is its deprecated name), --fetch-size (bytes per partition, 1 MiB),
--max-wait-ms (1000), --time (initial offsets: -1 latest, -2 earliest, or a timestamp; default -1),
--report-interval-ms (30000). Prints `<date>: verification process is started.` and then, every report
interval, `<date>: max lag is N for partition t-0 at offset M among K partitions`; runs until Ctrl-C /
SIGTERM. Replicas whose batch offsets differ: one line and exit 1. --output json: one object per line instead
({"time", "event": "started" | "lag" (maxLag, topic, partition, offset, partitions) | "checksum" | "mismatch"
(message)}). Logic: kafkapy/tools/replica_verification.py.
Thread-safety: main thread, one run.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolParser, missing_argument, run


def build_parser() -> ToolParser:
    from kafkapy.tools import replica_verification as rv

    p = ToolParser("replica-verification", "Validate that all replicas for a set of topics have the same data.")
    p.add_bootstrap_server(required=False, aliases=("--broker-list",),
                           help="REQUIRED: The list of hostname and port of the server to connect to.")
    p.add_argument("--fetch-size", type=int, default=rv.DEFAULT_FETCH_SIZE, metavar="<Integer: bytes>",
                   help=f"The fetch size of each request. (default: {rv.DEFAULT_FETCH_SIZE})")
    p.add_argument("--max-wait-ms", type=int, default=rv.DEFAULT_MAX_WAIT_MS, metavar="<Integer: ms>",
                   help=f"The max amount of time each fetch request waits. (default: {rv.DEFAULT_MAX_WAIT_MS})")
    p.add_argument("--topics-include", "--topic-white-list", dest="topics_include", default=".*",
                   metavar="<Java regex (String)>",
                   help="List of topics to verify replica consistency. (default: .*)")
    p.add_argument("--time", type=int, default=rv.DEFAULT_TIME, metavar="<Long: timestamp/-1(latest)/-2(earliest)>",
                   help="Timestamp for getting the initial offsets. (default: -1)")
    p.add_argument("--report-interval-ms", type=int, default=rv.DEFAULT_REPORT_INTERVAL_MS, metavar="<Long: ms>",
                   help=f"The reporting interval. (default: {rv.DEFAULT_REPORT_INTERVAL_MS})")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.tools import replica_verification as rv
    from kafkapy.tools.tool_support import admin_client

    if args.bootstrap_server is None:
        raise missing_argument("broker-list")
    admin = admin_client(args.bootstrap_server, client_id="ReplicaVerification")
    try:
        verifier = rv.ReplicaVerifier(admin, args.topics_include, args.fetch_size, args.max_wait_ms, args.time,
                                      args.report_interval_ms)
        if out.json:
            out.emit({"time": verifier.now(), "event": "started"})
        else:
            out.line(f"{verifier.now()}: verification process is started.")
        out.flush()
        while True:
            report = verifier.verify_round(verifier.fetch_round())
            for line in report.mismatches:
                if out.json:
                    out.emit({"time": verifier.now(), "event": "checksum", "message": line})
                else:
                    out.line(line)
            if report.partition is not None and verifier.report_due():
                if out.json:
                    out.emit({"time": verifier.now(), "event": "lag", "maxLag": report.max_lag,
                              "topic": report.partition.topic, "partition": report.partition.partition,
                              "offset": report.offset, "partitions": report.partitions})
                else:
                    out.line(rv.lag_line(report, verifier.now()))
            out.flush()
    except rv.ReplicaMismatchError as e:
        if out.json:
            out.emit({"time": verifier.now(), "event": "mismatch", "message": str(e)})
        else:
            out.line(str(e))
        return 1
    finally:
        admin.close()


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
