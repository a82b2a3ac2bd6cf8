"""Adversarial tests for scratch-promote, sgpr-spill-promote and the global copy-prop.

Each test states the correct behaviour: the pass leaves the kernel alone, or the
optimised kernel computes what the original computes (checked with the emulator on
the same inputs, with llvm-mc as the oracle for "the output assembles").  Bugs not
fixed yet are ``xfail(strict=True)`` so they stay visible.
"""

from __future__ import annotations

import re
import subprocess
import textwrap

import numpy as np
import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.ir import print_module
from asmevo.passes import run_pipeline
from passes_helpers import opt


# -- a small launchable text kernel ----------------------------------------------------
# The ABI below is what clang -O0 gives `__kernel void k(__global int *out,
# __global const int *in, int n)` on gfx942: s[2:3] kernarg pointer, s6 workgroup id x,
# v0 work-item id (x in bits 0-9), scratch enabled (architected flat scratch).

_HEAD = """\t.text
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
"""
_TAIL = """\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel k
\t\t.amdhsa_group_segment_fixed_size 0
\t\t.amdhsa_private_segment_fixed_size {private}
\t\t.amdhsa_kernarg_size 20
\t\t.amdhsa_user_sgpr_count 6
\t\t.amdhsa_user_sgpr_dispatch_ptr 1
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_user_sgpr_dispatch_id 1
\t\t.amdhsa_enable_private_segment 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_system_vgpr_workitem_id 0
\t\t.amdhsa_next_free_vgpr {vgpr}
\t\t.amdhsa_next_free_sgpr {sgpr}
\t\t.amdhsa_accum_offset {accum}
\t\t.amdhsa_reserve_vcc 1
\t\t.amdhsa_reserve_xnack_mask 1
\t.end_amdhsa_kernel
\t.text
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     {agprs}
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .offset:         16
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 20
    .max_flat_workgroup_size: 256
    .name:           k
    .private_segment_fixed_size: {private}
    .sgpr_count:     {sgpr}
    .sgpr_spill_count: 0
    .symbol:         k.kd
    .uses_dynamic_stack: false
    .vgpr_count:     {vgpr_total}
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

\t.end_amdgpu_metadata
"""

#: loads out -> s[4:5], in -> s[8:9], n -> s7; v1 = 4 * work-item id
PRO = """
s_load_dwordx2 s[4:5], s[2:3], 0x0
s_load_dwordx2 s[8:9], s[2:3], 0x8
s_load_dword s7, s[2:3], 0x10
s_waitcnt lgkmcnt(0)
v_and_b32_e32 v0, 0x3ff, v0
v_lshlrev_b32_e32 v1, 2, v0
"""


