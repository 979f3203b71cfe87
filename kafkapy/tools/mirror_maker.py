"""MirrorMaker 1 (kafka.tools.MirrorMaker): copy the topics matching an include regex from one cluster to
another, record by record, with keys, values, headers and timestamps as they were.

Architecture, as Kafka's: `num.streams` MirrorMakerThreads, each with its own consumer in the group of
the consumer config's `group.id` (client.id `<group.id>-<i>`), all sharing one producer. A thread polls,
sends each record to the same topic on the target (to the same partition when the target topic has as
many partitions as the source, else to the producer's partitioner), remembers offset+1 per partition,
and every `offset.commit.interval.ms` flushes the producer and then commits those offsets (a commit
never runs ahead of what the target acknowledged). On a rebalance (partitions revoked) and on shutdown
the thread flushes and commits too. Kafka's no-data-loss defaults apply unless the configs set them:
producer acks=all, max.in.flight.requests.per.connection=1, delivery.timeout.ms and max.block.ms at
their maximum; consumer enable.auto.commit=false.

A failed send (after the producer's retries) is logged with Kafka's ErrorLoggingCallback wording and
counted (numDroppedMessages); with abort.on.send.failure=true (the default) the mirror maker stops
without committing past it.

Thread-safety: MirrorMaker.start() / shutdown() from one controlling thread; each MirrorMakerThread owns
its consumer; the shared KafkaProducer is thread-safe; counters are guarded by a lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.consumer_rebalance_listener import ConsumerRebalanceListener
from kafkapy.client.fetcher import ConsumerRecord
from kafkapy.client.group_offsets import CommitFailedError, OffsetAndMetadata
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.connection_warnings import ConnectionWarner, consumer_log_prefix
from kafkapy.tools.tool_support import IncludeList

log = logging.getLogger("kafka.tools.MirrorMaker$")

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
NO_TIMESTAMP = -1
POLL_TIMEOUT_MS = 1000  # Kafka's: offset commits of an idle stream are at most a second late

ASSIGNMENT_STRATEGY_WARNING = (
    "WARNING: The default partition assignment strategy of the mirror maker will change from 'range' to "
    "'roundrobin' in an upcoming release (so that better load balancing can be achieved). If you prefer to make "
    "this switch in advance of that release add the following to the corresponding config: "
    "'partition.assignment.strategy=org.apache.kafka.clients.consumer.RoundRobinAssignor'"
)


@dataclass
class MirrorMakerOptions:
    consumer_props: dict[str, Any]
    producer_props: dict[str, Any]
    include: str
    num_streams: int = 1
    offset_commit_interval_ms: int = 60_000
    abort_on_send_failure: bool = True


def _set_default(props: dict[str, Any], name: str, default: str) -> None:
    """Kafka's maybeSetDefaultProperty: keep the user's value, but say it risks loss or reordering."""
    value = props.setdefault(name, default)
    if str(value) != default:
        log.info("Property %s is overridden to %s - data loss or message reordering is possible.", name, value)


def producer_config(props: Mapping[str, Any]) -> dict[str, Any]:
    config = dict(props)
    config.pop("producer.type", None)  # the old Scala producer's sync/async switch
    _set_default(config, "delivery.timeout.ms", str(INT_MAX))
    _set_default(config, "max.block.ms", str(LONG_MAX))
    _set_default(config, "acks", "all")
    _set_default(config, "max.in.flight.requests.per.connection", "1")
    for name in ("key.serializer", "value.serializer"):  # always bytes through, as ByteArraySerializer
        config.pop(name, None)
    return config


def consumer_config(props: Mapping[str, Any], index: int) -> dict[str, Any]:
    config = dict(props)
    _set_default(config, "enable.auto.commit", "false")
    for name in ("key.deserializer", "value.deserializer"):
        config.pop(name, None)
    config["client.id"] = f"{config.get('group.id')}-{index}"  # as Kafka: no metric clash between streams
    return config


class MirrorMaker:
    def __init__(self, options: MirrorMakerOptions) -> None:
        self.options = options
        self.pattern = IncludeList(options.include).pattern  # Kafka's Whitelist: commas mean |
        self._lock = threading.Lock()
        self.num_dropped_messages = 0  # Kafka's MirrorMaker-numDroppedMessages gauge
        self.num_mirrored_messages = 0
        self.exiting_on_send_failure = False
        self.failure: BaseException | None = None
        self._shutting_down = threading.Event()
        self._partition_counts: dict[str, bool] = {}  # topic -> same partition count on both sides
        self.producer = KafkaProducer(producer_config(options.producer_props))
        self.threads: list[MirrorMakerThread] = []
        try:
            # the producer keeps its fail-fast bootstrap (an idle one would hold up close()); it warns too
            ConnectionWarner(f"[Producer clientId={self.producer.client.client_id}] ").attach(self.producer.client)
            for i in range(options.num_streams):
                config = consumer_config(options.consumer_props, i)
                consumer = KafkaConsumer(config)
                self._wait_for_brokers(consumer.client, consumer_log_prefix(config))
                self.threads.append(MirrorMakerThread(self, consumer, i))
        except BaseException:
            for t in self.threads:
                t.consumer.close(0)
            self.producer.close(0)
            raise

    @staticmethod
    def _wait_for_brokers(client: Any, log_prefix: str) -> None:
        """Kafka's clients never give up on an unreachable cluster: keep retrying, one WARN per attempt."""
        client.bootstrap_fail_fast = False
        ConnectionWarner(log_prefix).attach(client)

    def start(self) -> None:
        log.info("Starting mirror maker")
        for t in self.threads:
            t.start()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until every stream has stopped (True) or timeout_s passed (False)."""
        for t in self.threads:
            t.join(timeout_s)
            if t.is_alive():
                return False
        return True

    @property
    def stopped(self) -> bool:
        return not any(t.is_alive() for t in self.threads)

    def shutdown(self) -> None:
        """Kafka's cleanShutdown: stop the streams (each flushes and commits), then close the producer."""
        if self._shutting_down.is_set():
            return
        self._shutting_down.set()
        log.info("Start clean shutdown.")
        log.info("Shutting down consumer threads.")
        for t in self.threads:
            t.shutdown()
        for t in self.threads:
            t.await_shutdown()
        log.info("Closing producer.")
        self.producer.close()
        log.info("Kafka mirror maker shutdown successfully")

    # -- per record -------------------------------------------------------------------------------------

    def target_partition(self, consumer: KafkaConsumer, record: ConsumerRecord) -> int | None:
        """The source partition when both topics have the same partition count, else None (partitioner)."""
        same = self._partition_counts.get(record.topic)
        if same is None:
            source = len(consumer.partitions_for_topic(record.topic))
            target = len(self.producer.partitions_for(record.topic))
            same = self._partition_counts[record.topic] = source == target
        return record.partition if same else None

    def send(self, consumer: KafkaConsumer, record: ConsumerRecord) -> None:
        self.producer.send(
            record.topic,
            value=record.value,
            key=record.key,
            headers=record.headers,
            partition=self.target_partition(consumer, record),
            timestamp=None if record.timestamp == NO_TIMESTAMP else record.timestamp,
            callback=self._completion_callback(record),
        )

    def _completion_callback(self, record: ConsumerRecord) -> Callable[[Any, BaseException | None], None]:
        return lambda _metadata, exc: self._on_completion(record, exc)

    def _on_completion(self, record: ConsumerRecord, exc: BaseException | None) -> None:
        if exc is None:
            with self._lock:
                self.num_mirrored_messages += 1
            return
        # Kafka's ErrorLoggingCallback (logAsString=false): sizes, not contents.
        key_len = -1 if record.key is None else len(record.key)
        value_len = -1 if record.value is None else len(record.value)
        logging.getLogger("org.apache.kafka.clients.producer.internals.ErrorLoggingCallback").error(
            "Error when sending message to topic %s with key: %s, value: %s with error: %s",
            record.topic, "null" if key_len < 0 else f"{key_len} bytes", "null" if value_len < 0 else f"{value_len} bytes",
            exc)  # fmt: skip
        with self._lock:
            self.num_dropped_messages += 1
            if self.options.abort_on_send_failure and not self.exiting_on_send_failure:
                log.info("Closing producer due to send failure.")
                self.exiting_on_send_failure = True
                self.failure = exc


