"""loop-pipeline: depth-2 software pipelining of a uniform self-loop.

Corpus tier: matvec and sgemm_naive are pipelined (the second copy's loads above the first
copy's wait, the first copy's load destinations renamed), run bit-identical to K0 in the
emulator and pass ``--verify-each``; kernels whose loop cannot be pipelined are left as they
are.  (The verifier's proof of the result: tests/verify/test_unrolled_loops.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.passes import AnalysisManager, run_pipeline
from asmevo.passes.loop_pipeline import LoopPipeline

TEXT = """
.text
.globl k
.type k,@function
k:
  s_mov_b32 s4, 8
.LBB0_1:
  global_load_dword v1, v[2:3], off
  s_add_i32 s4, s4, -1
  v_lshl_add_u64 v[2:3], v[2:3], 0, 4
  s_cmp_eq_u32 s4, 0
  s_waitcnt vmcnt(0)
  {c}
  s_cbranch_scc0 .LBB0_1
  global_store_dword v[2:3], v4, off
  s_endpgm
"""


def _run(text):
    m = parse_asm(text, "t.s")
    k = m.kernels[0]
    before = [b.instructions[:] for b in k.blocks]
    r = LoopPipeline().run(k, AnalysisManager(m))
    return k, before, r


@pytest.mark.parametrize("c,why", [
    ("global_store_dword v[2:3], v1, off", "side-effects"),          # a store in C
    ("v_mov_b32 v2, v1", "true-dependence"),                          # P reads what C writes
    ("v_add_f32_e32 v4, v4, v1\n  s_nop 0\n  s_barrier", "tail-not-movable"),  # C empty
    ("v_add_f32_e32 v4, v4, v1\n  s_cmp_eq_u32 s4, 1", "exit-test-last"),       # C empty
])
def test_refusals_leave_the_kernel_alone(c, why):
    k, before, r = _run(TEXT.format(c=c))
    assert r.changed is False
    assert [b.instructions for b in k.blocks] == before
    assert r.stats.get(f"refused.{why}") == 1 and r.stats.get("refused") == 1, r.stats


NO_LOOP = """
.text
.globl k
.type k,@function
k:
  v_add_f32_e32 v1, v1, v1
  s_endpgm
"""


@pytest.mark.parametrize("text,stat", [
    (NO_LOOP, "no-self-loop"),                                                  # no loop
    (TEXT.format(c="v_add_f32_e32 v4, v4, v1").replace("s_cbranch_scc0", "s_cbranch_execnz"),
     "refused.not-uniform"),                                                    # divergent
])
def test_a_kernel_left_alone_says_why(text, stat):
    """Newcomer test: the pass changed nothing and --stats gave no reason."""
    k, before, r = _run(text)
    assert r.changed is False and [b.instructions for b in k.blocks] == before
    assert r.stats.get(stat) == 1, r.stats


def test_loop_option_naming_another_block_says_so():
    """Newcomer test: loop=0 on a kernel whose self-loop is block 1 counted
    ``refused.not-a-self-loop`` and said nothing of which blocks are self-loops.  It stays a
    refusal (evolve samples loop=N), with a remark naming the self-loops."""
    m = parse_asm(TEXT.format(c="v_add_f32_e32 v4, v4, v1"), "t.s")
    r = LoopPipeline(loop=0).run(m.kernels[0], AnalysisManager(m))
    assert r.changed is False and r.stats.get("refused.not-a-self-loop") == 1, r.stats
    assert r.remarks == ["kernel k: loop=0: block 0 (k) is not a self-loop; its self-loop: "
                         "block 1 (.LBB0_1)"], r.remarks
    m = parse_asm(NO_LOOP, "t.s")
    r = LoopPipeline(loop=0).run(m.kernels[0], AnalysisManager(m))
    assert r.stats.get("refused.not-a-self-loop") == 1, r.stats
    assert r.remarks == ["kernel k: loop=0: block 0 (k) is not a self-loop; it has no "
                         "self-loop (no block branches to itself) to pipeline"], r.remarks


@pytest.mark.parametrize("loop", [None, 1])
def test_no_remark_unless_loop_names_another_block(loop):
    """The default (-1) and a loop=N that is a self-loop add no remark."""
    m = parse_asm(TEXT.format(c="global_store_dword v[2:3], v1, off"), "t.s")
    p = LoopPipeline() if loop is None else LoopPipeline(loop=loop)
    r = p.run(m.kernels[0], AnalysisManager(m))
    assert r.stats.get("refused.side-effects") == 1 and r.remarks == [], (r.stats, r.remarks)


def test_asmevo_opt_reports_the_self_loops_for_loop_naming_another_block(tmp_path, capsys):
    """--stats prints the remark under the pass's counters, --json lists it; exit 0."""
    import json
    from asmevo.tools.opt import main
    src = tmp_path / "k.s"
    src.write_text(TEXT.format(c="v_add_f32_e32 v4, v4, v1"))
    pipe = "--passes=kernel(loop-pipeline<loop=0>)"
    assert main([pipe, "--stats", str(src), "-o", str(tmp_path / "o.s")]) == 0
    err = capsys.readouterr().err.splitlines()
    i = err.index("    loop-pipeline.refused.not-a-self-loop = 1")
    assert err[i + 1] == ("    loop-pipeline: kernel k: loop=0: block 0 (k) is not a self-loop; "
                          "its self-loop: block 1 (.LBB0_1)"), err
    assert main([pipe, "--json", str(src), "-o", str(tmp_path / "o.s")]) == 0
    rec = json.loads(capsys.readouterr().out)
    want = ["kernel k: loop=0: block 0 (k) is not a self-loop; its self-loop: block 1 (.LBB0_1)"]
    assert rec["passes"][0]["remarks"] == want and rec["runs"][0]["remarks"] == want, rec
    assert rec["passes"][0]["stats"]["refused.not-a-self-loop"] == 1, rec


