"""`kafkapy acls` (kafka-acls.sh, AclCommand): --add / --remove / --list ACLs through the AdminClient.

Text output is AclCommand's ("Adding ACLs for resource `...`: " then the resulting "Current ACLs for
resource `...`: " blocks); --remove asks "Are you sure ...? (y/n)" on stdout unless --force. --output json:
a list of {"resourceType", "name", "patternType", "acls": [{"principal", "host", "operation",
"permissionType"}]} (the ACLs current after the action). Usage errors use AclCommand's wording.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, require_exactly_one, run


def build_parser() -> ToolParser:
    p = ToolParser("acls", "This tool helps to manage acls on kafka.")
    p.add_bootstrap_server(required=True, aliases=(), help="A list of host/port pairs to use for establishing the "
                           "connection to the Kafka cluster.")
    p.add_command_config(help="A property file containing configs to be passed to Admin Client.")
    p.add_argument("--add", action="store_true", help="Indicates you are trying to add ACLs.")
    p.add_argument("--remove", action="store_true", help="Indicates you are trying to remove ACLs.")
    p.add_argument("--list", action="store_true", help="List ACLs for the specified resource, use --topic <topic> "
                   "or --group <group> or --cluster to specify a resource.")
    p.add_argument("--topic", action="append", default=[], metavar="<topic>",
                   help="topic to which ACLs should be added or removed. A value of '*' indicates ACL should "
                   "apply to all topics.")
    p.add_argument("--group", action="append", default=[], metavar="<group>",
                   help="Consumer Group to which the ACLs should be added or removed. A value of '*' indicates "
                   "the ACLs should apply to all groups.")
    p.add_argument("--cluster", action="store_true", help="Add/Remove cluster ACLs.")
    p.add_argument("--transactional-id", action="append", default=[], metavar="<transactional-id>",
                   help="The transactionalId to which ACLs should be added or removed. A value of '*' indicates "
                   "the ACLs should apply to all transactionalIds.")
    p.add_argument("--delegation-token", action="append", default=[], metavar="<delegation-token>",
                   help="Delegation token to which ACLs should be added or removed. A value of '*' indicates "
                   "ACL should apply to all tokens.")
    p.add_argument("--resource-pattern-type", metavar="<ANY|MATCH|LITERAL|PREFIXED>",
                   help="The type of the resource pattern or pattern filter. When adding acls, this should be a "
                   "specific pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific "
                   "pattern type can be used to list or remove acls from specific resource patterns, or use the "
                   "filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the "
                   "resource name exactly, where as 'match' will perform pattern matching to list or remove all "
                   "acls that affect the supplied resource(s). WARNING: 'match', when used in combination with the "
                   "'--remove' switch, should be used with care. (default: LITERAL)")
    p.add_argument("--operation", action="append", default=[], metavar="<operation>",
                   help="Operation that is being allowed or denied. Valid operation names are: Describe, "
                   "DescribeConfigs, Alter, IdempotentWrite, Read, Delete, Create, ClusterAction, All, CreateTokens, "
                   "DescribeTokens, Write, AlterConfigs (default: All)")
    p.add_argument("--allow-principal", action="append", default=[], metavar="<allow-principal>",
                   help="principal is in principalType:name format. Note that principalType must be supported by "
                   "the Authorizer being used. For example, User:'*' is the wild card indicating all users.")
    p.add_argument("--deny-principal", action="append", default=[], metavar="<deny-principal>",
                   help="principal is in principalType:name format. By default anyone not added through "
                   "--allow-principal is denied access. You only need to use this option as negation to already "
                   "allowed set. AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES.")
    p.add_argument("--principal", action="append", default=[], metavar="<principal>",
                   help="List ACLs for the specified principal. principal is in principalType:name format. "
                   "Note that principalType must be supported by the Authorizer being used. Multiple --principal "
                   "option can be passed.")
    p.add_argument("--allow-host", action="append", default=[], metavar="<allow-host>",
                   help="Host from which principals listed in --allow-principal will have access. If you have "
                   "specified --allow-principal then the default for this option will be set to '*' which allows "
                   "access from all hosts.")
    p.add_argument("--deny-host", action="append", default=[], metavar="<deny-host>",
                   help="Host from which principals listed in --deny-principal will be denied access. If you have "
                   "specified --deny-principal then the default for this option will be set to '*' which denies "
                   "access from all hosts.")
    p.add_argument("--producer", action="store_true", help="Convenience option to add/remove ACLs for producer "
                   "role. This will generate ACLs that allows WRITE,DESCRIBE and CREATE on topic.")
    p.add_argument("--consumer", action="store_true", help="Convenience option to add/remove ACLs for consumer "
                   "role. This will generate ACLs that allows READ,DESCRIBE on topic and READ on group.")
    p.add_argument("--idempotent", action="store_true", help="Enable idempotence for the producer. This should be "
                   "used in combination with the --producer option. Note that idempotence is enabled automatically "
                   "if the producer is authorized to a particular transactional-id.")
    p.add_argument("--force", action="store_true", help="Assume Yes to all queries and do not prompt.")
    from kafkapy.cli.parser_params import offer_flag_values

    offer_flag_values(p, "--resource-pattern-type", ("literal", "prefixed", "any", "match"))
    return p


def _check(args: argparse.Namespace) -> None:
    """AclCommandOptions.checkArgs, in its order and wording."""
    require_exactly_one(args, ("--list", "--add", "--remove"),
                        "Command must include exactly one action: --list, --add, --remove. ")
    if args.list:
        for flag in ("producer", "consumer", "allow_host", "allow_principal", "deny_host", "deny_principal"):
            if getattr(args, flag):
                raise UsageError(f"Option \"[list]\" can't be used with option \"[{flag.replace('_', '-')}]\"")
    for role in ("producer", "consumer"):
        if getattr(args, role):
            for flag in ("operation", "deny_principal", "deny_host"):
                if getattr(args, flag):
                    raise UsageError(f"Option \"[{role}]\" can't be used with option \"[{flag.replace('_', '-')}]\"")
    if args.producer and not args.topic and not args.transactional_id:
        raise UsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group or (not args.producer and args.cluster)):
        raise UsageError("With --consumer you must specify a --topic and a --group and no --cluster or "
                         "--transactional-id option should be specified.")
    if args.principal and not args.list:
        raise UsageError("The --principal option is only available if --list is set")


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.common.acl import PatternType
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import acls as A
    from kafkapy.tools.tool_support import admin_client

    _check(args)
    try:
        pattern_type = A.parse_pattern_type(args.resource_pattern_type) if args.resource_pattern_type else (
            PatternType.ANY if args.list else PatternType.LITERAL)
        if args.add and pattern_type in (PatternType.ANY, PatternType.MATCH):
            raise UsageError(f"A '--resource-pattern-type' value of '{pattern_type.name}' is not valid when adding "
                             "acls.")
        patterns = A.resources(args.topic, args.group, args.cluster, args.transactional_id, args.delegation_token,
                               pattern_type)
        if not args.list and not patterns and not args.producer:
            raise UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group "
                             "<group> or --delegation-token <Delegation Token ID>")
        ops = [A.parse_operation(o) for o in args.operation] or [A.AclOperation.ALL]

        def cli_entries() -> list:
            return A.entries(ops, args.allow_principal, args.allow_host, args.deny_principal, args.deny_host)

        to_change = {} if args.list else A.resource_to_acls(patterns, cli_entries, args.producer, args.consumer,
                                                            args.idempotent, (args.allow_principal, args.allow_host))
    except ToolFailure as e:
        raise UsageError(str(e)) from e

    props = load_properties(args.command_config) if args.command_config else {}
    admin = admin_client(args.bootstrap_server, props, client_id="adminclient-acls")
    try:
        if args.add:
            if any(not es for es in to_change.values()):
                raise UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add "
                                 "ACLs.")
            if not out.json:
                for pattern, es in to_change.items():
                    out.lines(A.block("Adding ACLs for resource", pattern, es))
            A.add_acls(admin, to_change)
        elif args.remove:
            for pattern, es in to_change.items():
                if not es:
                    question = f"Are you sure you want to delete all ACLs for resource filter `{A.filter_text(pattern)}`? (y/n)"
                else:
                    body = "\n".join(f"\t{e}" for e in es)
                    question = (f"Are you sure you want to remove ACLs: \n {body} \n from resource filter "
                                f"`{A.filter_text(pattern)}`? (y/n)")
                if not args.force:
                    out.line(question)
                    out.flush()
                    if sys.stdin.readline().strip().lower() != "y":
                        continue
                A.remove_acls(admin, pattern, es)
        # --add and --remove then list the resources they touched, as AclCommand does.
        listed = patterns if args.list else list(to_change)
        current = A.list_acls(admin, listed, args.principal)
    except ToolFailure as e:
        raise ToolError(str(e), prefixed=False) from e
    finally:
        admin.close()
    if out.json:
        out.document(A.to_json(current))
        return 0
    if args.principal:
        for principal in args.principal:
            out.line(f"ACLs for principal `{principal.strip()}`")
            for r in current:
                mine = [e for e in r.entries if e.principal == principal.strip()]
                if mine:
                    out.lines(A.block("Current ACLs for resource", r.pattern, mine))
        return 0
    for r in current:
        out.lines(A.block("Current ACLs for resource", r.pattern, r.entries))
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
