"""Where the shipped rule files are (the rules, and the acceleration's stand-ins), and the line that ends the part of a
file egglog loads."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from ..errors import RuleError

SELF_CHECKS = ";; ---- self-checks ----"


@functools.cache
def rules_dir() -> Path:
    """The folder of the shipped rules, in an installed wheel or an editable checkout."""
    try:
        found = Path(str(resources.files("pypto_egg.rules")))
        if (found / "flatten.egg").is_file():
            return found
    except (ModuleNotFoundError, TypeError):
        pass
    here = Path(__file__).resolve().parents[2] / "rules"
    if (here / "flatten.egg").is_file():
        return here
    raise RuleError("cannot find the shipped rules (rules/flatten.egg); is pypto-egg installed correctly?")


def accel_rules_dir() -> Path:
    """The folder of the acceleration's own rules (accel/rules/gates.egg), shipped with the package."""
    return Path(__file__).resolve().parent / "accel" / "rules"


def is_shipped(path: Path) -> bool:
    """Whether a rule file is one pypto-egg ships (a rule file of rules/ or of the acceleration), not a user's."""
    return path.parent == rules_dir() or path.parent == accel_rules_dir()