def test_asmevo_opt_reports_matvec_self_loop(corpus_dir, tmp_path, capsys):
    """The newcomer's case: matvec's block 0 is not a self-loop, block 3 is."""
    from asmevo.cli import main
    rc = main(["opt", "-passes=kernel(loop-pipeline<loop=0>)", "--stats",
               str(corpus_dir / "matvec.co"), "-o", str(tmp_path / "x.co")])
    err = capsys.readouterr().err
    assert rc == 0 and "loop-pipeline.refused.not-a-self-loop = 1" in err, err
    assert ("loop-pipeline: kernel matvec: loop=0: block 0 (matvec) is not a self-loop; its "
            "self-loop: block 3 (.Lasmevo_1754)") in err, err


@pytest.mark.parametrize("source,says", [
    ("text", "the kernel has 3 blocks, blocks 0..2); its self-loop: block 1 (.LBB0_1); "
             "expected loop=-1"),
    ("vadd", "the kernel has 3 blocks, blocks 0..2); it has no self-loop"),
])
def test_loop_option_past_the_last_block_is_bad_input(tmp_path, capsys, source, says):
    """Newcomer test: loop=99 on a kernel of 3 blocks was counted as
    ``refused.not-a-self-loop``; there is no block 99 to be one.  Bad input: one line naming
    the file, the kernel, its blocks and its self-loops; exit 2, no output written."""
    import pathlib
    from asmevo.tools.opt import main
    if source == "text":
        src = tmp_path / "k.s"
        src.write_text(TEXT.format(c="v_add_f32_e32 v4, v4, v1"))
        kernel = "k"
    else:
        src = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
        kernel = "vadd_f32"
    out = tmp_path / "o.co"
    rc = main(["--passes=kernel(loop-pipeline<loop=99>)", "--stats", str(src), "-o", str(out)])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert rc == 2 and not out.exists() and "Traceback" not in err, err
    # only the error: --stats printed an all-zero statistics table before it (newcomer test)
    assert len(lines) == 1 and "not-a-self-loop" not in err and "statistics" not in err, err
    assert lines[0].startswith(f"asmevo-opt: {src}: error: loop-pipeline<loop=99>: kernel "
                               f"{kernel} has no loop 99 (loop=N is a block index;"), lines[0]
    assert says in lines[0], lines[0]


def test_every_reason_is_documented():
    import pathlib
    import re
    from asmevo.passes import loop_pipeline
    src = pathlib.Path(loop_pipeline.__file__).read_text()
    returned = {t for line in src.splitlines()
                if re.match(r"\s*(return|why =) .*\"", line) and '" in ' not in line
                for t in re.findall(r'"([a-z]+(?:-[a-z]+)+)"', line.split("#")[0])}
    assert {"side-effects", "not-a-self-loop", "tail-not-movable", "exit-test-last"} <= returned
    assert returned <= set(loop_pipeline.REFUSALS), returned - set(loop_pipeline.REFUSALS)
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "passes.md").read_text()
    missing = [t for t in loop_pipeline.REFUSALS if f"`{t}`" not in doc]
    assert not missing, missing


