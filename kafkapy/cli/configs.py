"""`kafkapy configs` (kafka-configs.sh, ConfigCommand): flags, checks and Kafka's exact text.

Describe prints, per entity, `Dynamic configs for topic X are:` (`All configs ...` with --all,
`Default configs for brokers in the cluster are:` for the default broker) and one line per entry:
`  name=value sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:name=value, DEFAULT_CONFIG:log.x=y}`;
users/clients/ips print `Quota configs for user-principal 'u' are k=v, ...` and
`SCRAM credential configs for user-principal 'u' are SCRAM-SHA-256=iterations=4096`.
Alter prints `Completed updating config for topic X.` / `Completed updating default config for brokers
in the cluster.`. Kafka's argument errors print their bare message (exit 1); other failures
`Error while executing config command with args '<args>': <error>` (exit 1); flag misuse exits 2.
--zookeeper host:port[/chroot] (Kafka 2.x, topics/clients/users/brokers): kafkapy/tools/zk_configs.py writes the
/config znodes and the change notification; text as 2.x (`Completed updating config for entity: topic 't'.`).
--output json: one document (describe: a list of entity objects; alter: {"completed": ...}).
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

# (flag dest, entity type) in ConfigCommandOptions.entityFlags() / entityDefaultsFlags() order.
ENTITY_FLAGS = (("topic", "topics"), ("client", "clients"), ("user", "users"), ("broker", "brokers"),
                ("broker_logger", "broker-loggers"), ("ip", "ips"), ("client_metrics", "client-metrics"),
                ("group", "groups"))
DEFAULT_FLAGS = (("client_defaults", "clients"), ("user_defaults", "users"), ("broker_defaults", "brokers"),
                 ("ip_defaults", "ips"))
ALLOWED_TYPES = ("broker-loggers", "topics", "clients", "users", "brokers", "ips", "client-metrics", "groups")


class _EntitySpec(argparse.Action):
    """--entity-name / --entity-default keep their command-line order (ConfigCommand pairs them with
    --entity-type values by position)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        specs = list(getattr(namespace, "entity_specs", None) or [])
        specs.append("" if self.const == "default" else values)
        namespace.entity_specs = specs
        if self.const == "default":
            namespace.entity_default = True
        else:
            namespace.entity_name = values


