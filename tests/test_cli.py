"""The `pypto-egg` command, through a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    # the report goes to stderr: stdout is the program alone, so `flatten f.py --report > out.py` is Python
    assert "e-graph run for function 'main_incore_0'" in r.stderr and "rules fired" in r.stderr
    seed_after = pl.parse(SEED.read_text(), str(SEED), "After")
    ir.assert_structural_equal(pl.parse(r.stdout), seed_after)


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


GOOD = SEED.read_text()
PROGRAM_HEAD = "import pypto_egg.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def test_the_cli_reads_files_without_running_them(tmp_path):
    marker = tmp_path / "ran"
    f = tmp_path / "sneaky.py"
    f.write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(7)\n\n" + GOOD)
    r = cli("flatten", str(f))
    assert r.returncode == 0, r.stderr
    assert not marker.exists() and "class Before" in r.stdout and "class After" in r.stdout


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("import pypto_egg.language as pl\nclass P(:\n", r"bad\.py:2:9: invalid Python syntax"),
        (
            PROGRAM_HEAD
            + "    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:\n"
            "        t = pl.tile.frobnicate(x)\n        return x\n",
            r"bad\.py:7:\d+: .*frobnicate",
        ),
        ("import pypto_egg.language as pl\nX = 1\n", r"bad\.py:1:1: defines no @pl.program class"),
    ],
    ids=["syntax", "unknown-op", "no-program"],
)
def test_each_user_error_class_exits_2_with_file_line_col(tmp_path, text, expect):
    bad = tmp_path / "bad.py"
    bad.write_text(text)
    r = cli("flatten", str(bad))
    assert r.returncode == 2, r.stderr
    assert re.search(expect, r.stderr) and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_bad_rule_file_exits_2_naming_the_file_and_position(tmp_path):
    rules = tmp_path / "broken.egg"
    rules.write_text(";; an unknown relation\n(rule ((NoSuchThing x)) ((Keep)))\n")
    r = cli("flatten", str(SEED), "--rules", str(rules))
    assert r.returncode == 2 and re.search(r"broken\.egg:2:\d+: egglog rejected the rules", r.stderr), (
        r.stderr
    )


def test_a_program_without_functions_prints_valid_dsl(tmp_path):
    f = tmp_path / "empty.py"
    f.write_text("import pypto_egg.language as pl\n\n@pl.program\nclass Empty:\n    pass\n")
    r = cli("flatten", str(f))
    assert r.returncode == 0, r.stderr
    assert pl.parse(r.stdout).name == "Empty" and pl.parse(r.stdout).functions == ()


def test_a_directory_of_mixed_files_in_parallel_reports_each_failure_and_writes_the_rest(tmp_path):
    src = tmp_path / "src"
    (src / "nested").mkdir(parents=True)
    (src / "a.py").write_text(GOOD)
    (src / "nested" / "b.py").write_text(GOOD.replace("Before", "Again"))
    (src / "broken.py").write_text("import pypto_egg.language as pl\nclass P(:\n")
    (src / "nothing.py").write_text("X = 1\n")
    out = tmp_path / "out"
    r = cli("flatten", str(src), "-o", str(out), "-j", "2")
    assert r.returncode == 2
    assert re.search(r"broken\.py:2:\d+: invalid Python syntax", r.stderr)
    assert re.search(r"nothing\.py:1:1: defines no @pl.program class", r.stderr)
    assert "2 of 4 file(s) flattened, 2 failed" in r.stderr
    for name in ("a.py", "nested/b.py"):
        text = (out / name).read_text()
        assert [p.name for p in pl.parse_all(text)] in (["Before", "After"], ["Again", "After"])
    assert not (out / "broken.py").exists()


def test_validate_catches_a_rule_that_changes_meaning(tmp_path):
    wrong = tmp_path / "wrong.egg"
    wrong.write_text(
        ";; a broken rule: an add forwards its first operand, as if adding were the identity\n"
        '(rule ((GenericReq s "tile.add" (OCons (OVar v) rest) sh)) ((Chose s (Forward v))) :name "add-forwards-lhs")\n'
    )
    r = cli("flatten", str(SEED), "--program", "Before", "--rules", str(wrong))
    assert r.returncode == 0  # without validation the wrong program is printed
    r = cli("flatten", str(SEED), "--program", "Before", "--rules", str(wrong), "--validate", "--seeds", "1")
    assert r.returncode == 2
    assert re.search(r"changed the meaning of function 'main_incore_0': output 'out_0' differs at index "
                     r"\(\d+, \d+, \d+\): -?[\d.]+ before, -?[\d.]+ after", r.stderr), r.stderr  # fmt: skip
    r = cli("flatten", str(SEED), "--program", "Before", "--validate")
    assert r.returncode == 0 and "validated 1 function(s): main_incore_0" in r.stderr
    pl.parse(r.stdout)  # the program alone


def test_validate_on_a_program_too_large_to_interpret_says_so_and_still_prints_the_result(tmp_path):
    """A user error (exit 2) naming the function, the value and its size; the pass's result is on stdout."""
    huge = tmp_path / "huge.py"
    big = "pl.Tensor[[4096, 4096, 4096], pl.FP32]"
    huge.write_text(f"""import pypto_egg.language as pl


@pl.program
class Huge:
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: {big}, out: pl.Out[{big}]) -> {big}:
        t = pl.load(x, [0, 0, 0], [2, 4, 8])
        out = pl.store(t, [0, 0, 0], out)
        return out
""")
    r = cli("flatten", str(huge), "--validate")
    assert r.returncode == 2, r.stderr
    assert re.search(r"function 'main_incore_0': 'x' \(pl.Tensor\[\[4096, 4096, 4096\], pl.FP32\]\) takes "
                     r"256 GiB, past the interpreter's 1 GiB; interpretation was skipped", r.stderr), r.stderr  # fmt: skip
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr
    assert "pl.tile.store(" in r.stdout and pl.parse(r.stdout).functions


