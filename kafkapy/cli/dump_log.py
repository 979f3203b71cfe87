"""`kafkapy dump-log` (kafka-dump-log.sh, DumpLogSegments): flags and Kafka's exact text.

Flags are DumpLogSegments' (--files, --print-data-log, --deep-iteration, --verify-index-only,
--index-sanity-check, --max-message-size, --max-bytes, --key-decoder-class, --value-decoder-class,
--offsets-decoder, --transaction-log-decoder, --skip-record-metadata); the logic is
kafkapy.tools.dump_log. Text goes where Kafka sends it: dumps, "is empty", "passed sanity check" and
"Found N invalid bytes" on stdout; "Ignoring unknown file", index mismatch, time index and
non-consecutive offset reports on stderr. --output json: one JSON object per line on stdout, each
with a "type" (dumping, logStartingOffset, batch, record, invalidBytes, indexEntry, timeIndexEntry,
txnIndexEntry, notice, ignored, indexMismatches, timestampMismatches, outOfOrderTimestamps,
indexedOffsetsNotFound, nonConsecutiveOffsets). A Rich progress bar (bytes of batches) shows on a
terminal's stderr when stdout is redirected.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafkapy.cli.command import ToolParser, UsageError, run
from kafkapy.tools import dump_log as t

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


def text_lines(event: object) -> Iterator[tuple[bool, str]]:
    """(to_stderr, line) for one result, in Kafka's words."""
    if isinstance(event, t.RecordLine):
        yield False, record_text(event)
    elif isinstance(event, t.BatchLine):
        yield False, batch_text(event)
    elif isinstance(event, t.Dumping):
        yield False, f"Dumping {event.file}"
    elif isinstance(event, t.LogStartingOffset):
        yield False, f"Log starting offset: {event.offset}"
    elif isinstance(event, t.InvalidBytes):
        yield False, f"Found {event.count} invalid bytes at the end of {event.file_name}"
    elif isinstance(event, t.IndexEntryLine):
        yield False, f"offset: {event.offset} position: {event.position}"
    elif isinstance(event, t.TimeIndexEntryLine):
        yield False, f"timestamp: {event.timestamp} offset: {event.offset}"
    elif isinstance(event, t.TxnIndexEntryLine):
        yield False, (f"version: {event.version} producerId: {event.producer_id} firstOffset: {event.first_offset} "
                      f"lastOffset: {event.last_offset} lastStableOffset: {event.last_stable_offset}")  # fmt: skip
    elif isinstance(event, t.Notice):
        yield False, event.text
    elif isinstance(event, t.Ignored):
        yield True, f"Ignoring unknown file {event.file}"
    elif isinstance(event, t.IndexMismatches):
        yield True, f"Mismatches in :{event.file}"
        for index_offset, log_offset in event.mismatches:
            yield True, f"  Index offset: {index_offset}, log offset: {log_offset}"
    elif isinstance(event, t.TimestampMismatches):
        yield True, f"Found timestamp mismatch in :{event.file}"
        for a, b in event.pairs:
            yield True, f"  Index timestamp: {a}, log timestamp: {b}"
    elif isinstance(event, t.OutOfOrderTimestamps):
        yield True, f"Found out of order timestamp in :{event.file}"
        for a, b in event.pairs:
            yield True, f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
    elif isinstance(event, t.IndexedOffsetsNotFound):
        yield True, "The following indexed offsets are not found in the log."
        for a, b in event.pairs:
            yield True, f"Indexed offset: {a}, found log offset: {b}"
    elif isinstance(event, t.NonConsecutiveOffsets):
        yield True, f"Non-consecutive offsets in {event.file}"
        for a, b in event.pairs:
            yield True, f"  {a} is followed by {b}"
    else:  # pragma: no cover - every result type is listed above
        raise TypeError(f"unknown dump-log result {event!r}")


_JSON_TYPES = {
    t.Dumping: "dumping", t.LogStartingOffset: "logStartingOffset", t.BatchLine: "batch", t.RecordLine: "record",
    t.InvalidBytes: "invalidBytes", t.IndexEntryLine: "indexEntry", t.TimeIndexEntryLine: "timeIndexEntry",
    t.TxnIndexEntryLine: "txnIndexEntry", t.Notice: "notice", t.Ignored: "ignored",
    t.IndexMismatches: "indexMismatches", t.TimestampMismatches: "timestampMismatches",
    t.OutOfOrderTimestamps: "outOfOrderTimestamps", t.IndexedOffsetsNotFound: "indexedOffsetsNotFound",
    t.NonConsecutiveOffsets: "nonConsecutiveOffsets",
}  # fmt: skip


def json_object(event: object) -> dict:
    from kafkapy.cli.render import to_jsonable

    obj = {"type": _JSON_TYPES[type(event)], **to_jsonable(event)}
    if isinstance(event, t.RecordLine):
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
    p.add_argument("--max-message-size", type=int, default=t.DEFAULT_MAX_MESSAGE_SIZE, metavar="size",
                   help="Size of largest message. (default: 5242880)")
    p.add_argument("--max-bytes", type=int, default=t.INT_MAX, metavar="size",
                   help="Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
    p.add_argument("--deep-iteration", action="store_true",
                   help="If set, uses deep instead of shallow iteration. Automatically set if print-data-log "
                   "is enabled.")
    p.add_argument("--value-decoder-class", nargs="?", const=t.DEFAULT_DECODER, metavar="class",
                   help="If set, used to deserialize the messages: StringDecoder (default), IntegerDecoder, "
                   "LongDecoder, DefaultDecoder (hex) of org.apache.kafka.tools.api or kafka.serializer.")
    p.add_argument("--key-decoder-class", nargs="?", const=t.DEFAULT_DECODER, metavar="class",
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
    options = options_from_args(args)
    events = t.dump_log_segments(options)
    if out.json:
        for event in events:
            out.emit(json_object(event))
        return 0
    stdout, stderr = out.stream, out.err
    with out.progress(_total_bytes(options.files), "dump-log") as advance:
        for event in events:
            if isinstance(event, t.BatchLine):
                advance(event.size)
            for to_stderr, line in text_lines(event):
                if to_stderr:
                    stdout.flush()
                    stderr.write(line + "\n")
                else:
                    stdout.write(line + "\n")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
