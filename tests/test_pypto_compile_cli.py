"""`pypto-egg compile` on any file `flatten` reads, whatever its dialect: the file is read here, never run, PyPTO
reads pypto-egg's printing of it with the user's file and lines, and a program PyPTO's reader refuses is the user's
error (exit 2, `file:line:col`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_ref import requires_pypto

pytestmark = requires_pypto
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "examples" / "pypto").glob("*.py")])


def compile_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pypto_egg.cli", "compile", *args], capture_output=True,
                          text=True, timeout=300)  # fmt: skip


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_compile_writes_code_for_every_shipped_example_located_in_its_file(example, tmp_path):
    r = compile_cli(str(example), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    kernels = [p.read_text() for p in (tmp_path / "out" / "kernels").rglob("*") if p.is_file()]
    locations = {m for text in kernels for m in re.findall(r'loc\("([^"]+)":\d+:\d+\)', text)}
    # the user's file, never the `<string>` of a printed text (values PyPTO's reader makes itself, a loop's carried
    # results, are located in PyPTO's own parser)
    assert str(example) in locations and "<string>" not in locations, locations
    assert all(loc == str(example) or "pypto" in Path(loc).parts for loc in locations), locations


def test_a_file_pyptos_reader_refuses_is_a_user_error_at_its_file_line_col(tmp_path):
    # pypto-egg's dialect takes batch_matmul_acc's init_cond (the specification's); PyPTO e2d0f78ae's does not
    source = tmp_path / "acc.py"
    source.write_text((ROOT / "examples" / "batched_matmul.py").read_text().replace(
        "pl.tile.batch_matmul_acc(acc, tq, tw)", "pl.tile.batch_matmul_acc(acc, tq, tw, step == 0)"))  # fmt: skip
    r = compile_cli(str(source), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert re.search(rf"error: {re.escape(str(source))}:\d+:\d+: PyPTO's reader cannot read program 'BatchedMatmul'",
                     r.stderr), r.stderr  # fmt: skip
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_compile_errors_of_the_pass_name_the_users_file_line_and_column(tmp_path):
    source = tmp_path / "dyn.py"
    source.write_text(
        'import pypto_egg.language as pl\n\nS = pl.dynamic("S")\n\n\n@pl.program\nclass Dyn:\n'
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def main(self, x: pl.Tensor[[2, S, 512], pl.FP32], out: pl.Out[pl.Tensor[[2, S, 512], pl.FP32]]) "
        "-> pl.Tensor[[2, S, 512], pl.FP32]:\n"
        "        t = pl.load(x, [0, 0, 0], [2, S, 512])\n        out = pl.store(t, [0, 0, 0], out)\n        return out\n"
    )
    r = compile_cli(str(source), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert f"at {source}:10:9]" in r.stderr, r.stderr
