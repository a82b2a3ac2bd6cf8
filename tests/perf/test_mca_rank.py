"""The static model and llvm-mca agree in rank on straight-line VALU/SALU/MFMA blocks of the
corpus (Spearman >= 0.9; benchmarks/timing_mca.py prints the whole-corpus figure)."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_benchmark(name: str):
    """A benchmark script as a module, loaded by path: benchmarks/ is not put on sys.path
    (its profile.py would shadow the standard library's profile for every later import)."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


timing_mca = _load_benchmark("timing_mca")

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def mca():
    from asmevo.errors import ToolNotFoundError
    from asmevo.llvm import find_tool
    try:
        return find_tool("llvm-mca")
    except ToolNotFoundError as e:
        pytest.skip(str(e))


def test_spearman_on_corpus_blocks(corpus_dir, mca):
    files = sorted(corpus_dir.glob("*.co")) + sorted((corpus_dir / "triton").glob("*.hsaco"))
    files += [p for p in sorted((corpus_dir / "aiter").rglob("*.co"))
              if p.name.startswith(("fmoe_stage1_bf16_pertokenFp8_g1u1_32x64", "fwd_hd128_i8fp8",
                                    "topksoftmax"))]
    rows = timing_mca.collect(files, mca=mca)
    assert len(rows) >= 20
    rho = timing_mca.spearman([r[2] for r in rows], [r[3] for r in rows])
    assert rho >= 0.9, rho


def test_mfma_chain_and_valu_reader(mca):
    """Where the two differ by design: a VALU reading an MFMA result waits passes + 3 wait
    states in the model (GCNHazardRecognizer gfx940), passes units in llvm-mca."""
    from asmevo.frontend.asm_parser import parse_instruction
    from asmevo.perf.static import straight_line_cycles
    chain = [parse_instruction("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]")] * 4
    one = straight_line_cycles(chain[:1])
    four = straight_line_cycles(chain)
    assert four - one == pytest.approx(3 * 8 * 4)  # same accumulator: the pass rate (8 passes)
    mc = timing_mca.mca_cycles([chain[:1], chain], mca)
    assert mc[1] - mc[0] == 3 * 8  # llvm-mca agrees in units of 4 clk
    reader = chain[:1] + [parse_instruction("v_add_f32_e32 v40, v0, v0")]
    model = straight_line_cycles(reader)
    assert model == (8 + 3 + 1) * 4 + 4  # passes + 3 wait states, then the VALU's slot
    (mca_reader,) = timing_mca.mca_cycles([reader], mca)
    assert model / 4 - mca_reader == 3  # llvm-mca underestimates MFMA -> VALU by 3 passes
