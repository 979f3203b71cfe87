"""Produce (api key 0), v0-12: hands each partition's records to the ReplicaManager and answers per partition.

Versions: v3+ must carry exactly one magic-2 batch per partition (checked by the ReplicaManager before
the CRC, as Kafka's ProduceRequest.validateRecords). v0-2 are served as Kafka 3.x served them: their
magic 0/1 message sets are up-converted to one magic-2 batch (the log stores magic 2 only). Kafka 4
still advertises v0 (but refuses v0-2) because librdkafka derives its compression feature flags from
the Produce range starting at 0 (KAFKA-18659); here v0-2 really work. acks must be -1, 0 or 1 (else
INVALID_REQUIRED_ACKS); acks=0 sends no response, but closes the connection if a partition failed, as
Kafka does, so the producer refreshes its metadata. The records stay a zero-copy memoryview of the
request frame until the log copies them once to assign offsets.
Thread-safety: stateless; the response is sent from whichever thread completes the append.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import ProduceRequest, ProduceResponse
from kafkapy.server.apis.registry import DEFERRED, api
from kafkapy.server.replica_manager import PartitionResponse

log = logging.getLogger("kafka.server.KafkaApis")
Resp = ProduceResponse


# A default current_leader shared by every answer (read only): PartitionProduceResponse() would otherwise build a
# fresh LeaderIdAndEpoch per partition, and the encoder only checks that it holds the defaults.
_NO_CURRENT_LEADER = Resp.LeaderIdAndEpoch()
_PartitionResp = Resp.PartitionProduceResponse
_TopicResp = Resp.TopicProduceResponse
_UNKNOWN = PartitionResponse(ErrorCode.UNKNOWN_SERVER_ERROR)


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
def handle_produce(ctx: Any, request: ProduceRequest) -> Any:
    services = ctx.server
    acks = request.acks
    if acks not in (-1, 0, 1):
        return produce_error_response(request, ctx.api_version, ErrorCode.INVALID_REQUIRED_ACKS)
    entries: dict[TopicPartition, Any] = {}
    for t in request.topic_data:
        name = t.name
        for p in t.partition_data:
            entries[TopicPartition(name, p.index)] = p.records

    def respond(results: dict[TopicPartition, PartitionResponse]) -> None:
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

    services.replica_manager.append_records(
        request.timeout_ms, acks, entries, respond, produce_version=ctx.api_version,
        transactional_id=request.transactional_id)
    return DEFERRED
