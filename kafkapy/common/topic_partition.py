"""TopicPartition: the (topic, partition) pair, printed as Kafka prints it (`topic-0`). Immutable."""

from __future__ import annotations

from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TopicPartition:
        topic, _, part = text.rpartition("-")
        if not topic or not part.lstrip("-").isdigit():
            raise ValueError(f"not a topic-partition: {text!r}")
        return cls(topic, int(part))
