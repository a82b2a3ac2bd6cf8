"""Soundness of windows z3 does not model: MODE writes (s_setreg), cache-policy bits and
cache maintenance are never called equivalent; "not emulated" is unknown, not a fault."""

import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify import check_windows
from asmevo.verify.diff import _classify


def _w(text):
    return [i for k in parse_asm(text + "\n", "w.s").kernels for i in k.instructions()]


ADD = "v_add_f32_e32 v2, v6, v7"


@pytest.mark.parametrize("extra", [
    "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0",
    "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0xf",
    "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0",
    "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)",
])
def test_mode_register_access_is_unknown(extra):
    r = check_windows(_w(ADD), _w(extra + "\n" + ADD))
    assert r.status == "unknown", r.text()
    assert r.unknown_kind == "unsupported"
    assert "hardware registers" in r.reason  # explicit, even if the backend models them later


@pytest.mark.parametrize("a,b", [
    ("global_store_dword v[0:1], v2, off", "global_store_dword v[0:1], v2, off sc0 sc1 nt"),
    ("global_store_dword v[0:1], v2, off", "global_store_dword v[0:1], v2, off nt"),
    ("global_load_dword v2, v[0:1], off", "global_load_dword v2, v[0:1], off sc1"),
    ("buffer_wbl2 sc1", "s_nop 0"),
    ("buffer_wbl2 sc1", "buffer_wbl2 sc0 sc1"),
    ("s_dcache_wb", "s_nop 0"),
    ("buffer_inv sc1", "s_nop 0"),
])
def test_cache_policy_and_maintenance_are_compared(a, b):
    r = check_windows(_w(a), _w(b))
    assert r.status == "unknown", r.text()
    assert "cache" in r.reason


def test_same_policy_still_equivalent():
    a = "global_store_dword v[0:1], v2, off sc0 sc1\nbuffer_wbl2 sc1"
    r = check_windows(_w(a), _w("s_nop 1\n" + a))
    assert r.status == "equivalent", r.text()
    # glc is the gfx940 sc0 bit (LLVM SIDefines.h): same bits, same answer
    r = check_windows(_w("global_load_dword v2, v[0:1], off glc"),
                      _w("global_load_dword v2, v[0:1], off sc0"))
    assert r.status == "equivalent", r.text()


def test_equiv_cli_exit_status(tmp_path):
    from asmevo.cli import main
    a, b = tmp_path / "a.s", tmp_path / "b.s"
    a.write_text("global_store_dword v[0:1], v2, off\n")
    b.write_text("global_store_dword v[0:1], v2, off sc0 sc1 nt\n")
    assert main(["equiv", str(a), str(b)]) == 3


def test_not_emulated_is_unknown_not_a_fault():
    msg = ("error: s_setreg to MODE selects a rounding mode other than round-to-nearest-even "
           "(0xf); not emulated")
    assert _classify(RuntimeError(msg)) == "unsupported"
    assert _classify(RuntimeError("integer clamp is not supported by the emulator")) == "unsupported"
    assert _classify(RuntimeError("memory fault: address 0x10 outside every buffer")) == "fault"


def test_rounding_mode_setreg_end_to_end(corpus_dir, tmp_path):
    from asmevo.frontend.disasm import disassemble
    from asmevo.ir.printer import print_module
    from asmevo.verify import Status, verify
    from asmevo.verify.diff import load_harness
    lines = print_module(disassemble(str(corpus_dir / "vadd_f32.co"))).splitlines()
    i = next(n for n, l in enumerate(lines) if l.strip().startswith("v_add_f32"))
    lines[i:i] = ["\ts_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0xf"]
    p = tmp_path / "r8.s"
    p.write_text("\n".join(lines) + "\n")
    h = load_harness(str(corpus_dir / "manifest.json"), "vadd_f32")
    v = verify(str(corpus_dir / "vadd_f32.co"), str(p), harness=h, level="all", trials=2)
    assert v.status is Status.UNKNOWN_UNSUPPORTED, v.text()


def test_removing_a_plain_access_is_left_to_z3():
    # a load without policy bits is removed: not a cache-policy difference; z3 compares v2
    a = "global_load_dword v2, v[0:1], off\nglobal_store_dword v[0:1], v3, off sc1"
    b = "global_store_dword v[0:1], v3, off sc1"
    r = check_windows(_w(a), _w(b), live_out=[("v", 3)])
    assert r.status == "equivalent", r.text()
    r = check_windows(_w(a), _w(b))
    assert r.status == "not equivalent" and "cache" not in r.reason, r.text()
    # ...but dropping the store's sc1 is
    r = check_windows(_w(a), _w("global_load_dword v2, v[0:1], off\n"
                                "global_store_dword v[0:1], v3, off"))
    assert r.status == "unknown" and "cache" in r.reason, r.text()
