"""Corpus tier: every kernel of manifest.json and triton/manifest.json runs in the
emulator from its code object and matches its numpy reference."""

import json
import os

import numpy as np
import pytest

from asmevo.emu import harness as H
from asmevo.emu import run_kernel
from asmevo.frontend.loader import load
from tests.conftest import CORPUS

pytestmark = [pytest.mark.corpus, pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def _entries():
    if CORPUS is None:
        return []
    out = []
    for sub in ("", "triton"):
        p = CORPUS / sub / "manifest.json"
        if p.is_file():
            out += [(str(p), e["name"]) for e in json.load(open(p))]
    return out


@pytest.mark.parametrize("manifest,name", _entries(), ids=[n for _, n in _entries()])
def test_corpus_kernel_matches_reference(corpus_dir, manifest, name):
    h = H.load_harness(manifest, name)
    module = load(os.path.join(h["_dir"], h["code_object"]))
    inputs = H.make_inputs(h, 0)
    res = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    assert res.instructions > 0 and res.waves > 0
    errs = H.compare(h, res.outputs, H.reference(h, inputs))
    assert not errs, errs
    assert not res.writes_outside


@pytest.mark.parametrize("manifest,name", _entries(), ids=[n for _, n in _entries()])
def test_corpus_assembly_text_other_seed(corpus_dir, manifest, name):
    """The same kernels from their assembly text (.s / .amdgcn), on other random inputs."""
    h = H.load_harness(manifest, name)
    module = load(os.path.join(h["_dir"], h["asm"]))
    inputs = H.make_inputs(h, 5)
    res = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    errs = H.compare(h, res.outputs, H.reference(h, inputs))
    assert not errs, errs


@pytest.mark.slow
@pytest.mark.parametrize("manifest,name", _entries(), ids=[n for _, n in _entries()])
def test_corpus_many_seeds(corpus_dir, manifest, name):
    h = H.load_harness(manifest, name)
    module = load(os.path.join(h["_dir"], h["code_object"]))
    for seed in range(1, 9):
        inputs = H.make_inputs(h, seed)
        res = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
        errs = H.compare(h, res.outputs, H.reference(h, inputs))
        assert not errs, (seed, errs)


def test_seeds_change_inputs(corpus_dir):
    h = H.load_harness(str(corpus_dir / "manifest.json"), "vadd_f32")
    a, b = H.make_inputs(h, 0), H.make_inputs(h, 1)
    assert not np.array_equal(a["a"], b["a"])
    assert np.array_equal(a["a"], H.make_inputs(h, 0)["a"])


AITER = ["aiter_topksoftmax", "aiter_bwd_odo_fp16", "aiter_bwd_dq_convert_fp16", "aiter_i8gemm_16x128",
         "aiter_i8gemm_16x128_splitk2"]


@pytest.mark.parametrize("name", AITER)
def test_aiter_kernels_match_numpy(corpus_dir, name):
    """The four AITer hand-written kernels of corpus/aiter/LAUNCH.md (16-byte kernarg slots,
    pads as scalars) against numpy references in tests/emu/data/aiter_ref.py; the int8 GEMM
    exercises LDS DMA (buffer_load ... lds), v_mfma_i32_16x16x32_i8 and bf16 packing."""
    co_root = corpus_dir / "aiter" / "gfx942"
    if not co_root.is_dir():
        pytest.skip("no AITer corpus")
    h = H.load_harness(os.path.join(os.path.dirname(__file__), "data", name + ".json"))
    module = load(str(co_root / h["code_object"]))
    inputs = H.make_inputs(h, 0)
    res = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    want = H.reference(h, inputs)
    if name.startswith("aiter_i8gemm_16x128"):
        # bf16 bit patterns: compare the decoded values within one bf16 ulp
        import importlib.util
        spec = importlib.util.spec_from_file_location("_aiter_ref", os.path.join(h["_dir"], "aiter_ref.py"))
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)
        got, exp = ref.bf16_to_f32(res.outputs["C"]), ref.bf16_to_f32(want["C"])
        # one bf16 ulp of the largest split partial (f32 scaling order differs from numpy's)
        atol = 2 ** -7 * np.abs(exp).max() if "splitk" in name else 0
        assert np.abs(exp).max() > 1 and np.allclose(got, exp, rtol=2 ** -7, atol=atol)
        assert not res.writes_outside
        return
    errs = H.compare(h, res.outputs, want)
    assert not errs, errs


def test_program_cache_follows_edits(corpus_dir):
    """Compiled programs are reused across runs, but an edited kernel is recompiled."""
    h = H.load_harness(str(corpus_dir / "manifest.json"), "vadd_f32")
    module = load(str(corpus_dir / "vadd_f32.co"))
    inputs = H.make_inputs(h, 0)
    r1 = run_kernel(module, "vadd_f32", H.make_launch(h, inputs))
    assert np.array_equal(r1.outputs["c"], inputs["a"] + inputs["b"])
    k = module.kernel("vadd_f32")
    add = next(i for i in k.instructions() if i.opcode == "v_add_f32_e32")
    k.replace(add, add.evolve(opcode="v_sub_f32_e32"))
    r2 = run_kernel(module, "vadd_f32", H.make_launch(h, inputs))
    assert np.array_equal(r2.outputs["c"], inputs["a"] - inputs["b"])
