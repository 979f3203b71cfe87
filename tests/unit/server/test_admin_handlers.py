"""Admin handlers with a fake ctx: controller timeouts and absence, delegation of transactional InitProducerId.

Handlers that need the controller never block their thread: they return DEFERRED and answer from the
"topic" purgatory once the controller's futures are done or the request times out (MockTime here)."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from kafkapy.common.errors import ErrorCode, NotControllerError
from kafkapy.common.time import MockTime
from kafkapy.protocol.messages import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    ElectLeadersRequest,
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from kafkapy.server.apis.cluster import handle_elect_leaders
from kafkapy.server.apis.producer_ids import handle_init_producer_id
from kafkapy.server.apis.registry import DEFERRED
from kafkapy.server.apis.topics import handle_create_partitions, handle_create_topics, handle_delete_topics
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.purgatory import DelayedOperationPurgatory


class StuckController:
    """Accepts every call and never answers (a controller busy elsewhere)."""

    is_active = True

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: Future()


class FakeCtx:
    def __init__(self, version: int, controller: Any = None, **server: Any) -> None:
        self.api_version = version
        config = KafkaConfig.from_properties(None, {"log.dirs": "/tmp/unused", "request.timeout.ms": "50"})
        cache = SimpleNamespace(contains_topic=lambda name: True, get_topic_name=lambda tid: None)
        self.time = MockTime()
        purgatory = DelayedOperationPurgatory("topic", self.time, reaper_enabled=False)
        self.server = SimpleNamespace(config=config, controller=controller, metadata_cache=cache, producer_id_manager=None,
                                      transaction_coordinator=None, topic_purgatory=purgatory, authorizer=None,
                                      quotas=None, **server)
        self.responses: list[Any] = []

    def respond(self, body: Any) -> None:
        self.responses.append(body)

    def authorize(self, *_: Any, **__: Any) -> bool:
        return True  # no authorizer configured

    def require(self, *_: Any) -> None:
        return None

    def answer(self, handler: Any, request: Any, wait_ms: int = 0) -> Any:
        """Run a handler, let `wait_ms` of mock time pass, and return its one response (answered at once when
        nothing reached the controller, else deferred)."""
        result = handler(self, request)
        if result is not DEFERRED:
            assert wait_ms == 0
            return result
        if wait_ms:
            assert self.responses == []  # still waiting for the controller: no thread was held
            self.time.advance(wait_ms)
            self.server.topic_purgatory.advance_clock(0)
        (resp,) = self.responses
        return resp


def test_create_topics_times_out_per_topic() -> None:
    req = CreateTopicsRequest(timeout_ms=30, topics=[CreateTopicsRequest.CreatableTopic(
        name="t", num_partitions=1, replication_factor=1)])
    resp = FakeCtx(5, StuckController()).answer(handle_create_topics, req, wait_ms=30)
    assert [(t.name, t.error_code, t.num_partitions) for t in resp.topics] == [("t", ErrorCode.REQUEST_TIMED_OUT, -1)]
    assert resp.topics[0].error_message == "Timed out waiting for the controller to create topics."
    req.timeout_ms = 0  # falls back to request.timeout.ms (50 here), still bounded
    ctx = FakeCtx(5, StuckController())
    assert handle_create_topics(ctx, req) is DEFERRED
    ctx.time.advance(49)
    ctx.server.topic_purgatory.advance_clock(0)
    assert ctx.responses == []
    ctx.time.advance(1)
    ctx.server.topic_purgatory.advance_clock(0)
    assert ctx.responses[0].topics[0].error_code == ErrorCode.REQUEST_TIMED_OUT


def test_no_controller_is_not_controller() -> None:
    req = CreateTopicsRequest(timeout_ms=30, topics=[CreateTopicsRequest.CreatableTopic(name="t")])
    resp = FakeCtx(5, None).answer(handle_create_topics, req)
    assert [t.error_code for t in resp.topics] == [ErrorCode.NOT_CONTROLLER]
    failed: Future = Future()
    failed.set_exception(NotControllerError("Broker 0 is not the active controller."))
    controller = SimpleNamespace(delete_topics=lambda names: failed, is_active=False)
    resp = FakeCtx(4, controller).answer(handle_delete_topics, DeleteTopicsRequest(topic_names=["a"], timeout_ms=1000))
    assert [(r.name, r.error_code) for r in resp.responses] == [("a", ErrorCode.NOT_CONTROLLER)]
    resp = FakeCtx(2, controller).answer(handle_elect_leaders, ElectLeadersRequest(
        topic_partitions=[ElectLeadersRequest.TopicPartitions(topic="a", partitions=[0])]))
    assert resp.error_code == ErrorCode.NOT_CONTROLLER
    assert [p.error_code for r in resp.replica_election_results for p in r.partition_result] == [ErrorCode.NOT_CONTROLLER]


def test_create_partitions_times_out() -> None:
    req = CreatePartitionsRequest(timeout_ms=20, topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name="t", count=2, assignments=None)])
    resp = FakeCtx(3, StuckController()).answer(handle_create_partitions, req, wait_ms=20)
    assert [(r.name, r.error_code) for r in resp.results] == [("t", ErrorCode.REQUEST_TIMED_OUT)]


def test_transactional_init_producer_id_goes_to_the_coordinator() -> None:
    calls = []

    class Coordinator:
        def handle_init_producer_id(self, transactional_id, timeout_ms, producer_id, producer_epoch, callback):
            calls.append((transactional_id, timeout_ms, producer_id, producer_epoch))
            callback(0, 4000, 3)

    ctx = FakeCtx(4)
    ctx.server.transaction_coordinator = Coordinator()
    req = InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=5000, producer_id=7, producer_epoch=2)
    assert handle_init_producer_id(ctx, req) is DEFERRED
    assert calls == [("tx", 5000, 7, 2)]
    (resp,) = ctx.responses
    assert isinstance(resp, InitProducerIdResponse)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (0, 4000, 3)


def test_idempotent_init_producer_id_without_a_store_uses_memory() -> None:
    ctx = FakeCtx(0)
    ids = [handle_init_producer_id(ctx, InitProducerIdRequest(transactional_id=None)).producer_id for _ in range(3)]
    assert ids == [0, 1, 2] and ctx.server.producer_id_manager is not None
