"""The driver entry `kafkapy spark-submit` gives spark-submit: install kafkapy's hooks, run the pipeline.

`python -m kafkapy.spark.pipeline_runner PIPELINE.py [args]` (spark-submit runs this file as its primary
resource with the pipeline's path as first argument) calls `kafkapy.spark.install()` (format("kafka")
mapped to kafkapy's source, Spark's Kafka save modes; spark/kafka_format.py) and then runs the pipeline as
`__main__` with `sys.argv` = [PIPELINE.py, args...], its directory first on sys.path, exactly as
spark-submit would have run it. Nothing is read or written besides what the pipeline does.
Thread-safety: one run per driver process, main thread.
"""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str]) -> None:
    if not argv:
        sys.stderr.write("kafkapy pipeline runner: a pipeline (.py file) is required\n")
        raise SystemExit(2)
    from kafkapy.spark.kafka_format import install

    install()
    pipeline = argv[0]
    sys.argv = [pipeline, *argv[1:]]
    here = os.path.dirname(os.path.abspath(__file__))
    # This file's directory (kafkapy/spark) must not shadow top-level modules the pipeline imports.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path.insert(0, os.path.dirname(os.path.abspath(pipeline)))
    runpy.run_path(pipeline, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
