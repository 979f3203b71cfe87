"""`kafkapy leader-election` (kafka-leader-election.sh, LeaderElectionCommand).

Flags: --bootstrap-server, --election-type preferred|unclean (case-insensitive), exactly one of
--topic T --partition P | --all-topic-partitions | --path-to-json-file F, --command-config or the
deprecated --admin.config (Kafka 4.2 prints its deprecation line on stdout).
Output, as Kafka prints it: `Successfully completed leader election (PREFERRED) for partitions t-0, t-1`,
`Valid replica already elected for partitions ...`, one `Error completing leader election (PREFERRED) for
partition: t-0: <Java exception>` line per failure and then, on stderr, `N replica(s) could not be elected`
(exit 1). Kafka prints its errors without an "Error:" prefix; so does this tool. Usage errors use Kafka's
messages (exit 2). --output json: {"electionType", "succeeded", "noop", "failed": [{..., "error"}]}.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.topic_partition import TopicPartition

DESCRIPTION = ("This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
               "supported are preferred replicas and unclean replicas.")
ADMIN_CONFIG_DEPRECATED = ("Option --admin.config has been deprecated and will be removed in a future version. "
                           "Use --command-config instead.")
# Kafka's defaults when --command-config does not set them (LeaderElectionCommand: 30 s API, 15 s request).
DEFAULT_API_TIMEOUT_MS = 30000


def build_parser() -> ToolParser:
    p = ToolParser("leader-election", DESCRIPTION)
    p.add_bootstrap_server(required=False, aliases=(), help="A hostname and port for the broker to connect to, in "
                           "the form host:port. Multiple comma separated URLs can be given. REQUIRED.")
    p.add_argument("--admin.config", dest="admin_config", metavar="<config file>",
                   help="(DEPRECATED) Configuration properties files to pass to the admin client. This option will "
                   "be removed in a future version. Use --command-config instead.")
    p.add_command_config(help="Config properties file to pass to the admin client.")
    p.add_argument("--path-to-json-file", metavar="<Path to JSON file>",
                   help='The JSON file with the list of partition for which leader elections should be performed. '
                   'Example: {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}. '
                   "Not allowed if --all-topic-partitions or --topic flags are specified.")
    p.add_argument("--topic", metavar="<topic name>",
                   help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
                   "--all-topic-partitions is specified.")
    p.add_argument("--partition", metavar="<partition id>",
                   help="Partition id for which to perform an election. REQUIRED if --topic is specified.")
    p.add_argument("--all-topic-partitions", action="store_true",
                   help="Perform election on all of the eligible topic partitions based on the type of election "
                   "(see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.")
    p.add_argument("--election-type", metavar="<election type>",
                   help='Type of election to attempt. Possible values are "preferred" for preferred leader election '
                   'or "unclean" for unclean leader election. If preferred election is selection, the election is '
                   "only performed if the current leader is not the preferred leader for the topic partition. If "
                   "unclean election is selected, the election is only performed if there are no leader for the "
                   "topic partition. REQUIRED.")
    from kafkapy.cli.parser_params import offer_flag_values

    offer_flag_values(p, "--election-type", ("preferred", "unclean"))
    return p


def validate(args: argparse.Namespace) -> tuple[str, int | None]:
    """Kafka's LeaderElectionCommandOptions.validate, in its order and wording; returns (type, partition)."""
    from kafkapy.tools.leader_election import LeaderElectionError, parse_election_type

    missing = [name for name, value in (("bootstrap-server", args.bootstrap_server),
                                        ("election-type", args.election_type)) if value is None]
    if missing:
        raise UsageError("Missing required option(s): " + ", ".join(missing))
    try:
        election_type = parse_election_type(args.election_type)
    except LeaderElectionError as e:
        raise UsageError(str(e)) from None
    if args.admin_config is not None and args.command_config is not None:
        raise UsageError('Option "[admin.config]" can\'t be used with option "[command-config]"')
    given = sum(1 for v in (args.topic is not None, args.all_topic_partitions, args.path_to_json_file is not None)
                if v)
    if given != 1:
        raise UsageError("One and only one of the following options is required: topic, all-topic-partitions, "
                         "path-to-json-file")
    if args.topic is not None and args.partition is None:
        raise UsageError("Missing required option(s): partition")
    if args.topic is None and args.partition is not None:
        raise UsageError("Option partition is only allowed if topic is used")
    partition = None
    if args.partition is not None:
        partition = parse_java_int(args.partition)
        if partition is None:
            raise UsageError(f"Cannot parse argument '{args.partition}' of option partition")
    return election_type, partition


