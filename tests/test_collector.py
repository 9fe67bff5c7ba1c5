"""The collector pause a caller that owns its process may wrap around pass calls (pypto_egg/collector.py), and
the CLI, whose process is its own, doing so (the pass alone never touches the collector:
test_flatten_pass_level.py)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.cli import main
from pypto_egg.collector import collector_paused
from pypto_egg.ir import python_print
from pypto_egg.ir.stmt import Program

from corpus import PROGRAMS

SEED = Path(__file__).resolve().parents[1] / "examples" / "seed_example.py"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_the_pause_restores_the_collector_and_keeps_what_the_caller_froze(collector_on: None) -> None:
    program = pl.parse(PROGRAMS["seed"])
    with collector_paused():
        assert not gc.isenabled()
        after = passes.flatten_tile_nd_to_2d()(program)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    # what the block kept went to the old generation without a young collection visiting it
    assert any(o is after for o in gc.get_objects(generation=2))
    marker = [[]]
    gc.freeze()
    with collector_paused():
        passes.flatten_tile_nd_to_2d()(pl.parse(PROGRAMS["seed"]))
    assert not any(o is marker for o in gc.get_objects())  # a caller's frozen objects stay frozen
    gc.unfreeze()
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()  # a caller who turned the collector off keeps it off
    assert "pl.Tile[[6, 4]" in python_print(after)


def test_overlapping_pauses_restore_the_collector_once_the_last_ends(collector_on: None) -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=other)
    worker.start()
    inside.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's block is still open
    release.set()
    worker.join(10)
    assert gc.isenabled()


def test_the_cli_pauses_the_collector_around_the_pass_and_restores_it(
    collector_on: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[bool] = []
    real = passes.FlattenTileNdTo2D.__call__

    def watched(self: passes.FlattenTileNdTo2D, program: Program) -> Program:
        seen.append(gc.isenabled())
        return real(self, program)

    monkeypatch.setattr(passes.FlattenTileNdTo2D, "__call__", watched)
    assert main(["flatten", str(SEED), "--program", "Before"]) == 0
    assert seen == [False] and gc.isenabled()
    assert "pl.tile.store(y_tile, [0, 0, 0], out_0, [2, 3, 4])" in capsys.readouterr().out
