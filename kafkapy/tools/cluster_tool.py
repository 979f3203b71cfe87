"""`kafkapy cluster` logic (Kafka's ClusterTool, kafka-cluster.sh): cluster-id and unregister.

cluster-id: DescribeCluster (Metadata on older brokers) -> `Cluster ID: <id>`, or Kafka's "No cluster ID found.
The Kafka version is probably too old." unregister: UnregisterBroker (API 64, KRaft clusters) when the cluster
advertises it, else Kafka's "The target cluster does not support the broker unregistration API." (what a
ZooKeeper-mode cluster, kafkapy's included, answers). No byte format. Thread-safety: one run per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.errors import error_for_code

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

UNREGISTER_BROKER = 64


def cluster_id(admin: AdminClient) -> str | None:
    return admin.describe_cluster().cluster_id or None


def unregister(admin: AdminClient, broker_id: int) -> bool:
    """True when the broker was unregistered; False when the cluster lacks the API. Raises its error."""
    versions = admin.api_versions()
    if UNREGISTER_BROKER not in versions:
        return False
    from kafkapy.protocol.messages import UnregisterBrokerRequest, UnregisterBrokerResponse

    calls = admin._calls  # the AdminClient's call machinery (retries, controller routing)

    def build(version: int) -> UnregisterBrokerRequest:
        return UnregisterBrokerRequest(broker_id=broker_id)

    def handle(resp: UnregisterBrokerResponse) -> None:
        if resp.error_code:
            raise error_for_code(resp.error_code)(resp.error_message or "")

    calls.call(None, build, UNREGISTER_BROKER, calls.timeout(None), handle, "unregisterBroker")
    return True
