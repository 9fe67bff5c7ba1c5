"""The bridge to egglog: rule loading, fact encoding, saturation under limits, reports, visualisation."""

from .engine import FlattenEGraph, Limits, parse_schedule
from .report import RunReport
from .rules import read_rule_files, rules_dir, shipped_rule_files

__all__ = ["FlattenEGraph", "Limits", "RunReport", "parse_schedule", "read_rule_files", "rules_dir",
           "shipped_rule_files"]  # fmt: skip
