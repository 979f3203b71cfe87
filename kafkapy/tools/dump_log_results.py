"""dump-log's options and result types: one dataclass per kind of line DumpLogSegments prints.

Produced by kafkapy.tools.dump_log, rendered by kafkapy/cli/dump_log.py (Kafka's text, or JSON with
camelCase keys). Plain data; no I/O; thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INT_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


@dataclass
class DumpLogOptions:
    files: list[str]
    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT_MAX
    key_decoder: str | None = None  # None: option absent (string decoding)
    value_decoder: str | None = None
    offsets_decoder: bool = False
    transaction_log_decoder: bool = False
    skip_record_metadata: bool = False

    @property
    def should_print_data_log(self) -> bool:
        return (self.print_data_log or self.offsets_decoder or self.transaction_log_decoder
                or self.key_decoder is not None or self.value_decoder is not None)  # fmt: skip

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.should_print_data_log


@dataclass
class Dumping:
    file: str


@dataclass
class LogStartingOffset:
    offset: int


@dataclass
class BatchLine:
    position: int
    magic: int
    base_offset: int
    last_offset: int
    count: int | None
    base_sequence: int
    last_sequence: int
    producer_id: int
    producer_epoch: int
    partition_leader_epoch: int
    is_transactional: bool
    is_control: bool
    delete_horizon_ms: int | None
    timestamp_type: str  # CreateTime, LogAppendTime, NoTimestampType
    max_timestamp: int
    size: int
    compress_codec: str
    crc: int
    is_valid: bool


@dataclass
class RecordLine:
    offset: int
    timestamp_type: str
    timestamp: int
    key_size: int
    value_size: int
    magic: int
    sequence: int | None = None  # magic 2 only
    header_keys: list[str] | None = None  # magic 2 only
    legacy_is_valid: bool | None = None  # magic 0/1 only
    legacy_crc: int | None = None
    control_type: str | None = None  # control batches: COMMIT, ABORT, LEADER_CHANGE, ..., UNKNOWN
    control_type_id: int | None = None
    coordinator_epoch: int | None = None
    key: str | None = None  # decoded contents (print-data-log only)
    payload: str | None = None
    print_metadata: bool = True
    print_contents: bool = False


@dataclass
class InvalidBytes:
    count: int
    file_name: str


@dataclass
class IndexEntryLine:
    offset: int
    position: int


@dataclass
class TimeIndexEntryLine:
    timestamp: int
    offset: int


@dataclass
class TxnIndexEntryLine:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass
class ProducerSnapshotEntryLine:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    current_txn_first_offset: int | None
    last_timestamp: int
    first_sequence: int | None = None  # batch metadata: present when the last offset is >= 0
    last_sequence: int | None = None
    last_offset: int | None = None
    offset_delta: int | None = None
    timestamp: int | None = None


@dataclass
class SnapshotError:
    """A corrupt producer snapshot, reported on stderr; the dump goes on with the next file."""

    message: str


@dataclass
class Notice:
    """A plain stdout line such as "<file> is empty." or "<file> passed sanity check."."""

    text: str


@dataclass
class Ignored:
    file: str


@dataclass
class IndexMismatches:
    file: str  # absolute path
    mismatches: list[tuple[int, int]]  # (index offset, log offset), index offset descending


@dataclass
class TimeIndexErrors:
    """Accumulated while dumping one .timeindex; reported as the three events below, in Kafka's order."""

    file: str
    timestamp_mismatches: list[tuple[int, int]] = field(default_factory=list)  # (index ts, log ts)
    out_of_order: list[tuple[int, int]] = field(default_factory=list)  # (index ts, previous index ts)
    offsets_not_found: list[tuple[int, int]] = field(default_factory=list)  # (index offset, log offset)


@dataclass
class TimestampMismatches:
    file: str
    pairs: list[tuple[int, int]]  # (index timestamp, log timestamp)


@dataclass
class OutOfOrderTimestamps:
    file: str
    pairs: list[tuple[int, int]]  # (index timestamp, previously indexed timestamp)


@dataclass
class IndexedOffsetsNotFound:
    file: str
    pairs: list[tuple[int, int]]  # (indexed offset, found log offset or -1)


@dataclass
class NonConsecutiveOffsets:
    file: str
    pairs: list[tuple[int, int]]  # (previous offset, next offset), ascending