class _CommitOnRevoke(ConsumerRebalanceListener):
    """Kafka's InternalRebalanceListener: flush and commit before partitions move to another member."""

    def __init__(self, thread: MirrorMakerThread) -> None:
        self.thread = thread

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.thread.flush_and_commit()


class MirrorMakerThread(threading.Thread):
    def __init__(self, mirror: MirrorMaker, consumer: KafkaConsumer, thread_id: int) -> None:
        super().__init__(name=f"mirrormaker-thread-{thread_id}", daemon=True)
        self.mirror = mirror
        self.consumer = consumer
        self.offsets: dict[TopicPartition, int] = {}  # next offset to commit per partition
        self._shutting_down = threading.Event()
        self._log_ident = f"[{self.name}] "

    def run(self) -> None:
        mirror = self.mirror
        log.info("%sStarting mirror maker thread %s", self._log_ident, self.name)
        interval_s = mirror.options.offset_commit_interval_ms / 1000.0
        try:
            self.consumer.subscribe(pattern=mirror.pattern, listener=_CommitOnRevoke(self))
            next_commit = time.monotonic() + interval_s
            while not (mirror.exiting_on_send_failure or self._shutting_down.is_set()):
                for record in self.consumer.poll(POLL_TIMEOUT_MS):
                    mirror.send(self.consumer, record)
                    self.offsets[TopicPartition(record.topic, record.partition)] = record.offset + 1
                if time.monotonic() >= next_commit:
                    self.flush_and_commit()
                    next_commit = time.monotonic() + interval_s
        except BaseException as e:  # noqa: BLE001 - Kafka's fatal "Mirror maker thread failure"
            if not (self._shutting_down.is_set() and isinstance(e, KafkaError)):
                mirror.exiting_on_send_failure = True
                mirror.failure = mirror.failure or e
                log.critical("%sMirror maker thread failure due to %s", self._log_ident, e, exc_info=e)
        finally:
            try:
                log.info("%sFlushing producer.", self._log_ident)
                mirror.producer.flush()
                log.info("%sCommitting consumer offsets.", self._log_ident)
                self.commit()
            except Exception as e:  # noqa: BLE001 - CoreUtils.swallow: log and go on closing
                log.error("%s%s", self._log_ident, e)
            log.info("%sShutting down consumer connectors.", self._log_ident)
            try:
                self.consumer.close()
            except Exception as e:  # noqa: BLE001
                log.error("%s%s", self._log_ident, e)
            log.info("%sMirror maker thread stopped", self._log_ident)

    def flush_and_commit(self) -> None:
        self.mirror.producer.flush()
        self.commit()

    def commit(self) -> None:
        if self.mirror.exiting_on_send_failure:
            log.info("%sExiting on send failure, skip committing offsets.", self._log_ident)
            return
        if not self.offsets:
            return
        try:
            self.consumer.commit_sync({tp: OffsetAndMetadata(o) for tp, o in self.offsets.items()})
            self.offsets.clear()
        except CommitFailedError:
            log.warning("%sFailed to commit offsets because the consumer group has rebalanced and assigned "
                        "partitions to another instance. If you see this regularly, it could indicate that you "
                        "need to either increase the consumer's session.timeout.ms or reduce the number of "
                        "records handled on each iteration with max.poll.records", self._log_ident)  # fmt: skip

    def shutdown(self) -> None:
        log.info("%s%s shutting down", self._log_ident, self.name)
        self._shutting_down.set()
        self.consumer.wakeup()

    def await_shutdown(self) -> None:
        self.join()
        log.info("%sMirror maker thread shutdown complete", self._log_ident)
