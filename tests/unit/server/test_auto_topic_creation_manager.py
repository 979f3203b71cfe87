"""AutoTopicCreationManager (one per broker, on BrokerServices): Kafka's partitions / replication factor / configs
for __consumer_offsets, __transaction_state and ordinary topics; an internal topic asked for again within a second
is not sent twice, and that spacing belongs to one broker (two brokers in one process each send theirs); an
invalid name is INVALID_TOPIC_EXCEPTION. Also: a handler module that cannot be imported stops start-up."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import MockTime
from kafkapy.server.apis import registry
from kafkapy.server.auto_topic_creation_manager import AutoTopicCreationManager, auto_topic_creation_manager
from kafkapy.server.kafka_config import KafkaConfig


class RecordingController:
    def __init__(self) -> None:
        self.calls: list[list[tuple[Any, ...]]] = []

    def create_topics(self, topics: list[tuple[Any, ...]]) -> Future[dict[str, Any]]:
        self.calls.append(list(topics))
        f: Future[dict[str, Any]] = Future()
        f.set_result({})
        return f


def services(time: MockTime, **overrides: str) -> Any:
    config = KafkaConfig({"offsets.topic.num.partitions": "7", "transaction.state.log.num.partitions": "5",
                          "num.partitions": "3", **overrides})
    cache = SimpleNamespace(get_alive_brokers=lambda: [0])
    return SimpleNamespace(config=config, metadata_cache=cache, controller=RecordingController(), time=time,
                           auto_topic_creation_manager=None)


def test_specs_and_answers() -> None:
    s = services(MockTime())
    manager = AutoTopicCreationManager(s.config, s.metadata_cache, s.controller, s.time)
    assert manager.create_topics(["__consumer_offsets", "__transaction_state", "plain", "bad/name"]) == {
        "__consumer_offsets": ErrorCode.LEADER_NOT_AVAILABLE, "__transaction_state": ErrorCode.LEADER_NOT_AVAILABLE,
        "plain": ErrorCode.LEADER_NOT_AVAILABLE, "bad/name": ErrorCode.INVALID_TOPIC_EXCEPTION}
    (call,) = s.controller.calls
    by_name = {name: (partitions, rf, configs) for name, partitions, rf, _assignment, configs in call}
    assert by_name["__consumer_offsets"][:2] == (7, 1)
    assert by_name["__consumer_offsets"][2]["cleanup.policy"] == "compact"
    assert by_name["__transaction_state"][:2] == (5, 1)
    assert by_name["__transaction_state"][2]["min.insync.replicas"] == "1"
    assert by_name["plain"] == (3, 1, {})


def test_internal_topic_requests_spaced_per_broker() -> None:
    time = MockTime()
    a, b = services(time), services(time)
    for _ in range(3):
        auto_topic_creation_manager(a).create_internal_topic("__consumer_offsets")
    auto_topic_creation_manager(b).create_internal_topic("__consumer_offsets")
    assert (len(a.controller.calls), len(b.controller.calls)) == (1, 1)
    time.sleep(1000)
    auto_topic_creation_manager(a).create_internal_topic("__consumer_offsets")
    assert len(a.controller.calls) == 2
    assert a.auto_topic_creation_manager is auto_topic_creation_manager(a)


def test_handler_module_that_fails_to_import_stops_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "HANDLER_MODULES", (*registry.HANDLER_MODULES, "no_such_handler"))
    with pytest.raises(ImportError, match="kafkapy.server.apis.no_such_handler failed to import"):
        registry.load_handlers()
