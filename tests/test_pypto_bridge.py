"""pypto-egg inside PyPTO: the pass as a PyPTO Pass, the pipeline swap, `compile`, and `pypto-egg compile`.

The tests that need PyPTO skip with the reason where it is not installed (`make reference` installs it).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import pypto_egg.language as epl
import pypto_egg.pypto as egg
from pypto_egg import interp, passes
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print
from pypto_egg.pypto import loader, pipeline
from pypto_egg.pypto.compare import DETERMINISTIC, compare_generated_code, generated_code

from helpers import check_meaning
from pypto_ref import SAMPLE, requires_pypto, requires_sample, set_reference_backend

ROOT = Path(__file__).resolve().parents[1]

ADD_ND = """\
# pypto.program: AddNd
import pypto.language as pl

@pl.program
class AddNd:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def add_incore(x: pl.Tensor[[2, 3, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 16], pl.FP32]]) -> pl.Tensor[[2, 3, 16], pl.FP32]:
        t: pl.Tile[[2, 3, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 3, 16], [2, 3, 16], target_memory=pl.Mem.Vec)
        u: pl.Tile[[2, 3, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)
        out_store: pl.Tensor[[2, 3, 16], pl.FP32] = pl.tile.store(u, [0, 0, 0], out)
        return out_store
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def add(self, x: pl.Tensor[[2, 3, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 16], pl.FP32]]) -> pl.Tensor[[2, 3, 16], pl.FP32]:
        r: pl.Tensor[[2, 3, 16], pl.FP32] = self.add_incore(x, out)
        return r
