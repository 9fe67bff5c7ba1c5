"""The 675 real programs of shared/realworld-sample through PyPTO: PyPTO reads back every output of
pypto-egg, and PyPTO's pipeline generates the same code with either pass."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pypto_egg.language as epl
from pypto_egg import ir, passes
from pypto_egg.ir import python_print
from pypto_egg.pypto import load_pypto
from pypto_egg.pypto.compare import compare_file

from pypto_ref import requires_pypto, requires_sample, sample_programs


def _pypto_round_trip(pto, text: str) -> str:
    return pto.ir.python_print(pto.language.parse(text), format=False)


@requires_pypto
@requires_sample
def test_pypto_reads_back_every_output_of_the_pass_on_the_sample():
    """pypto-egg → PyPTO's parse → PyPTO's print → pypto-egg's parse gives pypto-egg's output again, except
    where PyPTO's own round trip of the input already changes it (its printer re-spells what its parser
    read, e.g. `init_value=0` of an FP32 tensor as `0.0`)."""
    pto = load_pypto()
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", validate=False)
    unread, changed, pypto_changes_own_input = [], [], set()
    paths = sample_programs()
    for path in paths:
        text = path.read_text()
        before = epl.parse(text, str(path))
        after = flatten(before)
        printed = python_print(after)
        assert printed.startswith(f"# pypto.program: {after.name}\nimport pypto.language as pl\n")
        try:
            back = epl.parse(_pypto_round_trip(pto, printed))
        except Exception as e:  # PyPTO's parser raises its own types
            unread.append(f"{path.name}: {type(e).__name__}: {e}")
            continue
        if not ir.structural_equal(back, after):
            changed.append(path.name)
            if not ir.structural_equal(epl.parse(_pypto_round_trip(pto, text)), before):
                pypto_changes_own_input.add(path.name)
    assert len(paths) == 675
    assert not unread, "\n".join(unread)
    assert set(changed) == pypto_changes_own_input, sorted(set(changed) - pypto_changes_own_input)
    assert len(changed) <= 3


@requires_pypto
@requires_sample
def test_pyptos_pipeline_generates_the_same_code_with_either_pass_on_the_sample():
    """For every program PyPTO's own pipeline compiles, `pypto_egg.pypto.compile` compiles it too and writes
    the same kernels/** and orchestration/** bytes (the pass works on PyPTO's objects, so the values it makes
    carry the C++ pass's name hints and positions)."""
    paths = [str(p) for p in sample_programs()]
    with ProcessPoolExecutor(
        max_workers=max(1, min(2, os.cpu_count() or 1)), mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        results = dict(pool.map(compare_file, paths, chunksize=8))
    compiled = {p: r for p, r in results.items() if r.compiled}
    failed = {p: r.egg_error for p, r in compiled.items() if r.egg_error is not None}
    assert not failed, failed
    differing = {p: r.differing for p, r in compiled.items() if not r.same}
    assert not differing, differing
    assert len(compiled) >= 390, len(compiled)