def test_asmevo_opt_stats_says_why_nothing_changed(capsys):
    import pathlib
    from asmevo.tools.opt import main
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    assert main(["--passes=loop-pipeline", "--stats", str(co), "-o", "/dev/null"]) == 0
    assert "loop-pipeline.no-self-loop = 1" in capsys.readouterr().err


def test_no_register_budget_no_change():
    # a text kernel without .amdhsa_kernel has no allocation to take new registers from
    k, before, r = _run(TEXT.format(c="v_add_f32_e32 v4, v4, v1"))
    assert r.changed is False and r.stats.get("refused.no-free-register") == 1, r.stats


# -- corpus -------------------------------------------------------------------------------------

def _emulate(module, corpus_dir, name, seed):
    from asmevo.emu import harness as H
    from asmevo.emu import run_kernel
    h = H.load_harness(str(corpus_dir / "manifest.json"), name)
    inputs = H.make_inputs(h, seed)
    res = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    return res.outputs, H.compare(h, res.outputs, H.reference(h, inputs))


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["matvec", "sgemm_naive"])
def test_pipelines_the_corpus_loops_bit_identically(corpus_dir, name):
    from asmevo.frontend.loader import load
    k0 = load(str(corpus_dir / f"{name}.co"))
    m = load(str(corpus_dir / f"{name}.co"))
    inst = run_pipeline(m, "loop-pipeline", kernels=[name], verify_each=True)
    st = inst.stats["loop-pipeline"]
    assert st["pipelined"] == 1 and st["renamed"] == 2, st
    k = m.kernel(name)
    assert len(k.blocks) == len(k0.kernel(name).blocks) + 2
    # M: the second copy's loads come first, the first copy's wait lets them fly
    loop = next(i for i, b in enumerate(k0.kernel(name).blocks)
                if b.instructions[-1].opcode == "s_cbranch_scc0")
    M = k.blocks[loop + 1].instructions
    first_wait = next(i for i in M if i.opcode == "s_waitcnt")
    assert M[0].opcode.startswith("global_load") or M[0].opcode.startswith("v_")
    assert "vmcnt(0)" not in first_wait.text(), first_wait.text()
    for seed in (0, 3):
        want, _ = _emulate(k0, corpus_dir, name, seed)
        got, errs = _emulate(m, corpus_dir, name, seed)
        assert errs == []
        for buf, arr in want.items():
            assert np.array_equal(arr.view(np.uint8), got[buf].view(np.uint8)), (name, buf)


@pytest.mark.corpus
@pytest.mark.parametrize("name,why", [("mfma_32x32x8_f16", "refused.true-dependence"),
                                      ("row_sum", "refused.not-uniform"),
                                      ("sgemm_tiled", "refused.tail-not-movable"),
                                      ("vadd_f32", "no-self-loop")])
def test_loops_it_cannot_pipeline_are_left_alone(corpus_dir, name, why):
    """mfma: the loop's C updates the address P reads (a true dependence); row_sum: a
    divergent (execnz) loop; sgemm_tiled: the loop ends in s_barrier; vadd: no loop.
    --stats says which."""
    from asmevo.frontend.loader import load
    m = load(str(corpus_dir / f"{name}.co"))
    before = [i.key() for i in m.kernel(name).instructions()]
    inst = run_pipeline(m, "loop-pipeline", kernels=[name])
    assert [i.key() for i in m.kernel(name).instructions()] == before
    assert inst.stats["loop-pipeline"][why] == 1, inst.stats["loop-pipeline"]


@pytest.mark.corpus
def test_asmevo_opt_writes_a_code_object_that_runs(corpus_dir, tmp_path, capsys):
    from asmevo.frontend.loader import load
    from asmevo.tools.opt import main
    out = tmp_path / "matvec.pipe.co"
    rc = main(["--passes=loop-pipeline", "--verify-each", "--stats",
               str(corpus_dir / "matvec.co"), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "pipelined" in err
    _, errs = _emulate(load(str(out)), corpus_dir, "matvec", 1)
    assert errs == []
    # running the pass again finds no self-loop left to pipeline
    m = load(str(out))
    before = [i.key() for i in m.kernel("matvec").instructions()]
    run_pipeline(m, "loop-pipeline", kernels=["matvec"])
    assert [i.key() for i in m.kernel("matvec").instructions()] == before
