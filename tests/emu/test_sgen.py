"""Generated scalar closures (asmevo.emu.exec_sgen) against the int-backend closures of
asmevo.emu.exec_salu: every SALU/SOPC semantic function, on random and edge-case SGPR
values and SCC, must leave the same SGPRs, SCC and EXEC cache."""

import random

import numpy as np
import pytest

from asmevo.emu import exec_salu, exec_sgen
from asmevo.emu.state import EXEC, Wave, Workgroup
from asmevo.ir.instruction import Instruction
from asmevo.ir.operands import Imm, Reg, Special
from asmevo.semantics.registry import all_specs, width

EDGES = [0, 1, 2, 31, 32, 63, 64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x80000001, 0xFFFF,
         0x8000, 0x10000]


def _specs():
    return sorted(n for n, s in all_specs().items()
                  if s.kind in ("salu", "sopc") and s.fn is not None)


def _operand(ty, k, rng):
    """Operand ``k`` of type ``ty``: an SGPR (pair) or, now and then, a constant."""
    w = width(ty)
    n = 2 if w == 64 else 1
    if rng.random() < 0.25 and w in (16, 32, 64):
        return Imm(rng.choice([0, 1, -1, 5, -16, 64]))
    return Reg("s", 10 + 4 * k, n)


def _compile(inst, spec, gen):
    comp = exec_salu.compile_sopc if spec.kind == "sopc" else exec_salu.compile_salu
    old = exec_sgen.ENABLED
    exec_sgen.ENABLED = gen
    try:
        return comp(inst, spec, None, 7)
    finally:
        exec_sgen.ENABLED = old


def _wave(vals, scc):
    wv = Wave(Workgroup((0, 0, 0), 0), 0)
    wv.s[:] = vals
    wv.scc = scc
    wv.sync_exec()
    return wv


@pytest.mark.parametrize("name", _specs())
def test_generated_scalar_matches_int_backend(name):
    spec = all_specs()[name]
    rng = random.Random(name)
    nd = 0 if spec.kind == "sopc" else len(spec.dst)
    for trial in range(6):
        ops = [Reg("s", 2 + 2 * k, 2 if width(t) == 64 else 1) for k, t in enumerate(spec.dst[:nd])]
        ops += [_operand(t, k, rng) for k, t in enumerate(spec.src)]
        if trial == 5 and nd and width(spec.dst[0]) == 64:
            ops[0] = Special("exec")    # a destination that refreshes the EXEC cache
        inst = Instruction(name, ops)
        gen = _compile(inst, spec, True)
        ref = _compile(inst, spec, False)
        if getattr(ref, "unsupported", None):
            continue
        for _ in range(40):
            vals = np.array([rng.choice(EDGES) if rng.random() < 0.4 else rng.getrandbits(32)
                             for _ in range(128)], np.uint32)
            scc = rng.random() < 0.5
            a, b = _wave(vals, scc), _wave(vals, scc)
            ea = eb = None
            try:
                ra = gen(a)
            except Exception as e:   # noqa: BLE001
                ea = type(e)
            try:
                rb = ref(b)
            except Exception as e:   # noqa: BLE001
                eb = type(e)
            assert ea == eb, (inst.text(), ea, eb)
            if ea is not None:
                continue
            assert ra == rb
            assert np.array_equal(a.s, b.s), (inst.text(), np.flatnonzero(a.s != b.s))
            assert a.scc == b.scc, inst.text()
            assert a.exec_n == b.exec_n and a.exec_all == b.exec_all


def test_common_forms_are_generated():
    """The scalar instructions of compiled loops do get generated closures."""
    for text_ops, name in [((Reg("s", 4, 1), Reg("s", 5, 1), Imm(7)), "s_add_i32"),
                           ((Reg("s", 3, 1), Reg("s", 3, 1), Imm(0)), "s_addc_u32"),
                           ((Reg("s", 7, 1), Imm(0)), "s_cmp_eq_u32"),
                           ((Reg("s", 2, 2), Special("vcc")), "s_and_saveexec_b64"),
                           ((Reg("s", 0, 2), Reg("s", 2, 2), Imm(2)), "s_lshl_b64")]:
        spec = all_specs()[name]
        f = exec_sgen.gen_scalar(Instruction(name, list(text_ops)), spec, 1,
                                 sopc=spec.kind == "sopc")
        assert f is not None, name


def test_exec_write_refreshes_cache():
    spec = all_specs()["s_mov_b64"]
    f = exec_sgen.gen_scalar(Instruction("s_mov_b64", [Special("exec"), Reg("s", 4, 2)]),
                             spec, 1)
    vals = np.zeros(128, np.uint32)
    vals[4], vals[5] = 0xF, 0
    wv = _wave(vals, False)
    wv.s[EXEC:EXEC + 2] = 0xFFFFFFFF
    wv.sync_exec()
    f(wv)
    assert wv.exec_n == 4 and not wv.exec_all
