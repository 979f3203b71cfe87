"""Files holding credentials are owner-only (issue 15 finding 11): the embedded metadata file (SCRAM keys,
ACLs) is created 0600 whatever the umask, rewritten 0600 over a stale world-readable `.tmp`, and an existing
0644 file is tightened on start with one WARN line; a broker's run record (its argv may carry a JAAS
password) is 0600. (A SCRAM credential stored through a real broker: tests/integration/test_credential_file_mode.py.)"""

from __future__ import annotations

import json
import os
import stat

import pytest

from kafkapy.common.private_file import write_private_file
from kafkapy.controller.local_store import METADATA_FILE_NAME, LocalMetadataStore


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def loose_umask():
    old = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(old)


def test_metadata_file_is_created_0600(tmp_path, loose_umask):
    store = LocalMetadataStore(str(tmp_path))
    store.get_or_create_cluster_id("c1")
    path = tmp_path / METADATA_FILE_NAME
    assert mode(path) == 0o600
    assert not (tmp_path / (METADATA_FILE_NAME + ".tmp")).exists()
    store.close()


def test_stale_world_readable_tmp_does_not_leak(tmp_path, loose_umask):
    tmp = tmp_path / (METADATA_FILE_NAME + ".tmp")
    tmp.write_text("stale")
    os.chmod(tmp, 0o666)
    write_private_file(str(tmp_path / METADATA_FILE_NAME), b"{}")
    assert mode(tmp_path / METADATA_FILE_NAME) == 0o600


def test_existing_loose_file_is_tightened_on_start(tmp_path, caplog):
    store = LocalMetadataStore(str(tmp_path))
    store.get_or_create_cluster_id("c1")
    store.close()
    path = tmp_path / METADATA_FILE_NAME
    os.chmod(path, 0o644)
    caplog.set_level("WARNING", logger="kafkapy.common.private_file")
    reopened = LocalMetadataStore(str(tmp_path))
    assert mode(path) == 0o600 and reopened.get_cluster_id() == "c1"
    assert [r.getMessage() for r in caplog.records] == [f"{path} holds credentials and was mode 0644; changed to 0600"]
    reopened.close()


def test_run_record_is_0600(tmp_path, monkeypatch, loose_umask):
    from kafkapy.cli import server as srv
    from kafkapy.server.kafka_config import KafkaConfig

    monkeypatch.setenv("KAFKAPY_RUN_DIR", str(tmp_path / "run"))

    class Bound:
        def bound_port(self, listener_name=None) -> int:
            return 9092

    config = KafkaConfig.from_properties(None, {"log.dirs": str(tmp_path / "data"), "broker.id": "3", "node.id": "3"})
    written = srv._write_records(config, Bound(), None, [])
    assert written and all(mode(p) == 0o600 for p in written)
    record = json.loads(open(written[-1]).read())
    assert (record["nodeId"], record["processRoles"], record["boundPort"]) == (3, [], 9092)
