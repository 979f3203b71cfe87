"""The options of the kafkapy source and sink: Spark's Kafka options, parsed and validated.

Option names are case-insensitive, as in Spark (`startingOffsets` == `startingoffsets`); `kafka.*`
options go to the client with the prefix removed. Validation follows Spark's KafkaSourceProvider and
raises its wording (kafkapy.spark.errors); an option Spark's Kafka source does not know fails the query
instead of being ignored, so a typo cannot silently read the wrong data.
Pure functions over plain dicts (the options are pickled to executors); thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import KafkaSinkError, KafkaSourceError
from kafkapy.spark.offsets import OffsetSpec, parse_assignment, parse_partition_offsets

STRATEGY_KEYS = ("subscribe", "subscribepattern", "assign")

SOURCE_KEYS = frozenset({
    *STRATEGY_KEYS,
    "startingoffsets", "endingoffsets", "startingtimestamp", "endingtimestamp",
    "startingoffsetsbytimestamp", "endingoffsetsbytimestamp", "startingoffsetsbytimestampstrategy",
    "failondataloss", "minpartitions", "maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay",
    "maxrecordsperpartition", "includeheaders", "kafkaconsumer.polltimeoutms", "fetchoffset.numretries",
    "fetchoffset.retryintervalms", "groupidprefix",
    # "pipelined" (default) | "per-task" (the former read path) | "kernels" (pipelined, with the Arrow-kernel
    # column build instead of the compiled one): the benchmark's before/after
    "kafkapy.reader",
})
SINK_KEYS = frozenset({"topic", "includeheaders", "kafkapy.writer"})
PER_RECORD = "per-record"  # kafkapy.writer: the former one-send-per-row path, kept for the benchmark
# Options Spark itself passes to every source or sink (load(path), checkpoints, query names).
GENERIC_KEYS = frozenset({"path", "paths", "checkpointlocation", "queryname"})

_AUTO_OFFSET_RESET = (
    "Kafka option 'auto.offset.reset' is not supported.\n"
    "Instead set the source option 'startingoffsets' to 'earliest' or 'latest'\n"
    "to specify where to start. Structured Streaming manages which offsets are consumed\n"
    "internally, rather than relying on the kafkaConsumer to do it. This will ensure that no\n"
    "data is missed when new topics/partitions are dynamically subscribed. Note that\n"
    "'startingoffsets' only applies when a new Streaming query is started, and\n"
    "that resuming will always pick up from where the query left off. See the docs for more\n"
    "details."
)


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items() if v is not None}


def kafka_params(options: Mapping[str, str]) -> dict[str, str]:
    """`kafka.*` options with the prefix removed (client config keys are lower-case in Kafka)."""
    return {k[len("kafka."):]: v for k, v in _lower(options).items() if k.startswith("kafka.")}


def _check_unknown(opts: dict[str, str], known: frozenset[str], what: str) -> None:
    for k in opts:
        if k.startswith("kafka.") or k in known or k in GENERIC_KEYS:
            continue
        raise KafkaSourceError(
            f"Unknown option '{k}' for the Kafka {what} (kafkapy accepts the options of Spark's Kafka {what}; "
            "client settings go in 'kafka.'-prefixed options)"
        )


def _require_bootstrap(opts: dict[str, str], role: str) -> None:
    if not opts.get("kafka.bootstrap.servers", "").strip():
        raise KafkaSourceError(f"Option 'kafka.bootstrap.servers' must be specified for configuring Kafka {role}")


def _bool(opts: dict[str, str], key: str, default: bool) -> bool:
    v = opts.get(key)
    if v is None:
        return default
    if v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    raise KafkaSourceError(f"Option '{key}' must be 'true' or 'false', got '{v}'")


def _int(opts: dict[str, str], key: str, positive: bool = True) -> int | None:
    v = opts.get(key)
    if v is None:
        return None
    try:
        n = int(v)
    except ValueError:
        n = 0 if positive else -1
        if positive:
            raise KafkaSourceError(f"Option '{key}' must be a positive integer, got '{v}'") from None
    if positive and n <= 0:
        raise KafkaSourceError(f"Option '{key}' must be a positive integer")
    return n


@dataclass(frozen=True)
class Subscription:
    """subscribe (topics) | subscribePattern (regex matching whole names) | assign (partitions)."""

    kind: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class SourceOptions:
    kafka: dict[str, str]
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    max_offsets_per_trigger: int | None = None
    poll_timeout_ms: int = 120000
    reader: str = "pipelined"
    originals: dict[str, str] = field(default_factory=dict)


def _subscription(opts: dict[str, str]) -> Subscription:
    given = [k for k in STRATEGY_KEYS if k in opts]
    if not given:
        raise KafkaSourceError(
            "One of the following options must be specified for Kafka source: subscribe, subscribepattern, "
            "assign. See the docs for more details."
        )
    if len(given) > 1:
        raise KafkaSourceError(
            "Only one of the following options can be specified for Kafka source: subscribe, subscribepattern, "
            "assign. See the docs for more details."
        )
    key = given[0]
    value = opts[key]
    if key == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise KafkaSourceError(f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'")
        return Subscription("subscribe", topics=topics)
    if key == "subscribepattern":
        if not value.strip():
            raise KafkaSourceError(
                f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
            )
        try:
            re.compile(value.strip())
        except re.error as e:
            raise KafkaSourceError(f"Invalid pattern '{value}' for option 'subscribePattern': {e}") from None
        return Subscription("subscribepattern", pattern=value.strip())
    if not value.strip().startswith("{"):
        raise KafkaSourceError(f"No topicpartitions to assign as specified value for assign is '{value}'")
    return Subscription("assign", partitions=tuple(parse_assignment(value)))


def _offset_spec(opts: dict[str, str], prefix: str, default: str) -> OffsetSpec:
    """Spark's precedence: <prefix>Timestamp > <prefix>OffsetsByTimestamp > <prefix>Offsets."""
    latest_strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower() == "latest"
    ts = opts.get(f"{prefix}timestamp")
    if ts is not None:
        try:
            return OffsetSpec("timestamp", timestamp=int(ts), strategy_latest=latest_strategy)
        except ValueError:
            raise KafkaSourceError(f"Option '{prefix}Timestamp' must be a timestamp in ms, got '{ts}'") from None
    by_ts = opts.get(f"{prefix}offsetsbytimestamp")
    if by_ts is not None:
        return OffsetSpec("timestamps", parse_partition_offsets(by_ts), strategy_latest=latest_strategy)
    value = opts.get(f"{prefix}offsets", default).strip()
    if value.lower() in ("earliest", "latest"):
        return OffsetSpec(value.lower())
    if value.startswith("{"):
        return OffsetSpec("offsets", parse_partition_offsets(value))
    raise KafkaSourceError(f"Unsupported {prefix}Offsets value '{value}': use earliest, latest or JSON offsets")


