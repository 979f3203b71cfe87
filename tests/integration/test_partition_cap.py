"""Kafka's per-request partition cap: a CreateTopics or CreatePartitions request that would add more than
10,000 partitions is refused whole with POLICY_VIOLATION, and the controller stays responsive."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

TIMEOUT_S = 30


def _error(future) -> KafkaError:
    with pytest.raises(KafkaException) as info:
        future.result(TIMEOUT_S)
    return info.value.args[0]


def test_create_topics_over_the_cap_is_a_policy_violation(kafkapy_broker) -> None:
    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    fs = admin.create_topics([NewTopic("cap-a", 6000, 1), NewTopic("cap-b", 6000, 1)], operation_timeout=10)
    for name in ("cap-a", "cap-b"):
        err = _error(fs[name])
        assert err.code() == KafkaError.POLICY_VIOLATION
        assert err.str() == "Excessively large number of partitions per request."
    assert "cap-a" not in admin.list_topics(timeout=10).topics
    # Under the cap, and the controller is still serving.
    admin.create_topics([NewTopic("cap-ok", 3, 1)])["cap-ok"].result(TIMEOUT_S)
    err = _error(admin.create_partitions([NewPartitions("cap-ok", 3 + 10_001)])["cap-ok"])
    assert err.code() == KafkaError.POLICY_VIOLATION
    admin.create_partitions([NewPartitions("cap-ok", 5)])["cap-ok"].result(TIMEOUT_S)
    assert len(admin.list_topics(timeout=10).topics["cap-ok"].partitions) == 5
