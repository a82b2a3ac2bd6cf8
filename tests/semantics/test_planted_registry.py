"""Guards found by the mutation probe (scripts/mutation_probe.py) over asmevo/semantics.

* The registry keeps every definition it had when it was last reviewed, with the same operand
  types and memory parameters: deleting ``v_pk_max_i16`` or reading two bytes for
  ``*_load_ubyte_d16_hi`` went unnoticed.  When a change to the registry is intended,
  regenerate the snapshot (``python3 tests/semantics/test_planted_registry.py --update``)
  and review its diff.
* Every instruction with a value semantics gives the same result on the numpy backend
  (emulator) and the z3 backend (verifier) on concrete values -- all of them, not a list of
  70: a change to one backend's helper alone is caught wherever it is used.  Instructions the
  z3 backend models as uninterpreted functions (transcendentals, approximations, fp8
  conversions, the division helpers) are listed and cannot agree on concrete values.
* Hand-computed values for what both backends share (the definitions themselves): 64-bit
  scalar shifts, packed 16-bit min/max, ``v_cvt_off_f32_i4``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

from asmevo.semantics import lookup
from asmevo.semantics.npbackend import NP
from asmevo.semantics.registry import all_specs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SNAPSHOT = pathlib.Path(__file__).parent / "data" / "semantics_registry.json"

#: z3 models these as uninterpreted functions of the bits (or they need lane/state input
#: the concrete check does not give): concrete values cannot be compared.
Z3_UNINTERPRETED = {
    "v_cos_f16", "v_cos_f32", "v_sin_f16", "v_sin_f32", "v_exp_f16", "v_exp_f32", "v_log_f16",
    "v_log_f32", "v_rcp_f16", "v_rcp_f32", "v_rcp_f64", "v_rcp_iflag_f32", "v_rsq_f16",
    "v_rsq_f32", "v_rsq_f64", "v_fract_f16", "v_fract_f32", "v_fract_f64", "v_frexp_exp_i16_f16",
    "v_frexp_exp_i32_f32", "v_frexp_exp_i32_f64", "v_frexp_mant_f16", "v_frexp_mant_f32",
    "v_frexp_mant_f64", "v_ldexp_f16", "v_ldexp_f32", "v_ldexp_f64", "v_div_fmas_f32",
    "v_div_fmas_f64", "v_div_scale_f32", "v_cvt_f32_bf8", "v_cvt_f32_fp8", "v_cvt_pk_bf8_f32",
    "v_cvt_pk_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_fp8_f32",
    "v_mbcnt_hi_u32_b32", "v_mbcnt_lo_u32_b32",    # read the lane number
}


def _simple(v):
    if isinstance(v, (bool, int, str, float)) or v is None:
        return v
    if isinstance(v, (tuple, list)) and all(isinstance(x, (bool, int, str, float)) for x in v):
        return list(v)
    return "<" + type(v).__name__ + ">"


def registry_table() -> dict:
    return {name: {"kind": s.kind, "dst": list(s.dst), "src": list(s.src), "imp_in": list(s.imp_in),
                   "imp_out": list(s.imp_out), "has_fn": s.fn is not None,
                   "extra": {k: _simple(v) for k, v in sorted(s.extra.items())}}
            for name, s in sorted(all_specs().items())}


def test_registry_keeps_every_reviewed_definition():
    want = json.loads(SNAPSHOT.read_text())
    got = registry_table()
    missing = sorted(set(want) - set(got))
    assert missing == [], f"definitions gone: {missing}"
    changed = {n: (want[n], got[n]) for n in want if want[n] != got[n]}
    assert changed == {}, ("definitions changed (if intended, regenerate the snapshot: "
                           f"python3 {pathlib.Path(__file__).name} --update): {changed}")


def _value_mnemonics():
    return sorted(n for n, s in all_specs().items()
                  if s.fn is not None and n not in Z3_UNINTERPRETED)


def test_every_value_semantics_is_checked_on_both_backends():
    names = _value_mnemonics()
    # the parametrized check below covers them all; the count guards against it shrinking
    assert len(names) >= 550, len(names)


@pytest.mark.parametrize("name", _value_mnemonics())
def test_z3_agrees_with_numpy_everywhere(name):
    import test_z3_backend as tz          # tests/semantics is on sys.path (conftest)
    tz.test_z3_agrees_with_numpy(name)


# -- hand-computed values ----------------------------------------------------------------

M64 = (1 << 64) - 1
X64 = [0x8000000000000001, 0x123456789ABCDEF0, 0xFFFFFFFFFFFFFFFF, 1, 0]
SH = [0, 1, 2, 31, 32, 33, 63, 64, 65, 0xFFFFFFC1]


@pytest.mark.parametrize("name,ref", [
    ("s_lshl_b64", lambda x, n: (x << (n & 63)) & M64),
    ("s_lshr_b64", lambda x, n: x >> (n & 63)),
    ("s_ashr_i64", lambda x, n: ((x - (1 << 64) if x >> 63 else x) >> (n & 63)) & M64),
])
def test_scalar_64_bit_shifts_use_six_bits_of_the_amount(name, ref):
    xs = np.array([x for x in X64 for _ in SH], np.uint64)
    ns = np.array([n for _ in X64 for n in SH], np.uint32)
    r, scc = lookup(name).fn(NP, xs, ns)
    want = [ref(int(x), int(n)) for x, n in zip(xs, ns)]
    assert [int(v) for v in np.broadcast_to(r, xs.shape)] == want
    assert [bool(v) for v in np.broadcast_to(scc, xs.shape)] == [w != 0 for w in want]


def _pk(lo, hi):
    return (hi & 0xFFFF) << 16 | (lo & 0xFFFF)


def test_packed_16_bit_min_max():
    from asmevo.frontend.asm_parser import parse_instruction
    from asmevo.verify.equiv import check_windows
    for name in ("v_pk_max_i16", "v_pk_min_i16", "v_pk_max_u16", "v_pk_min_u16"):
        assert lookup(name) is not None and lookup(name).fn is not None, name
    # through the emulator's packed path: a kernel-free check with the z3 backend, which
    # refuses a mnemonic without semantics
    w = [parse_instruction("v_pk_max_i16 v0, v1, v2")]
    assert check_windows(w, w).status == "equivalent"
    a = lookup("v_pk_max_i16").fn(NP, np.array([0x8000, 5, 0x7FFF], np.uint16).view(np.int16),
                                  np.array([1, 0xFFFF, 0x8000], np.uint16).view(np.int16))
    assert [int(x) & 0xFFFF for x in a] == [1, 5, 0x7FFF]
    a = lookup("v_pk_min_i16").fn(NP, np.array([0x8000, 5, 0x7FFF], np.uint16).view(np.int16),
                                  np.array([1, 0xFFFF, 0x8000], np.uint16).view(np.int16))
    assert [int(x) & 0xFFFF for x in a] == [0x8000, 0xFFFF, 0x8000]


def test_cvt_off_f32_i4():
    # the low 4 bits as a signed nibble, times 1/16 (CDNA3 ISA guide V_CVT_OFF_F32_I4)
    xs = np.arange(16, dtype=np.uint32) | np.uint32(0xABCDE0)
    r = np.asarray(lookup("v_cvt_off_f32_i4").fn(NP, xs)).view(np.float32)
    want = [((i - 16) if i >= 8 else i) / 16.0 for i in range(16)]
    assert [float(x) for x in r] == want


if __name__ == "__main__" and "--update" in sys.argv:
    table = registry_table()
    SNAPSHOT.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                                          for k, v in table.items()) + "\n}\n")
    print(f"wrote {SNAPSHOT} ({len(table)} definitions)")
