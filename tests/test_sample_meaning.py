"""Meaning on the real programs: every program of shared/realworld-sample that the pass rewrites is interpreted
before and after (translation validation, B-210's companion for meaning), and so is the reference's own output
of it (post/). No changed meaning on either side, and the interpreter runs at least 95 % of them whole."""

from __future__ import annotations

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.passes.validate import validate_translation

from pypto_ref import SAMPLE, requires_sample, sample_programs


@requires_sample
def test_the_pass_and_the_reference_keep_the_meaning_of_every_rewritten_sample_program():
    rewritten, whole, reference_checked = 0, 0, 0
    for path in sample_programs():
        before = pl.parse(path.read_text())
        flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", validate=True)
        flatten(before)  # raises ValidationError on a changed meaning
        report = flatten.validation
        if report is None or not (report.checked or report.skipped):
            continue  # nothing rewritten
        rewritten += 1
        whole += not report.skipped
        post = SAMPLE / "post" / path.name
        if post.is_file():
            reference = validate_translation(
                before, pl.parse(post.read_text())
            )  # raises on a changed meaning
            reference_checked += bool(reference.checked)
    assert rewritten >= 30
    assert whole >= 0.95 * rewritten, (whole, rewritten)
    assert reference_checked >= 0.9 * rewritten, (reference_checked, rewritten)
