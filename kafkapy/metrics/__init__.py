"""Kafka's broker metrics (Yammer Meters, Histograms, Timers, Gauges named by MBean) and their export.

Modules: metric_name (MBean names), meter, histogram (Histogram, Timer), registry (MetricsRegistry,
KafkaMetricsGroup), jmx_rules (the Prometheus JMX exporter's Kafka rules), prometheus (the collector and the
HTTP endpoint). This package sits just above common/: every broker layer may record into it.
"""

from kafkapy.metrics.histogram import Histogram, Timer
from kafkapy.metrics.meter import Meter
from kafkapy.metrics.metric_name import MetricName, metric_name, parse_mbean_name
from kafkapy.metrics.registry import KafkaMetricsGroup, MetricsRegistry, Sample

__all__ = ["Histogram", "KafkaMetricsGroup", "Meter", "MetricName", "MetricsRegistry", "Sample", "Timer",
           "metric_name", "parse_mbean_name"]
