"""Every code block of the user guide runs: Python blocks in order in one namespace, `egg` blocks written to
the file their first line names, `console` commands through the installed CLI."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(GUIDE.read_text())]


def test_the_guide_has_runnable_blocks_of_every_kind():
    kinds = {kind for kind, _ in blocks()}
    assert {"python", "egg", "console"} <= kinds


def test_every_code_block_of_the_guide_runs(tmp_path, monkeypatch, capsys):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "guide"}
    for i, (kind, text) in enumerate(blocks()):
        if kind == "python":
            exec(compile(text, f"{GUIDE.name} block {i}", "exec"), namespace)
        elif kind == "egg":
            first = text.splitlines()[0]
            m = re.match(r";; file: (\S+)", first)
            assert m, f"block {i}: an egg block starts with ';; file: <name>'"
            (tmp_path / m.group(1)).write_text(text)
        elif kind == "console":
            for line in text.splitlines():
                assert line.startswith("$ pypto-egg "), line
                argv = shlex.split(line[2:])
                env = {**os.environ, "PYTHONPATH": str(ROOT)}
                r = subprocess.run([sys.executable, "-m", "pypto_egg.cli", *argv[1:]], capture_output=True,
                                   text=True, cwd=tmp_path, env=env, timeout=300)  # fmt: skip
                assert r.returncode == 0, (line, r.stderr)
        else:
            pytest.fail(f"block {i}: unknown kind {kind!r}")
    out = capsys.readouterr().out
    assert "validated 1 function(s)" in out
