"""Produce (api key 0), v0-12: hands each partition's records to the ReplicaManager and answers per partition.

Versions (the request version's rules live here, not in the ReplicaManager): v3+ must carry exactly one
magic-2 batch per partition, zstd only from v7 (checked before the CRC, which the log checks once, as
Kafka's ProduceRequest.validateRecords in KafkaApis); a partition failing it is answered with its error
and never reaches the log. v0-2 are served as Kafka 3.x served them: their magic 0/1 message sets are
up-converted to one magic-2 batch (the log stores magic 2 only). Kafka 4
still advertises v0 (but refuses v0-2) because librdkafka derives its compression feature flags from
the Produce range starting at 0 (KAFKA-18659); here v0-2 really work. acks must be -1, 0 or 1 (else
INVALID_REQUIRED_ACKS); acks=0 sends no response, but closes the connection if a partition failed, as
Kafka does, so the producer refreshes its metadata. The records stay a zero-copy memoryview of the
request frame until the log copies them once to assign offsets.
Thread-safety: stateless; the response is sent from whichever thread completes the append.
"""

from __future__ import annotations

import logging
import struct
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, InvalidRecordError, KafkaError, UnsupportedCompressionTypeError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import ProduceRequest, ProduceResponse
from kafkapy.record.batch_header import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    MAGIC_OFFSET,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkapy.record.compression import CompressionType
from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.apis.registry import DEFERRED, Deferred, api
from kafkapy.server.partition_response import PartitionResponse, partition_error_response
from kafkapy.server.transaction_verification import verify_transaction_partitions

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")
Resp = ProduceResponse
_SIZE_AND_MAGIC = struct.Struct(">iib")  # batchLength, partitionLeaderEpoch, magic at byte 8
_ATTRIBUTES = struct.Struct(">h")
_BATCH_LENGTH = struct.Struct(">i")
LEGACY_MAX_DECOMPRESSED_BYTES = 1048588  # message.max.bytes' default


def validate_produce_batch_structure(records: Any, version: int) -> None:
    """Kafka's ProduceRequest.validateRecords (v3+), before any CRC work: exactly one batch, magic 2,
    no zstd before v7. Truncated input counts as no batch; a size field below 14 is CORRUPT_MESSAGE."""
    if version < 3:
        return
    n = 0 if records is None else len(records)
    what = f"Produce requests with version {version}"
    if n < 17:
        raise InvalidRecordError(f"{what} must have at least one record batch per partition")
    size, _epoch, magic = _SIZE_AND_MAGIC.unpack_from(records, 8)
    if size < 14:
        raise CorruptRecordError(f"Record size {size} is less than the minimum record overhead (14)")
    if size + 12 > n:
        raise InvalidRecordError(f"{what} must have at least one record batch per partition")
    if magic != 2:
        raise InvalidRecordError(f"{what} are only allowed to contain record batches with magic version 2")
    if version < 7 and n >= 23 and \
            _ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)[0] & COMPRESSION_CODEC_MASK == CompressionType.ZSTD:
        raise UnsupportedCompressionTypeError(f"{what} are not allowed to use ZStandard compression")
    if size + 12 < n:
        rest = n - size - 12
        if rest >= 12 and size + 12 + 12 + _BATCH_LENGTH.unpack_from(records, size + 12 + 8)[0] <= n:
            raise InvalidRecordError(f"{what} are only allowed to contain exactly one record batch per partition")


