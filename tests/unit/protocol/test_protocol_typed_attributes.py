"""Typed attributes of generated messages: annotations follow the schema facts, every field exists (with its
spec default) at every version, and the generator's --check fails on a stale annotation or field list."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkapy.protocol import messages
from kafkapy.protocol.message import Struct
from kafkapy.protocol.messages import (
    REQUEST_CLASSES,
    RESPONSE_CLASSES,
    FetchResponse,
    MetadataResponse,
    ProduceRequest,
    ProduceResponse,
)

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def gen_protocol() -> ModuleType:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import gen_protocol
    finally:
        sys.path.pop(0)
    return gen_protocol


@pytest.fixture(scope="module")
def generated(gen_protocol: ModuleType) -> dict[Path, str]:
    files: dict[Path, str] = gen_protocol.generate(gen_protocol.specs_dir())
    return files


def _all_struct_classes() -> list[type[Struct]]:
    tops = [*REQUEST_CLASSES.values(), *RESPONSE_CLASSES.values()]
    tops += [getattr(messages, n) for n in messages.__all__ if n[0].isupper() and n not in (
        "REQUEST_CLASSES", "RESPONSE_CLASSES")]
    out: dict[str, type[Struct]] = {}
    for top in tops:
        out[top.__qualname__] = top
        for value in vars(top).values():
            if isinstance(value, type) and issubclass(value, Struct):
                out[value.__qualname__] = value
    return list(out.values())


def _own_annotations(cls: type) -> dict[str, Any]:
    return dict(cls.__dict__.get("__annotations__", {}))


def test_every_class_annotates_exactly_its_fields_in_order() -> None:
    classes = _all_struct_classes()
    assert len(classes) > 500
    for cls in classes:
        assert list(_own_annotations(cls)) == [f.name for f in cls.FIELDS], cls.__qualname__


def test_annotation_types_follow_the_json_types() -> None:
    assert _own_annotations(ProduceRequest) == {
        "transactional_id": "str | None", "acks": "int", "timeout_ms": "int",
        "topic_data": "list[ProduceRequest.TopicProduceData]",
    }
    # request records come from a client (bytes) or a decode (memoryview); a response's may be a FileRegion
    assert _own_annotations(ProduceRequest.PartitionProduceData)["records"] == "bytes | memoryview | None"
    fetched = _own_annotations(FetchResponse.PartitionData)
    assert fetched["records"] == "bytes | memoryview | FileRegion | None"
    assert fetched["aborted_transactions"] == "list[FetchResponse.AbortedTransaction] | None"
    assert fetched["current_leader"] == "FetchResponse.LeaderIdAndEpoch"
    topic = _own_annotations(MetadataResponse.MetadataResponseTopic)
    assert (topic["topic_id"], topic["is_internal"], topic["name"]) == ("UUID", "bool", "str | None")
    assert _own_annotations(ProduceResponse.PartitionProduceResponse)["error_message"] == "str | None"


def test_fields_a_version_lacks_hold_their_spec_default() -> None:
    # ProduceResponse v0: one topic, one partition (index 2, error 0, base offset 7), no throttle time.
    v0 = bytes.fromhex("00000001" "0001" "74" "00000001" "00000002" "0000" "0000000000000007")
    resp = ProduceResponse.decode(v0, 0)
    p = resp.responses[0].partition_responses[0]
    assert (resp.responses[0].name, p.index, p.error_code, p.base_offset) == ("t", 2, 0, 7)
    assert (p.log_append_time_ms, p.log_start_offset, p.record_errors, p.error_message) == (-1, -1, [], None)
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (-1, -1)
    assert (resp.throttle_time_ms, resp.node_endpoints) == (0, [])


def test_generator_source_carries_annotations_and_typed_constructor(generated: dict[Path, str],
                                                                    gen_protocol: ModuleType) -> None:
    src = generated[gen_protocol.MESSAGES_DIR / "produce.py"]
    assert "        records: bytes | memoryview | None\n" in src
    assert ("        def __init__(self, *, transactional_id: str | None = None, acks: int = 0, timeout_ms: int = 0, "
            "topic_data: list[ProduceRequest.TopicProduceData] = ...) -> None: ...\n") in src


def test_check_fails_on_a_stale_annotation_or_field_list(tmp_path: Path, generated: dict[Path, str],
                                                         gen_protocol: ModuleType) -> None:
    for path, text in generated.items():
        copy = tmp_path / path.relative_to(REPO)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text)
    assert gen_protocol.out_of_date(generated, tmp_path) == []

    produce = tmp_path / "kafkapy/protocol/messages/produce.py"
    text = produce.read_text()
    produce.write_text(text.replace("    acks: int\n", "    acks: str\n", 1))
    assert gen_protocol.out_of_date(generated, tmp_path) == ["kafkapy/protocol/messages/produce.py"]

    produce.write_text(text.replace("    timeout_ms: int\n", "", 1))  # an attribute missing from the list
    fetch = tmp_path / "kafkapy/protocol/messages/fetch.py"
    fetch.write_text(fetch.read_text().replace("FileRegion | None", "None"))
    (tmp_path / "kafkapy/protocol/messages/old_api.py").write_text("")
    assert gen_protocol.out_of_date(generated, tmp_path) == [
        "kafkapy/protocol/messages/fetch.py", "kafkapy/protocol/messages/produce.py",
        "kafkapy/protocol/messages/old_api.py (stale)",
    ]


def test_mypy_checks_attribute_access_on_messages(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    snippet = tmp_path / "uses_messages.py"
    snippet.write_text(
        "from kafkapy.protocol.messages import ProduceResponse\n"
        "resp = ProduceResponse.decode(b'', 9)\n"
        "p = resp.responses[0].partition_responses[0]\n"
        "start: int = p.log_start_offset\n"
        "p.log_start_ofset\n"
        "name: int = resp.responses[0].name\n"
        "ProduceResponse(throttle_time_ms='0')\n"
        "leader: int = p.current_leader.leader_id\n"
    )
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                        "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", "--hide-error-context",
                        "--no-pretty", str(snippet)],
                       capture_output=True, text=True, timeout=240, cwd=REPO)
    # line -> message: the typo, the wrong type read from a str field, a wrong constructor argument; the
    # correct reads (lines 4 and 8, a field of a version-dependent tagged struct included) pass
    errors = {int(line.split(":")[1]): line.split(": error: ")[1] for line in r.stdout.splitlines()
              if ": error: " in line}
    assert errors == {
        5: '"PartitionProduceResponse" has no attribute "log_start_ofset"; maybe "log_start_offset"?  [attr-defined]',
        6: 'Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]',
        7: 'Argument "throttle_time_ms" to "ProduceResponse" has incompatible type "str"; expected "int"  [arg-type]',
    }, r.stdout + r.stderr