def parse_java_int(text: str) -> int | None:
    """Integer.valueOf: an optional sign and ASCII digits within int32; None otherwise."""
    import re

    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -2**31 <= value < 2**31 else None


def read_text_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror or e})", prefixed=False) from e


def admin_properties(args: argparse.Namespace, out: Any) -> dict[str, str]:
    from kafkapy.cli.properties import load_properties

    config_file = args.command_config
    if args.admin_config is not None:
        # Kafka 4.2 prints this on stdout; keep JSON output parseable by sending it to stderr there.
        (out.error_line if out.json else out.line)(ADMIN_CONFIG_DEPRECATED)
        config_file = args.admin_config
    try:
        props = load_properties(config_file) if config_file else {}
    except ToolError as e:
        raise ToolError(e.message, prefixed=False) from e
    props.setdefault("default.api.timeout.ms", str(DEFAULT_API_TIMEOUT_MS))
    props.setdefault("request.timeout.ms", str(DEFAULT_API_TIMEOUT_MS // 2))
    return props


def render(result: Any, out: Any, *, succeeded_line: Any = None, noop_line: Any = None,
           failed_line: Any = None, failure_message: Any = None) -> int:
    """Print an ElectionResult in Kafka's text (or JSON) and turn failures into Kafka's exit code."""
    from kafkapy.tools import leader_election as le

    succeeded_line = succeeded_line or le.succeeded_line
    noop_line = noop_line or le.noop_line
    failed_line = failed_line or le.failed_line
    failure_message = failure_message or le.failure_message
    if out.json:
        out.document(result)
    else:
        if result.succeeded:
            out.line(succeeded_line(result))
        if result.noop:
            out.line(noop_line(result))
        for tp in result.failed:
            out.line(failed_line(result, tp))
    if result.failed:
        raise ToolError(failure_message(result), prefixed=False)
    return 0


def run_election(admin_factory: Callable[[], AdminClient], election_type: str, partitions: list[TopicPartition] | None, out: Any, **render_kwargs: Any) -> int:
    """One election through a fresh AdminClient; Kafka's special cases for timeouts and authorization."""
    from kafkapy.common.errors import ClusterAuthorizationFailedError, KafkaError, RequestTimedOutError
    from kafkapy.tools import leader_election as le
    from kafkapy.tools.tool_support import java_error_text

    admin = admin_factory()
    try:
        result = le.elect_leaders(admin, election_type, partitions)
    except RequestTimedOutError as e:
        if not out.json:
            out.line("Timeout waiting for election results")
        raise ToolError("Timeout waiting for election results", prefixed=False) from e
    except ClusterAuthorizationFailedError as e:
        if not out.json:
            out.line("Not authorized to perform leader election")
        raise ToolError("Not authorized to perform leader election", prefixed=False) from e
    except KafkaError as e:
        raise ToolError(java_error_text(e), prefixed=False) from e
    finally:
        admin.close()
    return render(result, out, **render_kwargs)


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import leader_election as le
    from kafkapy.tools.tool_support import admin_client

    election_type, partition = validate(args)
    partitions = None
    if args.path_to_json_file is not None:
        try:
            partitions = le.parse_election_json(read_text_file(args.path_to_json_file))
        except le.LeaderElectionError as e:
            raise ToolError(str(e), prefixed=False) from e
    elif args.topic is not None:
        assert partition is not None
        partitions = [TopicPartition(args.topic, partition)]
    props = admin_properties(args, out)
    try:
        return run_election(lambda: admin_client(args.bootstrap_server, props), election_type, partitions, out)
    except ToolFailure as e:  # a bad bootstrap address
        raise ToolError(str(e), prefixed=False) from e


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
