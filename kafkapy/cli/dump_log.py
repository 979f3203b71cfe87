"""`kafkapy dump-log` (kafka-dump-log.sh, DumpLogSegments): flags and Kafka's exact text.

Flags are DumpLogSegments' (--files, --print-data-log, --deep-iteration, --verify-index-only,
--index-sanity-check, --max-message-size, --max-bytes, --key-decoder-class, --value-decoder-class,
--offsets-decoder, --transaction-log-decoder, --skip-record-metadata); the logic is
kafkapy.tools.dump_log. Text goes where Kafka sends it: dumps, "is empty", "passed sanity check" and
"Found N invalid bytes" on stdout; "Ignoring unknown file", corrupt producer snapshots, index
mismatch, time index and non-consecutive offset reports on stderr. --output json: one JSON object per
line on stdout, each with a "type" (the first field of each RENDERERS row below). A Rich progress bar
(bytes of batches) shows on a terminal's stderr when stdout is redirected.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkapy.cli.command import ToolParser, UsageError, run

if TYPE_CHECKING:  # the logic module (and record/) is imported only when a dump runs: fast --help
    from kafkapy.tools import dump_log as t

INT_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
DEFAULT_DECODER = "org.apache.kafka.tools.api.StringDecoder"

UNSUPPORTED_DECODERS = ("cluster_metadata_decoder", "remote_log_metadata_decoder", "share_group_state_decoder")


def _b(v: bool) -> str:
    return "true" if v else "false"


def batch_text(b: t.BatchLine) -> str:
    if b.magic >= 2:
        horizon = "OptionalLong.empty" if b.delete_horizon_ms is None else f"OptionalLong[{b.delete_horizon_ms}]"
        head = (
            f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
            f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {_b(b.is_transactional)} isControl: {_b(b.is_control)} deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {b.last_offset}"
    return (
        f"{head} position: {b.position} {b.timestamp_type}: {b.max_timestamp} size: {b.size} magic: {b.magic} "
        f"compresscodec: {b.compress_codec} crc: {b.crc} isvalid: {_b(b.is_valid)}"
    )


def record_text(r: t.RecordLine) -> str:
    parts: list[str] = []
    if r.print_metadata:
        parts.append(
            f"| offset: {r.offset} {r.timestamp_type}: {r.timestamp} keySize: {r.key_size} valueSize: {r.value_size}"
        )
        if r.magic >= 2:
            parts.append(f" sequence: {r.sequence} headerKeys: [{','.join(r.header_keys or [])}]")
        elif r.legacy_is_valid is not None:
            parts.append(f" isValid: {_b(r.legacy_is_valid)} crc: {r.legacy_crc}")
        if r.control_type is not None:
            if r.control_type in ("COMMIT", "ABORT"):
                parts.append(f" endTxnMarker: {r.control_type} coordinatorEpoch: {r.coordinator_epoch}")
            else:
                parts.append(f" controlType: {r.control_type}({r.control_type_id})")
    if r.print_contents:
        prefix = " " if r.print_metadata else "| "
        if r.key is not None:
            parts.append(f"{prefix}key: {r.key}")
            prefix = " "
        if r.payload is not None:
            parts.append(f"{prefix}payload: {r.payload}")
    return "".join(parts)


def _simple(fmt: str, to_stderr: bool = False):
    def render(e) -> Iterator[tuple[bool, str]]:
        yield to_stderr, fmt.format(e=e)

    return render


def _report(header: str, item: str):
    def render(e) -> Iterator[tuple[bool, str]]:
        yield True, header.format(e=e)
        for a, b in e.pairs:
            yield True, item.format(a=a, b=b)

    return render


def _records(e) -> Iterator[tuple[bool, str]]:
    yield False, record_text(e)


def _batches(e) -> Iterator[tuple[bool, str]]:
    yield False, batch_text(e)


def _producer_snapshot(e) -> Iterator[tuple[bool, str]]:
    txn = "OptionalLong.empty" if e.current_txn_first_offset is None else f"OptionalLong[{e.current_txn_first_offset}]"
    line = (f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: {e.coordinator_epoch} "
            f"currentTxnFirstOffset: {txn} lastTimestamp: {e.last_timestamp}")  # fmt: skip
    if e.last_offset is not None:
        line += (f" firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} lastOffset: {e.last_offset} "
                 f"offsetDelta: {e.offset_delta} timestamp: {e.timestamp}")  # fmt: skip
    yield False, line


def _mismatches(e) -> Iterator[tuple[bool, str]]:
    yield True, f"Mismatches in :{e.file}"
    for index_offset, log_offset in e.mismatches:
        yield True, f"  Index offset: {index_offset}, log offset: {log_offset}"


# result class name -> (JSON type, text renderer yielding (to_stderr, line) in Kafka's words)
RENDERERS = {
    "RecordLine": ("record", _records),
    "BatchLine": ("batch", _batches),
    "Dumping": ("dumping", _simple("Dumping {e.file}")),
    "LogStartingOffset": ("logStartingOffset", _simple("Log starting offset: {e.offset}")),
    "InvalidBytes": ("invalidBytes", _simple("Found {e.count} invalid bytes at the end of {e.file_name}")),
    "IndexEntryLine": ("indexEntry", _simple("offset: {e.offset} position: {e.position}")),
    "TimeIndexEntryLine": ("timeIndexEntry", _simple("timestamp: {e.timestamp} offset: {e.offset}")),
    "TxnIndexEntryLine": ("txnIndexEntry", _simple(
        "version: {e.version} producerId: {e.producer_id} firstOffset: {e.first_offset} "
        "lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}")),
    "ProducerSnapshotEntryLine": ("producerSnapshotEntry", _producer_snapshot),
    "SnapshotError": ("snapshotError", _simple("{e.message}", to_stderr=True)),
    "Notice": ("notice", _simple("{e.text}")),
    "Ignored": ("ignored", _simple("Ignoring unknown file {e.file}", to_stderr=True)),
    "IndexMismatches": ("indexMismatches", _mismatches),
    "TimestampMismatches": ("timestampMismatches", _report(
        "Found timestamp mismatch in :{e.file}", "  Index timestamp: {a}, log timestamp: {b}")),
    "OutOfOrderTimestamps": ("outOfOrderTimestamps", _report(
        "Found out of order timestamp in :{e.file}", "  Index timestamp: {a}, Previously indexed timestamp: {b}")),
    "IndexedOffsetsNotFound": ("indexedOffsetsNotFound", _report(
        "The following indexed offsets are not found in the log.", "Indexed offset: {a}, found log offset: {b}")),
    "NonConsecutiveOffsets": ("nonConsecutiveOffsets", _report(
        "Non-consecutive offsets in {e.file}", "  {a} is followed by {b}")),
}  # fmt: skip


def text_lines(event: object) -> Iterator[tuple[bool, str]]:
    """(to_stderr, line) for one result, in Kafka's words."""
    return RENDERERS[type(event).__name__][1](event)


