"""The errors the kafkapy data source raises, worded as Spark's Kafka source words them.

Spark's connector throws IllegalArgumentException / AssertionError / IllegalStateException with these
texts (KafkaSourceProvider, KafkaOffsetReader, KafkaDataConsumer); here they are ValueError subclasses
so a failed query shows the same sentence. Pure values; thread-safe.
"""

from __future__ import annotations

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you don't want your streaming query to fail on such cases, set the source option \"failOnDataLoss\" "
    "to \"false\"."
)

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you want your streaming query to fail on such cases, set the source option \"failOnDataLoss\" to "
    "\"true\"."
)


class KafkaSourceError(ValueError):
    """A bad option or offset specification (Spark: IllegalArgumentException / AssertionError)."""


class KafkaDataLossError(RuntimeError):
    """Offsets no longer (or not yet) in the log with failOnDataLoss=true (Spark: KAFKA_DATA_LOSS)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message} {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")


class KafkaSinkError(ValueError):
    """A bad write: missing value column, no topic, wrong column types (Spark's KafkaWriter wording)."""
