"""The `pypto-egg` command, through a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pypto_egg.language as pl
from pypto_egg import ir

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "seed_example.py"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pypto_egg.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)  # fmt: skip


def test_flatten_prints_the_after_program_and_the_report():
    r = cli("flatten", str(SEED), "--program", "Before", "--report")
    assert r.returncode == 0, r.stderr
    assert "pl.tile.store(y_tile, [0, 0, 0], out_0, [2, 3, 4])" in r.stdout
    assert "e-graph run for function 'main_incore_0'" in r.stdout and "rules fired" in r.stdout
    program_text = r.stdout.split("\ne-graph run")[0]
    seed_after = pl.parse(SEED.read_text(), str(SEED), "After")
    ir.assert_structural_equal(pl.parse(program_text), seed_after)


def test_flatten_writes_output_file_with_backend_and_extra_rules(tmp_path):
    rules = tmp_path / "extra.egg"
    rules.write_text(";; nothing new\n(relation Unused (i64))\n")
    out = tmp_path / "after.py"
    r = cli("flatten", str(SEED), "--backend", "Ascend950", "--rules", str(rules), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "class Before" in out.read_text()


def test_viz_writes_html_and_dot(tmp_path):
    html = tmp_path / "e.html"
    r = cli("viz", str(SEED), "-o", str(html))
    assert r.returncode == 0, r.stderr and html.stat().st_size > 100_000
    dot = tmp_path / "e.dot"
    r = cli("viz", str(SEED), "--format", "dot", "-o", str(dot))
    assert r.returncode == 0 and "digraph" in dot.read_text()


def test_user_errors_exit_2_with_one_paragraph_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pypto_egg.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def main(self, x: pl.Tensor[[12, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 2, 4, 8], pl.FP32]]) "
        "-> pl.Tensor[[2, 2, 4, 8], pl.FP32]:\n        t = pl.load(x, [0, 0], [12, 8])\n"
        "        out = pl.store(t, [0, 0, 0, 0], out)\n        return out\n"
    )
    r = cli("flatten", str(bad))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "must fill axis 1 (extent 2)" in r.stderr
    r = cli("flatten", str(bad), "--debug")
    assert r.returncode == 2 and "Traceback" in r.stderr
    r = cli("flatten", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such file" in r.stderr
    r = cli("flatten", str(SEED), "--program", "Nope")
    assert r.returncode == 2 and "no program named 'Nope'" in r.stderr


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "pypto-egg"
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "flatten" in r.stdout and "viz" in r.stdout
