"""Mutation test of the verifier on corpus kernels (corpus tier).

Single edits of real kernels (asmevo.verify.mutate) are verified against the
original at level ``all`` (static + ABI + z3 + differential testing with the
corpus manifest as harness).  Targets: every semantics-changing edit rejected
or unknown (a wrong "accepted" is the worst bug); >= 99% of semantics-preserving
edits accepted.  Rates and a per-layer breakdown are printed (``pytest -s``).

The default tier samples a few edits per kernel; the slow tier (run by CI through
``scripts/test.sh``; ``--quick`` leaves it out) runs the full set behind the figures in
docs/verify.md and asserts them exactly: 655 changing edits, all rejected (none unknown,
none accepted), and 248 preserving edits, all accepted.  Sampling uses a fixed seed, so
the counts are a function of the corpus and the generator; a change to either that moves
them must update docs/verify.md with the test.
"""

from __future__ import annotations

import json
import time

import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify.diff import load_harness
from asmevo.verify.mutate import evaluate, generate, sample, summarize

#: Small clang kernels (fast to emulate), with manifest harnesses.
KERNELS = ["vadd_f32", "vmul_f32", "relu_f32", "leaky_relu_f32", "clamp_f32", "int_bitops_u32",
           "row_sum", "row_max", "transpose_lds", "gather_scatter_f32", "fused_linear_relu",
           "bf16_pack", "fp16_axpy_h2", "daxpy_f64", "sigmoid_f32", "matvec", "conv1d",
           "scan_inclusive_i32", "vadd_f32_O1", "softmax_row", "layernorm", "gelu_tanh_f32",
           "histogram_atomic", "sgemm_naive", "conv2d_3x3"]


def run_mutations(corpus_dir, per_kernel_changing: int, per_kernel_preserving: int, seed: int = 1):
    outcomes = []
    t0 = time.perf_counter()
    for name in KERNELS:
        h = load_harness(str(corpus_dir / "manifest.json"), name)
        m = parse_asm((corpus_dir / h["asm"]).read_text(), h["asm"])
        muts = generate(m, seed=seed)
        ch = sample([x for x in muts if x.changing], per_kernel_changing, seed)
        pr = sample([x for x in muts if not x.changing], per_kernel_preserving, seed)
        outcomes += evaluate(m, ch + pr, harness=h, trials=3, seed=seed)
    s = summarize(outcomes)
    s["seconds"] = round(time.perf_counter() - t0, 1)
    print("\nmutation test:", json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "misses"}
                                              if isinstance(v, dict) else v) for k, v in s.items()},
                                         indent=1))
    for k in ("changing", "preserving"):
        for miss in s[k]["misses"][:20]:
            print(f"  {k} miss: {miss}")
    return s


def _hazards_available() -> bool:
    try:
        from asmevo.analysis import hazards  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def small(corpus_dir):
    return run_mutations(corpus_dir, 4, 2)


#: The figures docs/verify.md states ("How well it works"), reproduced by the slow tier.
FULL_CHANGING, FULL_PRESERVING = 655, 248


@pytest.fixture(scope="module")
def full(corpus_dir):
    return run_mutations(corpus_dir, 28, 24)


def test_changing_edits_never_accepted(small):
    assert small["changing"]["n"] >= 60
    assert small["changing"]["misses"] == []


def test_preserving_edits_accepted(small):
    if not _hazards_available():
        pytest.skip("asmevo.analysis.hazards is not available: the static layer answers unknown")
    assert small["preserving"]["rate"] >= 0.99, small["preserving"]["misses"]


@pytest.mark.slow
def test_full_mutation_rates(full):
    ch, pr = full["changing"], full["preserving"]
    assert ch["misses"] == []                       # never accepted: the soundness target
    assert ch["n"] == FULL_CHANGING, ch["by_kind"]
    # the figure of docs/verify.md: every one rejected, none unknown
    assert set(ch["by_layer"]) <= {"static", "abi", "z3", "diff"}, ch["by_status"]
    assert sum(ch["by_layer"].values()) == FULL_CHANGING, ch["by_status"]
    assert pr["n"] == FULL_PRESERVING, pr["by_kind"]
    if _hazards_available():
        assert pr["by_status"] == {"accepted": FULL_PRESERVING}, pr["misses"]


def test_generated_edits_are_single_legal_edits(corpus_dir):
    from asmevo.verify.mutate import CHANGING_KINDS, PRESERVING_KINDS, legal_texts
    text = (corpus_dir / "int_bitops_u32.s").read_text()
    m = parse_asm(text, "int_bitops_u32.s")
    muts = generate(m, seed=3)
    kinds = {x.kind for x in muts}
    assert {"swap-noncommutative", "reg-index", "const", "swap-dependent"} <= kinds
    assert {"reorder-independent", "peephole"} <= kinds
    for x in muts:
        assert x.changing == (x.kind in CHANGING_KINDS) and (x.kind in PRESERVING_KINDS) != x.changing
        ko, kc = m.kernel(x.kernel), x.module.kernel(x.kernel)
        diff = [i for i, (a, b) in enumerate(zip(ko.blocks, kc.blocks))
                if [y.key() for y in a.instructions] != [y.key() for y in b.instructions]]
        assert diff == [x.block]
    # every new instruction is accepted by llvm-mc (the legality oracle)
    ok = legal_texts([i.text() for x in muts for i in x.new])
    assert all(ok.values())
    assert legal_texts(["v_add_u32_e32 v0, s1, s2"]) == {"v_add_u32_e32 v0, s1, s2": False}


def test_mutations_of_code_objects_and_triton(corpus_dir):
    """The same targets on modules loaded from code objects (disassembled), incl. Triton."""
    from asmevo.frontend.loader import load
    outcomes = []
    for name, man in (("vadd_f32", corpus_dir / "manifest.json"),
                      ("softmax_row", corpus_dir / "manifest.json"),
                      ("tr_vadd", corpus_dir / "triton" / "manifest.json"),
                      ("tr_softmax", corpus_dir / "triton" / "manifest.json")):
        h = load_harness(str(man), name)
        m = load(str(man.parent / h["code_object"]))
        muts = generate(m, seed=2)
        ch = sample([x for x in muts if x.changing], 12, 2)
        pr = sample([x for x in muts if not x.changing], 6, 2)
        outcomes += evaluate(m, ch + pr, harness=h, trials=3, seed=2)
    s = summarize(outcomes)
    print("\ncode objects:", {k: (s[k]["n"], s[k]["rate"], s[k]["by_layer"]) for k in s})
    assert s["changing"]["n"] >= 40 and s["changing"]["misses"] == []
    if _hazards_available():
        assert s["preserving"]["n"] >= 12 and s["preserving"]["rate"] >= 0.99, s["preserving"]["misses"]
