"""The `kafkapy` Typer application: the lazy tool group over a tool table (kafkapy.cli.main's TOOLS),
the root options, Rich help, shell completion and Click's "Did you mean" for mistyped tools.

kafkapy.cli.main builds the app with build_app() when it needs it (help, completion, Kafka script-name
aliases, suggestions, CliRunner tests); an exactly named tool runs without importing this module.
Thread-safety: built once per process from the main thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer
import typer.main

from kafkapy.cli.tool_group import ToolGroup

ToolRunner = Callable[[str, list[str]], int]


class KafkapyGroup(ToolGroup):
    """The `kafkapy` group: its tool table and the function that runs a tool are bound by build_app."""

    runner: ToolRunner

    def run_tool(self, tool: str, argv: list[str]) -> int:
        return type(self).runner(tool, argv)


def build_app(tools: dict[str, tuple[str, str]], runner: ToolRunner, version: Callable[[], str]) -> typer.Typer:
    group_cls = type("KafkapyGroup", (KafkapyGroup,), {"tools": tools, "runner": staticmethod(runner)})

    def print_version(value: bool) -> None:
        if value:
            sys.stdout.write(version() + "\n")
            raise typer.Exit()

    app = typer.Typer(
        cls=group_cls,
        name="kafkapy",
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def kafkapy(
        # A default rather than Annotated: the option's callback is a local name, which Typer cannot resolve
        # from a postponed annotation.
        version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=print_version,
                                     help="Print the version and exit."),
    ) -> None:
        """Apache Kafka's broker and bin/ tools, in Python. Flags and output are Kafka's.

        Every tool also accepts --output json, --verbose and --help (kafkapy TOOL --help lists its flags).
        Kafka's script names work too: kafkapy kafka-topics.sh --list, kafkapy run-class kafka.Kafka ...
        """

    return app


def command_of(app: typer.Typer) -> KafkapyGroup:
    """The click group of `app` (what the console script and typer.testing.CliRunner run)."""
    group = typer.main.get_command(app)
    assert isinstance(group, KafkapyGroup)
    return group