def json_object(event: object) -> dict:
    from kafkapy.cli.render import to_jsonable

    obj = {"type": RENDERERS[type(event).__name__][0], **to_jsonable(event)}
    if obj["type"] == "record":
        obj.pop("printMetadata", None)
        obj.pop("printContents", None)
        for k in ("sequence", "headerKeys", "legacyIsValid", "legacyCrc", "controlType", "controlTypeId",
                  "coordinatorEpoch", "key", "payload"):  # fmt: skip
            if obj.get(k) is None:
                obj.pop(k, None)
    return obj


def build_parser() -> ToolParser:
    p = ToolParser(
        "dump-log",
        "This tool helps to parse a log file and dump its contents to the console, useful for debugging a "
        "seemingly corrupt log segment.",
    )
    p.add_argument("--files", required=True, metavar="file1, file2, ...",
                   help="REQUIRED: The comma separated list of data and index log files to be dumped.")
    p.add_argument("--print-data-log", action="store_true",
                   help="If set, printing the messages content when dumping data logs. Automatically set if any "
                   "decoder option is specified.")
    p.add_argument("--verify-index-only", action="store_true",
                   help="If set, just verify the index log without printing its content.")
    p.add_argument("--index-sanity-check", action="store_true",
                   help="If set, just checks the index sanity without printing its content. This is the same "
                   "check that is executed on broker startup to determine if an index needs rebuilding or not.")
    p.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE, metavar="size",
                   help="Size of largest message. (default: 5242880)")
    p.add_argument("--max-bytes", type=int, default=INT_MAX, metavar="size",
                   help="Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
    p.add_argument("--deep-iteration", action="store_true",
                   help="If set, uses deep instead of shallow iteration. Automatically set if print-data-log "
                   "is enabled.")
    p.add_argument("--value-decoder-class", nargs="?", const=DEFAULT_DECODER, metavar="class",
                   help="If set, used to deserialize the messages: StringDecoder (default), IntegerDecoder, "
                   "LongDecoder, DefaultDecoder (hex) of org.apache.kafka.tools.api or kafka.serializer.")
    p.add_argument("--key-decoder-class", nargs="?", const=DEFAULT_DECODER, metavar="class",
                   help="If set, used to deserialize the keys (same decoders as --value-decoder-class).")
    p.add_argument("--offsets-decoder", action="store_true",
                   help="If set, log data will be parsed as offset data from the __consumer_offsets topic.")
    p.add_argument("--transaction-log-decoder", action="store_true",
                   help="If set, log data will be parsed as transaction metadata from the __transaction_state "
                   "topic.")
    p.add_argument("--skip-record-metadata", action="store_true",
                   help="Skip metadata when printing records. This flag also skips control records.")
    for flag in ("--cluster-metadata-decoder", "--remote-log-metadata-decoder", "--share-group-state-decoder"):
        p.add_argument(flag, action="store_true", help="Accepted for compatibility; not supported by kafkapy.")
    return p  # fmt: skip


def options_from_args(args) -> t.DumpLogOptions:
    from kafkapy.tools import dump_log as t

    for name in UNSUPPORTED_DECODERS:
        if getattr(args, name):
            raise UsageError(f"--{name.replace('_', '-')} is not supported by kafkapy")
    files = [f for f in args.files.split(",") if f]
    if not files:
        raise UsageError("--files needs at least one file")
    if args.max_bytes <= 0 or args.max_message_size <= 0:
        raise UsageError("--max-bytes and --max-message-size must be positive")
    return t.DumpLogOptions(
        files=files, print_data_log=args.print_data_log, deep_iteration=args.deep_iteration,
        verify_index_only=args.verify_index_only, index_sanity_check=args.index_sanity_check,
        max_message_size=args.max_message_size, max_bytes=args.max_bytes, key_decoder=args.key_decoder_class,
        value_decoder=args.value_decoder_class, offsets_decoder=args.offsets_decoder,
        transaction_log_decoder=args.transaction_log_decoder, skip_record_metadata=args.skip_record_metadata,
    )  # fmt: skip


def _total_bytes(files: list[str]) -> int:
    total = 0
    for f in files:
        try:
            total += os.path.getsize(f)
        except OSError:
            pass
    return total


def execute(args, out) -> int:
    from kafkapy.tools import dump_log as t

    options = options_from_args(args)
    events = t.dump_log_segments(options)
    if out.json:
        for event in events:
            out.emit(json_object(event))
        return 0
    stdout = out.stream  # taken before a progress bar may proxy sys.stdout
    with out.progress(_total_bytes(options.files), "dump-log") as advance:
        for event in events:
            if isinstance(event, t.BatchLine):
                advance(event.size)
            for to_stderr, line in text_lines(event):
                if to_stderr:
                    out.error_line(line)  # looked up per line: a progress bar redirects stderr while shown
                else:
                    stdout.write(line + "\n")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
