"""Fixtures shared by the interop modules: compiling a Java check program against Apache Kafka's own client.

The jars are the test extra's kafka-clients 3.9.1 and its dependencies, shipped inside pyflink's lib/;
javac comes from the Makefile's test-deps step.
"""

from __future__ import annotations

import importlib.util
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

CompileJava = Callable[[Path, Sequence[str]], str]


@pytest.fixture(scope="session")
def compile_java(tmp_path_factory: pytest.TempPathFactory) -> CompileJava:
    """`compile_java(source, jar_names)` compiles one .java file and returns the classpath to run it with."""

    def compile_one(source: Path, jar_names: Sequence[str]) -> str:
        spec = importlib.util.find_spec("pyflink")
        assert spec is not None and spec.submodule_search_locations, "pip install -e '.[test]' (the Java client jars)"
        lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
        jars = [str(lib / f"{name}.jar") for name in jar_names]
        out = tmp_path_factory.mktemp(f"java-{source.stem}")
        # javac's own JVM with C1 only and the serial collector: a one-file compile is over before C2 pays off.
        compiled = subprocess.run(["javac", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-d", str(out), "-cp",
                                   ":".join(jars), str(source)],
                                  capture_output=True, text=True, timeout=120)
        assert compiled.returncode == 0, compiled.stderr
        return ":".join([str(out), *jars])

    return compile_one
