"""Metadata's invalid / unauthorized topics and the consumer's poll() raising them (Java's
Metadata.maybeThrowAnyException): a subscribed or assigned topic the broker calls INVALID_TOPIC_EXCEPTION
or TOPIC_AUTHORIZATION_FAILED never resolves, so poll() raises instead of waiting forever."""

from __future__ import annotations

import time
from typing import Any

import pytest
from client_fake_broker import FULL_TABLE, standard_handler

from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.metadata import Metadata
from kafkapy.common.errors import InvalidTopicExceptionError, TopicAuthorizationFailedError
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import MetadataResponse as R


def _response(port: int, errors: dict[str, int]) -> R:
    return R(brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port, rack=None)],
             cluster_id="fake", controller_id=1,
             topics=[R.MetadataResponseTopic(error_code=code, name=name, partitions=[])
                     for name, code in errors.items()])


def test_metadata_remembers_rejected_tracked_topics_until_thrown() -> None:
    md = Metadata(time=MockTime(1000))
    md.set_topics({"bad/x", "secret", "ok"})
    md.update(_response(9092, {"bad/x": 17, "secret": 29, "ok": 0, "untracked/x": 17}), ["bad/x", "secret", "ok"])
    assert md.cluster.invalid_topics == {"bad/x", "untracked/x"}
    with pytest.raises(TopicAuthorizationFailedError) as e:  # authorization first, as Java
        md.maybe_throw_any_exception()
    assert e.value.message == "Not authorized to access topics: [secret]"
    md.maybe_throw_any_exception()  # thrown once, then forgotten (both kinds)

    md.update(_response(9092, {"bad/x": 17, "a/b": 17}), ["bad/x", "a/b"])  # a/b is not tracked
    with pytest.raises(InvalidTopicExceptionError) as e:
        md.maybe_throw_any_exception()
    assert e.value.message == "Invalid topics: [bad/x]"

    md.update(_response(9092, {"secret": 29}), ["secret"])
    md.update(_response(9092, {"secret": 0}), ["secret"])  # authorized meanwhile: nothing to raise
    md.maybe_throw_any_exception()


@pytest.mark.parametrize(("code", "error", "message"), [
    (17, InvalidTopicExceptionError, "Invalid topics: [bad/x]"),
    (29, TopicAuthorizationFailedError, "Not authorized to access topics: [bad/x]"),
])
def test_poll_raises_for_an_assigned_topic_the_broker_rejects(fake_broker: Any, code: int, error: type,
                                                              message: str) -> None:
    port: list[int] = []

    def on_other(header: Any, body: Any) -> Any:
        if header.api_key == 3:
            return _response(port[0], {t.name: code for t in body.topics or ()})
        return None

    broker = fake_broker(standard_handler(FULL_TABLE, on_other))
    port.append(broker.port)
    consumer = KafkaConsumer({"bootstrap.servers": f"127.0.0.1:{broker.port}"})
    try:
        consumer.assign([TopicPartition("bad/x", 0)])
        start = time.monotonic()
        with pytest.raises(error) as e:
            consumer.poll(10000)
        assert time.monotonic() - start < 5
        assert e.value.message == message
    finally:
        consumer.close()
