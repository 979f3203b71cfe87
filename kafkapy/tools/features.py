"""`kafkapy features` logic (Kafka 3.9's FeatureCommand, kafka-features.sh) over the AdminClient.

describe: one `Feature: ...\\tSupportedMinVersion: ...\\tSupportedMaxVersion: ...\\tFinalizedVersionLevel: ...\\t
Epoch: ...` line per supported feature in name order (metadata.version levels shown as MetadataVersion names,
`UNKNOWN <n>` for a level without one - a ZooKeeper-mode broker reports no finalized metadata.version: 0).
upgrade / downgrade / disable: Kafka's parsing (`--metadata 3.9`, `--feature name=level`) and result lines
(`x was upgraded to 1.`, `Could not upgrade x to 1. <reason>`; with --dry-run `can be` / `Can not`), then
`N out of M operation(s) failed.` as the tool's error. No byte format. Not thread-safe (one tool run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.common.feature_names import METADATA_VERSION
from kafkapy.tools import ToolFailure

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

# MetadataVersion (3.9): feature level -> "release-IVn", in order; first production bootstrap is 3.3-IV0.
METADATA_VERSIONS: list[tuple[int, str]] = [
    (1, "3.0-IV1"), (2, "3.1-IV0"), (3, "3.2-IV0"), (4, "3.3-IV0"), (5, "3.3-IV1"), (6, "3.3-IV2"),
    (7, "3.3-IV3"), (8, "3.4-IV0"), (9, "3.5-IV0"), (10, "3.5-IV1"), (11, "3.5-IV2"), (12, "3.6-IV0"),
    (13, "3.6-IV1"), (14, "3.6-IV2"), (15, "3.7-IV0"), (16, "3.7-IV1"), (17, "3.7-IV2"), (18, "3.7-IV3"),
    (19, "3.7-IV4"), (20, "3.8-IV0"), (21, "3.9-IV0"), (22, "4.0-IV0"), (23, "4.0-IV1"),
]
MINIMUM_BOOTSTRAP_LEVEL, LATEST_PRODUCTION_LEVEL = 4, 21



@dataclass(frozen=True)
class FeatureLine:
    """One describe line; levels are numbers (--output json), text() renders them as Kafka does."""

    feature: str
    supported_min_version: int
    supported_max_version: int
    finalized_version_level: int
    epoch: int | None

    def text(self) -> str:
        f = self.feature
        return (f"Feature: {f}\tSupportedMinVersion: {level_to_string(f, self.supported_min_version)}\t"
                f"SupportedMaxVersion: {level_to_string(f, self.supported_max_version)}\tFinalizedVersionLevel: "
                f"{level_to_string(f, self.finalized_version_level)}\tEpoch: "
                f"{'-' if self.epoch is None else self.epoch}")


@dataclass(frozen=True)
class UpdateOutcome:
    feature: str
    level: int
    error: str | None
    line: str


def level_to_string(feature: str, level: int) -> str:
    if feature == METADATA_VERSION:
        for lvl, name in METADATA_VERSIONS:
            if lvl == level:
                return name
        return f"UNKNOWN {level}"
    return str(level)


def metadata_level(text: str) -> int:
    """MetadataVersion.fromVersionString: `3.9` (latest IV of the release) or `3.9-IV0`."""
    parts = text.split(".")
    key = ".".join(parts[:2]) if len(parts) > 2 else text
    exact = [lvl for lvl, name in METADATA_VERSIONS if name == key]
    release = [lvl for lvl, name in METADATA_VERSIONS if name.split("-")[0] == key]
    if exact:
        return exact[0]
    if release:
        return release[-1]
    names = ", ".join(name for lvl, name in METADATA_VERSIONS if MINIMUM_BOOTSTRAP_LEVEL <= lvl <= LATEST_PRODUCTION_LEVEL)
    raise ToolFailure(f"Unsupported metadata.version {text}. Supported metadata.version are {names}")


def describe(meta: Any) -> list[FeatureLine]:
    out = []
    for name in sorted(meta.supported_features):
        rng = meta.supported_features[name]
        fin = meta.finalized_features.get(name)
        out.append(FeatureLine(name, rng.min_version, rng.max_version, 0 if fin is None else fin.max_version_level,
                               meta.finalized_features_epoch))
    return out


def parse_name_and_level(text: str) -> tuple[str, int]:
    if "=" not in text:
        raise ToolFailure(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level = text.split("=", 1)
    try:
        value = int(level.strip())
        if not -32768 <= value <= 32767:
            raise ValueError
    except ValueError:
        raise ToolFailure(f"Can't parse feature=level string {text}: unable to parse {level.strip()} as a short.") \
            from None
    return name.strip(), value


def plan_updates(op: str, metadata: str | None, features: Iterable[str], upgrade_type: int) -> dict[str, int]:
    """Feature -> level for upgrade/downgrade (`--metadata`, `--feature name=level`) or disable (level 0)."""
    updates: dict[str, int] = {}
    if op != "disable" and metadata is not None:
        updates[METADATA_VERSION] = metadata_level(metadata)
    for f in features:
        name, level = (f, 0) if op == "disable" else parse_name_and_level(f)
        if name in updates:
            raise ToolFailure(f"Feature {name} was specified more than once.")
        updates[name] = level
    if not updates:
        raise ToolFailure(f"You must specify at least one feature to {op}")
    return updates


def update(admin: AdminClient, op: str, updates: dict[str, int], upgrade_type: int, dry_run: bool) -> list[UpdateOutcome]:
    from kafkapy.client.admin_features import FeatureUpdate

    errors = admin.update_features({k: FeatureUpdate(v, upgrade_type) for k, v in updates.items()},
                                   validate_only=dry_run)
    out = []
    for name in sorted(errors):  # Kafka's TreeMap
        err, level = errors[name], updates[name]
        if err is not None:
            reason = err.message or str(err)
            suffix = f"disable {name}" if op == "disable" else f"{op} {name} to {level}"
            line = f"{'Can not ' if dry_run else 'Could not '}{suffix}. {reason}"
            out.append(UpdateOutcome(name, level, reason, line))
        else:
            obj = "disabled." if op == "disable" else f"{op}d to {level}."
            out.append(UpdateOutcome(name, level, None, f"{name}{' can be ' if dry_run else ' was '}{obj}"))
    return out