def has_transactional_records(request: ProduceRequest) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords: is the first batch of any partition a magic-2 batch with
    the isTransactional attribute (bit 4)? Header bytes only."""
    for t in request.topic_data:
        for p in t.partition_data:
            records = p.records
            if records is not None and len(records) >= 23 and records[MAGIC_OFFSET] >= 2 and \
                    _ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)[0] & TRANSACTIONAL_FLAG_MASK:
                return True
    return False


def up_convert_legacy_records(records: Any, max_bytes: int = LEGACY_MAX_DECOMPRESSED_BYTES) -> Any:
    """Produce v0-2 carry magic 0/1 message sets; like Kafka 3.x's LogValidator, convert them to one magic-2
    batch (same codec, keys, values, timestamps) since the log stores magic 2 only. Per-record work, on the
    legacy path only: requests that already carry magic 2 are returned as they are. A compressed wrapper
    may decompress to at most `max_bytes` (the broker's message.max.bytes): CORRUPT_MESSAGE past it."""
    if records is None or len(records) <= MAGIC_OFFSET or records[MAGIC_OFFSET] >= 2:
        return records
    builder: MemoryRecordsBuilder | None = None
    for legacy in MemoryRecords(records).batches():
        if legacy.magic >= 2:
            raise InvalidRecordError("A produce request mixes magic 2 batches with legacy message sets")
        legacy.ensure_valid()
        if builder is None:
            builder = MemoryRecordsBuilder(compression=legacy.compression)
        for r in legacy.records(max_bytes):
            builder.append(r.timestamp, r.key, r.value)
    if builder is None:
        raise InvalidRecordError("Produce requests must have at least one record per partition")
    return builder.build()


def apply_version_rules(records: Any, version: int, max_bytes: int = LEGACY_MAX_DECOMPRESSED_BYTES) -> Any:
    """The records a partition of a Produce request at `version` hands to the log: v0-2 up-converted to
    magic 2, v3+ structure-checked (raises the partition's KafkaError)."""
    if version < 3:
        return up_convert_legacy_records(records, max_bytes)
    validate_produce_batch_structure(records, version)
    return records


# A default current_leader shared by every answer (read only): PartitionProduceResponse() would otherwise build a
# fresh LeaderIdAndEpoch per partition, and the encoder only checks that it holds the defaults.
_NO_CURRENT_LEADER = Resp.LeaderIdAndEpoch()
_PartitionResp = Resp.PartitionProduceResponse
_TopicResp = Resp.TopicProduceResponse
_UNKNOWN = PartitionResponse(ErrorCode.UNKNOWN_SERVER_ERROR)
_TOPIC_UNAUTHORIZED = PartitionResponse(ErrorCode.TOPIC_AUTHORIZATION_FAILED)


def build_produce_response(request: ProduceRequest, results: dict[TopicPartition, PartitionResponse]) -> ProduceResponse:
    topics = []
    seen: set[TopicPartition] = set()
    for t in request.topic_data:
        name = t.name
        parts = []
        for p in t.partition_data:
            index = p.index
            tp = TopicPartition(name, index)
            if tp in seen:
                continue
            seen.add(tp)
            r = results.get(tp, _UNKNOWN)
            errors = r.record_errors
            parts.append(_PartitionResp(
                index=index, error_code=r.error, base_offset=r.base_offset, log_append_time_ms=r.log_append_time,
                log_start_offset=r.log_start_offset, error_message=r.error_message, current_leader=_NO_CURRENT_LEADER,
                record_errors=[Resp.BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=m)
                               for i, m in errors] if errors else []))
        topics.append(_TopicResp(name=name, partition_responses=parts))
    return ProduceResponse(responses=topics, throttle_time_ms=0)


def produce_error_response(request: ProduceRequest, version: int, code: int) -> ProduceResponse:
    results = {TopicPartition(t.name, p.index): PartitionResponse(code)
               for t in request.topic_data for p in t.partition_data}
    return build_produce_response(request, results)


@api(ApiKey.PRODUCE, 0, 12, error_response=produce_error_response)
def handle_produce(ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | Deferred:
    services = ctx.server
    acks = request.acks
    version = ctx.api_version
    if acks not in (-1, 0, 1):
        return produce_error_response(request, version, ErrorCode.INVALID_REQUIRED_ACKS)
    if has_transactional_records(request) and (request.transactional_id is None or not ctx.authorize(
            AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)):
        # Kafka: a transactional batch needs a transactional id the principal may WRITE; without this a batch
        # with no id (or another principal's) would open a transaction nobody ends, pinning the LSO.
        if acks == 0:  # no response to carry the error: close, as for any failed acks=0 partition
            ctx.close()
            return DEFERRED
        return produce_error_response(request, version, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    entries: dict[TopicPartition, Any] = {}
    refused: dict[TopicPartition, PartitionResponse] = {}
    legacy_max = services.config.get("message.max.bytes", LEGACY_MAX_DECOMPRESSED_BYTES) if version < 3 else 0
    for t in request.topic_data:
        name = t.name
        authorized = ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, name)
        for p in t.partition_data:
            tp = TopicPartition(name, p.index)
            if not authorized:
                refused[tp] = _TOPIC_UNAUTHORIZED
                continue
            try:
                entries[tp] = apply_version_rules(p.records, version, legacy_max)
            except KafkaError as e:
                refused[tp] = partition_error_response(e)
    def respond(results: dict[TopicPartition, PartitionResponse]) -> None:
        if refused:
            results = {**refused, **results}
        if acks == 0:
            if any(r.error for r in results.values()):
                ctx.close()
            else:
                ctx.no_response()
            return
        # May run on another request's thread (a purgatory completion): never let a failure escape there.
        try:
            ctx.respond(build_produce_response(request, results))
        except Exception:
            log.exception("Could not send the Produce v%d response to %s; closing its connection",
                          ctx.api_version, ctx.client_id)
            ctx.close()

    def append(unverified: dict[TopicPartition, PartitionResponse]) -> None:
        for tp, answer in unverified.items():
            del entries[tp]
            refused[tp] = answer
        if not entries:
            respond({})
            return
        services.replica_manager.append_records(request.timeout_ms, acks, entries, respond,
                                                transactional_id=request.transactional_id)

    if entries and request.transactional_id is not None:
        # KIP-890: a transactional batch only joins a transaction its coordinator knows (no hanging transaction);
        # `append` runs now, or when another broker's coordinator has answered.
        verify_transaction_partitions(services, request.transactional_id, entries, version, append)
    else:
        append({})
    return DEFERRED
