#!/usr/bin/env python3
"""Run tests against AddressSanitizer + UndefinedBehaviorSanitizer builds of kafkapy's C extensions.

Copies kafkapy/, tests/ and pyproject.toml into a scratch directory (default /tmp/kafkapy-sanitized; never the
checkout or the venv), compiles every `[[tool.setuptools.ext-modules]]` of pyproject.toml there with
`-fsanitize=address,undefined` (undefined behaviour aborts), and runs pytest from that copy with libasan and
libubsan preloaded and PYTHONMALLOC=malloc, so any read or write outside a buffer, use after free or signed
overflow in an extension stops the run with the sanitizer's report. Leak detection is off (the interpreter
keeps its memory at exit). Bounded by --timeout.

  scripts/sanitize_extensions.py tests/unit/record tests/unit/metrics tests/unit/spark
  KAFKAPY_FUZZ_CASES=200000 scripts/sanitize_extensions.py tests/unit/record/test_record_walk_fuzz.py

Needs gcc with libasan/libubsan (Debian: gcc). Exits with pytest's status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["-shared", "-fPIC", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
         "-fno-sanitize-recover=undefined"]


def copy_tree(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for name in ("kafkapy", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def build(dest: Path) -> list[str]:
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    include = sysconfig.get_paths()["include"]
    built = []
    for ext in modules:
        out = dest / (ext["name"].replace(".", "/") + suffix)
        subprocess.run(["gcc", *FLAGS, f"-I{include}", *(str(dest / s) for s in ext["sources"]), "-o", str(out),
                        "-lm"], check=True, timeout=300)
        built.append(ext["name"])
    return built


def sanitized_env(dest: Path) -> dict[str, str]:
    def lib(name: str) -> str:
        return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True,
                              check=True).stdout.strip()

    env = dict(os.environ)
    env.update(LD_PRELOAD=f"{lib('libasan.so')} {lib('libubsan.so')}", PYTHONMALLOC="malloc",
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_stacktrace=1:allocator_may_return_null=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", PYTHONPATH=str(dest))
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/kafkapy-sanitized"))
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds for the whole pytest run")
    parser.add_argument("pytest_args", nargs="*", default=["tests/unit/record", "tests/unit/metrics",
                                                           "tests/unit/spark"])
    args = parser.parse_args()
    dest = args.dir.resolve()
    if dest == ROOT or ROOT in dest.parents:
        parser.error("--dir must be outside the checkout")
    copy_tree(dest)
    print("sanitized builds:", ", ".join(build(dest)), file=sys.stderr)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    try:
        return subprocess.run(cmd, cwd=dest, env=sanitized_env(dest), timeout=args.timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"stopped after {args.timeout:.0f} s", file=sys.stderr)
        return 124


if __name__ == "__main__":
    sys.exit(main())
