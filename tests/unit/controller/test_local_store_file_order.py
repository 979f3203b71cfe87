"""LocalMetadataStore keeps its sorted path list across commits: after any mix of creates, updates,
ephemeral nodes and (recursive) deletes the file is byte for byte what a full rewrite produces, and a
reload sees the same nodes."""

from __future__ import annotations

import random

from kafkapy.controller.local_store import LocalMetadataStore
from kafkapy.controller.path_store import Create, Delete, SetData


def test_incremental_file_equals_a_full_rewrite(tmp_path) -> None:
    store = LocalMetadataStore(str(tmp_path))
    rng = random.Random(7)
    names = [f"/brokers/topics/t{i}" for i in range(12)] + ["/brokers/topics/t1-x", "/brokers/topics/t1/p"]
    for step in range(300):
        path = rng.choice(names)
        exists = store._get(path) is not None
        kind = rng.random()
        try:
            if not exists:
                store._multi([Create(path, {"step": step}, ephemeral=kind < 0.1)])
            elif kind < 0.5:
                store._multi([SetData(path, {"step": step})])
            elif kind < 0.75:
                store._multi([Create(path + f"/c{step}", {"child": step})])
            else:
                store._multi([Delete(path, recursive=True)])
        except Exception:  # noqa: BLE001 - e.g. a child under a deleted parent: the store refuses, nothing changes
            pass
        if step % 50 == 49:
            with open(store.path, encoding="utf-8") as f:
                incremental = f.read()
            store._persist()  # a full rewrite from the node map
            with open(store.path, encoding="utf-8") as f:
                assert f.read() == incremental
    reloaded = LocalMetadataStore(str(tmp_path))
    persistent = {p: (n.data, n.version) for p, n in store._nodes.items() if not n.ephemeral}
    assert {p: (n.data, n.version) for p, n in reloaded._nodes.items()} == persistent
