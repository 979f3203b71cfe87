"""Kafka's internal topic names (Kafka's org.apache.kafka.common.internals.Topic), one home for the whole package.

`__consumer_offsets` holds group metadata and committed offsets, `__transaction_state` the transaction
coordinator's log, `__share_group_state` the share coordinator's (KIP-932, Kafka 4.x). INTERNAL_TOPICS
is Kafka 4.x's Topic.INTERNAL_TOPICS: the broker marks these `is_internal` in Metadata and refuses
client produce to them; the tools hide them with --exclude-internal. `__cluster_metadata` is KRaft's
log, not an internal topic in this sense.

Thread-safety: constants only.
"""

from __future__ import annotations

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
SHARE_GROUP_STATE_TOPIC_NAME = "__share_group_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME})


def is_internal_topic(name: str) -> bool:
    return name in INTERNAL_TOPICS
