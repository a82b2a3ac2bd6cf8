"""Differential fuzzing of the lockstep mode (tests/emu/lsfuzz.py): random race-free
programs -- scalar and vector ALU, compares, saveexec, lane-mask readers, per-wave SGPR
operands, lane moves, LDS, global / buffer / scalar / flat memory, scratch, MFMA, uniform,
per-wave and lane-divergent branches and loops, barriers -- run on several waves and
workgroups give exactly the results of running the waves one at a time (every wave's
registers, SCC, EXEC, instruction and lane counts, LDS, memory, scratch), with compiled
blocks and without, with a Program relaunched on new data and with the register and LDS
layout asmevo.emu.launch gives a lockstep set.  A fixed set of seeds here (10-20 s on the
shared cores); scripts/lockstep_fuzz.py runs thousands and shrinks what differs."""

import pytest

from tests.emu import lsfuzz as F

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: seeds of the regular run (the programs are a function of the seed alone)
SEEDS = range(26)


@pytest.fixture(scope="module")
def llvm_mc_available():
    """llvm-mc keeps the generated code valid gfx942: skipped only when it is not installed
    (a failure under CI=true; tests.corpus_paths.require_tool)."""
    from tests.corpus_paths import require_tool
    require_tool("llvm-mc")


@pytest.mark.parametrize("seed", SEEDS)
def test_lockstep_equals_one_wave_at_a_time(seed, llvm_mc_available):
    case = F.generate(seed, size=30)
    # (with blocks and without for every seed; a relaunched Program and launch's register
    # layout for every third)
    modes = ("lockstep", "lockstep-noblocks") + \
        (("lockstep-warm", "lockstep-launch") if seed % 3 == 0 else ())
    diffs, ref = F.check(case, modes)
    assert not diffs, f"seed {seed}:\n{case.text()}\n{diffs}"
    assert ref.error is None, ref.error         # (the programs run to their end)


def test_generated_programs_cover_the_group_forms(llvm_mc_available, monkeypatch):
    """Not vacuous: the programs reach the lockstep forms the fuzzer is meant to test --
    compiled blocks (with their full-EXEC form), the per-lane SGPR form, VOPC, LDS, scratch
    and scalar batches, group splits."""
    import collections
    from asmevo.emu import lockstep as LS
    from asmevo.emu import lockstep_block as LB
    seen = collections.Counter()

    def spy(name, mod=LS):
        orig = getattr(mod, name)

        def f(*a, **k):
            seen[name] += 1
            return orig(*a, **k)
        monkeypatch.setattr(mod, name, f)
    for n in ("_ds_batch", "_cmp_batch", "_sbit_batch", "_snp_batch", "_br_batch",
              "_scratch_batch"):
        spy(n)
    orig_get = LS._LaneSGPRs.__getitem__
    monkeypatch.setattr(LS._LaneSGPRs, "__getitem__",
                        lambda self, k: (seen.update(["lane_sgprs"]), orig_get(self, k))[1])
    orig_compile = LB._compile

    def comp(*a, **k):
        b = orig_compile(*a, **k)
        seen["block"] += 1
        if b.full is not None:
            full = b.full

            def run_full(*x):
                seen["full_exec_block"] += 1
                return full(*x)
            b.full = run_full
        return b
    monkeypatch.setattr(LB, "_compile", comp)
    for seed in (0, 1, 2, 3, 5, 8, 10, 13):
        F.run_case(F.generate(seed, size=30), True)
    for k in ("_ds_batch", "_cmp_batch", "_sbit_batch", "_snp_batch", "_br_batch",
              "_scratch_batch", "lane_sgprs", "block", "full_exec_block"):
        assert seen[k] > 0, (k, seen)
