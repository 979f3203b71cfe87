"""kafkapy jmx's JmxTool formatting (Java value strings, report formats, SimpleDateFormat, --jmx-url forms) and
e2e-latency's java.util.Random payloads."""

from __future__ import annotations

from datetime import datetime

import pytest

from kafkapy.cli.jmx import format_date
from kafkapy.tools import ToolFailure
from kafkapy.tools.e2e_latency import JavaRandom, payloads
from kafkapy.tools.jmx import header_line, java_string, jmx_endpoint, row_lines


def test_java_value_strings() -> None:
    cases = {1000: "1000", 0.75: "0.75", 3.0: "3.0", 0.0: "0.0", 319895480.0: "3.1989548E8", 1.0e7: "1.0E7",
             12345678.9: "1.23456789E7", 0.0001: "1.0E-4", 2.5e-10: "2.5E-10", -4.5e8: "-4.5E8", True: "true",
             None: "null", "messages": "messages", float("nan"): "NaN"}
    for value, text in cases.items():
        assert java_string(value) == text, value


def test_report_formats() -> None:
    keys = ["time", "kafka.server:type=A,name=B:Count", "kafka.server:type=A,name=B:MeanRate"]
    values = {"time": "1700000000000", keys[1]: 5, keys[2]: 0.5}
    assert header_line(keys) == '"time","kafka.server:type=A,name=B:Count","kafka.server:type=A,name=B:MeanRate"'
    assert list(row_lines("original", keys, values)) == ["1700000000000,5,0.5"]
    assert list(row_lines("properties", keys, values))[1] == "kafka.server:type=A,name=B:Count=5"
    assert list(row_lines("csv", keys, values))[2] == 'kafka.server:type=A,name=B:MeanRate,"0.5"'
    assert list(row_lines("tsv", keys, values))[0] == "time\t1700000000000"


def test_simple_date_format() -> None:
    when = datetime(2024, 3, 5, 14, 7, 9, 123456)
    assert format_date("yyyy-MM-dd HH:mm:ss.SSS", when) == "2024-03-05 14:07:09.123"
    assert format_date("yyyy-MM-dd'T'HH:mm", when) == "2024-03-05T14:07"


def test_jmx_url_forms() -> None:
    assert jmx_endpoint("http://127.0.0.1:9404") == "http://127.0.0.1:9404/jmx"
    assert jmx_endpoint("http://127.0.0.1:9404/metrics") == "http://127.0.0.1:9404/jmx"
    assert jmx_endpoint("127.0.0.1:9404") == "http://127.0.0.1:9404/jmx"
    with pytest.raises(ToolFailure, match="Could not connect to JMX url service:jmx:rmi"):
        jmx_endpoint("service:jmx:rmi:///jndi/rmi://:9999/jmxrmi")


def test_java_random_matches_java() -> None:
    # new Random(0).nextInt() == -1155484576, new Random(0).nextInt(100) == 60, new Random(42).nextInt(10) == 0
    assert JavaRandom(0)._next(32) == -1155484576
    assert JavaRandom(0).next_int(100) == 60
    assert JavaRandom(42).next_int(10) == 0
    first, second = payloads(4, 2)
    assert len(set(first)) == 1 and first[:1].isupper() and len(second) == 4