"""

READ_ND = ADD_ND.replace(
    "u: pl.Tile[[2, 3, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)",
    "s: pl.Scalar[pl.FP32] = pl.tile.read(t, [0, 0, 0])\n        u: pl.Tile[[2, 3, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, s)",
)

FLAT_2D = ADD_ND.replace("[2, 3, 16]", "[6, 16]").replace("[0, 0, 0]", "[0, 0]")


def pypto():
    return loader.load_pypto()


# ---------------------------------------------------------------- finding PyPTO


@pytest.fixture
def no_cached_pypto(monkeypatch):
    monkeypatch.setattr(loader, "_CACHED", None)


def imports_see_pypto_as(monkeypatch, pypto: types.ModuleType | None) -> None:
    """The loader's imports find `pypto` as the package of that name, with no submodules (None: no package).
    The import is faked, not sys.modules: taking PyPTO's modules out of sys.modules and putting them back changes
    the order the interpreter tears them down in at exit, after which PyPTO's core drops the format callback it
    holds (registered when ruff is on the PATH) without the GIL, and the process aborts."""
    real = importlib.import_module

    def imported(name, *args):
        if name == "pypto" and pypto is not None:
            return pypto
        if name == "pypto" or name.startswith("pypto."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(loader.importlib, "import_module", imported)


def test_without_pypto_the_entry_points_say_how_to_get_it(monkeypatch, no_cached_pypto):
    imports_see_pypto_as(monkeypatch, None)
    for call in (
        egg.flatten_pass,
        lambda: egg.compile(object()),
        lambda: egg.replacing_flatten().__enter__(),
    ):
        with pytest.raises(egg.PyPTONotFound, match="hw-native-sys/pypto") as info:
            call()
        assert "PyPI is a different project" in str(info.value)
        assert isinstance(info.value, ImportError)


def test_the_unrelated_pypto_of_pypi_is_named_as_not_pypto(monkeypatch, no_cached_pypto):
    fake = types.ModuleType("pypto")
    fake.__file__ = "/site-packages/pypto/__init__.py"
    imports_see_pypto_as(monkeypatch, fake)
    with pytest.raises(
        egg.PyPTONotFound, match=r"the installed `pypto` \(/site-packages/pypto/__init__.py\) is not PyPTO"
    ):
        egg.flatten_pass()


# ---------------------------------------------------------------- the pass


@requires_pypto
def test_flatten_pass_is_a_pypto_pass_with_the_reference_passs_name_and_properties():
    pto = pypto()
    ours, reference = egg.flatten_pass(), pto.passes.flatten_tile_nd_to_2d()
    assert isinstance(ours, pto.passes.Pass)
    assert ours.get_name() == reference.get_name() == "FlattenTileNdTo2D"
    for kind in ("required", "produced", "invalidated"):
        got = getattr(ours, f"get_{kind}_properties")()
        want = getattr(reference, f"get_{kind}_properties")()
        assert str(got) == str(want), kind


@requires_pypto
def test_flatten_pass_gives_the_reference_passs_program_and_keeps_its_meaning():
    pto = pypto()
    set_reference_backend()
    program = pto.language.parse(ADD_ND)
    want = pto.ir.python_print(pto.passes.flatten_tile_nd_to_2d()(program), format=False)
    after = egg.flatten_pass()(program)
    got = pto.ir.python_print(after, format=False)
    assert got == want
    assert "pl.Tile[[6, 16]" in got and "[2, 3, 16])" in got  # flattened, and the store has its window
    check_meaning(epl.parse(ADD_ND), epl.parse(got))


@requires_pypto
def test_the_pass_leaves_its_input_and_the_functions_it_does_not_rewrite_as_they_are():
    pto = pypto()
    program = pto.language.parse(ADD_ND)
    text = pto.ir.python_print(program, format=False)
    after = egg.flatten_pass()(program)
    assert pto.ir.python_print(program, format=False) == text
    orch_before = program.get_function("add")
    assert after.get_function("add").same_as(orch_before)  # PyPTO's own object, not a re-read copy
    assert not after.get_function("add_incore").same_as(program.get_function("add_incore"))


@requires_pypto
def test_a_program_without_nd_tiles_comes_back_as_the_same_pypto_program():
    pto = pypto()
    program = pto.language.parse(FLAT_2D)
    assert egg.flatten_pass()(program).same_as(program)


@requires_pypto
def test_pass_errors_reach_the_pypto_caller_with_the_op_the_variable_and_the_remedy():
    pto = pypto()
    set_reference_backend()
    program = pto.language.parse(READ_ND, filename="/src/read_nd.py")
    with pytest.raises(ValueError, match="tile.read is not supported on >2D tiles"):
        pto.passes.flatten_tile_nd_to_2d()(program)  # the reference's error is a ValueError too
    with pytest.raises(PassError) as info:
        egg.flatten_pass()(program)
    message = str(info.value)
    assert "tile.read is not supported on >2D tiles" in message  # the op
    assert "variable 's'" in message and "/src/read_nd.py:9:9" in message  # the variable, at the user's line
    assert "Reshape the tile to 2D with pl.tile.reshape first" in message  # the remedy


@requires_pypto
def test_flatten_pass_options_are_checked_when_the_pass_is_made():
    with pytest.raises(ValueError, match="strategy"):
        egg.flatten_pass(strategy="fastest")
    with pytest.raises(ValueError, match="unknown backend"):
        egg.flatten_pass(backend="Ascend310")
    assert egg.flatten_pass(backend="Ascend950", strategy="optimal").get_name() == "FlattenTileNdTo2D"


@requires_pypto
def test_the_backend_defaults_to_the_one_pypto_has_configured():
    pto = pypto()
    pto.backend.reset_for_testing()  # PyPTO sets its backend once per process
    try:
        assert egg.FlattenOptions().egg_pass(pto).backend is None  # none configured: no capacity facts
        pto.backend.set_backend_type(pto.backend.BackendType.Ascend950)
        assert egg.FlattenOptions().egg_pass(pto).backend.name == "Ascend950"
        assert egg.FlattenOptions(backend="Ascend910B").egg_pass(pto).backend.name == "Ascend910B"
    finally:
        pto.backend.reset_for_testing()
        set_reference_backend()


# ---------------------------------------------------------------- the pipeline


@pytest.fixture
def counted(monkeypatch):
    """How many times pypto-egg's pass ran."""
    calls: list[str] = []
    real = pipeline.run_on_objects

    def spy(pto, egg_pass, program):
        calls.append(program.name)
        return real(pto, egg_pass, program)

    monkeypatch.setattr(pipeline, "run_on_objects", spy)
    return calls


@requires_pypto
def test_replacing_flatten_swaps_the_pass_of_every_default_pipeline_and_restores_it(counted):
    pto = pypto()
    manager = pto.pass_manager
    original = manager.__dict__["_get_pass_factories"]
    with egg.replacing_flatten():
        assert "FlattenTileNdTo2D" in manager.get_strategy().pass_names
        manager.get_strategy().run_passes(pto.language.parse(ADD_ND))
        assert counted == ["AddNd"]
        with egg.replacing_flatten(strategy="optimal"):  # nested: the innermost options apply
            manager.get_strategy().run_passes(pto.language.parse(ADD_ND))
        manager.get_strategy().run_passes(pto.language.parse(ADD_ND))
        assert counted == ["AddNd"] * 3
    assert manager.__dict__["_get_pass_factories"] is original
    manager.get_strategy().run_passes(pto.language.parse(ADD_ND))
    assert counted == ["AddNd"] * 3  # the C++ pass again


