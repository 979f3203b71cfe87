"""kafkapy's bin/ tools: one module per tool, logic only (returns dataclasses), using client/ only
(dump_log and other offline file tools may also use storage/ and record/). Flags and rendering live in
kafkapy/cli/<tool>.py.

`ToolFailure` is the one exception type tool logic raises for an expected failure with a one-line,
user-facing message (a missing file, a corrupt segment Kafka would refuse to walk, ...); the cli
framework prints it as "Error: <message>" and exits 1, without a traceback.
"""


class ToolFailure(Exception):
    """An expected failure of a tool, with a one-line message for the user."""
