"""Find, read and load `.egg` rule files: the shipped ones and any a user passes.

egglog resolves `include` against the working directory and panics on a missing file, so includes
are expanded here, relative to the including file, before egglog sees the text.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import egglog.bindings as eb

from ..errors import RuleError
from .accel.fact_table import stored
from .shipped import SELF_CHECKS, is_shipped, rules_dir

_INCLUDE = re.compile(r'^\s*\(include\s+"([^"]+)"\s*\)', re.MULTILINE)
_POSITION = re.compile(r"In (\d+):(\d+)")


@dataclass(frozen=True)
class RuleFile:
    """A rule file's text. A tuple of them keys the caches of what the rules are (relevance, strata, rule sets),
    looked up a few times every program: its hash is worked out once, not from the path and text at each look-up."""

    path: Path
    text: str  # without its self-check section
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.path, self.text)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[RuleFile], tuple[Path, str]]:
        """Copies and pickles make the file anew, so its hash is the new process's (strings hash per process)."""
        return RuleFile, (self.path, self.text)

    @property
    def name(self) -> str:
        return self.path.name


def blanked(files: Sequence[RuleFile], blanks: Sequence[tuple[int, Any]]) -> tuple[RuleFile, ...]:
    """The files with each (file's place, form) of `blanks` made blank lines, so egglog's positions stay the file's
    (a file with nothing blanked is itself)."""
    texts = [rf.text for rf in files]
    # blank from the end of each file backwards, so earlier spans stay valid
    for fi, form in sorted(blanks, key=lambda b: (b[0], -b[1].start)):
        text = texts[fi]
        texts[fi] = text[: form.start] + "\n" * text.count("\n", form.start, form.end) + text[form.end :]
    return tuple(rf if text == rf.text else RuleFile(rf.path, text) for rf, text in zip(files, texts))


def read_rule_files(entry: Path) -> list[RuleFile]:
    """The entry file and everything it includes, depth-first, each once, in load order."""
    out: list[RuleFile] = []
    seen: set[Path] = set()

    def emit(path: Path, text: str, start: int, end: int) -> None:
        chunk = text[start:end]
        if any(line.strip() and not line.strip().startswith(";") for line in chunk.splitlines()):
            # pad with the lines before the chunk so egglog's line numbers are the file's
            out.append(RuleFile(path, "\n" * text[:start].count("\n") + chunk))

    def visit(path: Path, via: str | None) -> None:
        path = path.resolve()
        if path in seen:
            return
        seen.add(path)
        if not path.is_file():
            where = f" (included from {via})" if via else ""
            raise RuleError(f"rules file {path} does not exist{where}")
        text = path.read_text().partition(SELF_CHECKS)[0]
        if not is_shipped(path):
            check_balanced(text, path)
            text = named_by_place(text, path.name)
        pos = 0
        for m in _INCLUDE.finditer(text):
            emit(path, text, pos, m.start())
            visit(path.parent / m.group(1), str(path))
            pos = m.end()
        emit(path, text, pos, len(text))

    visit(entry, None)
    return out


@functools.cache
def _shipped() -> tuple[RuleFile, ...]:
    return tuple(read_rule_files(rules_dir() / "flatten.egg"))


def shipped_rule_files() -> list[RuleFile]:
    """The shipped rules, read once per process (they are package data)."""
    return list(_shipped())


_RELATION = re.compile(r"^\(relation\s+(\w+Row)\s+\(([^()]*)\)\)", re.MULTILINE)


@functools.cache
def fact_relations() -> dict[str, int]:
    """The relations the encoder writes rows of (the `...Row` relations of rules/encode.egg), with their column
    counts: declared once, in the rules, and read from there."""
    text = (rules_dir() / "encode.egg").read_text().partition(SELF_CHECKS)[0]
    return {m.group(1): len(m.group(2).split()) for m in _RELATION.finditer(text)}


@functools.cache
def schedule_text() -> str:
    return (rules_dir() / "schedule.egg").read_text()