@requires_pypto
def test_replacing_flatten_restores_the_pass_after_an_exception(counted):
    pto = pypto()
    original = pto.pass_manager.__dict__["_get_pass_factories"]
    with pytest.raises(PassError), egg.replacing_flatten():
        pto.pass_manager.get_strategy().run_passes(pto.language.parse(READ_ND))
    assert pto.pass_manager.__dict__["_get_pass_factories"] is original
    with pytest.raises(ValueError, match="tile.read is not supported"):  # the C++ pass's own message
        pto.pass_manager.get_strategy().run_passes(pto.language.parse(READ_ND))


@requires_pypto
def test_compile_generates_the_code_of_pypto_own_pipeline(tmp_path, counted):
    pto = pypto()
    pto.ir.compile(pto.language.parse(ADD_ND), output_dir=str(tmp_path / "ref"), **DETERMINISTIC)
    egg.compile(pto.language.parse(ADD_ND), output_dir=str(tmp_path / "egg"), **DETERMINISTIC)
    assert counted == ["AddNd"]
    ref, ours = generated_code(tmp_path / "ref"), generated_code(tmp_path / "egg")
    assert any(k.startswith("kernels/") for k in ref) and any(k.startswith("orchestration/") for k in ref)
    assert ours == ref
    assert compare_generated_code(ADD_ND).same


@requires_pypto
def test_rewritten_functions_keep_the_users_source_positions_in_the_generated_code(tmp_path):
    """Each op the pass makes carries the position of the op it comes from, as the C++ pass's does: with
    source locations on, the kernels are the reference's byte for byte, and every location is the user's."""
    source = tmp_path / "add_nd.py"
    source.write_text(ADD_ND)
    pto = pypto()
    options = {"skip_ptoas": True, "emit_source_loc": True, "dump_passes": False}
    pto.ir.compile(
        pto.language.parse(ADD_ND, filename=str(source)), output_dir=str(tmp_path / "ref"), **options
    )
    egg.compile(pto.language.parse(ADD_ND, filename=str(source)), output_dir=str(tmp_path / "egg"), **options)
    kernel = (tmp_path / "egg" / "kernels" / "aiv" / "add_incore.pto").read_text()
    assert f'loc("{source}":10:53)' in kernel  # the store call's own position
    assert "<string>" not in kernel
    assert generated_code(tmp_path / "egg") == generated_code(tmp_path / "ref")


@requires_pypto
def test_the_worked_example_of_the_readme_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "pypto" / "compile_with_pypto.py"), str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert generated_code(tmp_path / "reference") == generated_code(tmp_path / "pypto-egg")
    assert generated_code(tmp_path / "optimal")


