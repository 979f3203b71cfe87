"""The AdminApi seam (kafkapy/client/admin_api.py): which admin path has the log-dir calls, what reassign-partitions
does on a path without them, and tool_support.listed_offset. mypy checks the signatures (zk_admin.py's
TYPE_CHECKING block); these check the run-time side of the same seam."""

from __future__ import annotations

import pytest

from kafkapy.client.admin import AdminClient
from kafkapy.client.admin_api import ReplicaLogDirsApi
from kafkapy.client.admin_types import ListOffsetsResultInfo
from kafkapy.common.errors import NotLeaderOrFollowerError
from kafkapy.common.topic_partition import TopicPartition as TP
from kafkapy.tools import reassign_partitions as rp
from kafkapy.tools.reassign_json import ReassignError
from kafkapy.tools.tool_support import listed_offset
from kafkapy.tools.zk_admin import ZkAdmin
from tests.unit.tools.test_reassign_json import FakeAdmin, nodes

LOG_DIR_MOVE = '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["/data/d2"]}]}'


def test_only_the_wire_path_moves_replicas_between_log_dirs() -> None:
    assert issubclass(AdminClient, ReplicaLogDirsApi)
    assert not issubclass(ZkAdmin, ReplicaLogDirsApi)


def test_log_dir_moves_on_a_path_without_them_fail_with_kafkas_kind_of_message() -> None:
    admin = FakeAdmin({"a": [[1]]}, nodes({1: None}))
    with pytest.raises(ReassignError) as execute:
        rp.execute_assignment(admin, LOG_DIR_MOVE)
    assert str(execute.value) == ('Moving replicas between log directories ("log_dirs" other than "any") needs the '
                                  "AlterReplicaLogDirs API: use --bootstrap-server")
    assert admin.altered == []  # refused before any reassignment started
    with pytest.raises(ReassignError) as verify:  # was an AttributeError (no describe_log_dirs)
        rp.verify_assignment(admin, LOG_DIR_MOVE)
    assert str(verify.value) == "Verifying log directory moves needs the AlterReplicaLogDirs API: use --bootstrap-server"


def test_verify_without_log_dirs_needs_no_log_dir_api() -> None:
    admin = FakeAdmin({"a": [[1]]}, nodes({1: None}))
    result = rp.verify_assignment(admin, '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]}]}')
    assert result.partitions_ongoing is False
    assert result.moves == {}
    assert TP("a", 0) in result.partitions


def test_listed_offset_reads_an_answer_and_raises_a_returned_error() -> None:
    assert listed_offset(ListOffsetsResultInfo(42, -1, None)) == 42
    assert listed_offset(None) is None
    with pytest.raises(NotLeaderOrFollowerError):
        listed_offset(NotLeaderOrFollowerError("moved"))