def run_text(
    egraph: eb.EGraph, text: str, source: str, *, reuse: bool = False, then: Sequence[Any] = ()
) -> list[object]:
    """Parse and run egglog text, turning egglog's errors and panics into a RuleError naming the source.
    `reuse`: the text is a command the host repeats (push, pop, a stage's run), parsed once per process.
    `then`: commands built in Python, run after the text's in the same call."""
    with _egglog_errors(source):
        commands = parsed(egraph, text) if reuse else egraph.parse_program(stored(text), filename=source)
        return list(egraph.run_program(*commands, *then))


def run_as_written(egraph: eb.EGraph, text: str, source: str) -> list[object]:
    """Parse and run egglog text exactly as written (no table packing: the core runner's way), egglog's errors
    and panics turned into a RuleError naming the source."""
    with _egglog_errors(source):
        return list(egraph.run_program(*egraph.parse_program(text, filename=source)))


def run_commands(egraph: eb.EGraph, commands: Sequence[Any], source: str) -> list[object]:
    """Run commands built in Python, egglog's errors and panics turned into a RuleError naming the source."""
    with _egglog_errors(source):
        return list(egraph.run_program(*commands))


@contextlib.contextmanager
def _egglog_errors(source: str) -> Iterator[None]:
    try:
        yield
    except eb.EggSmolError as e:
        raise RuleError(_describe(source, str(e))) from None
    except BaseException as e:  # egglog panics raise pyo3's PanicException, which is not an Exception
        if type(e).__name__ != "PanicException":
            raise
        raise RuleError(_describe(source, f"egglog panicked: {e}")) from None


# parsed commands are plain data, valid for any e-graph: the host's few repeated texts are parsed once
_PARSED: dict[str, list[Any]] = {}
_MAX_PARSED = 256


def parsed(egraph: eb.EGraph, text: str) -> list[Any]:
    """A repeated command's parse, made on first use."""
    commands = _PARSED.get(text)
    if commands is None:
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        commands = _PARSED[text] = egraph.parse_program(stored(text))
    return commands


def load_rule_file(egraph: eb.EGraph, rf: RuleFile, own_rulesets: bool = False) -> None:
    """A shipped file's commands are parsed form by form, once per process (all of them on the first load), so
    a program whose facts keep another set of rules alive loads its pruned text without parsing it again; a
    user's file is parsed whole, so that egglog's errors name its lines. `own_rulesets`: each shipped rule goes
    in a ruleset of its own (`own_ruleset`), so that the host can run any group of them (strata.py); the
    concerns' rulesets are then declared by strata.concern_declarations."""
    for _ in load_rule_file_slices(egraph, rf, own_rulesets):
        pass


def load_rule_file_slices(
    egraph: eb.EGraph, rf: RuleFile, own_rulesets: bool = False, commands: int = 1 << 30
) -> Iterator[None]:
    """`load_rule_file`, a slice of at most `commands` commands at a time (a user's file in one)."""
    if not is_shipped(rf.path):
        run_text(egraph, rf.text, str(rf.path))
        yield
        return
    if (own_rulesets, "") not in _FORM_COMMANDS:
        _FORM_COMMANDS[own_rulesets, ""] = []
        for shipped in _shipped():
            _parsed_forms(egraph, shipped.text, own_rulesets)
    parsed_commands = _parsed_forms(egraph, rf.text, own_rulesets)
    for start in range(0, len(parsed_commands), commands):
        try:
            egraph.run_program(*parsed_commands[start : start + commands])
        except eb.EggSmolError as e:
            raise RuleError(_describe(str(rf.path), str(e))) from None
        yield


# (own rulesets?, a shipped form's text) -> its parsed commands (plain data, valid for any e-graph)
_FORM_COMMANDS: dict[tuple[bool, str], list[Any]] = {}
OWN_RULESET = "rule__"  # the prefix of a rule's own ruleset
_RULESET_DECLARATION = re.compile(r"\(\s*ruleset\s+[\w-]+\s*\)$")
_RULE_HEAD = re.compile(r"\(\s*(?:rule|rewrite|birewrite)\s")
_RULESET_KEYWORD = re.compile(r":ruleset\s+([\w-]+)")
_NAME_KEYWORD = re.compile(r':name\s+"([^"]+)"')


