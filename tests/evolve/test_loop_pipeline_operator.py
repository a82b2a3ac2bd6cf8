"""The passes operator starts with loop-pipeline on a loop kernel, and a short run on matvec
ends with a pipelined winner the verifier proved (``--require proved``)."""

from __future__ import annotations

import json
import random

import pytest

pytestmark = pytest.mark.corpus


def test_passes_operator_tries_loop_pipeline_early(corpus_dir):
    from asmevo.evolve.operators import PASS_SPACE, Parent, PassesOperator, ProposeContext
    from asmevo.frontend.loader import load
    assert "loop-pipeline" in PASS_SPACE
    k0 = load(str(corpus_dir / "matvec.co"))
    blocks = k0.kernel("matvec").blocks
    ctx = ProposeContext(k0, "matvec")
    op = PassesOperator()
    texts = []
    for step in range(8):
        try:
            prop = op.propose(Parent("h", blocks, [], 1.0), random.Random(step), ctx)
        except Exception:  # noqa: BLE001 - NoCandidate for a pipeline that does nothing
            continue
        texts.append(prop.params["pipeline"])
        if prop.params["pipeline"].startswith("kernel(loop-pipeline"):
            assert len(prop.blocks) == len(blocks) + 2
    assert sum(t.startswith("kernel(loop-pipeline") for t in texts) >= 2, texts


def test_short_run_on_matvec_finds_the_pipelined_loop(corpus_dir, tmp_path):
    from asmevo.evolve.config import load_config
    from asmevo.evolve.loop import run_evolve
    cfg = load_config(None, {"kernel_file": str(corpus_dir / "matvec.co"),
                             "harness": str(corpus_dir / "manifest.json"), "entry": "matvec",
                             "out": str(tmp_path / "run"), "budget": 6, "quiet": True,
                             "final_trials": 4, "operators": "passes", "seed": 0})
    res = run_evolve(cfg)
    assert res.exit_status == 0
    rep = json.loads((tmp_path / "run" / "report.json").read_text())
    assert rep["final_check"]["verdict"]["status"] == "accepted"
    assert rep["best_cycles"] < 0.8 * rep["k0_cycles"], (rep["best_cycles"], rep["k0_cycles"])
    assert "unrolled twice" in json.dumps(rep["final_check"])


def test_no_loop_pipeline_where_the_pass_refuses(corpus_dir):
    """mfma_32x32x8_f16 has a self-loop the normalisation applies to, but the pass refuses
    it (its C advances the address P reads): the operator does not waste steps on it, and
    kernels without a pipelinable loop sample exactly the pipelines they did before."""
    from asmevo.evolve.operators import Parent, PassesOperator, ProposeContext, sample_pipeline
    from asmevo.frontend.loader import load
    k0 = load(str(corpus_dir / "mfma_32x32x8_f16.co"))
    blocks = k0.kernel("mfma_32x32x8_f16").blocks
    ctx = ProposeContext(k0, "mfma_32x32x8_f16")
    op = PassesOperator()
    for step in range(6):
        try:
            prop = op.propose(Parent("m", blocks, [], 1.0), random.Random(step), ctx)
        except Exception:  # noqa: BLE001 - NoCandidate
            continue
        assert "loop-pipeline" not in prop.params["pipeline"]
        assert prop.params["pipeline"] == sample_pipeline(random.Random(step))
