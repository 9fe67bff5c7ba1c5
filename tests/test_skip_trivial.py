"""Functions with nothing to flatten skip the e-graph, and the pass runs from thread and process pools."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.egraph.accel import Acceleration
from pypto_egg.errors import UserError
from pypto_egg.ir import python_print
from pypto_egg.passes.flatten import FlattenTileNdTo2D
from pypto_egg.passes.trivial import nothing_to_flatten

from corpus import PROGRAMS, wrap

HERE = Path(__file__).parent


def both_paths(program: ir.Program) -> tuple[ir.Program | str, ir.Program | str]:
    """The pass with and without the skip; an error is compared by its message."""
    out = []
    for skip in (True, False):
        try:
            out.append(FlattenTileNdTo2D(acceleration=Acceleration(trivial_skip=skip))(program))
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
    return out[0], out[1]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_skip_gives_what_the_full_pipeline_gives_on_every_corpus_program(name):
    fast, full = both_paths(pl.parse(PROGRAMS[name]))
    if isinstance(fast, str) or isinstance(full, str):
        assert fast == full
    else:
        ir.assert_structural_equal(fast, full)


@st.composite
def two_d_programs(draw: st.DrawFn) -> ir.Program:
    """2-D kernels in the reference's printed form: loads, element-wise chains, reductions with scratch tiles,
    loops with annotated yields, attrs, matmuls, Acc carries and stores."""
    rows = draw(st.sampled_from([8, 16, 32]))
    cols = draw(st.sampled_from([16, 32]))
    shape = f"[{rows}, {cols}]"
    load_attrs = draw(st.sampled_from(["", ", attrs={'pipeline_membership': '0:0'}"]))
    lines = [
        f"t0: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], {shape}, {shape}, "
        f"target_memory=pl.Mem.Vec{load_attrs})"
    ]
    pool = ["t0"]
    for i in range(draw(st.integers(1, 6))):
        a = draw(st.sampled_from(pool))
        v = f"v{i}"
        kind = draw(st.sampled_from(["exp", "add", "muls", "reduce", "loop", "attrs", "create"]))
        if kind == "exp":
            lines.append(f"{v} = pl.tile.exp({a})")
        elif kind == "add":
            lines.append(f"{v} = pl.tile.add({a}, {draw(st.sampled_from(pool))})")
        elif kind == "muls":
            lines.append(f"{v} = pl.tile.muls({a}, 2.0)")
        elif kind == "attrs":
            lines.append(f"{v} = pl.tile.neg({a}, attrs={{'pipeline_membership': '0:1'}})")
        elif kind == "create":
            lines.append(f"{v}_c = pl.tile.create({shape}, dtype=pl.FP32, target_memory=pl.Mem.Vec)")
            lines.append(f"{v} = pl.tile.add({v}_c, {a})")
        elif kind == "reduce":
            lines.append(f"{v}_tmp = pl.tile.create({shape}, dtype=pl.FP32, target_memory=pl.Mem.Vec)")
            lines.append(f"{v}_s = pl.tile.row_sum({a}, {v}_tmp)")
            lines.append(f"{v} = pl.tile.row_expand_sub({a}, {v}_s)")
        else:
            lines.append(f"for i_{v}, (c_{v},) in pl.range(2, init_values=({a},)):")
            lines.append(f"    n_{v} = pl.tile.adds(c_{v}, 1.0)")
            lines.append(f"    {v}: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.yield_(n_{v})")
        pool.append(v)
    lines += [f"out = pl.store({pool[-1]}, [0, 0], out)", "return out"]
    params = f"x: pl.Tensor[{shape}, pl.FP32], out: pl.Out[pl.Tensor[{shape}, pl.FP32]]"
    return pl.parse(wrap("\n".join(lines), params, f"pl.Tensor[{shape}, pl.FP32]"))


@settings(max_examples=60, deadline=None)
@given(two_d_programs())
def test_generated_2d_kernels_skip_the_egraph_and_agree_with_the_full_pipeline(program):
    assert nothing_to_flatten(program.functions[0])
    fast, full = both_paths(program)
    assert not isinstance(fast, str) and not isinstance(full, str)
    ir.assert_structural_equal(fast, full)
    if "attrs=" not in python_print(program):
        assert fast is program  # nothing changed: the same objects come back


@pytest.mark.parametrize(
    ("body", "params", "trivial"),
    [
        ("t = pl.load(x, [0, 0], [8, 16])\nout = pl.store(t, [0, 0], out)\nreturn out", "2d", True),
        ("t = pl.load(x, [0, 0, 0], [2, 3, 4])\nout = pl.store(t, [0, 0, 0], out)\nreturn out", "3d", False),
        ("t = pl.load(x, [0, 0, 0], [1, 3, 4])\nu = pl.tile.reshape(t, [3, 4])\nout = pl.store(u, [0, 0, 0], out)\n"
         "return out", "3d", False),
        ("t = pl.load(x, [0, 0], [8, 16])\nu = pl.transpose(t, axis1=0, axis2=1)\nreturn out", "2d", False),
        ("a = pl.tile.create([32, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
         "w = pl.tile.slice(a, [16, 16], [16, 0])\nreturn out", "2d", False),
    ],
)  # fmt: skip
def test_what_sends_a_function_through_the_egraph(body, params, trivial):
    sig = {
        "2d": ("x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]", "pl.Tensor[[8, 16], pl.FP32]"),
        "3d": ("x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]", "pl.Tensor[[2, 3, 4], pl.FP32]"),
    }[params]  # fmt: skip
    program = pl.parse(wrap(body, *sig))
    assert nothing_to_flatten(program.functions[0]) is trivial
    fast, full = both_paths(program)
    ir.assert_structural_equal(fast, full)


def _flatten_text(text: str) -> str:
    return python_print(passes.flatten_tile_nd_to_2d(backend="Ascend910B")(pl.parse(text)))


def test_the_pass_runs_from_16_threads_and_a_process_pool_with_the_sequential_answers():
    """Each thread keeps its own loaded rules; nothing is dropped on another thread (egglog would print
    'unsendable' on stderr), so this runs in a fresh interpreter whose stderr is read whole."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from concurrent.futures import ThreadPoolExecutor
        import gc
        import pypto_egg.language as pl
        from pypto_egg import passes
        from pypto_egg.ir import python_print
        from corpus import PROGRAMS
        names = sorted(PROGRAMS)
        def run(name):
            try:
                return python_print(passes.flatten_tile_nd_to_2d(backend="Ascend910B")(pl.parse(PROGRAMS[name])))
            except Exception as e:
                return type(e).__name__ + str(e)
        want = [run(n) for n in names]
        for _ in range(2):
            with ThreadPoolExecutor(16) as pool:
                got = list(pool.map(run, names))
            assert got == want, [n for n, a, b in zip(names, got, want) if a != b]
        gc.collect()
        print("threads ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "threads ok" in proc.stdout
    assert "unsendable" not in proc.stderr and "Error" not in proc.stderr, proc.stderr[-3000:]

    texts = [PROGRAMS[n] for n in ("seed", "batch_matmul", "transpose_nd", "for_iter_args")]
    want = [_flatten_text(t) for t in texts]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        got = list(pool.map(_flatten_text, texts))
    assert got == want


def test_a_forked_child_of_a_process_that_ran_egglog_gets_an_error_not_a_hang():
    _flatten_text(PROGRAMS["seed"])  # egglog has run here
    with (
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool,
        pytest.raises(UserError, match=r"forked after its parent ran it.*'spawn' or 'forkserver'"),
    ):
        pool.submit(_flatten_text, PROGRAMS["seed"]).result(timeout=120)


def test_a_rule_file_egglog_rejects_is_reported_without_its_e_graph_leaving_the_owner_thread(tmp_path):
    """The rejected rules' e-graph is dropped where it was made, not by the caller that receives the error
    (egglog would print 'unsendable' on stderr), and the next call with good rules still works."""
    bad = tmp_path / "bad.egg"
    bad.write_text("(rule ((Nope x)) ((Chose x (Keep))))\n")
    script = textwrap.dedent(f"""
        import sys, gc
        sys.path.insert(0, {str(HERE)!r})
        import pypto_egg.language as pl
        from pypto_egg import passes
        from pypto_egg.ir import python_print
        from pypto_egg.errors import RuleError
        from corpus import PROGRAMS
        program = pl.parse(PROGRAMS["seed"])
        try:
            passes.flatten_tile_nd_to_2d(extra_rules=[{str(bad)!r}])(program)
        except RuleError as e:
            assert "bad.egg:1:8" in str(e) and "Nope" in str(e), e
        gc.collect()
        assert "[6, 4]" in python_print(passes.flatten_tile_nd_to_2d()(program))
        print("rejected ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rejected ok" in proc.stdout
    assert "unsendable" not in proc.stderr, proc.stderr[-3000:]


def test_a_process_that_ran_the_pass_forks_a_child_that_exits_cleanly_and_runs_the_pass_again_itself():
    """Before a fork the process drops its resident e-graphs (the owner thread's and, forking from the main
    thread, the main thread's), so the child holds none to drop at exit, where dropping one would hang; the parent
    loads them again when next asked. No reference-count trick is needed."""
    script = textwrap.dedent(f"""
        import os, sys, threading
        sys.path.insert(0, {str(HERE)!r})
        import pypto_egg.language as pl
        from pypto_egg import passes
        from pypto_egg.ir import python_print
        from corpus import PROGRAMS
        program = pl.parse(PROGRAMS["batch_matmul"])
        first = python_print(passes.flatten_tile_nd_to_2d()(program))
        on_a_thread = []
        t = threading.Thread(target=lambda: on_a_thread.append(python_print(passes.flatten_tile_nd_to_2d()(program))))
        t.start(); t.join()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # atexit handlers and the interpreter's finalization run here
        _, status = os.waitpid(pid, 0)
        again = python_print(passes.flatten_tile_nd_to_2d()(program))
        print("child", os.waitstatus_to_exitcode(status), "same", first == again == on_a_thread[0])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "child 0 same True" in proc.stdout, proc.stdout + proc.stderr[-3000:]