def test_explain_names_a_rule_and_a_number_for_every_statement():
    for example in sorted((ROOT / "examples").glob("*.py")):
        r = cli("explain", str(example), "--json")
        assert r.returncode == 0, (example, r.stderr)
        data = json.loads(r.stdout)  # (one object a program: a list of them for a file of several)
        statements = [s for d in (data if isinstance(data, list) else [data]) for s in d["statements"]]
        assert statements, example
        for s in statements:
            assert s["rules"] and s["rules"][0]["file"].startswith("rules/") and s["rules"][0]["line"] > 0, s
            assert any(ch.isdigit() for ch in s["plan"] + " ".join(s["facts"])), s


@pytest.mark.parametrize("example", ["seed_example", "batched_matmul"])
def test_explain_golden_text(example):
    r = cli("explain", str(ROOT / "examples" / f"{example}.py"), "--backend", "Ascend910B")
    assert r.returncode == 0, r.stderr
    golden = ROOT / "tests" / "golden" / f"explain_{example}.txt"
    assert r.stdout == golden.read_text()


def test_explain_narrows_to_a_function_and_a_line():
    r = cli("explain", str(ROOT / "examples" / "batched_matmul.py"), "--function", "main", "--stmt", "27")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("  line ") == 1 and "line 27: s = pl.tile.batch_matmul(tq, kt)" in r.stdout
    assert (
        "rule: bmm-fused-store (rules/bmm.egg:" in r.stdout and "B=2 pages of M=16 x N=64, K=32" in r.stdout
    )


def test_explain_gives_words_and_the_terms_only_when_asked():
    path = str(ROOT / "examples" / "seed_example.py")
    words = cli("explain", path, "--backend", "Ascend910B")
    terms = cli("explain", path, "--backend", "Ascend910B", "--terms")
    assert words.returncode == terms.returncode == 0, words.stderr + terms.stderr
    assert "(LoadFlat (DCons" not in words.stdout and "loaded into a 2-D [6, 4] tile" in words.stdout
    assert "(LoadFlat (DCons (DC 6) (DCons (DC 4) (DNil)))" in terms.stdout


BIG_BMM = """import pypto_egg.language as pl


@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: {t}, b: {t}, out: pl.Out[pl.Tensor[[64, 512, 512], pl.FP32]]) -> pl.Tensor[[64, 512, 512], pl.FP32]:
        x = pl.load(a, [0, 0, 0], [64, 512, 512], target_memory=pl.Mem.Mat)
        y = pl.load(b, [0, 0, 0], [64, 512, 512], target_memory=pl.Mem.Mat)
        z = pl.tile.batch_matmul(x, y)
        out = pl.store(z, [0, 0, 0], out)
        return out
""".format(t="pl.Tensor[[64, 512, 512], pl.FP16]")


