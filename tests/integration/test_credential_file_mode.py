"""A SCRAM credential stored through a real broker (AlterUserScramCredentials from kafkapy's AdminClient) lands
in the embedded metadata file, which is 0600 even under umask 000 (issue 15 finding 11)."""

from __future__ import annotations

import json
import os
import stat

from kafkapy.common.scram import MECHANISMS, ScramCredential
from kafkapy.controller.local_store import METADATA_FILE_NAME


def test_scram_credential_through_a_broker_lands_in_a_0600_file(tmp_path):
    from kafkapy.client.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    server = KafkaServer(KafkaConfig.from_properties(None, {"listeners": "PLAINTEXT://127.0.0.1:0",
                                                            "log.dirs": str(tmp_path / "data"),
                                                            "num.network.threads": "1", "num.io.threads": "2"}))
    old_umask = os.umask(0o000)
    try:
        server.startup()
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{server.bound_port()}"})
        try:
            assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
                "bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "bob-secret")]) == {"bob": None}
        finally:
            admin.close()
        path = tmp_path / "data" / METADATA_FILE_NAME
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        stored = ScramCredential.from_config_string(
            json.loads(path.read_text())["nodes"]["/config/users/bob"]["data"]["config"]["SCRAM-SHA-256"])
        assert stored == ScramCredential.from_password(MECHANISMS["SCRAM-SHA-256"], "bob-secret", stored.salt, 4096)
    finally:
        os.umask(old_umask)
        server.shutdown()
