"""Cross-check against an independent implementation: kafka-python's hand-written protocol structs.

Random instances of our classes are encoded by us, decoded and re-encoded by kafka-python; the bytes
must be identical.  The exceptions are kafka-python's own deviations, each explained below.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from hypothesis import HealthCheck, given, settings
from protocol_strategies import instances

from kafkapy.protocol.messages import REQUEST_CLASSES, RESPONSE_CLASSES

old = pytest.importorskip("kafka.protocol.old")
api = pytest.importorskip("kafka.protocol.old.api")

KAFKA_PYTHON_DEVIATIONS = {
    # decodes any ApiVersions response with error_code != 0 as a v0 body (client fallback rule)
    "ApiVersionsResponse_v1", "ApiVersionsResponse_v2", "ApiVersionsResponse_v3", "ApiVersionsResponse_v4",
    "DescribeAclsRequest_v2", "DescribeAclsResponse_v2",  # v2 reuses the non-flexible v1 schema
    "DescribeLogDirsRequest_v0",  # declares Partitions as int32; Kafka's spec says []int32
}


def _kafka_python_classes() -> list[type]:
    found = set()
    for m in pkgutil.iter_modules(old.__path__):
        mod = importlib.import_module(f"kafka.protocol.old.{m.name}")
        for c in vars(mod).values():
            if (inspect.isclass(c) and issubclass(c, (api.Request, api.Response)) and c.__module__ == mod.__name__
                    and isinstance(getattr(c, "API_KEY", None), int)
                    and isinstance(getattr(c, "API_VERSION", None), int)):
                found.add(c)
    return sorted(found, key=lambda c: (c.API_KEY, c.__name__))


CASES = [c for c in _kafka_python_classes() if c.__name__ not in KAFKA_PYTHON_DEVIATIONS]


@pytest.mark.parametrize("kp_cls", CASES, ids=[c.__name__ for c in CASES])
def test_kafka_python_reencodes_our_bytes(kp_cls) -> None:
    ours = (REQUEST_CLASSES if issubclass(kp_cls, api.Request) else RESPONSE_CLASSES)[kp_cls.API_KEY]
    version = kp_cls.API_VERSION
    assert ours.VALID_VERSIONS[0] <= version <= ours.VALID_VERSIONS[1]

    @settings(max_examples=6, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(instances(ours, version))
    def run(msg) -> None:
        raw = msg.encode(version)
        assert kp_cls.decode(raw).encode() == raw

    run()
