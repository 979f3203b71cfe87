"""kafkapy: Apache Kafka's broker and bin/ tools, in Python."""

__version__ = "0.1.0"
