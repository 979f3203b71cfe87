"""The purgatory: requests that wait without holding a handler thread (Kafka's server.purgatory).

- timer.py: TimerTask, SystemTimer (expirations in deadline order on the injected Time);
- delayed_operation.py: DelayedOperation (complete once: on its condition or on expiry);
- delayed_operation_purgatory.py: DelayedOperationPurgatory (operations watched by key);
- delayed_fetch.py, delayed_produce.py: the fetch / acks=-1 produce waits of the ReplicaManager, which
  reach it through small protocols (never by importing it);
- delayed_controller_operation.py: admin requests waiting for the controller ("topic" purgatory);
- group_delayed_operation.py: GroupDelayedOperation, the group coordinator's joins and heartbeats.

The two core classes are re-exported here. No byte format; see each module for thread-safety.
"""

from kafkapy.server.purgatory.delayed_operation import DelayedOperation
from kafkapy.server.purgatory.delayed_operation_purgatory import DelayedOperationPurgatory

__all__ = ["DelayedOperation", "DelayedOperationPurgatory"]
