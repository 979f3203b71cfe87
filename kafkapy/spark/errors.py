"""The errors the kafkapy data source raises, worded as Spark's Kafka source words them.

Spark's connector throws IllegalArgumentException / AssertionError / IllegalStateException with these
texts (KafkaSourceProvider, KafkaOffsetReader, KafkaDataConsumer); here they are ValueError subclasses
so a failed query shows the same sentence; `spark_facing` makes PySpark report them without a traceback.
Thread-safety: pure values; spark_facing touches os.environ only in a worker that is failing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you don't want your streaming query to fail on such cases, set the source option \"failOnDataLoss\" "
    "to \"false\"."
)

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you want your streaming query to fail on such cases, set the source option \"failOnDataLoss\" to "
    "\"true\"."
)


class KafkaSourceError(ValueError):
    """A bad option or offset specification (Spark: IllegalArgumentException / AssertionError)."""


class KafkaDataLossError(RuntimeError):
    """Offsets no longer (or not yet) in the log with failOnDataLoss=true (Spark: KAFKA_DATA_LOSS)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message} {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")


class KafkaSinkError(ValueError):
    """A bad write: missing value column, no topic, wrong column types (Spark's KafkaWriter wording)."""


def _expected() -> tuple[type[BaseException], ...]:
    from kafkapy.common.errors import KafkaError

    return (KafkaSourceError, KafkaDataLossError, KafkaSinkError, KafkaError, TimeoutError)


def _mark(e: BaseException) -> None:
    if isinstance(e, _expected()):
        # PySpark's worker prints only the exception line when this is set; the worker process exits
        # right after reporting the error, so nothing else in it sees the variable.
        os.environ["SPARK_HIDE_TRACEBACK"] = "1"


def spark_facing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a data source entry point run in a PySpark worker so that our errors (bad options, data
    loss, Kafka errors) reach the user as Spark's one-line wording rather than a Python traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            _mark(e)
            raise
        if isinstance(result, Iterator):
            return _guard(result)
        return result

    return wrapper


def _guard(it: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from it
    except BaseException as e:
        _mark(e)
        raise
