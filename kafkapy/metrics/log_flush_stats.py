"""LogFlushStats: Kafka's `kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs`, one Timer per process.

As in Kafka (a JVM-wide object), every Log's flush (the fsync of its segments up to an offset) updates it with
the flush's duration in milliseconds; a broker's registry serves it under that MBean name. Brokers sharing a
process (tests) share it. No byte format. Thread-safety: the Timer's own locks.
"""

from __future__ import annotations

from kafkapy.metrics.histogram import Timer

LOG_FLUSH_TIMER = Timer()