def build_parser() -> ToolParser:
    p = ToolParser("configs", "This tool helps to manipulate and describe entity config for a topic, client, user, "
                   "broker, ip, client-metrics or group")
    p.add_bootstrap_server(required=False, aliases=(), help="The Kafka servers to connect to.")
    p.add_argument("--bootstrap-controller", metavar="<controller to connect to>",
                   help="The Kafka controllers to connect to.")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    p.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    p.add_argument("--all", action="store_true",
                   help="List all configs for the given entity, including static configs if available.")
    p.add_argument("--entity-type", action="append", default=[], metavar="<type>",
                   help="Type of entity (topics/clients/users/brokers/broker-loggers/ips/client-metrics/groups)")
    p.add_argument("--entity-name", action=_EntitySpec, const="name", metavar="<name>",
                   help="Name of entity (topic name/client id/user principal name/broker id/ip/client metrics/group id)")
    p.add_argument("--entity-default", action=_EntitySpec, const="default", nargs=0,
                   help="Default entity name for clients/users/brokers/ips (applies to corresponding entity type)")
    p.add_argument("--add-config", metavar="<k1=v1,k2=[v1,v2,v2],k3=v3>",
                   help="Key Value pairs of configs to add. Square brackets can be used to group values which "
                   "contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
    p.add_argument("--add-config-file", metavar="<file>",
                   help="Path to a properties file with configs to add.")
    p.add_argument("--delete-config", action="append", metavar="<k1,k2>", help="config keys to remove 'k1,k2'")
    p.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--topic", metavar="<topic>", help="The topic's name.")
    p.add_argument("--client", metavar="<client>", help="The client's ID.")
    p.add_argument("--client-defaults", action="store_true", help="The config defaults for all clients.")
    p.add_argument("--user", metavar="<user>", help="The user's principal name.")
    p.add_argument("--user-defaults", action="store_true", help="The config defaults for all users.")
    p.add_argument("--broker", metavar="<broker>", help="The broker's ID.")
    p.add_argument("--broker-defaults", action="store_true", help="The config defaults for all brokers.")
    p.add_argument("--broker-logger", metavar="<broker>", help="The broker's ID for its logger config.")
    p.add_argument("--ip", metavar="<ip>", help="The IP address.")
    p.add_argument("--ip-defaults", action="store_true", help="The config defaults for all IPs.")
    p.add_argument("--group", metavar="<group>", help="The group's ID.")
    p.add_argument("--client-metrics", metavar="<name>", help="The client metrics config resource name.")
    p.add_argument("--zookeeper", metavar="<urls>",
                   help="DEPRECATED (Kafka 2.x): the ZooKeeper connection string host:port[/chroot]; the entity's "
                   "/config znode is read and written directly, as Kafka 2.x's ConfigCommand did.")
    p.set_defaults(entity_specs=[], entity_name=None, entity_default=False)
    from kafkapy.cli.parser_params import offer_flag_values

    offer_flag_values(p, "--entity-type", ("topics", "clients", "users", "brokers", "broker-loggers", "ips", "client-metrics", "groups"))
    return p


def entity_types(args: argparse.Namespace) -> list[str]:
    return list(args.entity_type) + [t for dest, t in ENTITY_FLAGS + DEFAULT_FLAGS if getattr(args, dest)]


def entity_names(args: argparse.Namespace) -> list[str]:
    return (list(args.entity_specs) + [getattr(args, dest) for dest, _ in ENTITY_FLAGS if getattr(args, dest)]
            + ["" for dest, _ in DEFAULT_FLAGS if getattr(args, dest)])


def check_args(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """ConfigCommandOptions.checkArgs (usage errors exit 2 with Kafka's wording)."""
    if args.alter == args.describe:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    if args.describe:
        for dest in ("add_config", "delete_config", "add_config_file"):
            if getattr(args, dest):
                raise UsageError(f'Option "[describe]" can\'t be used with option "[{dest.replace("_", "-")}]"')
    types = entity_types(args)
    dupes = sorted({t for t in types if types.count(t) > 1})
    if dupes:
        raise UsageError("Duplicate entity type(s) specified: " + ",".join(dupes))
    if args.zookeeper is not None:
        return check_zookeeper_args(args, types)
    if not args.bootstrap_server and not args.bootstrap_controller:
        raise UsageError("Either --bootstrap-server or --bootstrap-controller must be specified.")
    if args.bootstrap_server and args.bootstrap_controller:
        raise UsageError("Only one of --bootstrap-server or --bootstrap-controller can be specified")
    for t in types:
        if t not in ALLOWED_TYPES:
            raise UsageError(f"Invalid entity type {t}, the entity type must be one of {', '.join(ALLOWED_TYPES)} "
                             "with a --bootstrap-server or --bootstrap-controller argument")
    if not types:
        raise UsageError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise UsageError("Only 'users' and 'clients' entity types may be specified together")
    specific = any(getattr(args, dest) for dest, _ in ENTITY_FLAGS + DEFAULT_FLAGS)
    if (args.entity_type or args.entity_specs) and specific:
        raise UsageError("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
    names = entity_names(args)
    has_name = any(names)
    has_default = "" in names
    if has_name and ("brokers" in types or "broker-loggers" in types):
        for value in (args.entity_name, args.broker, args.broker_logger):
            if value is not None:
                try:
                    int(value)
                except ValueError:
                    raise UsageError(f"The entity name for {types[0]} must be a valid integer broker id, but it is: "
                                     f"{value}") from None
    if args.describe:
        if not {"users", "clients", "brokers", "ips"} & set(types) and args.entity_default:
            raise UsageError("--entity-default must not be specified with --describe of " + ",".join(types))
        if "broker-loggers" in types and not has_name:
            raise UsageError("An entity name must be specified with --describe of " + ",".join(types))
    if args.alter:
        if {"users", "clients", "brokers", "ips"} & set(types):
            if not has_name and not has_default:
                raise UsageError("An entity-name or default entity must be specified with --alter of users, "
                                 "clients, brokers or ips")
        elif not has_name:
            raise UsageError("An entity name must be specified with --alter of " + ",".join(types))
        if args.add_config and args.add_config_file:
            raise UsageError("Only one of --add-config or --add-config-file must be specified")
        if not args.add_config and not args.add_config_file and not args.delete_config:
            raise UsageError("At least one of --add-config, --add-config-file, or --delete-config must be specified "
                             "with --alter")
    return types, names


def check_zookeeper_args(args: argparse.Namespace, types: list[str]) -> tuple[list[str], list[str]]:
    """Kafka 2.x's checks for --zookeeper: one of topics/clients/users/brokers, a name to alter."""
    from kafkapy.tools.zk_configs import DEFAULT_ENTITY, ZK_ENTITY_TYPES

    if args.bootstrap_server or args.bootstrap_controller:
        raise UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    if len(types) != 1:
        raise UsageError("Exactly one entity type must be specified with --zookeeper")
    if types[0] not in ZK_ENTITY_TYPES:
        raise UsageError(f"Invalid entity type {types[0]}, the entity type must be one of "
                         f"{', '.join(ZK_ENTITY_TYPES)} with the --zookeeper argument")
    names = [DEFAULT_ENTITY if n == "" else n for n in entity_names(args)]
    if args.alter and not names:
        raise UsageError("An entity name must be specified with --alter of " + types[0])
    if args.alter and not (args.add_config or args.add_config_file or args.delete_config):
        raise UsageError("At least one of --add-config, --add-config-file, or --delete-config must be specified "
                         "with --alter")
    return types, names


def configs_to_add(args: argparse.Namespace) -> dict[str, str]:
    """--add-config-file entries, then --add-config's on top."""
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import configs as c

    to_add: dict[str, str] = {}
    if args.add_config_file:
        to_add.update(load_properties(args.add_config_file))
    if args.add_config:
        to_add.update(c.parse_add_config(args.add_config))
    return to_add


def execute_zookeeper(args: argparse.Namespace, out: Any, types: list[str], names: list[str]) -> int:
    from kafkapy.tools import configs as c
    from kafkapy.tools import zk_configs
    from kafkapy.tools.zk_shell_client import ZkShellClient

    with ZkShellClient(args.zookeeper) as zk:
        if args.alter:
            line = zk_configs.alter(zk, types[0], names[0], configs_to_add(args),
                                    c.parse_delete_config(args.delete_config))
            out.document({"completed": line}) if out.json else out.line(line)
        else:
            lines = zk_configs.describe(zk, types[0], names[0] if names else None)
            out.document(lines) if out.json else out.lines(lines)
    return 0


def entry_line(e: Any) -> str:
    synonyms = ", ".join(f"{src}:{name}={'null' if value is None else value}" for src, name, value in e.synonyms)
    value = "null" if e.value is None else e.value
    return f"  {e.name}={value} sensitive={'true' if e.sensitive else 'false'} synonyms={{{synonyms}}}"


def describe_lines(results: list[Any]) -> list[str]:
    from kafkapy.tools import configs as c

    lines: list[str] = []
    for r in results:
        if isinstance(r, c.Notice):
            lines.append(r.text)
        elif isinstance(r, c.ResourceConfigs):
            lines.append(r.header)
            lines.extend(entry_line(e) for e in r.entries)
        elif isinstance(r, c.QuotaConfigs):
            entries = ", ".join(f"{k}={c.java_double(v)}" for k, v in r.entries)
            lines.append(f"Quota configs for {r.entity} are {entries}")
        elif isinstance(r, c.ScramConfigs):
            if r.error is not None:
                lines.append(f"Error retrieving SCRAM credential configs for user-principal '{r.user}': {r.error}")
            else:
                creds = ", ".join(f"{m}=iterations={i}" for m, i in r.credentials or [])
                lines.append(f"SCRAM credential configs for user-principal '{r.user}' are {creds}")
    return lines


def _json(results: list[Any]) -> list[dict[str, Any]]:
    from kafkapy.tools import configs as c

    docs: list[dict[str, Any]] = []
    for r in results:
        if isinstance(r, c.Notice):
            docs.append({"notice": r.text})
        elif isinstance(r, c.ResourceConfigs):
            docs.append({
                "entityType": r.entity_type, "entityName": r.entity_name or None,
                "configs": [{"name": e.name, "value": e.value, "source": e.source, "sensitive": e.sensitive,
                             "readOnly": e.read_only,
                             "synonyms": [{"source": s, "name": n, "value": v} for s, n, v in e.synonyms]}
                            for e in r.entries],
            })
        elif isinstance(r, c.QuotaConfigs):
            docs.append({"quotaEntity": r.entity, "quotas": dict(r.entries)})
        else:
            docs.append({"user": r.user, "scramCredentials": [{"mechanism": m, "iterations": i}
                                                              for m, i in r.credentials or []], "error": r.error})
    return docs


def execute(args: argparse.Namespace, out: Any, argv: list[str]) -> int:
    types, names = check_args(args)
    if args.zookeeper is not None:
        return execute_zookeeper(args, out, types, names)
    from kafkapy.cli.properties import load_properties
    from kafkapy.common.errors import KafkaError, UnsupportedVersionError
    from kafkapy.tools import configs as c
    from kafkapy.tools.tool_support import admin_client, java_error_text

    props = load_properties(args.command_config) if args.command_config else {}
    try:
        if args.alter:
            to_add = configs_to_add(args)
            c.validate_keys(to_add)
            to_delete = c.parse_delete_config(args.delete_config)
        admin = admin_client(args.bootstrap_server or args.bootstrap_controller, props)
        try:
            if args.alter:
                line = c.alter(admin, types, names, to_add, to_delete)
                if out.json:
                    out.document({"completed": line})
                else:
                    out.line(line)
            else:
                results = c.describe(admin, types, names, args.all)
                if out.json:
                    out.document(_json(results))
                else:
                    out.lines(describe_lines(results))
        finally:
            admin.close()
    except c.ConfigArgumentError as e:
        raise ToolError(str(e), prefixed=False) from e
    except UnsupportedVersionError as e:
        raise ToolError(e.message or java_error_text(e), prefixed=False) from e
    except (KafkaError, c.ConfigCommandError) as e:
        detail = java_error_text(e) if isinstance(e, KafkaError) else str(e)
        raise ToolError(f"Error while executing config command with args '{' '.join(argv)}': {detail}",
                        prefixed=False) from e
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, lambda args, out: execute(args, out, list(argv)))
