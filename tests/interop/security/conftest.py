"""One in-process broker per test module with every kind of listener (see security_helpers.broker_overrides),
and test certificates generated at test time (security_certs.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from security_certs import Pki, generate
from security_helpers import SecureBroker, broker_overrides


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate(Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="module")
def secure_broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    from kafkapy.protocol.header import decode_request_header
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    log_dir = str(tmp_path_factory.mktemp("secure-data"))
    server = KafkaServer(KafkaConfig.from_properties(None, broker_overrides(pki, log_dir)))
    server.startup()
    handle = SecureBroker(server, pki, log_dir)
    lock = threading.Lock()
    real_handle = server.apis.handle

    def spy(request: Any) -> None:
        try:
            header, _ = decode_request_header(request.frame)
            with lock:
                handle.principals.append((request.listener_name, header.client_id or "", str(request.principal),
                                          header.api_key))
        except Exception:
            pass
        real_handle(request)

    server.apis.handle = spy
    try:
        yield handle
    finally:
        server.shutdown()
