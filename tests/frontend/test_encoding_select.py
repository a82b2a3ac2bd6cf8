"""Suffix-less VALU mnemonics get the encoding llvm-mc picks (issue 14, "valid text refused").

llvm-mc accepts ``v_cmpx_le_u32 exec, 1, v55``, ``v_cmp_le_u32 s[0:1], 1, v55`` and
``v_add_co_u32 v1, s[4:5], v2, v3`` and encodes them as VOP3 (``_e64``): the ``_e32``
form has a fixed ``vcc``.  The parser picks the same form
(:func:`asmevo.frontend.typecheck.select_encoding`), so the type checker accepts the text
and the ISA record (operand roles, size) is the ``_e64`` one.  The oracle is the
mnemonic llvm-mc prints with ``-show-encoding`` and the bytes it encodes.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from asmevo import isa
from asmevo.analysis._isa import facts
from asmevo.frontend.asm_parser import parse_asm, parse_instruction
from asmevo.frontend.typecheck import check_instruction
from asmevo.ir import print_instruction

LINES = [
    "v_cmpx_le_u32 exec, 1, v55",
    "v_cmp_le_u32 s[0:1], 1, v55",
    "v_add_co_u32 v1, s[4:5], v2, v3",
    "v_cmp_le_u32 vcc, 1, v55",          # _e32 fits: stays suffix-less, _e32 record
    "v_add_co_u32 v1, vcc, v2, v3",
    "v_cmp_le_u32 vcc, v55, 1",          # a constant src1: _e64
    "v_cmpx_le_u32 s[2:3], 1, v55",
    "v_cmp_class_f32 s[0:1], v1, v2",
    "v_cndmask_b32 v1, v2, v3, s[4:5]",
    "v_addc_co_u32 v1, s[4:5], v2, v3, s[6:7]",
    "v_sub_co_u32 v1, s[4:5], v2, v3",
    "v_add_f32 v1, v2, s3",
    "v_add_f32 v1, s2, v3",
    "v_add_f32 v1, v2, v3 clamp",
    "v_add_f32 v1, -v2, v3",
    "v_add_u32 v1, v2, v3 clamp",
    "v_mov_b32 v1, v2 quad_perm:[1,0,3,2]",
    "v_mov_b32 v1, v2 dst_sel:WORD_1",
]

_ENC = re.compile(r"^\s*(\S+).*; encoding: \[([^\]]*)\]")


def _mc(llvm_mc, lines):
    r = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = [m.groups() for m in map(_ENC.match, r.stdout.splitlines()) if m]
    assert len(out) == len(lines)
    return out


def test_mnemonic_and_bytes_match_llvm_mc(llvm_mc):
    want = _mc(llvm_mc, LINES)
    insts = [parse_instruction(t) for t in LINES]
    for inst in insts:
        check_instruction(inst)
    printed = [print_instruction(i).strip() for i in insts]
    got = _mc(llvm_mc, printed)
    for text, inst, (mc_name, mc_bytes), (_n, our_bytes) in zip(LINES, insts, want, got):
        assert our_bytes == mc_bytes, (text, print_instruction(inst))
        # the ISA record is the form llvm-mc encodes
        assert inst.info is not None and inst.info.name == mc_name, (text, inst.info)
        assert isa.encoded_size(inst) == len(mc_bytes.split(",")), text


@pytest.mark.parametrize("text,units", [
    ("v_cmpx_le_u32 exec, 1, v55", {("exec_lo",), ("exec_hi",)}),
    ("v_cmp_le_u32 s[0:1], 1, v55", {("s", 0), ("s", 1)}),
    ("v_add_co_u32 v1, s[4:5], v2, v3", {("v", 1), ("s", 4), ("s", 5)}),
])
def test_defs_are_the_written_registers(text, units):
    """Analyses see the VOP3 destination, not the _e32 form's implicit vcc."""
    fx = facts(parse_instruction(text))
    assert units <= set(fx.defs) | set(fx.partial)
    assert not ({("vcc_lo",), ("vcc_hi",)} & set(fx.defs))


def test_checked_module_accepts_issue_lines():
    src = "k:\n" + "\n".join(LINES[:3]) + "\ns_endpgm\n"
    m = parse_asm(src, "<t>", check=True)
    assert [i.opcode for i in m.kernels[0].instructions()][:3] == [
        "v_cmpx_le_u32_e64", "v_cmp_le_u32_e64", "v_add_co_u32_e64"]
