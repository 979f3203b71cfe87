"""Start-up (issue 17 item 16): what a PLAINTEXT single node and a PLAINTEXT tool connection leave unloaded
and which idle threads a single node does not start.

Each check runs a fresh interpreter (a module loaded by an earlier test would hide a regression): an embedded
broker started through kafkapy.testing.KafkaBroker, one AdminClient round trip against it, then the list of
modules that must only load with the feature that needs them (TLS, SASL, delegation tokens, ZooKeeper mode,
the replica fetcher's client stack, the codec libraries, Prometheus, logging configuration files).
bench/bench_startup.py measures what this saves.
"""

from __future__ import annotations

import json
import subprocess
import sys

# module -> the feature that loads it
LAZY_MODULES = {
    "ssl": "a TLS listener or TLS client connection",
    "hashlib": "SCRAM / delegation tokens (SASL)",
    "kafkapy.server.security.sasl_server": "a SaslHandshake",
    "kafkapy.server.security.delegation_token_manager": "a delegation token request or SCRAM login",
    "kafkapy.server.security.scram_credentials": "a SCRAM credential request or SCRAM login",
    "kafkapy.server.network.ssl_transport": "a TLS listener",
    "kafkapy.client.sasl_client": "a SASL client connection",
    "kafkapy.client.ssl_transport": "a TLS client connection",
    "kafkapy.server.replica_fetcher_thread": "the first follower partition",
    "kafkapy.server.cluster_mode": "zookeeper.connect",
    "kazoo": "zookeeper.connect",
    "prometheus_client": "prometheus.listener",
    "cramjam": "the first snappy batch",
    "lz4": "the first lz4 batch",
    "zstandard": "the first zstd batch",
    "logging.config": "-daemon or --logging-config",
}

BROKER_SCRIPT = """
import json, sys, threading
from kafkapy.client.admin import AdminClient
from kafkapy.testing import KafkaBroker

with KafkaBroker() as broker:
    threads = sorted(t.name for t in threading.enumerate())
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    try:
        topics = sorted(admin.list_topics())
    finally:
        admin.close()
print(json.dumps({"topics": topics, "loaded": sorted(sys.modules), "threads": threads}))
"""

# thread name prefix -> what starts it
LAZY_THREADS = {
    "ExpirationReaper-": "the purgatory's first waiting operation",
    "group-metadata-manager-": "the first __consumer_offsets load or append",
    "transaction-log-": "the first __transaction_state load or append",
    "TxnMarkerSenderThread-": "the first transaction markers to send",
}

CODEC_SCRIPT = """
import json, sys
from kafkapy.record.compression import CompressionType, compress, decompress

before = [m for m in ("cramjam", "lz4", "zstandard") if m in sys.modules]
data = b"kafkapy " * 64
out = decompress(CompressionType.ZSTD, compress(CompressionType.ZSTD, data))
after = [m for m in ("cramjam", "lz4", "zstandard") if m in sys.modules]
print(json.dumps({"before": before, "after": after, "round_trip": out == data}))
"""


def run_fresh(script: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_plaintext_single_node_and_tool_connection_leave_optional_features_unloaded() -> None:
    result = run_fresh(BROKER_SCRIPT)
    assert result["topics"] == []  # the round trip really happened (a fresh broker has no topic)
    loaded = set(result["loaded"])
    unexpected = {m: why for m, why in LAZY_MODULES.items() if m in loaded}
    assert unexpected == {}
    # the broker's own layers did load: the check above is not vacuous
    assert {"kafkapy.server.kafka_server", "kafkapy.server.network.socket_server", "kafkapy.client.connection",
            "kafkapy.record.compression", "kafkapy.server.apis.sasl_authentication",
            "kafkapy.server.apis.delegation_tokens"} <= loaded


def test_single_node_starts_no_idle_worker_threads() -> None:
    threads = run_fresh(BROKER_SCRIPT)["threads"]
    started = {name: why for prefix, why in LAZY_THREADS.items() for name in threads if name.startswith(prefix)}
    assert started == {}
    assert any(name.startswith("controller-event-thread-") for name in threads)  # the broker is up


def test_codec_library_loads_with_its_first_batch_only() -> None:
    result = run_fresh(CODEC_SCRIPT)
    assert result == {"before": [], "after": ["zstandard"], "round_trip": True}
