"""AdminClient against a scripted fake broker: routing to broker ids the metadata snapshot does not name
yet, and per-partition results of list_offsets / delete_records (missing topics fail fast).

The fake broker answers Metadata with one broker (node 1, itself) and the topics a test declares.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from client_fake_broker import api_versions_response

from kafkapy.client.admin import AdminClient, ConfigResource, ConfigResourceType
from kafkapy.client.connection import our_version_range
from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.protocol import messages as M

TABLE = {k: our_version_range(k) for k in (2, 3, 18, 21, 32, 35)}


def cluster_handler(port_of: dict[str, int], topics: dict[str, int], answer: Any) -> Any:
    """Metadata names node 1 (this broker) and `topics` ({name: partitions}, all led by node 1)."""

    def handle(header: Any, body: Any) -> Any:
        if header.api_key == 18:
            return api_versions_response(TABLE)
        if header.api_key == 3:
            R = M.MetadataResponse
            wanted = None if body.topics is None else [t.name for t in body.topics]
            names = sorted(topics) if wanted is None else wanted
            return R(brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port_of["port"], rack=None)],
                     cluster_id="fake", controller_id=1, topics=[
                         R.MetadataResponseTopic(name=n, error_code=0 if n in topics else 3, partitions=[
                             R.MetadataResponsePartition(partition_index=p, leader_id=1, leader_epoch=0,
                                                         replica_nodes=[1], isr_nodes=[1])
                             for p in range(topics.get(n, 0))])
                         for n in names])
        return answer(header, body)

    return handle


@pytest.fixture
def cluster(fake_broker):
    """start(topics, answer) -> AdminClient bootstrapped at a fake broker that calls itself node 1."""
    admins: list[AdminClient] = []

    def start(topics: dict[str, int], answer: Any, **configs: Any) -> tuple[AdminClient, Any]:
        port_of: dict[str, int] = {}
        broker = fake_broker(cluster_handler(port_of, topics, answer))
        port_of["port"] = broker.port
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.port}", "retry.backoff.ms": 10,
                             "retry.backoff.max.ms": 50, **configs})
        admins.append(admin)
        return admin, broker

    yield start
    for a in admins:
        a.close()


def describe_configs_answer(header: Any, body: Any) -> Any:
    R = M.DescribeConfigsResponse
    return R(results=[R.DescribeConfigsResult(
        error_code=0, error_message=None, resource_type=r.resource_type, resource_name=r.resource_name,
        configs=[R.DescribeConfigsResourceResult(name="log.retention.hours", value="168", read_only=False,
                                                 config_source=5, is_sensitive=False)])
        for r in body.resources])


def test_broker_resource_refreshes_metadata_for_an_unknown_broker_id(cluster) -> None:
    admin, broker = cluster({}, describe_configs_answer)
    assert admin.client.node_address(1) is None  # only the bootstrap node so far
    res = ConfigResource(ConfigResourceType.BROKER, "1")
    config = admin.describe_configs([res], timeout_ms=5000)[res]
    assert config.entries["log.retention.hours"].value == "168"
    assert [k for k, _v, _b in broker.requests] == [18, 3, 18, 32]  # bootstrap, metadata, then node 1 itself
    assert admin.api_versions(node_id=1, timeout_ms=5000)[32] == TABLE[32]


def test_broker_id_missing_from_fresh_metadata_times_out_as_java(cluster) -> None:
    admin, broker = cluster({}, describe_configs_answer)
    res = ConfigResource(ConfigResourceType.BROKER, "7")
    start = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="Timed out waiting for a node assignment. Call: describeConfigs"):
        admin.describe_configs([res], timeout_ms=300)
    assert time.monotonic() - start < 3
    assert 32 not in [k for k, _v, _b in broker.requests]
    assert sum(k == 3 for k, _v, _b in broker.requests) >= 2  # refreshed on every attempt
