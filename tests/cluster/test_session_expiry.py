"""ZooKeeper session expiry and the zombie controller: a controller frozen (SIGSTOP) past
zookeeper.session.timeout.ms loses its session; another broker becomes controller with a higher epoch; the
thawed broker registers again (a new broker epoch) and resigns instead of acting as controller; brokers
refuse requests carrying the old controller epoch (STALE_CONTROLLER_EPOCH)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.messages.update_metadata import UpdateMetadataRequest

SESSION_TIMEOUT_S = 6.0


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def test_expired_controller_resigns_and_reregisters(cluster, wire_client) -> None:
    old = cluster.controller_id()
    old_epoch = cluster.zk_json("/controller_epoch")
    old_czxid = cluster.zk().exists(f"/brokers/ids/{old}").czxid
    pid = cluster.brokers[old].pid
    os.kill(pid, signal.SIGSTOP)
    try:
        new = cluster.wait_for(lambda: [c for c in [cluster.controller_id()] if c is not None and c != old],
                               SESSION_TIMEOUT_S + 20, what="another controller")[0]
    finally:
        os.kill(pid, signal.SIGCONT)
    assert cluster.zk_json("/controller_epoch") == old_epoch + 1
    # The thawed broker finds its session expired: it registers again (new czxid = new broker epoch) and
    # stays a broker; the controller stays with the new one.
    cluster.wait_for(lambda: (stat := cluster.zk().exists(f"/brokers/ids/{old}")) is not None
                     and stat.czxid != old_czxid, 30, what="the re-registration")
    time.sleep(2)
    assert cluster.controller_id() == new
    assert "ZooKeeper session expired" in cluster.brokers[old].output()
    # The cluster still works with the re-registered broker: a topic on all three brokers gets leaders.
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("after-expiry", 3, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: all((s := cluster.partition_state("after-expiry", p)) and s["leader"] >= 0
                                 for p in range(3)), 30, what="leaders of the new topic")
    # A request from the zombie's epoch is refused by every broker.
    for broker in cluster.brokers.values():
        client = wire_client(broker.port)
        resp = client.request(UpdateMetadataRequest(controller_id=old, controller_epoch=old_epoch, broker_epoch=-1,
                                                    topic_states=[], live_brokers=[]), 7)
        assert resp.error_code == ErrorCode.STALE_CONTROLLER_EPOCH
