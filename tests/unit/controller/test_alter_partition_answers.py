"""The controller's AlterPartition answers as KafkaController.processAlterPartition gives them, in the order
it checks them: a newer epoch than the controller knows -> NOT_CONTROLLER, an older leader epoch ->
FENCED_LEADER_EPOCH, the desired state already committed -> that state (a retry after a lost answer), another
partition epoch -> INVALID_UPDATE_VERSION."""

from __future__ import annotations

import pytest
from controller_harness import TIMEOUT, Harness

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.errors import FencedLeaderEpochError, InvalidUpdateVersionError, NotControllerError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import AlterPartitionItem

TP = TopicPartition("t", 0)


@pytest.fixture
def h(tmp_path):
    harness = Harness(str(tmp_path), broker_ids=(0, 1, 2))
    assert harness.create(("t", -1, -1, {0: [0, 1, 2]}, {}))["t"].error is None
    yield harness
    harness.stop()


def answer(h: Harness, proposed: LeaderAndIsr):
    return h.controller.alter_partition(0, -1, [AlterPartitionItem(TP, proposed)]).result(TIMEOUT)[TP]


def test_answers_in_kafka_order(h: Harness) -> None:
    cur = h.store.get_partition_states("t")[0].leader_and_isr
    assert (cur.leader, cur.leader_epoch, cur.isr) == (0, 0, (0, 1, 2))
    shrink = LeaderAndIsr(0, 0, (0, 2), partition_epoch=cur.partition_epoch)
    committed = answer(h, shrink)
    assert committed == LeaderAndIsr(0, 0, (0, 2), partition_epoch=cur.partition_epoch + 1)
    # The leader never got that answer and sends the same proposal again: the committed state comes back.
    assert answer(h, shrink) == committed
    # A different ISR at the old partition epoch: refused.
    assert isinstance(answer(h, LeaderAndIsr(0, 0, (0,), partition_epoch=cur.partition_epoch)),
                      InvalidUpdateVersionError)
    # A leader that knows a newer state than this controller: NOT_CONTROLLER (it looks the controller up again).
    assert isinstance(answer(h, LeaderAndIsr(0, 0, (0,), partition_epoch=committed.partition_epoch + 1)),
                      NotControllerError)
    assert isinstance(answer(h, LeaderAndIsr(0, 1, (0,), partition_epoch=committed.partition_epoch)),
                      NotControllerError)
    assert isinstance(answer(h, LeaderAndIsr(0, -1, (0,), partition_epoch=committed.partition_epoch)),
                      FencedLeaderEpochError)
    assert h.store.get_partition_states("t")[0].leader_and_isr == committed
