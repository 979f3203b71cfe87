"""AdminCalls: how every AdminClient request is sent (Java's KafkaAdminClient call plumbing).

`call(node, build, api_key, timeout_ms, handle, what)` sends build(version) to a node and returns
handle(response), retrying transport failures and retriable errors with backoff until the call's
timeout (default.api.timeout.ms). The node is an id, None (the least loaded broker) or a function of
the deadline (e.g. `controller`, or a group's coordinator looked up again on every attempt). A broker
id the metadata snapshot does not name (the snapshot starts with the bootstrap servers only)
refreshes metadata first, as Java's node providers wait for a metadata update; an id still unknown is
retried until the timeout ("Timed out waiting for a node assignment"). NOT_CONTROLLER refreshes the
metadata and retries.

The AdminClient (admin.py) owns one AdminCalls; its helper modules (admin_groups.py, admin_quotas.py,
admin_replicas.py) receive it explicitly. Thread-safety: stateless beyond the NetworkClient, which
is safe from several threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkapy.client.errors import DisconnectError, KafkaTimeoutError, error_from_code
from kafkapy.client.metadata import Cluster
from kafkapy.client.network_client import NetworkClient
from kafkapy.common.errors import KafkaError, NotControllerError
from kafkapy.common.time import Time


def error_or_none(code: int, message: str | None = None) -> KafkaError | None:
    """The KafkaError of a per-item error code, None for 0."""
    return error_from_code(code, message) if code else None


class UnknownNodeError(DisconnectError, code=DisconnectError.code, name=DisconnectError.name, retriable=True):
    """A broker id the refreshed metadata does not name (retriable: the broker may be registering)."""


class AdminCalls:
    def __init__(self, client: NetworkClient, time: Time, default_api_timeout_ms: int) -> None:
        self.client = client
        self.time = time
        self.default_api_timeout_ms = default_api_timeout_ms

    def timeout(self, timeout_ms: float | None) -> float:
        return self.default_api_timeout_ms if timeout_ms is None else timeout_ms

    def remaining(self, deadline: float) -> int:
        return max(1, int(deadline - self.time.milliseconds()))

    def controller(self, deadline: float) -> int:
        """A `call` target: the controller as the metadata names it (refreshed when unknown)."""
        cluster = self.client.cluster
        if cluster.controller_id < 0 or cluster.controller_id not in cluster.brokers:
            cluster = self.client.update_metadata([], self.remaining(deadline))
        if cluster.controller_id >= 0 and cluster.controller_id in cluster.brokers:
            return cluster.controller_id
        return self.client.least_loaded_node()

    def call(
        self,
        node: Callable[[float], int] | int | None,
        build: Callable[[int], Any],
        api_key: int,
        timeout_ms: float | None,
        handle: Callable[[Any], Any],
        what: str,
        max_version: int | None = None,
        min_version: int | None = None,
    ) -> Any:
        """Send build(version) to a node and return handle(response), retrying within the timeout."""
        timeout = self.timeout(timeout_ms)
        deadline = self.time.milliseconds() + timeout

        def attempt() -> Any:
            if callable(node):
                target = node(deadline)
            elif node is None:
                target = self.client.least_loaded_node()
            else:
                target = node
            self.ensure_node_known(target, deadline)
            resp = self.client.request(
                target, build, self.remaining(deadline), api_key=api_key,
                max_version=max_version, min_version=min_version,
            )
            try:
                return handle(resp)
            except NotControllerError:
                self.client.metadata.request_update()
                self.client.update_metadata([], self.remaining(deadline))
                raise

        try:
            return self.client.with_retries(attempt, timeout, what)
        except UnknownNodeError as e:
            raise KafkaTimeoutError(f"Timed out waiting for a node assignment. Call: {what}") from e

    def ensure_node_known(self, node_id: int, deadline: float) -> None:
        """Refresh metadata when a broker id (>= 0) is not in the snapshot yet; raise a retriable
        error if the refreshed metadata does not name it either."""
        if node_id < 0 or self.client.node_address(node_id) is not None:
            return
        self.client.update_metadata([], self.remaining(deadline))
        if self.client.node_address(node_id) is None:
            raise UnknownNodeError(f"Broker {node_id} is not in the cluster metadata")

    def metadata(self, topics: list[str] | None, deadline: float) -> Cluster:
        resp = self.client.fetch_metadata(topics, self.remaining(deadline))
        cluster = Cluster.from_response(resp)
        self.client.metadata.update(resp, topics if topics is not None else None)
        return cluster