def _text(body: str, vgpr=64, sgpr=64, private=64, agprs=0) -> str:
    lines = []
    for line in textwrap.dedent(body).strip().splitlines():
        line = line.strip()
        lines.append(line + "\n" if line.endswith(":") else "\t" + line + "\n")
    accum = min(256, (vgpr + 3) // 4 * 4)
    return _HEAD + "".join(lines) + _TAIL.format(
        private=private, vgpr=vgpr + agprs if agprs else vgpr, sgpr=sgpr, accum=accum,
        agprs=agprs, vgpr_total=accum + agprs if agprs else vgpr)


def _load(text: str):
    from asmevo.frontend.loader import fill_text_abi
    m = parse_asm(text, "k.s")
    fill_text_abi(m)
    return m


def _emulate(m, block: int, n: int, seed: int = 0) -> np.ndarray:
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    rng = np.random.default_rng(seed)
    la = Launch((block, 1, 1), (1, 1, 1), [
        Arg("out", "buffer", "int32", data=np.zeros(1024, np.int32), role="out"),
        Arg("in", "buffer", "int32", data=rng.integers(-50, 50, 256).astype(np.int32),
            role="in"),
        Arg("n", "scalar", "int32", value=n)])
    return np.asarray(run_kernel(m, "k", la).outputs["out"]).copy()


def _optimise(text: str, pipeline: str) -> str:
    m = _load(text)
    run_pipeline(m, pipeline, verify_each=True)
    return print_module(m)


def _same_results(body: str, pipeline: str, blocks=(64, 50), ns=(0, 1, 5), **kw):
    """(optimised text, list of mismatches) of ``body`` before/after ``pipeline``."""
    text = _text(body, **kw)
    out = _optimise(text, pipeline)
    bad = []
    for block in blocks:
        for n in ns:
            a = _emulate(_load(text), block, n)
            b = _emulate(_load(out), block, n)
            if not np.array_equal(a, b):
                i = np.nonzero(a != b)[0][:4]
                bad.append(f"block={block} n={n}: out[{list(i)}] {a[i]} -> {b[i]}")
    return out, bad


def _code(text: str) -> str:
    """The instructions and labels of kernel ``k`` (comments and directives dropped)."""
    body = re.split(r"(?m)^k:.*$", text, maxsplit=1)[1].split(".section", 1)[0]
    out = []
    for line in body.splitlines():
        line = line.split(";")[0].strip()
        if line and not (line.startswith(".") and not line.endswith(":")):
            out.append(line)
    return "\n".join(out)


# -- copy-prop -------------------------------------------------------------------------

def test_copy_prop_does_not_forward_a_literal_into_vop3p(llvm_mc, tmp_path):
    out, _ = opt("""
        k:
        s_mov_b32 s4, 0x3f800000
        v_fma_mix_f32 v13, s4, v0, v0 op_sel_hi:[1,0,0]
        global_store_dword v0, v13, s[0:1]
        s_endpgm
    """, "copy-prop")
    src = tmp_path / "o.s"
    src.write_text(out + "\n")
    r = subprocess.run([llvm_mc, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx942", str(src),
                        "-o", "/dev/null"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# -- dce (runs after sgpr-spill-promote in the default pipeline) --------------------------

#: v_writelane_b32 writes lane 0 whatever EXEC is (CDNA3 ISA guide, V_WRITELANE_B32 ignores
#: EXEC); lane 0 is inactive at the later v_mov, so the readlane sees s10 = n + 3.
WRITELANE_UNDER_NARROW_EXEC = PRO + """
s_add_u32 s10, s7, 3
v_cmp_lt_u32_e32 vcc, 10, v0
s_and_saveexec_b64 s[12:13], vcc
v_writelane_b32 v20, s10, 0
v_mov_b32_e32 v20, 77
s_or_b64 exec, exec, s[12:13]
v_readlane_b32 s11, v20, 0
v_mov_b32_e32 v2, s11
global_store_dword v1, v2, s[4:5]
s_endpgm
"""


def test_sgpr_spill_promote_leaves_a_lane_overwritten_per_lane_alone():
    """The spill VGPR is rewritten per lane between writelane and readlane: the
    product-program check must refuse lane 0 (the emulator agrees either way)."""
    out, bad = _same_results(WRITELANE_UNDER_NARROW_EXEC, "sgpr-spill-promote")
    assert bad == []
    assert "v_writelane_b32 v20, s10, 0" in _code(out)


@pytest.mark.parametrize("pipeline", ["dce", "default"])
def test_dce_keeps_a_writelane_whose_lane_a_narrower_write_does_not_cover(pipeline):
    out, bad = _same_results(WRITELANE_UNDER_NARROW_EXEC, pipeline, blocks=(64,), ns=(0, 5))
    assert bad == []


# -- sound behaviour on tricky cases (these held when tried) ------------------------------

def test_scratch_promote_store_under_narrowed_exec_keeps_inactive_lanes():
    """Lanes 20..63 are inactive at the second store: they must reload 11, lanes 0..19
    100 + id; the slot becomes a VGPR written under both EXECs."""
    body = PRO + """
    s_mov_b32 s33, 0
    v_mov_b32_e32 v2, 11
    scratch_store_dword off, v2, s33 offset:4
    v_cmp_gt_u32_e32 vcc, 20, v0
    s_and_saveexec_b64 s[12:13], vcc
    v_add_u32_e32 v3, 100, v0
    scratch_store_dword off, v3, s33 offset:4
    s_or_b64 exec, exec, s[12:13]
    scratch_load_dword v4, off, s33 offset:4
    s_waitcnt vmcnt(0)
    global_store_dword v1, v4, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "default")
    assert bad == []
    assert "scratch_" not in _code(out)
    res = _emulate(_load(out), 50, 0)
    assert list(res[:50]) == [100 + i if i < 20 else 11 for i in range(50)]


def test_scratch_promote_keeps_a_reload_into_a_vgpr_a_pending_load_also_writes():
    """global_load v5 is in flight when the slot is reloaded into v5: the loads return in
    order, so v5 ends with the slot value.  A v_mov v5 issued at once would be
    overwritten by the global load later; the reload must stay in memory."""
    body = PRO + """
    s_mov_b32 s33, 0
    v_add_u32_e32 v2, 7, v0
    scratch_store_dword off, v2, s33 offset:4
    s_waitcnt vmcnt(0)
    global_load_dword v5, v1, s[8:9]
    scratch_load_dword v5, off, s33 offset:4
    s_waitcnt vmcnt(0)
    global_store_dword v1, v5, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "default", ns=(0,))
    assert bad == []
    assert "scratch_load_dword v5, off, s33 offset:4" in _code(out)


def test_scratch_promote_lowers_vmcnt_to_the_remaining_operations():
    """vmcnt(2) after [global v6, scratch store, scratch load, global v7] waits for v6;
    with the two scratch operations gone it must become vmcnt(1) (v7 may stay in
    flight), never stay vmcnt(2), which would not wait for v6."""
    body = PRO + """
    s_mov_b32 s33, 0
    v_add_u32_e32 v2, 7, v0
    global_load_dword v6, v1, s[8:9]
    scratch_store_dword off, v2, s33 offset:4
    scratch_load_dword v5, off, s33 offset:4
    global_load_dword v7, v1, s[8:9] offset:4
    s_waitcnt vmcnt(2)
    v_add_u32_e32 v6, v6, 1
    s_waitcnt vmcnt(1)
    v_add_u32_e32 v6, v6, v5
    s_waitcnt vmcnt(0)
    v_add_u32_e32 v6, v6, v7
    global_store_dword v1, v6, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "scratch-promote", ns=(0,))
    assert bad == []
    lines = _code(out).splitlines()
    first_use = lines.index("v_add_u32_e32 v6, v6, 1")
    assert lines[first_use - 1] in ("s_waitcnt vmcnt(1)", "s_waitcnt vmcnt(0)")
    assert "scratch_" not in _code(out)


AGPR_LOOP = PRO + """
s_mov_b32 s10, 0
v_writelane_b32 v20, s10, 4
s_or_saveexec_b64 s[14:15], -1
v_accvgpr_write_b32 a0, v20
s_mov_b64 exec, s[14:15]
.L1:
s_or_saveexec_b64 s[14:15], -1
v_accvgpr_read_b32 v20, a0
s_mov_b64 exec, s[14:15]
s_nop 1
v_readlane_b32 s10, v20, 4
s_add_u32 s10, s10, s7
s_add_u32 s10, s10, 1
v_writelane_b32 v20, s10, 4
s_or_saveexec_b64 s[14:15], -1
v_accvgpr_write_b32 a0, v20
s_mov_b64 exec, s[14:15]
s_cmp_lt_u32 s10, 30
s_cbranch_scc1 .L1
s_or_saveexec_b64 s[14:15], -1
v_accvgpr_read_b32 v20, a0
s_mov_b64 exec, s[14:15]
s_nop 1
v_readlane_b32 s11, v20, 4
v_mov_b32_e32 v2, s11
global_store_dword v1, v2, s[4:5]
s_endpgm
"""


def test_sgpr_spill_promote_through_an_agpr_parked_across_a_loop():
    """The -O0 shape: the spill VGPR lives in a0 across the loop (whole-wave copies);
    the lane is promoted and the loop computes the same sum."""
    out, bad = _same_results(AGPR_LOOP, "default", blocks=(64, 33))
    assert bad == []
    assert "v_readlane" not in _code(out) and "v_writelane" not in _code(out)


def test_sgpr_spill_promote_refuses_an_agpr_restored_under_a_partial_exec():
    """a0 holds lane 1 = n+3; lane 1 of v20 is then overwritten with n, and a0 is copied
    back only where id > 0 (lane 0 is the only inactive one): the readlane of lane 1
    sees n+3.  The restore is not whole-wave, so the lane must not be promoted."""
    body = PRO + """
    s_add_u32 s10, s7, 3
    v_writelane_b32 v20, s10, 1
    s_or_saveexec_b64 s[14:15], -1
    v_accvgpr_write_b32 a0, v20
    s_mov_b64 exec, s[14:15]
    v_writelane_b32 v20, s7, 1
    v_cmp_lt_u32_e32 vcc, 0, v0
    s_and_saveexec_b64 s[12:13], vcc
    v_accvgpr_read_b32 v20, a0
    s_or_b64 exec, exec, s[12:13]
    s_nop 1
    v_readlane_b32 s11, v20, 1
    v_mov_b32_e32 v2, s11
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "sgpr-spill-promote")
    assert bad == []
    assert "v_readlane_b32 s11, v20, 1" in _code(out)
    assert _emulate(_load(out), 64, 5)[0] == 8


def test_copy_prop_does_not_pair_exec_halves_read_at_different_execs():
    """exec_lo is saved before EXEC narrows to ids < 40 and exec_hi after: s[10:11] is
    not EXEC at any single point, so neither the pair merge nor the forwarding may read
    ``exec`` (lanes 40..63 must see 0)."""
    body = PRO + """
    s_mov_b32 s10, exec_lo
    v_cmp_gt_u32_e32 vcc, 40, v0
    s_and_b64 exec, exec, vcc
    s_mov_b32 s11, exec_hi
    s_mov_b64 exec, -1
    v_cndmask_b32_e64 v2, 0, 1, s[10:11]
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "default", blocks=(64,))
    assert bad == []
    assert "s[10:11], exec\n" not in _code(out) + "\n"
    assert "v_cndmask_b32_e64 v2, 0, 1, exec" not in _code(out)
    res = _emulate(_load(out), 64, 0)
    assert list(res[:64]) == [1] * 40 + [0] * 24


def test_copy_prop_two_halves_that_are_no_64_bit_inline_constant():
    """s[10:11] = 0x00000000fffffffb is not the inline constant -5 (that is
    0xfffffffffffffffb): the shift must see the zero high half."""
    body = PRO + """
    s_mov_b32 s10, -5
    s_mov_b32 s11, 0
    s_lshr_b64 s[12:13], s[10:11], 4
    v_mov_b32_e32 v2, s13
    v_mov_b32_e32 v3, s12
    v_add_u32_e32 v2, v2, v3
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "default", blocks=(64,), ns=(0,))
    assert bad == []
    assert _emulate(_load(out), 64, 0)[0] == 0x0FFFFFFF