def _reader(opts: dict[str, str]) -> str:
    reader = opts.get("kafkapy.reader", "pipelined").strip().lower()
    if reader not in ("pipelined", "per-task", "kernels"):
        raise KafkaSourceError(
            f"Option 'kafkapy.reader' must be 'pipelined', 'per-task' or 'kernels', got '{reader}'")
    return reader


def parse_source_options(options: Mapping[str, str], streaming: bool) -> SourceOptions:
    """Validate a read's options (Spark's validateBatchOptions / validateStreamOptions)."""
    opts = _lower(options)
    _check_unknown(opts, SOURCE_KEYS, "source")
    _require_bootstrap(opts, "consumer")
    if "kafka.auto.offset.reset" in opts:
        raise KafkaSourceError(_AUTO_OFFSET_RESET)
    for what, kind in (("key", "keys"), ("value", "values")):
        if f"kafka.{what}.deserializer" in opts:
            raise KafkaSourceError(
                f"Kafka option '{what}.deserializer' is not supported as {kind} are deserialized as byte arrays "
                f"with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the {kind}."
            )
    for c in ("enable.auto.commit", "interceptor.classes"):
        if f"kafka.{c}" in opts:
            raise KafkaSourceError(f"Kafka option '{c}' is not supported")
    subscription = _subscription(opts)
    starting = _offset_spec(opts, "starting", "earliest" if not streaming else "latest")
    if streaming:
        if any(k in opts for k in ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp")):
            raise KafkaSourceError("ending offset not valid in streaming queries")
        ending = OffsetSpec("latest")
    else:
        ending = _offset_spec(opts, "ending", "latest")
        if starting.kind == "latest":
            raise KafkaSourceError("starting offset can't be latest for batch queries on Kafka")
        if ending.kind == "earliest":
            raise KafkaSourceError("ending offset can't be earliest for batch queries on Kafka")
        for tp, off in (starting.partition_values or {}).items():
            if starting.kind == "offsets" and off == -1:
                raise KafkaSourceError(f"startingOffsets for {tp} can't be latest for batch queries on Kafka")
        for tp, off in (ending.partition_values or {}).items():
            if ending.kind == "offsets" and off == -2:
                raise KafkaSourceError(f"endingOffsets for {tp} can't be earliest for batch queries on Kafka")
    poll = _int(opts, "kafkaconsumer.polltimeoutms")
    return SourceOptions(
        kafka=kafka_params(opts),
        subscription=subscription,
        starting=starting,
        ending=ending,
        fail_on_data_loss=_bool(opts, "failondataloss", True),
        include_headers=_bool(opts, "includeheaders", False),
        min_partitions=_int(opts, "minpartitions"),
        max_offsets_per_trigger=_int(opts, "maxoffsetspertrigger"),
        poll_timeout_ms=poll or 120000,
        reader=_reader(opts),
        originals=opts,
    )


@dataclass(frozen=True)
class SinkOptions:
    kafka: dict[str, str]
    topic: str | None
    writer: str = "batch"


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Validate a write's options (Spark's validateSinkOptions)."""
    opts = _lower(options)
    _check_unknown(opts, SINK_KEYS | SOURCE_KEYS, "sink")
    _require_bootstrap(opts, "producer")
    for what in ("key", "value"):
        if f"kafka.{what}.serializer" in opts:
            raise KafkaSinkError(
                f"Kafka option '{what}.serializer' is not supported as {what}s are serialized with "
                f"ByteArraySerializer. Use DataFrame operations to explicitly serialize the {what}s into "
                "either strings or byte arrays."
            )
    topic = opts.get("topic")
    writer = opts.get("kafkapy.writer", "batch").strip().lower()
    if writer not in ("batch", PER_RECORD):
        raise KafkaSinkError(f"Option 'kafkapy.writer' must be 'batch' or '{PER_RECORD}', got '{writer}'")
    return SinkOptions(kafka=kafka_params(opts), topic=topic.strip() if topic else None, writer=writer)
