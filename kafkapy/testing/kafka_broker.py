"""KafkaBroker: an in-process kafkapy broker on 127.0.0.1 with an ephemeral port and a temporary log dir.

    with KafkaBroker() as broker:               # started; stopped and its log dir removed on exit
        broker.create_topic("orders", partitions=3, config={"retention.ms": "60000"})
        Producer({"bootstrap.servers": broker.bootstrap})

The broker is the embedded single node (its own controller) running in this process's threads, so it
starts in well under a second and any Kafka client connects to `broker.bootstrap` ("127.0.0.1:<port>").
`overrides` are server.properties keys (Kafka's names), applied over the test-friendly defaults below.
`log_dir=None` makes a temporary directory that stop() deletes; a given log_dir is kept.

Thread-safety: start()/stop() from one thread; create_topic() may be called from any thread.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from types import TracebackType
from typing import Any

# Small thread pools and no background retention pass: a test broker shares the machine with its tests.
TEST_BROKER_DEFAULTS: dict[str, str] = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "group.initial.rebalance.delay.ms": "0",
    "log.retention.check.interval.ms": "300000",
}


class KafkaBroker:
    """One in-process broker; a context manager (start on enter, stop on exit)."""

    def __init__(self, overrides: Mapping[str, Any] | None = None, log_dir: str | None = None) -> None:
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self._given_log_dir = log_dir
        self.log_dir: str | None = log_dir
        self.server: Any = None

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> KafkaBroker:
        from kafkapy.server.kafka_config import KafkaConfig
        from kafkapy.server.kafka_server import KafkaServer

        if self.server is not None:
            return self
        if self.log_dir is None:
            self.log_dir = tempfile.mkdtemp(prefix="kafkapy-test-")
        props = dict(TEST_BROKER_DEFAULTS)
        props["log.dirs"] = self.log_dir
        props.update(self.overrides)
        server = KafkaServer(KafkaConfig.from_properties(None, props))
        try:
            server.startup()
        except BaseException:
            self._remove_temp_dir()
            raise
        self.server = server
        return self

    def stop(self) -> None:
        server, self.server = self.server, None
        try:
            if server is not None:
                server.shutdown()
        finally:
            self._remove_temp_dir()

    def _remove_temp_dir(self) -> None:
        if self._given_log_dir is None and self.log_dir is not None:
            shutil.rmtree(self.log_dir, ignore_errors=True)
            self.log_dir = None

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.stop()

    # -- facts ----------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self.server is None:
            raise RuntimeError("KafkaBroker is not started")
        return int(self.server.bound_port())

    @property
    def bootstrap(self) -> str:
        """The `bootstrap.servers` string for any Kafka client."""
        return f"127.0.0.1:{self.port}"

    # -- helpers --------------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, Any] | None = None,
                     timeout_ms: int = 30_000) -> None:  # fmt: skip
        """CreateTopics through the broker's own protocol (as a client would); raises the broker's error
        (e.g. TopicAlreadyExistsError) if it fails. Returns once the topic's leaders are known."""
        from kafkapy.client.admin import AdminClient
        from kafkapy.client.admin_types import NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "client.id": "kafkapy-testing"})
        try:
            admin.create_topics([NewTopic(name, partitions, 1, None, {k: str(v) for k, v in (config or {}).items()})],
                                timeout_ms=timeout_ms)  # fmt: skip
        finally:
            admin.close()
