"""StateChangeLogger: Kafka's `state.change.logger`, the log of every partition and replica state change.

Lines are Kafka's (ZkPartitionStateMachine / ZkReplicaStateMachine), prefixed as Kafka's StateChangeLogger
does: `[Controller id=0 epoch=1] Changed partition t-0 from NewPartition to OnlinePartition with state
LeaderAndIsr(leader=0, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=0, brokerEpoch=-1)),
leaderRecoveryState=RECOVERED, partitionEpoch=0)`. Partition changes to New/Online are INFO, other
partition changes and every replica change TRACE, failed or invalid changes ERROR; Kafka's default
log4j.properties sends the logger, at INFO, to state-change.log only.

Callers test `enabled(level)` once per batch of changes, so a disabled level costs one check per batch
rather than a string per partition.
Thread-safety: stateless apart from logging (thread-safe); used from the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.topic_partition import TopicPartition

STATE_CHANGE_LOGGER = "state.change.logger"
TRACE = 5  # log4j's TRACE, below DEBUG
logging.addLevelName(TRACE, "TRACE")

log = logging.getLogger(STATE_CHANGE_LOGGER)


def leader_and_isr_string(lai: LeaderAndIsr) -> str:
    """Kafka 3.9's LeaderAndIsr.toString (ZooKeeper mode stores no broker epochs: -1)."""
    isr = ", ".join(f"BrokerState(brokerId={b}, brokerEpoch=-1)" for b in lai.isr)
    return (f"LeaderAndIsr(leader={lai.leader}, leaderEpoch={lai.leader_epoch}, isrWithBrokerEpoch=List({isr}), "
            f"leaderRecoveryState={lai.leader_recovery_state.name}, partitionEpoch={lai.partition_epoch})")


class StateChangeLogger:
    def __init__(self, broker_id: int, in_controller_context: bool = True) -> None:
        self.broker_id = broker_id
        self.role = "Controller" if in_controller_context else "Broker"

    @staticmethod
    def enabled(level: int) -> bool:
        return log.isEnabledFor(level)

    def _prefix(self, epoch: int | None) -> str:
        return f"[{self.role} id={self.broker_id}{'' if epoch is None else f' epoch={epoch}'}] "

    def log(self, level: int, epoch: int | None, message: str) -> None:
        log.log(level, "%s%s", self._prefix(epoch), message)

    # -- the controller's lines -------------------------------------------------------------------------------

    def partitions_new(self, epoch: int, changes: Iterable[tuple[TopicPartition, str, tuple[int, ...]]]) -> None:
        """(partition, previous state, assigned replicas) moved to NewPartition."""
        if not log.isEnabledFor(logging.INFO):
            return
        for tp, previous, replicas in changes:
            self.log(logging.INFO, epoch, f"Changed partition {tp} state from {previous} to NewPartition with "
                                          f"assigned replicas {','.join(map(str, replicas))}")

    def partitions_online(self, epoch: int, changes: Iterable[tuple[TopicPartition, str, LeaderAndIsr]]) -> None:
        """(partition, previous state, its leadership now) moved to OnlinePartition."""
        if not log.isEnabledFor(logging.INFO):
            return
        for tp, previous, lai in changes:
            self.log(logging.INFO, epoch, f"Changed partition {tp} from {previous} to OnlinePartition with state "
                                          f"{leader_and_isr_string(lai)}")

    def partitions_changed(self, epoch: int, changes: Iterable[tuple[TopicPartition, str]], target: str) -> None:
        """(partition, previous state) moved to target (OfflinePartition, NonExistentPartition): TRACE."""
        if not log.isEnabledFor(TRACE):
            return
        for tp, previous in changes:
            self.log(TRACE, epoch, f"Changed partition {tp} state from {previous} to {target}")

    def partition_failed(self, epoch: int, tp: TopicPartition, previous: str, target: str, reason: str) -> None:
        self.log(logging.ERROR, epoch, f"Controller {self.broker_id} epoch {epoch} failed to change state for "
                                       f"partition {tp} from {previous} to {target}: {reason}")

    def replicas_changed(self, epoch: int, changes: Iterable[tuple[TopicPartition, int, str]], target: str) -> None:
        """(partition, replica, previous state) moved to target: TRACE."""
        if not log.isEnabledFor(TRACE):
            return
        for tp, replica, previous in changes:
            self.log(TRACE, epoch, f"Changed state of replica {replica} for partition {tp} from {previous} to "
                                   f"{target}")

    def replica_failed(self, epoch: int, tp: TopicPartition, replica: int, previous: str, target: str,
                       reason: str) -> None:
        self.log(logging.ERROR, epoch, f"Controller {self.broker_id} epoch {epoch} initiated state change of "
                                       f"replica {replica} for partition {tp} from {previous} to {target} failed: "
                                       f"{reason}")
