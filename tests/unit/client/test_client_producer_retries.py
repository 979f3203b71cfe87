"""The producer's Sender against a scripted broker: retries, idempotent sequences, delivery timeout."""

from __future__ import annotations

from typing import Any

from client_fake_broker import FULL_TABLE, HANG, api_versions_response

from kafkapy.client.producer import KafkaProducer
from kafkapy.common.errors import KafkaError
from kafkapy.protocol.messages import InitProducerIdResponse, MetadataResponse, ProduceResponse
from kafkapy.record.memory_records import MemoryRecords


def scripted(port_ref: list[int], produce_errors: list[int]) -> Any:
    """A one-broker cluster with topic t (1 partition); Produce answers pop errors, then succeed.
    InitProducerId hands out producer ids 77, 78, ..."""
    log_end = [0]
    next_pid = [77]

    def handle(header: Any, body: Any) -> Any:
        if header.api_key == 18:
            return api_versions_response({**FULL_TABLE, 22: (0, 4)})
        if header.api_key == 3:
            R = MetadataResponse
            return R(
                brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port_ref[0])],
                cluster_id="c", controller_id=1,
                topics=[R.MetadataResponseTopic(error_code=0, name="t", partitions=[
                    R.MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, leader_epoch=0,
                                                replica_nodes=[1], isr_nodes=[1])])],
            )
        if header.api_key == 22:
            next_pid[0] += 1
            return InitProducerIdResponse(error_code=0, producer_id=next_pid[0] - 1, producer_epoch=3)
        if header.api_key == 0:
            R = ProduceResponse
            code = produce_errors.pop(0) if produce_errors else 0
            base = -1
            if code == 0:
                records = body.topic_data[0].partition_data[0].records
                n = sum(b.records_count for b in MemoryRecords(records).batches())
                base = log_end[0]
                log_end[0] += n
            return R(responses=[R.TopicProduceResponse(name="t", partition_responses=[
                R.PartitionProduceResponse(index=0, error_code=code, base_offset=base)])])
        return HANG

    return handle


def test_retriable_error_is_retried_with_same_sequence(fake_broker) -> None:
    port: list[int] = []
    broker = fake_broker(scripted(port, [6, 6]))  # NOT_LEADER_OR_FOLLOWER twice
    port.append(broker.port)
    producer = KafkaProducer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "retry.backoff.ms": 10,
                              "linger.ms": 0})
    try:
        md = [producer.send("t", b"v%d" % i, key=b"k") for i in range(3)]
        producer.flush(10)
        assert [m.result(0).offset for m in md] == [0, 1, 2]
    finally:
        producer.close(5)
    produces = [b for k, _, b in broker.requests if k == 0]
    assert len(produces) >= 3
    batches = [next(MemoryRecords(p.topic_data[0].partition_data[0].records).batches()) for p in produces]
    # Every attempt of the first batch carries the producer id/epoch and sequence 0.
    assert all(b.producer_id == 77 and b.producer_epoch == 3 for b in batches)
    assert batches[0].base_sequence == batches[1].base_sequence == batches[2].base_sequence == 0
    assert [r.value for r in batches[2].records()][:1] == [b"v0"]


def test_non_retriable_error_fails_the_records(fake_broker) -> None:
    port: list[int] = []
    broker = fake_broker(scripted(port, [10]))  # MESSAGE_TOO_LARGE
    port.append(broker.port)
    producer = KafkaProducer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "enable.idempotence": False,
                              "acks": "1", "linger.ms": 0})
    errors: list = []
    try:
        fut = producer.send("t", b"x", callback=lambda md, err: errors.append(err))
        producer.flush(10)
        exc = fut.exception(0)
        assert isinstance(exc, KafkaError) and exc.name == "MESSAGE_TOO_LARGE"
        assert errors == [exc]
    finally:
        producer.close(5)


def test_delivery_timeout_bounds_retries(fake_broker) -> None:
    port: list[int] = []
    broker = fake_broker(scripted(port, [6] * 1000))
    port.append(broker.port)
    producer = KafkaProducer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "retry.backoff.ms": 20,
                              "delivery.timeout.ms": 500, "request.timeout.ms": 400, "linger.ms": 0})
    try:
        fut = producer.send("t", b"x")
        exc = fut.exception(5)
        assert isinstance(exc, KafkaError) and exc.retriable
    finally:
        producer.close(5)


def test_failed_sequenced_batch_resets_producer_id(fake_broker) -> None:
    port: list[int] = []
    broker = fake_broker(scripted(port, [10]))  # the first batch fails for good
    port.append(broker.port)
    producer = KafkaProducer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "linger.ms": 0,
                              "retry.backoff.ms": 10})
    try:
        first = producer.send("t", b"a")
        assert first.exception(5) is not None
        second = producer.send("t", b"b")
        assert second.result(5).offset == 0
    finally:
        producer.close(5)
    produces = [b for k, _, b in broker.requests if k == 0]
    batches = [next(MemoryRecords(p.topic_data[0].partition_data[0].records).batches()) for p in produces]
    assert [(b.producer_id, b.base_sequence) for b in batches] == [(77, 0), (78, 0)]
    assert all(b.is_valid() for b in batches)


def test_restamp_producer_state_keeps_crc_valid() -> None:
    from kafkapy.client.sender import restamp_producer_state
    from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

    builder = MemoryRecordsBuilder(producer_id=1, producer_epoch=0, base_sequence=5)
    builder.append(1, b"k", b"v")
    out = restamp_producer_state(builder.build(), 9, 2, 40)
    (batch,) = MemoryRecords(out).batches()
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (9, 2, 40)
    assert batch.is_valid()
    assert [(r.key, r.value) for r in batch.records()] == [(b"k", b"v")]
