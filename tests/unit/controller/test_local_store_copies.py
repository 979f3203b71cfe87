"""LocalMetadataStore hands out and keeps copies of node data (its JSON copy, cheaper than copy.deepcopy): a
caller mutating what it wrote or read never changes the stored node, in memory or in the file."""

from __future__ import annotations

import json
import os

from kafkapy.controller.local_store import METADATA_FILE_NAME, LocalMetadataStore
from kafkapy.controller.path_store import Create, SetData


def test_written_and_read_data_are_copies(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    data = {"version": 1, "isr": [0, 1], "nested": {"replicas": [[0, 1], [1, 0]]}, "leader": 0, "ratio": 0.5,
            "note": None, "flag": True}
    store._multi([Create("/x/state", data)])
    data["isr"].append(2)
    data["nested"]["replicas"][0].append(9)
    read, stat = store._get("/x/state")
    assert read == {"version": 1, "isr": [0, 1], "nested": {"replicas": [[0, 1], [1, 0]]}, "leader": 0,
                    "ratio": 0.5, "note": None, "flag": True}
    assert stat.version == 0
    read["isr"].clear()
    read["nested"]["replicas"].pop()
    assert store._get("/x/state")[0]["isr"] == [0, 1]
    assert store._get("/x/state")[0]["nested"] == {"replicas": [[0, 1], [1, 0]]}

    update = {"isr": [1]}
    store._multi([SetData("/x/state", update, 0)])
    update["isr"].append(5)
    assert store._get("/x/state")[0] == {"isr": [1]}
    with open(os.path.join(tmp_path, METADATA_FILE_NAME)) as f:
        assert json.load(f)["nodes"]["/x/state"] == {"data": {"isr": [1]}, "version": 1, "czxid": 1}
