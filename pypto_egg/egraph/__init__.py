"""The bridge to egglog: rule loading, fact encoding, saturation under limits, reports, visualisation."""

from .engine import EGraphRun, Limits, parse_schedule
from .facade import FlattenEGraph
from .report import RunReport
from .rules import read_rule_files, shipped_rule_files
from .shipped import rules_dir

__all__ = ["EGraphRun", "FlattenEGraph", "Limits", "RunReport", "parse_schedule", "read_rule_files", "rules_dir",
           "shipped_rule_files"]  # fmt: skip
