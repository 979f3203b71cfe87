"""kafka-verifiable-consumer logic (Kafka's VerifiableConsumer): consume a topic in a group and print one
JSON event per line (group rebalances, records consumed, offsets committed), the contract Kafka's
system tests read.

Events (key order as Kafka's Jackson output):
  {"timestamp":..,"name":"startup_complete"}
  {"timestamp":..,"name":"partitions_assigned","partitions":[{"topic":"t","partition":0}]} (and partitions_revoked)
  {"timestamp":..,"name":"records_consumed","count":N,"partitions":[{"topic":"t","partition":0,"count":n,
   "minOffset":a,"maxOffset":b}]}   (count = records returned by the poll; per-partition counts are capped
   so the total never passes --max-messages)
  {"timestamp":..,"name":"record_data","key":..,"value":..,"topic":..,"partition":..,"offset":..} (--verbose)
  {"timestamp":..,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":n}],
   ["error":"..",]"success":true|false}   (only without --enable-autocommit; offsets in Java HashMap order)
  {"timestamp":..,"name":"shutdown_complete"}
Polls return only non-empty record sets (Kafka polls with an unbounded timeout); the loop ends at
--max-messages or when `stop` is set (SIGTERM/SIGINT in the cli), then the consumer is closed (which
revokes its partitions) and shutdown_complete is printed.

Thread-safety: one run on the caller's thread; the rebalance callbacks run inside poll()/close().
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kafkapy.tools.verifiable_producer import EventPrinter

POLL_SLICE_MS = 200  # Kafka polls with Long.MAX_VALUE; slices keep the stop flag responsive


def _text(b: Any) -> str | None:
    if b is None:
        return None
    return bytes(b).decode("utf-8", errors="replace") if isinstance(b, (bytes, bytearray, memoryview)) else str(b)


class VerifiableConsumer:
    def __init__(self, consumer: Any, topic: str, printer: EventPrinter, *, max_messages: int = -1,
                 use_auto_commit: bool = False, verbose: bool = False,
                 on_failure: Callable[[str], None] | None = None) -> None:
        self.consumer = consumer
        self.topic = topic
        self.printer = printer
        self.max_messages = max_messages
        self.use_auto_commit = use_auto_commit
        self.verbose = verbose
        self.consumed = 0
        self.on_failure = on_failure
        self.failed = False

    # --- ConsumerRebalanceListener ------------------------------------------------------------------

    @staticmethod
    def _partitions(tps: list[Any]) -> list[dict[str, Any]]:
        return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]

    def on_partitions_assigned(self, partitions: list[Any]) -> None:
        self.printer.event("partitions_assigned", ("partitions", self._partitions(partitions)))

    def on_partitions_revoked(self, partitions: list[Any]) -> None:
        self.printer.event("partitions_revoked", ("partitions", self._partitions(partitions)))

    def on_partitions_lost(self, partitions: list[Any]) -> None:
        self.on_partitions_revoked(partitions)  # Kafka's default onPartitionsLost

    # --- the loop -------------------------------------------------------------------------------------

    def has_message_limit(self) -> bool:
        return self.max_messages >= 0

    def is_finished(self) -> bool:
        return self.has_message_limit() and self.consumed >= self.max_messages

    def on_records_received(self, records: list[Any]) -> dict[Any, int]:
        """Summarise one poll (records_consumed), print record_data with --verbose; returns {tp: next offset}."""
        from kafkapy.common.topic_partition import TopicPartition

        by_partition: dict[Any, list[Any]] = {}
        for r in records:  # the poll's partitions in fetch order, as ConsumerRecords.partitions()
            tp = TopicPartition(r.topic, r.partition)
            group = by_partition.get(tp)
            if group is None:
                by_partition[tp] = [r]
            else:
                group.append(r)
        offsets: dict[Any, int] = {}
        summaries = []
        for tp, part in by_partition.items():
            if self.has_message_limit() and self.consumed + len(part) > self.max_messages:
                part = part[: self.max_messages - self.consumed]
            if not part:
                continue
            min_offset, max_offset = part[0].offset, part[-1].offset
            offsets[tp] = max_offset + 1
            summaries.append({"topic": tp.topic, "partition": tp.partition, "count": len(part),
                              "minOffset": min_offset, "maxOffset": max_offset})
            if self.verbose:
                for r in part:
                    self.printer.event("record_data", ("key", _text(r.key)), ("value", _text(r.value)),
                                       ("topic", r.topic), ("partition", r.partition), ("offset", r.offset))
            self.consumed += len(part)
            if self.is_finished():
                break
        self.printer.event("records_consumed", ("count", len(records)), ("partitions", summaries))
        return offsets

    def on_commit_complete(self, offsets: dict[Any, int], error: BaseException | None) -> None:
        from kafkapy.tools.tool_support import error_message, java_hash_order, topic_partition_hash

        ordered = java_hash_order(list(offsets), lambda tp: topic_partition_hash(tp.topic, tp.partition))
        committed = [{"topic": tp.topic, "partition": tp.partition, "offset": offsets[tp]} for tp in ordered]
        fields: list[tuple[str, Any]] = [("offsets", committed)]
        if error is not None:
            fields.append(("error", error_message(error)))
        fields.append(("success", error is None))
        self.printer.event("offsets_committed", *fields)

    def commit_sync(self, offsets: dict[Any, int]) -> None:
        try:
            self.consumer.commit_sync(offsets)
        except Exception as e:  # noqa: BLE001 - Kafka reports every commit failure as an event
            self.on_commit_complete(offsets, e)
            return
        self.on_commit_complete(offsets, None)

    def run(self, stop: threading.Event) -> None:
        self.printer.event("startup_complete")
        try:
            self.consumer.subscribe([self.topic], listener=self)
            while not self.is_finished() and not stop.is_set():
                records = self.consumer.poll(POLL_SLICE_MS)
                if not records:
                    continue
                offsets = self.on_records_received(records)
                if not self.use_auto_commit:
                    self.commit_sync(offsets)
        except Exception as e:  # noqa: BLE001 - Kafka logs the error (not on stdout) and shuts down
            self.failed = True
            if self.on_failure is not None:
                from kafkapy.tools.tool_support import error_message

                self.on_failure(f"Error during processing, terminating consumer process: {error_message(e)}")
        finally:
            try:
                self.consumer.close()
            finally:
                self.printer.event("shutdown_complete")
