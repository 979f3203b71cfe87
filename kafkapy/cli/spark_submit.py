"""`kafkapy spark-submit [spark-submit options] PIPELINE.py [args]`: spark-submit with kafkapy's data source.

Arguments pass through to the spark-submit inside the installed pyspark (kafkapy.spark.submit): Spark
parses its own flags (`--master`, `--conf k=v`, `--py-files`, `--driver-memory`, `--verbose`, ...), so
this module parses nothing but `--help` without a pipeline. A missing pyspark or Java is one line on
stderr and exit 1; no arguments is a usage error (exit 2).
Thread-safety: one run per process, main thread.
"""

from __future__ import annotations

import sys

USAGE = (
    "usage: kafkapy spark-submit [spark-submit options] PIPELINE.py [pipeline args]\n"
    "  Runs the spark-submit of the installed pyspark with the kafkapy data source available as\n"
    "  format(\"kafkapy\"); --master defaults to local[*]; logs are quiet unless --verbose.\n"
    "  Spark's options: kafkapy spark-submit --help-spark\n"
)


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("kafkapy spark-submit: error: a pipeline (.py file) is required\n" + USAGE)
        return 2
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if argv == ["--help-spark"]:
        argv = ["--help"]
    from kafkapy.spark.submit import SubmitError, run_submit

    try:
        return run_submit(argv)
    except SubmitError as e:
        sys.stderr.write(f"kafkapy spark-submit: {e}\n")
        return 1