@pytest.mark.parametrize("command", ["flatten", "explain", "viz"])
def test_the_shell_commands_default_to_the_backend_ir_compile_uses(command, tmp_path):
    """B-116: without --backend, the Mat budget is Ascend910B's (as in ir.compile), so two 32 MiB operands are not
    kept whole; --backend none is the run without a capacity gate."""
    f = tmp_path / "big.py"
    f.write_text(BIG_BMM)
    extra = ["-o", str(tmp_path / "g.html")] if command == "viz" else []
    assert "default: Ascend910B" in " ".join(cli(command, "--help").stdout.split())
    default, none = (cli(command, str(f), *extra, *b) for b in ([], ["--backend", "none"]))
    assert default.returncode == 0 and none.returncode == 0, default.stderr + none.stderr
    if command == "explain":
        assert "against a 524288-byte budget: does not fit (B-116)" in default.stdout
        assert "no backend, so no Mat (L1) budget: they fit (B-116)" in none.stdout
    elif command == "flatten":
        assert none.stdout.count("pl.tile.load(") == 2  # both operands whole, each page a slice of them
        assert default.stdout.count("pl.tile.load(") > 2  # re-loaded per batch under the Mat budget


# ---------------------------------------------------------------- the command line without rough edges (issue 67)


def test_version_names_pyptoegg_and_egglog():
    r = cli("--version")
    assert r.returncode == 0 and re.fullmatch(r"pypto-egg \S+ \(egglog 13\.2\.0\)\n", r.stdout), r.stdout


def test_every_option_of_every_command_has_help():
    import argparse

    from pypto_egg.cli import build_parser

    missing = []
    stack: list[tuple[str, argparse.ArgumentParser]] = [("pypto-egg", build_parser())]
    while stack:
        name, parser = stack.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
            elif not action.help:
                missing.append(f"{name} {action.option_strings or action.dest}")
    assert not missing, missing


def test_rules_takes_one_file_per_use_and_the_path_after_it_is_the_program(tmp_path):
    one, two = tmp_path / "one.egg", tmp_path / "two.egg"
    one.write_text(";; nothing\n(relation UnusedOne (i64))\n")
    two.write_text(";; nothing\n(relation UnusedTwo (i64))\n")
    r = cli("flatten", "--rules", str(one), "--rules", str(two), str(SEED), "--program", "Before")
    assert r.returncode == 0, r.stderr
    assert "pl.tile.store(y_tile, [0, 0, 0], out_0, [2, 3, 4])" in r.stdout


def test_a_rule_file_error_points_at_the_form_and_is_reported_once_against_the_rule_file(tmp_path):
    rules = tmp_path / "mine.egg"
    rules.write_text(';; unclosed\n(rule ((GenericReq s "tile.muls" o sh))\n      ((Chose s (Forward x)))\n\n'
                     "(relation Other (i64))\n")  # fmt: skip
    r = cli("flatten", str(SEED), str(SEED), "--rules", str(rules))
    assert r.returncode == 2
    assert r.stderr.count("error:") == 1, r.stderr
    assert f"error: {rules}:2:1: this form is never closed" in r.stderr
    assert "seed_example.py" not in r.stderr
    rules.write_text(';; unbound\n(rule ((GenericReq s "tile.muls" o sh))\n      ((Chose s (Forward x))))\n')
    r = cli("explain", str(SEED), "--rules", str(rules))
    assert r.returncode == 2 and r.stderr.count("error:") == 1 and f"error: {rules}:3:" in r.stderr, r.stderr


def test_a_stmt_that_names_no_tile_statement_is_an_error_listing_the_statement_lines():
    r = cli("explain", str(SEED), "--stmt", "99")
    assert r.returncode == 2
    assert "no tile statement on line 99; the tile statements are on lines 14, 15, 16, 28, 29, 30" in r.stderr


