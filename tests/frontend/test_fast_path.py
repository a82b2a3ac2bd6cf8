"""The parser's fast path (``asm_parser._fast_line``) gives exactly what the Lark grammar
gives, on every instruction line the corpus listings hold and on mutated and random lines;
where Lark rejects a line the fast path must leave it to Lark (so error messages stay
Lark's)."""

from __future__ import annotations

import random
import re
import subprocess

import pytest

from asmevo.frontend import asm_parser as A
from asmevo.llvm import MCPU, find_tool


def _lark(key: str) -> str:
    try:
        return repr(A._parser().parse(key))
    except Exception as e:  # noqa: BLE001 - any rejection; the fast path must then decline
        return f"rejected: {type(e).__name__}"


def _disagreements(lines) -> tuple[int, list]:
    taken, bad = 0, []
    for ln in lines:
        key = A._strip_comment(ln)
        fast = A._fast_line(key)
        if fast is None:
            continue
        taken += 1
        want = _lark(key)
        if repr(fast) != want:
            bad.append((key, repr(fast), want))
    return taken, bad


_SAMPLES = [
    "v_add_f32_e32 v0, v1, v2", "s_load_dwordx4 s[0:3], s[4:5], 0x0", "s_nop 0", "s_endpgm",
    "buffer_load_dword v1, v2, s[0:3], 0 offen offset:16", "global_load_dwordx4 v[0:3], v[4:5], off",
    "v_cndmask_b32_e64 v0, 0, 1, s[0:1]", "s_waitcnt vmcnt(0) lgkmcnt(0)",
    "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)", "v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
    "v_fma_f32 v0, -v1, |v2|, -|v3|", "v_max_f32_e64 v0, |-8|, v1", "v_mul_f32_e32 v0, -1.0, v1",
    "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel_hi:[1,0,1]", "s_cbranch_scc1 65",
    "ds_swizzle_b32 v0, v1 offset:swizzle(QUADPERM,0,1,2,3)", "v_mov_b32_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD",
    "buffer_wbl2 sc0 sc1", "v_add_co_u32_e32 v0, vcc, s0, v1", "s_mov_b64 exec, -1", "s_add_u32 s0, s0, sym@rel32@lo",
    "s_branch .LBB0_1", "v_mov_b32 v0, glc", "v_accvgpr_write_b32 a0, ttmp5", "s_mov_b32 s0, 0b101",
    "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] cbsz:1 abid:2 blgp:3",
]


def test_fast_path_samples_agree_with_lark():
    taken, bad = _disagreements(_SAMPLES)
    assert not bad, bad[:5]
    assert taken >= len(_SAMPLES) - 2


def test_fast_path_mutations_and_random_lines_agree_with_lark():
    rnd = random.Random(7)
    lines = []
    for ln in _SAMPLES:
        for _ in range(40):
            s = list(ln)
            i = rnd.randrange(len(s) + 1)
            op = rnd.randrange(6)
            if op == 0 and s:
                del s[min(i, len(s) - 1)]
            elif op == 1:
                s.insert(i, rnd.choice(" ,-|:[]()0x1avs.@_"))
            elif op == 2:
                s = list(ln.replace(", ", ","))
            elif op == 3:
                s = list(ln + rnd.choice([" glc", " offset:4", " v1", ", v1", " vmcnt(0)", " off",
                                          ":", " -1", " [0,1]", " neg(v1)", "+4"]))
            elif op == 4:
                s = list(ln.replace(" ", "  ", 1))
            else:
                s = list(ln.upper())
            lines.append("".join(s))
    toks = ["v0", "s[0:3]", "v[ 0 : 3 ]", "ttmp[2:3]", "vcc", "off", "null", "m0", "0", "-1",
            "0x10", "-0x10", "1.0", "-2.5", ".5", "1e3", "1.", "glc", "sc0", "offen", "offset:16",
            "offset:-4", "quad_perm:[0,1,2,3]", "op_sel:[]", "dst_sel:WORD_1", "hwreg(HW_REG_MODE, 0, 4)",
            "vmcnt(0)", "f()", "|v1|", "-|v1|", "|-8|", "-v1", "label", "sym@rel32@lo", "v1x",
            "offset", "offset:", "v1(", "x(1,-2)", "-vmcnt(0)", "[0,1]", "(", "|", ":", ",", "-"]
    mnemonics = ["v_mov_b32", "s_nop", "s_waitcnt", "v_fma_f32", "v_add_f32", "buffer_load_dword", "x"]
    for _ in range(3000):
        s = rnd.choice(mnemonics)
        for k in range(rnd.randrange(5)):
            s += (rnd.choice([" ", " ", "  ", ""]) if k == 0 else
                  rnd.choice([", ", " ", ",", "  ", ""])) + rnd.choice(toks)
        lines.append(s)
    taken, bad = _disagreements(lines)
    assert not bad, bad[:5]
    assert taken > 500


_LINE = re.compile(r"^\t(\S.*?)\s*// [0-9A-Fa-f]+: ")


@pytest.mark.corpus
def test_fast_path_takes_and_agrees_on_corpus_listings(corpus_dir):
    from corpus_paths import corpus_code_objects
    objdump = find_tool("llvm-objdump")
    lines = set()
    for p in corpus_code_objects():
        out = subprocess.run([objdump, "-d", f"--mcpu={MCPU}", str(p)], capture_output=True,
                             text=True, check=True, timeout=300).stdout
        lines.update(m.group(1) for m in map(_LINE.match, out.splitlines()) if m)
    taken, bad = _disagreements(sorted(lines))
    assert not bad, bad[:5]
    assert taken >= 0.99 * len(lines) > 1000