def own_ruleset(form: str) -> str:
    """A shipped form as loaded with each rule in a ruleset of its own: a named rule's `:ruleset` becomes
    `rule__<name>`, declared just before it, and a concern's own `(ruleset ..)` declaration goes (the concern is
    declared as the combination of its rules' rulesets once the files are loaded)."""
    if _RULESET_DECLARATION.match(form):
        return ""
    if _RULE_HEAD.match(form):
        name, keyword = _NAME_KEYWORD.search(form), _RULESET_KEYWORD.search(form)
        if name is None or keyword is None:
            raise RuleError(f"a shipped rule without :name or :ruleset cannot run on its own: {form[:120]}")
        own = OWN_RULESET + name.group(1)
        return f"(ruleset {own}) {form[: keyword.start()]}:ruleset {own}{form[keyword.end() :]}"
    return form


_RULE_FORM = re.compile(r"\(\s*(?:rule|rewrite|birewrite)\s")


def named_by_place(text: str, file: str) -> str:
    """A user's file with each rule that has no `:name` named by its file and line (`my_rules.egg:3`), so that the
    run report, explain and the pictures name it as they name a shipped rule. Only the name is added, on the
    rule's last line: every line keeps its number."""
    out: list[str] = []
    at = 0
    for start, end in _top_level_forms(text):
        form = text[start:end]
        if _RULE_FORM.match(form) and not _NAME_KEYWORD.search(form):
            line = text.count("\n", 0, start) + 1
            out += [text[at : end - 1], f' :name "{file}:{line}")']
            at = end
    return "".join(out) + text[at:]


# what delimits the top-level forms: parentheses, outside strings and comments
_DELIMITERS = re.compile(r'[()]|"(?:[^"\\]|\\.)*"|;[^\n]*')


def _top_level_forms(text: str) -> Iterator[tuple[int, int]]:
    """Where each top-level form of egglog text starts and ends (parentheses outside strings and comments)."""
    depth = start = 0
    for m in _DELIMITERS.finditer(text):
        c = m.group()
        if c == "(":
            if depth == 0:
                start = m.start()
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                yield start, m.end()


def check_balanced(text: str, path: Path) -> None:
    """A RuleError at the open parenthesis of the first form a file never closes (egglog would point at the end of
    the file), or at a closing one that closes nothing."""
    opened: list[int] = []
    for m in _DELIMITERS.finditer(text):
        c = m.group()
        if c == "(":
            opened.append(m.start())
        elif c == ")":
            if not opened:
                raise RuleError(f"{_position(path, text, m.start())}: this ')' closes no form")
            opened.pop()
    if opened:
        raise RuleError(f"{_position(path, text, opened[0])}: this form is never closed (a ')' is missing)")


def _position(path: Path, text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    return f"{path}:{line}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def _form_texts(text: str) -> list[str]:
    """The text of each top-level form of a shipped file: `forms` without its trees, since loading a pruned
    text needs only where each form starts and ends (a sixth of the time on the shipped files)."""
    return [text[start:end] for start, end in _top_level_forms(text)]


def _parsed_forms(egraph: eb.EGraph, text: str, own_rulesets: bool = False) -> list[Any]:
    commands: list[Any] = []
    for form in _form_texts(text):
        parsed_form = _FORM_COMMANDS.get((own_rulesets, form))
        if parsed_form is None:
            loaded = stored(own_ruleset(form) if own_rulesets else form)
            parsed_form = _FORM_COMMANDS[own_rulesets, form] = egraph.parse_program(loaded) if loaded else []
        commands += parsed_form
    return commands


def _describe(source: str, message: str) -> str:
    m = _POSITION.search(message)
    where = f"{source}:{m.group(1)}:{m.group(2)}" if m else source
    detail = " ".join(line.strip() for line in message.strip().splitlines() if line.strip())
    return f"{where}: egglog rejected the rules: {detail}"