def test_an_unknown_op_gets_the_nearest_known_names(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(SEED.read_text().replace("pl.tile.add(x_tile, x_tile)", "pl.tile.expp(x_tile)", 1))
    r = cli("flatten", str(bad))
    assert r.returncode == 2
    assert "unknown op 'pl.tile.expp'; did you mean pl.tile.exp" in r.stderr and f"{bad}:15:" in r.stderr


@pytest.mark.parametrize("command", ["flatten", "check"])
def test_fewer_than_one_worker_is_refused(command, tmp_path):
    extra = ["--output", str(SEED)] if command == "check" else []
    r = cli(command, str(SEED), "-j", "0", *extra)
    assert r.returncode == 2 and "-j 0: at least one worker" in r.stderr


def test_explain_and_viz_take_every_program_of_a_file_as_flatten_does(tmp_path):
    r = cli("explain", str(SEED))
    assert r.returncode == 0, r.stderr
    assert "program Before" in r.stdout and "program After" in r.stdout
    r = cli("viz", str(SEED), "--format", "dot", "-o", str(tmp_path / "g.dot"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g.dot").is_file() and (tmp_path / "g.After.dot").is_file()


def test_the_run_report_says_distinct_rules_and_firings_apart():
    r = cli("flatten", str(SEED), "--program", "Before", "--report")
    m = re.search(r"rules fired: (\d+) distinct rule\(s\), (\d+) firing\(s\) in all", r.stderr)
    assert m, r.stderr
    firings = [int(line.split()[0]) for line in r.stderr.split("firings  rule", 1)[1].splitlines()[1:]
               if line.strip() and line.strip().split()[0].isdigit()]  # fmt: skip
    assert len(firings) == int(m.group(1)) and sum(firings) == int(m.group(2))


def test_validate_never_reports_success_on_a_function_it_could_not_run(tmp_path):
    popped = tmp_path / "popped.py"
    popped.write_text(SEED.read_text().replace(
        "        x_tile: pl.Tile[[2, 3, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])",
        "        p: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)\n"
        "        x_tile: pl.Tile[[2, 3, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])", 1))  # fmt: skip
    r = cli("flatten", str(popped), "--program", "Before", "--validate")
    assert r.returncode == 2
    assert "function 'main_incore_0' was not validated: the interpreter cannot run the input" in r.stderr
    assert "tile.tpop_from_aic" in r.stderr


def test_a_load_past_its_tensor_is_refused_at_reading_with_pyptos_reason_and_remedy(tmp_path):
    past = tmp_path / "past.py"
    past.write_text(
        SEED.read_text().replace("pl.load(x, [0, 0, 0], [2, 3, 4])", "pl.load(x, [0, 0, 0], [2, 3, 8])", 1)
    )
    r = cli("flatten", str(past), "--program", "Before", "--validate")
    assert r.returncode == 2
    assert re.search(r"past\.py:14:\d+: tile\.load reads past the end of dimension 2: offset 0 \+ extent 8 exceeds "
                     r"the source extent 4\. Pass clamp=True", r.stderr), r.stderr  # fmt: skip


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.py")))
def test_explain_on_the_core_runner_says_what_the_accelerated_run_says(example):
    """`--runner core` explains the run of the rule files as written: the same plans, rules and facts, word for
    word, as the default run's."""
    path = str(ROOT / "examples" / example)
    core, accelerated = cli("explain", path, "--runner", "core"), cli("explain", path)
    assert core.returncode == 0, core.stderr
    assert core.stdout == accelerated.stdout


def test_the_core_runners_view_shows_only_rules_of_the_rule_files(tmp_path):
    """What a user inspects under `runner="core"` is what `rules/` says: its run report names rules of the shipped
    files alone, where the accelerated run's names the acceleration's stand-ins too; the page is written from it."""
    from pypto_egg.egraph import FlattenEGraph, shipped_rule_files
    from pypto_egg.egraph.facade import CoreFlattenEGraph
    from pypto_egg.egraph.rule_index import rule_index
    from pypto_egg.errors import UserError

    program = pl.parse((ROOT / "examples" / "batched_matmul.py").read_text())
    shipped = {r.name for r in rule_index(tuple(shipped_rule_files())).rules}
    core = FlattenEGraph(program, "main", backend="Ascend910B", runner="core")
    assert isinstance(core, CoreFlattenEGraph)
    core.saturate()
    fired = {name for name, n in core.report.rules_fired.items() if n}
    assert fired and fired <= shipped, fired - shipped
    accelerated = FlattenEGraph(program, "main", backend="Ascend910B")
    accelerated.saturate()
    assert {name for name, n in accelerated.report.rules_fired.items() if n} - shipped  # (its stand-ins)
    assert str(core.plans()) == str(accelerated.plans())
    page = core.write_html(tmp_path / "core.html").read_text()
    assert "program <code>BatchedMatmul</code>" in page and "prod-asked" not in page
    accelerated.close()
    core.close()
    with pytest.raises(UserError, match="unknown runner 'fast'"):
        FlattenEGraph(program, "main", runner="fast")
    r = cli(
        "viz",
        str(ROOT / "examples" / "batched_matmul.py"),
        "--runner",
        "core",
        "-o",
        str(tmp_path / "v.html"),
    )
    assert r.returncode == 0 and (tmp_path / "v.html").exists(), r.stderr