@requires_pypto
@pytest.mark.parametrize(
    "dialect_text", [ADD_ND, ADD_ND.replace("import pypto.language", "import pypto_egg.language")]
)
def test_the_compile_command_writes_what_ir_compile_writes(tmp_path, dialect_text):
    source = tmp_path / "add_nd.py"
    source.write_text(dialect_text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pypto_egg.cli", "compile", str(source), "-o", str(tmp_path / "out"), "--no-source-loc"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "AddNd: wrote" in proc.stdout
    pto = pypto()
    pto.ir.compile(pto.language.parse(ADD_ND), output_dir=str(tmp_path / "ref"), **DETERMINISTIC)
    assert generated_code(tmp_path / "out") == generated_code(tmp_path / "ref")


@requires_pypto
def test_the_compile_command_names_a_missing_program(tmp_path):
    source = tmp_path / "add_nd.py"
    source.write_text(ADD_ND)
    proc = subprocess.run(
        [sys.executable, "-m", "pypto_egg.cli", "compile", str(source), "--program", "Other"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 2
    assert "no program named 'Other'; it defines AddNd" in proc.stderr


def test_the_compile_command_says_when_it_runs_the_file():
    proc = subprocess.run(
        [sys.executable, "-m", "pypto_egg.cli", "compile", "--help"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "is run with PyPTO" in text and "run it only on files you trust" in text


def test_interpreting_the_pypto_dialect_needs_no_pypto():
    """pypto-egg reads PyPTO's dialect itself: the same program, interpreted, without PyPTO installed."""
    program = epl.parse(ADD_ND)
    assert program.dialect == "pypto"
    inputs = interp.random_inputs(program.function("add_incore"), 0)
    assert interp.run(program, "add_incore", inputs)


def _benchmark(script: str, *args: str) -> str:
    """A benchmark script's output, run as a user runs it; it must succeed."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@requires_pypto
@requires_sample
def test_the_pipeline_benchmark_times_both_passes_inside_pyptos_compile():
    stdout = _benchmark("bench_pipeline.py", "--repeat", "1", "--limit", "4")
    rows = {line.split()[0]: line.split() for line in stdout.splitlines() if line.split()}
    assert float(rows["reference"][2]) > 0 and float(rows["pypto-egg"][2]) > 0, stdout
    assert "pass share" in stdout


@requires_pypto
def test_the_same_run_benchmark_times_both_passes_and_prints_ratios_against_the_goals():
    stdout = _benchmark("bench_vs_reference.py", "--repeat", "1", "--only", "seed")
    row = next(line for line in stdout.splitlines() if line.startswith("seed"))
    # "seed (1 kernel, 3 ops)   <reference> <pypto-egg> ms  <ratio>x  <= 50x  met|MISSED"
    reference, ours = (float(x) for x in row.split(")", 1)[1].split()[:2])
    assert reference > 0 and ours > 0
    assert "<= 50x" in row and ("met" in row or "MISSED" in row)


CONSTRUCTS = """\
# pypto.program: C
import pypto.language as pl

@pl.program
class C:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def k(x: pl.Tensor[[2, 8, 16], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 8, 16], pl.FP32]]) -> pl.Tensor[[2, 8, 16], pl.FP32]:
        t: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 8, 16], [2, 8, 16], target_memory=pl.Mem.Vec)
        if n == 0:
            a: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            r: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(a)
        else:
            b: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.neg(t)
            r: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(b)
        for i, (c,) in pl.range(pl.const(0, pl.INT64), 4, init_values=(r,)):
            d: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(c, 1.0)
            e: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(d)
        out_1: pl.Tensor[[2, 8, 16], pl.FP32] = pl.tile.store(e, [0, 0, 0], out)
        return out_1
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def main(self, x: pl.Tensor[[2, 8, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 8, 16], pl.FP32]]) -> pl.Tensor[[2, 8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.SubWorker):
            out_1: pl.Tensor[[2, 8, 16], pl.FP32] = self.k(x, 0, out)
        return out_1
"""


@requires_pypto
def test_constructs_of_real_programs_are_printed_back_as_pyptos_printer_spells_them():
    """An if whose branches yield, a loop whose INT64 start is spelled out, an annotated yield read after its
    loop and a pl.at with a role: pypto-egg prints them as PyPTO does, so PyPTO reads the same program back,
    before the pass and after it (which it also agrees with)."""
    pto = pypto()
    set_reference_backend()
    program = epl.parse(CONSTRUCTS)
    printed = python_print(program)
    assert "pl.range(pl.const(0, pl.INT64), 4," in printed and "role=pl.Role.SubWorker):" in printed
    pto.ir.assert_structural_equal(pto.language.parse(printed), pto.language.parse(CONSTRUCTS))
    flat = egg.flatten_pass()(pto.language.parse(CONSTRUCTS))
    pto.ir.assert_structural_equal(flat, pto.passes.flatten_tile_nd_to_2d()(pto.language.parse(CONSTRUCTS)))


@requires_sample
def test_the_benchmarks_real_programs_are_every_nd_program_of_the_sample_and_no_unchanged_one():
    """bench_vs_reference and bench_instructions time the sample's programs the pass rewrites: every one the
    sample marks N-D, and a 2-D one only where the pass's output differs from its input."""
    spec = importlib.util.spec_from_file_location(
        "bench_workloads", ROOT / "benchmarks" / "bench_workloads.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    chosen = bench.nd_sample_programs(SAMPLE)
    nd = {p for p in (SAMPLE / "pre").glob("*.py") if json.loads(p.with_suffix(".json").read_text())["nd"]}
    assert nd and nd <= set(chosen)
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
    for path in set(chosen) - nd:
        program = epl.parse(path.read_text())
        assert python_print(flatten(program)) != python_print(program), path.name