# -- copy-prop: SMEM offset operands ------------------------------------------------------

SMEM_NEGATIVE_SOFFSET = PRO + """
s_add_u32 s12, s8, 20
s_addc_u32 s13, s9, -1
s_mov_b32 s10, -4
s_load_dword s20, s[12:13], s10
s_waitcnt lgkmcnt(0)
v_mov_b32_e32 v2, s20
global_store_dword v1, v2, s[4:5]
s_endpgm
"""


@pytest.mark.parametrize("pipeline", ["copy-prop", "default"])
def test_copy_prop_keeps_a_negative_sgpr_soffset_of_s_load(pipeline):
    """s[12:13] = in + 20 - 2^32, so the original reads in[4] (the emulator agrees:
    an SGPR soffset is zero-extended, AMDGPU SMEM addressing)."""
    from asmevo.errors import AsmevoError
    text = _text(SMEM_NEGATIVE_SOFFSET)
    want = _emulate(_load(text), 64, 0)
    out = _optimise(text, pipeline)
    try:
        got = _emulate(_load(out), 64, 0)
    except AsmevoError as e:   # the optimised kernel reads outside every buffer
        got = str(e)
    assert isinstance(got, np.ndarray) and np.array_equal(want, got), got


def test_copy_prop_output_with_a_negative_s_buffer_load_offset_assembles(llvm_mc, tmp_path):
    out, _ = opt("""
        k:
        s_mov_b32 s10, -3
        s_buffer_load_dword s20, s[12:15], s10
        s_waitcnt lgkmcnt(0)
        v_mov_b32_e32 v9, s20
        global_store_dword v9, v9, s[0:1]
        s_endpgm
    """, "copy-prop")
    src = tmp_path / "o.s"
    src.write_text(out + "\n")
    r = subprocess.run([llvm_mc, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx942", str(src),
                        "-o", "/dev/null"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_sgpr_spill_promote_refuses_a_lane_a_dynamic_writelane_may_hit():
    """``v_writelane_b32 v20, s6, s12`` with s12 = n & 63 overwrites lane 3 when n = 3:
    the readlane of lane 3 must then see s6 (workgroup id 0), not s10."""
    body = PRO + """
    s_add_u32 s10, s7, 3
    v_writelane_b32 v20, s10, 3
    v_writelane_b32 v20, s7, 4
    s_and_b32 s12, s7, 63
    s_nop 4
    v_writelane_b32 v20, s6, s12
    v_readlane_b32 s11, v20, 3
    v_readlane_b32 s13, v20, 4
    s_lshl_b32 s13, s13, 8
    s_add_u32 s11, s11, s13
    v_mov_b32_e32 v2, s11
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "sgpr-spill-promote", blocks=(64,), ns=(3, 4, 5))
    assert bad == []
    assert _emulate(_load(out), 64, 3)[0] == 3 << 8
    assert "v_readlane_b32 s11, v20, 3" in _code(out)


# -- seeded random kernels: scalar copies, spill lanes, scratch slots, EXEC regions -------

_SREGS = list(range(10, 26))
_VREGS = list(range(5, 12))


def _random_body(rng, writelane_under_narrow_exec: bool) -> str:
    """A random kernel over s10-s25, v5-v11, spill VGPR v20 (lanes 0-5, 40, parked in
    a0/a1 with whole-wave copies), scratch slots 4..28 and 32 (x2), uniform branches
    and bounded loops (counter s30), divergent regions under s_and_saveexec; it stores
    s10-s17, v5-v11 and a sum of slots 4..20."""
    def s():
        return f"s{rng.choice(_SREGS)}"

    def p():
        i = rng.choice(_SREGS[:-1:2])
        return f"s[{i}:{i + 1}]"

    def v():
        return f"v{rng.choice(_VREGS)}"

    def src():
        return rng.choice([s(), s(), "-1", "7", "0x12345", "exec_lo", "vcc_hi", "m0", "s7"])

    def op(narrow: bool) -> list[str]:
        if rng.random() < 0.3:   # spill-lane traffic
            lane = rng.choice([0, 1, 2, 3, 5, 40])
            if rng.random() < 0.5 and (writelane_under_narrow_exec or not narrow):
                return [f"v_writelane_b32 v20, {s()}, {lane}"]
            return [f"v_readlane_b32 {s()}, v20, {lane}"]
        c = rng.random()
        if c < 0.14:
            return [f"s_mov_b32 {s()}, {src()}"]
        if c < 0.19:
            return [f"s_mov_b64 {p()}, {rng.choice([p(), 'exec', 'vcc', '-7'])}"]
        if c < 0.26:
            return [f"s_add_u32 {s()}, {src()}, {s()}"]
        if c < 0.30:
            return [f"s_lshl_b64 {p()}, {p()}, {rng.randint(0, 40)}"]
        if c < 0.34:
            return [f"v_cmp_gt_u32_e32 vcc, {rng.randint(0, 70)}, v0"]
        if c < 0.40 and (writelane_under_narrow_exec or not narrow):
            return [f"v_writelane_b32 v20, {s()}, {rng.choice([0, 1, 2, 3, 5, 40])}"]
        if c < 0.46:
            return [f"v_readlane_b32 {s()}, v20, {rng.choice([0, 1, 2, 3, 5, 40])}"]
        if c < 0.50:
            return ["s_or_saveexec_b64 s[28:29], -1", f"v_accvgpr_write_b32 a{rng.randint(0, 1)}, v20",
                    "s_mov_b64 exec, s[28:29]"]
        if c < 0.54:
            return ["s_or_saveexec_b64 s[28:29], -1", f"v_accvgpr_read_b32 v20, a{rng.randint(0, 1)}",
                    "s_mov_b64 exec, s[28:29]", "s_nop 1"]
        if c < 0.64:
            return [f"scratch_store_dword off, {v()}, s33 offset:{rng.choice(range(4, 32, 4))}"]
        if c < 0.74:
            return [f"scratch_load_dword {v()}, off, s33 offset:{rng.choice(range(4, 32, 4))}",
                    f"s_waitcnt vmcnt({rng.randint(0, 1)})"]
        if c < 0.77:
            r = rng.choice([6, 8, 10])
            return [f"scratch_store_dwordx2 off, v[{r}:{r + 1}], s33 offset:32"]
        if c < 0.80:
            r = rng.choice([6, 8, 10])
            return [f"scratch_load_dwordx2 v[{r}:{r + 1}], off, s33 offset:32", "s_waitcnt vmcnt(0)"]
        if c < 0.86:
            return [f"v_add_u32_e32 {v()}, {rng.choice([v(), s(), '1'])}, {v()}"]
        if c < 0.92:
            return [f"v_mov_b32_e32 {v()}, {rng.choice([v(), s(), 'v0'])}"]
        return [f"v_cndmask_b32_e64 {v()}, 0, 1, {rng.choice([p(), 'vcc', 'exec'])}"]

    lines = [PRO, "s_mov_b32 s33, 0", "s_mov_b32 s30, 0"]
    lines += [f"s_mov_b32 s{r}, {rng.randint(0, 1000)}" for r in _SREGS]
    lines += [f"v_add_u32_e32 v{r}, {rng.randint(0, 99)}, v0" for r in _VREGS]
    lines += [f"scratch_store_dword off, v{_VREGS[k % 7]}, s33 offset:{4 * (k + 1)}" for k in range(7)]
    lines += ["scratch_store_dwordx2 off, v[6:7], s33 offset:32", "s_waitcnt vmcnt(0)"]
    nblocks = rng.randint(1, 5)
    for b in range(nblocks):
        lines.append(f".B{b}:")
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.25:
                lines += [f"v_cmp_gt_u32_e32 vcc, {rng.randint(0, 70)}, v0",
                          "s_and_saveexec_b64 s[26:27], vcc"]
                for _ in range(rng.randint(1, 4)):
                    lines += op(True)
                lines += ["s_waitcnt vmcnt(0)", "s_or_b64 exec, exec, s[26:27]"]
            else:
                lines += op(False)
        c = rng.random()
        if c < 0.35 and b + 2 <= nblocks:
            lines += [f"s_cmp_lt_u32 {s()}, {s()}", f"s_cbranch_scc1 .B{rng.randint(b + 1, nblocks)}"]
        elif c < 0.55 and b > 0:
            lines += ["s_add_u32 s30, s30, 1", "s_cmp_lt_u32 s30, 3",
                      f"s_cbranch_scc1 .B{rng.randint(0, b)}"]
    lines += [f".B{nblocks}:", "s_waitcnt vmcnt(0)", "s_mov_b64 exec, -1"]
    k = 0
    for r in _SREGS[:8]:
        lines += [f"v_mov_b32_e32 v2, s{r}", f"global_store_dword v1, v2, s[4:5] offset:{256 * k}"]
        k += 1
    for r in _VREGS:
        lines.append(f"global_store_dword v1, v{r}, s[4:5] offset:{256 * k}")
        k += 1
    for off in (4, 8, 12, 16, 20):
        lines += [f"scratch_load_dword v2, off, s33 offset:{off}", "s_waitcnt vmcnt(0)",
                  f"v_add_u32_e32 v3, v3, v2"]
    lines += [f"global_store_dword v1, v3, s[4:5] offset:{256 * k}", "s_endpgm"]
    return "\n".join(lines)


@pytest.mark.parametrize("pipeline", [
    "copy-prop", "scratch-promote", "sgpr-spill-promote",
    "kernel(scratch-promote,sgpr-spill-promote,redundant-move,copy-prop,peephole,copy-prop)"])
def test_random_kernels_compute_the_same(pipeline):
    """20 seeded random kernels (block of 50 work-items: a partial wave) per pipeline:
    the emulator gives the same outputs before and after, and every kernel is
    changed by at least 5 of them (the pass is really exercised)."""
    import random
    changed = 0
    for seed in range(20):
        rng = random.Random(seed)
        text = _text(_random_body(rng, writelane_under_narrow_exec=True), agprs=4)
        out = _optimise(text, pipeline)
        changed += _code(out) != _code(text)
        a = _emulate(_load(text), 50, 3)
        b = _emulate(_load(out), 50, 3)
        assert np.array_equal(a, b), (seed, np.nonzero(a != b)[0][:4])
    assert changed >= 5


# -- the new lane-aware may-liveness (dce): cross-lane readers after a narrowed write ------

def _narrow_then(reader: str, pre: str = "v_mov_b32_e32 v5, 1") -> str:
    """v5 = 1 in every lane, then 2 where id < 20 (a narrowed EXEC), then ``reader``
    (still under the narrowed EXEC) reads v5, possibly in lanes that are inactive."""
    return PRO + f"""
    {pre}
    v_add_u32_e32 v6, 0, v0
    v_cmp_gt_u32_e32 vcc, 20, v0
    s_and_saveexec_b64 s[12:13], vcc
    v_mov_b32_e32 v5, 2
    s_nop 1
    {reader}
    s_or_b64 exec, exec, s[12:13]
    global_store_dword v1, v6, s[4:5]
    s_endpgm
    """


@pytest.mark.parametrize("reader", [
    "v_readlane_b32 s10, v5, 30\nv_mov_b32_e32 v6, s10",
    "v_mov_b32_dpp v6, v5 wave_shr:1 row_mask:0xf bank_mask:0xf",
    "v_lshlrev_b32_e32 v7, 2, v0\nv_add_u32_e32 v7, 80, v7\nds_bpermute_b32 v6, v7, v5\n"
    "s_waitcnt lgkmcnt(0)",
    "ds_swizzle_b32 v6, v5 offset:swizzle(SWAP,16)\ns_waitcnt lgkmcnt(0)",
], ids=["readlane", "dpp", "bpermute", "swizzle"])
def test_dce_keeps_a_full_write_read_across_lanes_after_a_narrowed_rewrite(reader):
    """The first v_mov v5, 1 is still read (in inactive lanes) by the cross-lane reader;
    removing it would change what lanes >= 20 hold."""
    body = _narrow_then(reader)
    out, bad = _same_results(body, "default", blocks=(64, 50), ns=(0,))
    assert bad == []
    assert "v_mov_b32_e32 v5, 1" in _code(out) or "v5, 1" in _code(out)


# -- real -O0 code: clang-19 OpenCL with loops, divergent branches, 64-bit values ----------

_CL = r"""
__kernel void k(__global int *out, __global const int *in, int n) {
  int tid = __builtin_amdgcn_workitem_id_x();
  long acc = 0;
  int m = n;
  while (m > 0) {
    if (tid < m) { acc += (long)in[(tid + m) % 97] << (m & 7); }
    else if (tid == m) { acc -= 1; if (acc < -3) break; }
    m -= 3;
  }
  out[tid] = (int)(acc ^ (acc >> 32));
}
"""


def test_clang_O0_kernel_with_a_divergent_loop(tmp_path):
    """clang -O0 output (scratch slots, SGPR spills to VGPR lanes): scratch-promote and
    sgpr-spill-promote both fire, and default gives the same results on a partial
    second wave for several trip counts."""
    from corpus_paths import require_tool
    clang = require_tool("clang")   # skips only when clang is not installed
    src = tmp_path / "k.cl"
    src.write_text(_CL)
    asm = tmp_path / "k.s"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    "-mcpu=gfx942", "-nogpulib", "-O0", "-S", "-o", str(asm), str(src)],
                   check=True)
    text = asm.read_text()
    m = _load(text)
    inst = run_pipeline(m, "default", verify_each=True)
    assert inst.stats["scratch-promote"]["slots-promoted"] > 0
    assert inst.stats["sgpr-spill-promote"]["lanes-promoted"] > 0
    out = print_module(m)
    for n in (0, 1, 40, 70):
        a = _emulate(_load(text), 100, n)
        b = _emulate(_load(out), 100, n)
        assert np.array_equal(a, b), (n, np.nonzero(a != b)[0][:4])


def test_sgpr_spill_promote_lane_beyond_a_partial_wave():
    """Lane 60 of a 50-work-item wave: v_writelane/readlane and the whole-wave AGPR copies
    reach it whatever EXEC is, the per-lane v_mov (50 lanes) does not; the lane is
    promoted and the readlane value n + 3 survives."""
    body = PRO + """
    s_add_u32 s10, s7, 3
    v_writelane_b32 v20, s10, 60
    s_or_saveexec_b64 s[14:15], -1
    v_accvgpr_write_b32 a0, v20
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v20, 0
    s_or_saveexec_b64 s[14:15], -1
    v_accvgpr_read_b32 v20, a0
    s_mov_b64 exec, s[14:15]
    s_nop 1
    v_readlane_b32 s11, v20, 60
    v_mov_b32_e32 v2, s11
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    out, bad = _same_results(body, "default", blocks=(50, 64), ns=(0, 4))
    assert bad == []
    assert "v_readlane" not in _code(out)
    assert _emulate(_load(out), 50, 4)[0] == 7
