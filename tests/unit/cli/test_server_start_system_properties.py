"""server-start's `-Dkey=value` arguments become JVM-style system properties in $KAFKA_OPTS, where the broker's
ZooKeeper login (java.security.auth.login.config) is read."""

from __future__ import annotations

import pytest

from kafkapy.cli.server import _take_system_properties
from kafkapy.zk.zk_client_config import system_properties


def test_dash_d_arguments_join_kafka_opts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_OPTS", "-Dzookeeper.sasl.clientconfig=ZkClient")
    rest = _take_system_properties(["-Djava.security.auth.login.config=/etc/kafka/my jaas.conf", "server.properties",
                                    "--override", "zookeeper.set.acl=true", "-daemon"])
    assert rest == ["server.properties", "--override", "zookeeper.set.acl=true", "-daemon"]
    assert system_properties() == {"zookeeper.sasl.clientconfig": "ZkClient",
                                   "java.security.auth.login.config": "/etc/kafka/my jaas.conf"}


def test_without_dash_d_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    assert _take_system_properties(["config/server.properties"]) == ["config/server.properties"]
    assert system_properties() == {}
