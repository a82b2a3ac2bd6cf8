"""A differential fuzzer of the emulator's lockstep mode (asmevo.emu.lockstep).

:func:`generate` makes a random program (structured: straight code, uniform / per-wave /
lane-divergent ifs, counted self-loops, pointer-walking loops, loops around the whole
program so that blocks are visited twice and compile, lane loops, barriers at the top
level, early s_endpgm of some waves) from a seed, every line checked by llvm-mc (gfx942;
what it rejects becomes ``s_nop 0``), and the state it starts from.  :func:`run_case` runs
it with the waves one at a time (the reference) or in lockstep: with compiled blocks,
without, with a Program relaunched on other data first, with launch's register and LDS
layout (:data:`MODES`); :func:`compare` lists what differs (every wave's VGPRs, AGPRs,
SGPRs, SCC, EXEC and its cached flags, instruction and lane counts, done, LDS, global
memory, scratch, the error message; "soft": both fail, with other faults).
:func:`shrink` removes lines (an access with the lines computing its address), waves and
workgroups of a mismatching program while the mismatch stays.

The programs are race-free by construction, so both modes must agree bit for bit:

* each wave stores only to its own region of the ``rw`` buffer (``s[2:3]``, its buffer
  V# ``s[64:67]``), reads it and the read-only ``ro`` buffer (``s[4:5]``, V# ``s[68:71]``);
  one global atomic add per top-level stretch goes to a word every wave adds to;
* LDS: between two barriers (at the top level only, so every wave meets the same ones)
  a wave writes only its own slice of one half and reads the other half anywhere (the
  halves swap at each barrier); one order-independent atomic kind per program on a shared
  area;
* loops are counted by reserved SGPRs / VGPRs that random code never writes; code that
  can widen EXEC (random scalar writes of EXEC) is generated only at the top level.

Registers: v0 lane + 64 * wave-in-group, v1 wave index k, v10..v29 data, v30..v39 data
(pairs), v40..v45 address temporaries, v46:47 / v56:57 walking pointers, v48..v55
lane-loop counters, v58..v60 pointer steps; s2:3 own ``rw`` base, s4:5 ``ro`` base, s6
own LDS slice, s7 scratch offset, s8 = k, s9 = workgroup, s10..s39 data (uniform, per wave
or per workgroup), s40..s45 loop counters, s46:47 EXEC at entry, s48..s63 saved EXEC of
ifs / lane loops, s64..s71 V#s, s72:73 scalar walking pointer, s74 temporary, s76:77 a
pointer step, m0 random.

Run as a script: ``python -m tests.emu.lsfuzz [N] [first seed]``, or scripts/lockstep_fuzz.py
(seed ranges, shrinking, the corpus kernels).
"""

from __future__ import annotations

import random

import numpy as np

LANES = np.arange(64)
RW_REGION = 8192        # bytes of rw per wave
RO_BYTES = 16384
LDS_SLICE = 512         # bytes of a wave's slice of one half
LDS_HALF = 2048         # (4 waves of a workgroup at most)
LDS_SHARED = 2 * LDS_HALF
LDS_BYTES = LDS_SHARED + 256
SCRATCH = 128           # bytes per lane

DATA_V = list(range(10, 30))
PAIR_V = list(range(30, 40, 2))
DATA_S = list(range(10, 40))
PAIR_S = list(range(10, 40, 2))

SPECIAL_F32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x3F800000, 0x7F800001,
               0xFFA00000, 0x00000001, 0x807FFFFF, 0x4B800001, 0x33800000, 0x3EFFFFFF]


class Case:
    """A generated program and the launch it runs in."""

    def __init__(self, lines, groups, nwaves, seed, partial, scratch=True):
        self.lines = lines
        self.groups = groups
        self.nwaves = nwaves
        self.seed = seed
        self.partial = partial
        self.scratch = scratch

    def flat(self):
        """The program's lines (an entry of ``lines`` may hold several: an access and the
        lines computing its address, which :func:`shrink` keeps together)."""
        return [x for e in self.lines for x in e.split("\n")]

    def text(self):
        return "\n".join(self.flat())

    def with_lines(self, lines):
        return Case(lines, self.groups, self.nwaves, self.seed, self.partial, self.scratch)


class Gen:
    """Random program generator (see the module docstring for its rules)."""

    def __init__(self, seed, size=60, features=None, full=False, profile="mixed"):
        self.r = random.Random(seed)
        self.size = size
        self.label = 0
        self.phase = 0
        self.loopc = 0          # loop counters in use (s40..s45)
        self.save = 0           # saved-EXEC pairs in use (s48..s63)
        self.lanec = 0          # lane-loop counters in use (v48..v55)
        self.f = features or {}
        self.full = full        # keep EXEC full outside ifs (compiled blocks' full forms)
        self.profile = profile
        self.streaming = False
        #: the one atomic the program applies to the shared LDS words (two kinds would not
        #: commute: the order of the waves would show)
        self.shared_op = self.r.choice(["add_u32", "add_u32", "max_u32", "or_b32", "min_i32",
                                        "xor_b32"])

    # ---------------------------------------------------------------- operands
    def new_label(self, what):
        self.label += 1
        return f".L{what}{self.label}"

    def v(self):
        return f"v{self.r.choice(DATA_V)}"

    def vp(self):
        r = self.r.choice(PAIR_V + [10, 12, 14, 20])
        return f"v[{r}:{r + 1}]"

    def s(self):
        r = self.r.random()
        if r < 0.75:
            return f"s{self.r.choice(DATA_S)}"
        return self.r.choice(["vcc_lo", "vcc_hi", "m0"])

    def s_src(self):
        r = self.r.random()
        if r < 0.55:
            return f"s{self.r.choice(DATA_S)}"
        if r < 0.7:
            return self.r.choice(["s8", "s9", "s6", "s7"])
        if r < 0.82:
            return self.r.choice(["vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0"])
        return self.const()

    def sp(self):
        r = self.r.choice(PAIR_S)
        return f"s[{r}:{r + 1}]" if self.r.random() < 0.8 else "vcc"

    def sp_src(self):
        r = self.r.random()
        if r < 0.6:
            return self.sp()
        if r < 0.75:
            return self.r.choice(["exec", "vcc", "s[8:9]", "s[2:3]"])
        return self.r.choice(["0", "-1", "1", "0x55555555", "-2"])

    def const(self):
        return self.r.choice(["0", "1", "-1", "2", "7", "16", "31", "63", "64", "-16",
                              "0x7fffffff", "0x80000000", "0x3f800000", "1.0", "-0.5",
                              "0x1234567", "0xffff", "4", "0xffffff00"])

    def vsrc(self, allow_s=True):
        r = self.r.random()
        if r < 0.7 or not allow_s:
            return self.v() if self.r.random() < 0.93 else self.r.choice(["v0", "v1"])
        if r < 0.88:
            return self.s_src()
        return self.const()

    # ---------------------------------------------------------------- instructions
    def salu32(self):
        r = self.r
        op = r.choice(["s_mov_b32", "s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32",
                       "s_and_b32", "s_or_b32", "s_xor_b32", "s_not_b32", "s_cselect_b32",
                       "s_lshl_b32", "s_lshr_b32", "s_ashr_i32", "s_min_u32", "s_max_i32",
                       "s_mul_i32", "s_bfe_u32", "s_andn2_b32", "s_nor_b32", "s_xnor_b32",
                       "s_add_i32", "s_lshl2_add_u32", "s_absdiff_i32", "s_brev_b32",
                       "s_bcnt1_i32_b32", "s_ff1_i32_b32", "s_cmov_b32", "s_movk_i32",
                       "s_mul_hi_u32", "s_bitset1_b32", "s_sext_i32_i8", "s_cmovk_i32",
                       "s_addk_i32"])
        d = self.s()
        if op in ("s_mov_b32", "s_not_b32", "s_brev_b32", "s_bcnt1_i32_b32", "s_ff1_i32_b32",
                  "s_cmov_b32", "s_sext_i32_i8"):
            return f"{op} {d}, {self.s_src()}"
        if op in ("s_movk_i32", "s_cmovk_i32", "s_addk_i32"):
            return f"{op} {d}, {r.choice(['0x10', '0x7fff', '0xffff', '0x8000', '3'])}"
        if op == "s_bitset1_b32":
            return f"{op} {d}, {r.choice(['3', '31', 's8', 's10'])}"
        return f"{op} {d}, {self.s_src()}, {self.s_src()}"

    def salu64(self, exec_ok=False):
        r = self.r
        op = r.choice(["s_mov_b64", "s_and_b64", "s_or_b64", "s_xor_b64", "s_not_b64",
                       "s_andn2_b64", "s_orn2_b64", "s_nand_b64", "s_nor_b64", "s_xnor_b64",
                       "s_cselect_b64", "s_lshl_b64", "s_lshr_b64", "s_cmov_b64",
                       "s_bcnt1_i32_b64", "s_ff1_i32_b64", "s_brev_b64", "s_bfm_b64"])
        if exec_ok and r.random() < 0.35:
            d = "exec"
        else:
            d = self.sp()
        if op in ("s_mov_b64", "s_not_b64", "s_cmov_b64", "s_brev_b64"):
            return f"{op} {d}, {self.sp_src()}"
        if op in ("s_bcnt1_i32_b64", "s_ff1_i32_b64"):
            return f"{op} {self.s()}, {self.sp_src()}"
        if op in ("s_lshl_b64", "s_lshr_b64"):
            return f"{op} {d}, {self.sp_src()}, {r.choice(['1', '7', '32', '63', 's8', 's10'])}"
        if op == "s_bfm_b64":
            return f"{op} {d}, {r.choice(['5', 's8', 's11'])}, {r.choice(['3', 's9', 's12'])}"
        return f"{op} {d}, {self.sp_src()}, {self.sp_src()}"

    def narrow_exec(self):
        """A scalar write of EXEC that can only clear lanes."""
        r = self.r
        return r.choice([f"s_and_b64 exec, exec, {self.sp()}",
                         f"s_andn2_b64 exec, exec, {self.sp()}",
                         f"s_and_b64 exec, {self.sp()}, exec"])

    def sopc(self):
        r = self.r
        if r.random() < 0.15:
            return f"s_cmp_{r.choice(['eq', 'lg'])}_u64 {self.sp_src()}, {self.sp_src()}"
        if r.random() < 0.1:
            return f"s_bitcmp{r.choice('01')}_b32 {self.s_src()}, {r.choice(['0', '3', '31'])}"
        c = r.choice(["eq", "lg", "gt", "ge", "lt", "le"])
        t = r.choice(["u32", "i32"])
        return f"s_cmp_{c}_{t} {self.s_src()}, {self.s_src()}"

    VOPC = ["eq", "ne", "gt", "ge", "lt", "le"]

    def vopc(self, cmpx=False, dst=None):
        r = self.r
        t = r.choice(["u32", "i32", "u32", "f32"])
        c = r.choice(self.VOPC if t != "f32" else ["eq", "lt", "gt", "le", "neq", "nlt", "o", "u"])
        x = "x" if cmpx else ""
        if dst is None:
            dst = "vcc" if r.random() < 0.5 else self.sp()
        if t == "f32" and r.random() < 0.1:
            return f"v_cmp{x}_class_f32_e64 {dst}, {self.vsrc()}, {r.choice(['0x3', '0x60', 'v11', 's10'])}"
        a = self.vsrc()
        b = self.v()
        if dst == "vcc" and r.random() < 0.6:
            if a.startswith("v") or r.random() < 0.5:
                return f"v_cmp{x}_{c}_{t}_e32 vcc, {a}, {b}"
            return f"v_cmp{x}_{c}_{t}_e32 vcc, {a}, {b}"
        return f"v_cmp{x}_{c}_{t}_e64 {dst}, {a}, {self.vsrc()}"

    def valu(self):
        r = self.r
        k = r.random()
        d = self.v()
        if k < 0.35:
            op = r.choice(["v_add_u32", "v_sub_u32", "v_subrev_u32", "v_and_b32", "v_or_b32",
                           "v_xor_b32", "v_lshlrev_b32", "v_lshrrev_b32", "v_ashrrev_i32",
                           "v_max_u32", "v_min_i32", "v_mul_lo_u32", "v_add_f32", "v_mul_f32",
                           "v_sub_f32", "v_max_f32", "v_min_f32", "v_mul_u32_u24",
                           "v_mul_hi_u32", "v_bfe_u32", "v_lshl_add_u32", "v_add3_u32",
                           "v_mad_u32_u24", "v_alignbit_b32", "v_bfi_b32", "v_xad_u32",
                           "v_fma_f32", "v_med3_f32", "v_max3_u32", "v_perm_b32",
                           "v_cvt_pk_u16_u32", "v_ldexp_f32", "v_mul_hi_i32"])
            three = op in ("v_bfe_u32", "v_lshl_add_u32", "v_add3_u32", "v_mad_u32_u24",
                           "v_alignbit_b32", "v_bfi_b32", "v_xad_u32", "v_fma_f32",
                           "v_med3_f32", "v_max3_u32", "v_perm_b32")
            e64 = three or op in ("v_mul_lo_u32", "v_mul_hi_u32", "v_cvt_pk_u16_u32",
                                  "v_ldexp_f32", "v_mul_hi_i32") or r.random() < 0.3
            if e64:
                srcs = [self.vsrc() for _ in range(3 if three else 2)]
                if not any(x.startswith("v") for x in srcs):
                    srcs[0] = self.v()
                # (one constant literal at most, and at most... keep it simple: at most one
                # non-inline literal; inline constants anything)
                suf = "" if three or op in ("v_mul_lo_u32", "v_mul_hi_u32", "v_cvt_pk_u16_u32",
                                            "v_ldexp_f32", "v_mul_hi_i32") else "_e64"
                mods = ""
                if "f32" in op and r.random() < 0.3:
                    srcs[0] = r.choice(["-", "|", ""]) + srcs[0] if srcs[0].startswith(("v", "s")) else srcs[0]
                    if srcs[0].startswith("|"):
                        srcs[0] += "|"
                    if r.random() < 0.3:
                        mods = " clamp"
                return f"{op}{suf} {d}, {', '.join(srcs)}{mods}"
            return f"{op}_e32 {d}, {self.vsrc()}, {self.v()}"
        if k < 0.45:
            op = r.choice(["v_mov_b32", "v_not_b32", "v_cvt_f32_u32", "v_cvt_u32_f32",
                           "v_bfrev_b32", "v_ffbh_u32", "v_rcp_f32", "v_sqrt_f32",
                           "v_exp_f32", "v_cvt_f32_i32", "v_fract_f32", "v_cvt_f16_f32",
                           "v_rndne_f32", "v_frexp_mant_f32"])
            return f"{op}_e32 {d}, {self.vsrc()}"
        if k < 0.55:       # fma / fmac (the inline forms of compiled blocks)
            a, b = self.vsrc(), self.vsrc()
            if not a.startswith("v") and not b.startswith("v"):
                a = self.v()
            if r.random() < 0.5:
                if not b.startswith("v"):
                    a, b = b, a
                if not b.startswith("v"):
                    b = self.v()
                return f"v_fmac_f32_e32 {d}, {a}, {b}"
            return f"v_fma_f32 {d}, {a}, {b}, {self.vsrc()}"
        if k < 0.63:       # lane-mask readers
            m = r.random()
            if m < 0.45:
                if r.random() < 0.5:
                    return f"v_cndmask_b32_e32 {d}, {self.vsrc()}, {self.v()}, vcc"
                return f"v_cndmask_b32_e64 {d}, {self.vsrc()}, {self.vsrc()}, " \
                       f"{r.choice([self.sp(), 'vcc', 'exec', self.sp()])}"
            if m < 0.75:
                op = r.choice(["v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"])
                if r.random() < 0.5:
                    return f"{op}_e32 {d}, vcc, {self.vsrc()}, {self.v()}, vcc"
                return f"{op}_e64 {d}, {self.sp()}, {self.v()}, {self.vsrc(False)}, {self.sp()}"
            if m < 0.85:
                return f"v_div_fmas_f32 {d}, {self.v()}, {self.v()}, {self.v()}"
            op = r.choice(["v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32"])
            if r.random() < 0.4:
                return f"{op}_e32 {d}, vcc, {self.vsrc()}, {self.v()}"
            return f"{op}_e64 {d}, {self.sp()}, {self.vsrc()}, {self.vsrc()}"
        if k < 0.68:
            p = self.vp()
            if r.random() < 0.5:
                return f"v_mad_u64_u32 {p}, {self.sp()}, {self.v()}, {self.vsrc()}, {self.vp()}"
            return f"v_lshl_add_u64 {p}, {self.vp()}, {r.choice(['0', '1', '3'])}, " \
                   f"{r.choice([self.vp(), 's[2:3]', 's[10:11]', '4', '-8', 's[8:9]'])}"
        if k < 0.74:
            m = r.random()
            if m < 0.35:
                return f"v_readlane_b32 {self.s()}, {self.v()}, {r.choice(['0', '5', '63', 's8', 's10', 'm0'])}"
            if m < 0.7:
                return f"v_writelane_b32 {d}, {r.choice([self.s_src(), '7'])}, " \
                       f"{r.choice(['0', '9', '63', 's8', 's11'])}"
            return f"v_readfirstlane_b32 {self.s()}, {self.v()}"
        if k < 0.8:
            m = r.random()
            if m < 0.5:
                ctrl = r.choice(["quad_perm:[1,0,3,2]", "row_shr:1", "row_shl:3", "row_ror:5",
                                 "row_mirror", "row_bcast:15", "wave_shr:1", "row_bcast:31"])
                op = r.choice(["v_mov_b32", "v_add_u32", "v_max_f32"])
                srcs = self.v() if op == "v_mov_b32" else f"{self.v()}, {self.v()}"
                bc = r.choice(["", " bound_ctrl:1"])
                return f"{op}_dpp {d}, {srcs} {ctrl} row_mask:{r.choice(['0xf', '0xa'])} " \
                       f"bank_mask:{r.choice(['0xf', '0x5'])}{bc}"
            if m < 0.7:
                return f"v_add_u32_sdwa {d}, {self.v()}, {self.v()} dst_sel:WORD_1 " \
                       f"dst_unused:{r.choice(['UNUSED_PRESERVE', 'UNUSED_PAD'])} " \
                       f"src0_sel:BYTE_0 src1_sel:DWORD"
            return f"v_mbcnt_{r.choice(['lo', 'hi'])}_u32_b32 {d}, {self.vsrc()}, {self.v()}"
        if k < 0.86:
            p = self.vp()
            op = r.choice(["v_pk_add_u16", "v_pk_mul_f32", "v_pk_fma_f32", "v_pk_add_f32",
                           "v_pk_mov_b32"])
            if op == "v_pk_add_u16":
                return f"{op} {d}, {self.v()}, {self.vsrc()}"
            if op == "v_pk_fma_f32":
                return f"{op} {p}, {self.vp()}, {self.vp()}, {self.vp()}"
            if op == "v_pk_mov_b32":
                return f"{op} {p}, {self.vp()}, {self.vp()} op_sel:[0,1]"
            return f"{op} {p}, {self.vp()}, {self.vp()}"
        if k < 0.9:
            return f"v_mov_b32_e32 {d}, {self.r.choice(['s8', 's9', 'vcc_lo', 'exec_lo', 'exec_hi', 'm0', 's10'])}"
        if k < 0.93:
            return f"v_accvgpr_write_b32 a{r.randrange(0, 8)}, {self.v()}"
        if k < 0.96:
            return f"v_accvgpr_read_b32 {d}, a{r.randrange(0, 8)}"
        return f"v_cvt_f32_f16_e32 {d}, {self.vsrc()}"

    # memory -------------------------------------------------------------------------
    def lds_addr(self, own, mask=0x1e0):
        """Lines computing an LDS address into v40..v43: the wave's own slice of the
        current half (``own``) or anywhere in the other half."""
        r = self.r
        a = f"v{r.randrange(40, 44)}"
        if own:
            lines = [f"v_and_b32_e32 {a}, {mask}, {self.v()}", f"v_add_u32_e32 {a}, s6, {a}"]
            off = (self.phase % 2) * LDS_HALF
        else:
            lines = [f"v_and_b32_e32 {a}, {0x7c0 | (mask & 3) if mask & 0x100 else mask}, {self.v()}"]
            off = ((self.phase + 1) % 2) * LDS_HALF
        return lines, a, off

    def lds(self):
        r = self.r
        k = r.random()
        unal = 0x1e3 if r.random() < 0.03 else 0x1e0
        if k < 0.3:
            lines, a, off = self.lds_addr(True, unal)
            op = r.choice(["ds_write_b32", "ds_write_b64", "ds_write_b16", "ds_write_b8"])
            src = self.vp() if op == "ds_write_b64" else self.v()
            return lines + [f"{op} {a}, {src} offset:{off + r.choice([0, 4, 8, 16])}"]
        if k < 0.4:
            lines, a, off = self.lds_addr(True, 0xfc)
            if r.random() < 0.5:
                return lines + [f"v_add_u32_e32 {a}, {off}, {a}" if off else "s_nop 0",
                                f"ds_write2_b32 {a}, {self.v()}, {self.v()} "
                                f"offset0:{r.randrange(0, 64)} offset1:{r.randrange(0, 64)}"]
            return lines + [f"v_add_u32_e32 {a}, {off}, {a}" if off else "s_nop 0",
                            f"ds_write2_b64 {a}, {self.vp()}, {self.vp()} "
                            f"offset0:{r.randrange(0, 28)} offset1:{r.randrange(0, 28)}"]
        if k < 0.7:
            own = r.random() < 0.4
            lines, a, off = self.lds_addr(own, unal)
            op = r.choice(["ds_read_b32", "ds_read_b64", "ds_read_b128", "ds_read_u8",
                           "ds_read_i16", "ds_read_u16", "ds_read_u16_d16_hi", "ds_read_b32"])
            d = self.vp() if op == "ds_read_b64" else \
                (f"v[{r.choice([10, 14, 20, 24])}:{0}]" if op == "ds_read_b128" else self.v())
            if op == "ds_read_b128":
                b = int(d[2:4])
                d = f"v[{b}:{b + 3}]"
            return lines + [f"{op} {d}, {a} offset:{off + r.choice([0, 4, 8, 12])}"]
        if k < 0.8:
            own = r.random() < 0.4
            lines, a, off = self.lds_addr(own, 0xfc)
            lines.append(f"v_add_u32_e32 {a}, {off}, {a}" if off else "s_nop 0")
            if r.random() < 0.6:
                return lines + [f"ds_read2_b32 {self.vp()}, {a} offset0:{r.randrange(0, 64)} "
                                f"offset1:{r.randrange(0, 64)}"]
            return lines + [f"ds_read2st64_b32 {self.vp()}, {a} offset1:{r.randrange(0, 2)}"]
        if k < 0.87:
            a = f"v{r.randrange(40, 44)}"
            if r.random() < 0.6:
                return [f"v_and_b32_e32 {a}, 0xfc, {self.v()}",
                        f"ds_{self.shared_op} {a}, {self.v()} offset:{LDS_SHARED}"]
            lines, a, off = self.lds_addr(True)
            return lines + [f"ds_add_rtn_u32 {self.v()}, {a}, {self.v()} offset:{off + 16}"]
        m = r.random()
        if m < 0.4:
            return [f"ds_swizzle_b32 {self.v()}, {self.v()} offset:"
                    f"{r.choice(['swizzle(SWAP,16)', 'swizzle(BROADCAST,8,3)', 'swizzle(REVERSE,32)', 'swizzle(QUAD_PERM,1,0,3,2)'])}"]
        a = f"v{r.randrange(40, 44)}"
        return [f"v_and_b32_e32 {a}, 0x1fc, {self.v()}",
                f"{r.choice(['ds_bpermute_b32', 'ds_permute_b32'])} {self.v()}, {a}, {self.v()}"]

    def gmem(self):
        r = self.r
        k = r.random()
        a = r.choice([40, 42, 44])
        pa = f"v[{a}:{a + 1}]"
        if k < 0.35:        # loads from ro, anywhere
            lines = [f"v_and_b32_e32 v{a}, 0x1ffc, {self.v()}"]
            op = r.choice(["global_load_dword", "global_load_dwordx2", "global_load_dwordx4",
                           "global_load_ubyte", "global_load_sshort", "global_load_dword"])
            d = self.v() if op != "global_load_dwordx2" and op != "global_load_dwordx4" else \
                (self.vp() if op == "global_load_dwordx2" else
                 f"v[{r.choice([10, 14, 20, 24])}:{0}]")
            if op == "global_load_dwordx4":
                b = int(d[2:4])
                d = f"v[{b}:{b + 3}]"
            if r.random() < 0.5:
                return lines + [f"{op} {d}, v{a}, s[4:5] offset:{r.choice([0, 4, 16, -4 if False else 8])}"]
            return lines + [f"v_mov_b32_e32 v{a + 1}, 0",
                            f"v_lshl_add_u64 {pa}, {pa}, 0, s[4:5]",
                            f"{op} {d}, {pa}, off offset:{r.choice([0, 4, 12])}"]
        if k < 0.6:         # own rw: stores
            lines = [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}"]
            op = r.choice(["global_store_dword", "global_store_dwordx2", "global_store_dword",
                           "global_store_byte", "global_store_short"])
            src = self.vp() if op == "global_store_dwordx2" else self.v()
            if r.random() < 0.5:
                return lines + [f"{op} v{a}, {src}, s[2:3] offset:{r.choice([0, 4, 8])}"]
            return lines + [f"v_mov_b32_e32 v{a + 1}, 0",
                            f"v_lshl_add_u64 {pa}, {pa}, 0, s[2:3]",
                            f"{op} {pa}, {src}, off"]
        if k < 0.78:        # own rw: loads
            lines = [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}"]
            op = r.choice(["global_load_dword", "global_load_dwordx2"])
            d = self.vp() if op == "global_load_dwordx2" else self.v()
            return lines + [f"{op} {d}, v{a}, s[2:3]"]
        if k < 0.85:        # atomics on own rw (with return)
            lines = [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}"]
            op = r.choice(["global_atomic_add", "global_atomic_umax", "global_atomic_xor",
                           "global_atomic_cmpswap"])
            if op == "global_atomic_cmpswap":
                return lines + [f"{op} {self.v()}, v{a}, {self.vp()}, s[2:3] sc0"]
            return lines + [f"{op} {self.v()}, v{a}, {self.v()}, s[2:3] sc0"]
        if k < 0.93:        # buffer
            if r.random() < 0.5:
                return [f"v_and_b32_e32 v{a}, 0x1fff, {self.v()}",
                        f"buffer_load_dword {self.v()}, v{a}, s[68:71], {r.choice(['0', 's7'])} offen offset:{r.choice([0, 4, 3])}"]
            return [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}",
                    f"buffer_store_dword {self.v()}, v{a}, s[64:67], {r.choice(['0', 's7'])} offen"]
        # scalar loads
        if r.random() < 0.7:
            if r.random() < 0.5:
                b = r.choice(PAIR_S)
                d, op = f"s[{b}:{b + 1}]", "s_load_dwordx2"
            else:
                d, op = f"s{r.choice(DATA_S)}", "s_load_dword"
            return [f"{op} {d}, s[4:5], {r.choice(['0x0', '0x10', '0x104', '0x200'])}",
                    "s_waitcnt lgkmcnt(0)"]
        return [f"s_load_dword s{r.choice(DATA_S)}, s[2:3], {r.choice(['0x0', '0x40'])}",
                "s_waitcnt lgkmcnt(0)"]

    def scratch(self):
        r = self.r
        if r.random() < 0.6:
            o = r.choice([0, 4, 8, 16, 32, 2])
            if r.random() < 0.5:
                return [f"scratch_store_dword{r.choice(['', 'x2'])} off, "
                        f"{{}}, {r.choice(['s7', 'off'])} offset:{o}"]
            return [f"scratch_load_dword{r.choice(['', 'x2'])} {{}}, off, "
                    f"{r.choice(['s7', 'off'])} offset:{o}"]
        a = f"v{r.randrange(40, 44)}"
        if r.random() < 0.5:
            return [f"v_and_b32_e32 {a}, 0x3c, {self.v()}", f"scratch_store_dword {a}, {self.v()}, off"]
        return [f"v_and_b32_e32 {a}, 0x3c, {self.v()}", f"scratch_load_dword {self.v()}, {a}, off"]

    def scratch_lines(self):
        out = []
        for x in self.scratch():
            if "{}" in x:
                w = "x2" in x.split()[0]
                x = x.replace("{}", self.vp() if w else self.v())
            out.append(x)
        return out

    # ---------------------------------------------------------------- structure
    def straight(self, top, lane_loop):
        """One random straight-line item (a list of lines)."""
        r = self.r
        k = r.random()
        if k < 0.17:
            return [self.salu32()]
        keep = self.full and not self.save     # (EXEC stays full outside ifs / lane loops)
        if k < 0.27:
            return [self.salu64(exec_ok=top and not lane_loop and not keep)]
        if k < 0.33:
            return [self.sopc()]
        if k < 0.41:
            if r.random() < 0.2 and not keep:
                if top and not lane_loop or r.random() < 0.5:
                    return [self.vopc(cmpx=True)]
            return [self.vopc()]
        if k < 0.45:
            return [self.narrow_exec()] if r.random() < 0.6 and not keep else \
                [f"s_mov_b64 vcc, exec", f"s_and_b64 {self.sp()}, exec, {self.sp_src()}"]
        if k < 0.72:
            return [self.valu()]
        if k < 0.82:
            return self.lds()
        if k < 0.93:
            return self.gmem()
        if k < 0.95:
            return self.scratch_lines()
        if k < 0.995:
            return self.extra(keep)
        return [r.choice(["s_nop 0", "s_waitcnt vmcnt(0) lgkmcnt(0)", "s_setprio 1"])]

    def extra(self, keep):
        """Rarer instruction classes: 64/16-bit compares and VALU, f64, MFMA, the whole
        saveexec / wrexec family, s_memtime, MODE, s_set_gpr_idx, v_movrel, flat and d16
        loads, buffer format loads and atomics, LDS DMA and addtid (M0), wide scalar
        loads, s_buffer_load."""
        r = self.r
        d = self.v()
        p, q = self.vp(), self.vp()
        k = r.randrange(34)
        half = (self.phase % 2) * LDS_HALF
        other = ((self.phase + 1) % 2) * LDS_HALF
        if k == 0:
            t = r.choice(["u64", "i64", "f64"])
            c = r.choice(["eq", "lt", "gt"]) if t != "f64" else r.choice(["lt", "neq", "u"])
            return [f"v_cmp_{c}_{t}_e64 {r.choice(['vcc', self.sp()])}, {p}, {q}"]
        if k == 1:
            return [f"v_cmp_{r.choice(['lt', 'eq', 'ge'])}_{r.choice(['u16', 'i16', 'f16'])}_e32 "
                    f"vcc, {self.v()}, {self.v()}"]
        if k == 2:
            op = r.choice(["v_add_f64", "v_mul_f64", "v_max_f64", "v_fma_f64", "v_lshlrev_b64",
                           "v_ashrrev_i64", "v_div_fmas_f64", "v_mad_i64_i32"])
            if op == "v_fma_f64" or op == "v_div_fmas_f64":
                return [f"{op} {p}, {q}, {self.vp()}, {r.choice([self.vp(), 's[10:11]'])}"]
            if op in ("v_lshlrev_b64", "v_ashrrev_i64"):
                return [f"{op} {p}, {r.choice(['s8', '3', self.v()])}, {q}"]
            if op == "v_mad_i64_i32":
                return [f"{op} {p}, {self.sp()}, {self.v()}, {self.vsrc()}, {q}"]
            return [f"{op} {p}, {q}, {r.choice([self.vp(), 's[12:13]', '1.0'])}"]
        if k == 3:
            op = r.choice(["v_add_u16", "v_mul_lo_u16", "v_add_f16", "v_max_i16", "v_fma_f16",
                           "v_pk_fma_f16", "v_pk_max_i16", "v_cvt_f16_u16", "v_lshlrev_b16"])
            if op in ("v_fma_f16", "v_pk_fma_f16"):
                return [f"{op} {d}, {self.v()}, {self.vsrc()}, {self.v()}"]
            if op == "v_cvt_f16_u16":
                return [f"{op}_e32 {d}, {self.v()}"]
            if op.startswith("v_pk"):
                return [f"{op} {d}, {self.v()}, {self.v()}"]
            return [f"{op}_e32 {d}, {self.vsrc()}, {self.v()}"]
        if k == 4:
            return [f"v_mfma_f32_16x16x16_f16 {r.choice(['v[36:39]', 'a[0:3]', 'v[20:23]'])}, "
                    f"{p}, {q}, {r.choice(['v[36:39]', 'a[0:3]', '0', 'v[20:23]'])}"]
        if k == 5:
            return [f"v_mfma_f64_4x4x4f64 {p}, {q}, {self.vp()}, {r.choice([self.vp(), '0'])}"]
        if k == 6:     # the saveexec / wrexec family (inside ifs: EXEC only narrows)
            if keep:
                return [self.salu32()]
            op = r.choice(["and", "andn2", "andn1", "nand"] if self.save or not self.f.get("wide")
                          else ["or", "xor", "orn1", "orn2", "nor", "xnor"])
            if r.random() < 0.2:
                return [f"s_{r.choice(['andn1', 'andn2'])}_wrexec_b64 {self.sp()}, {self.sp_src()}"] \
                    if not self.save else [f"s_andn2_wrexec_b64 {self.sp()}, {self.sp_src()}"]
            if self.save and op in ("andn2", "nand"):
                op = "and"      # (S & ~EXEC, ~(S & EXEC) can add lanes)
            return [f"s_{op}_saveexec_b64 {self.sp()}, {self.sp_src()}"]
        if k == 7:
            return [f"s_{r.choice(['memtime', 'memrealtime'])} {self.sp()}"]
        if k == 8:
            return [f"s_getreg_b32 {self.s()}, hwreg(HW_REG_MODE{r.choice(['', ', 0, 10', ', 23, 1'])})"]
        if k == 9:
            return [f"s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), {r.choice([0, 1])}"]
        if k == 10:
            return [f"s_and_b32 s74, {self.s_src()}, 7",
                    f"s_set_gpr_idx_on s74, gpr_idx({r.choice(['SRC0', 'DST', 'SRC0,DST'])})",
                    f"v_mov_b32_e32 v{r.randrange(10, 20)}, v{r.randrange(10, 20)}",
                    f"v_add_u32_e32 v{r.randrange(10, 20)}, v{r.randrange(10, 20)}, v{r.randrange(10, 20)}",
                    "s_set_gpr_idx_off"]
        if k == 11:     # (no v_movrel on gfx942)
            return [f"s_cmov_b64 {self.sp()}, {self.sp_src()}"]
        if k == 12:     # flat at global addresses
            a = r.choice([40, 42, 44])
            lines = [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}", f"v_mov_b32_e32 v{a + 1}, 0",
                     f"v_lshl_add_u64 v[{a}:{a + 1}], v[{a}:{a + 1}], 0, s[2:3]"]
            if r.random() < 0.5:
                return lines + [f"flat_store_dword v[{a}:{a + 1}], {self.v()}"]
            return lines + [f"flat_load_dword {self.v()}, v[{a}:{a + 1}]", "s_waitcnt vmcnt(0) lgkmcnt(0)"]
        if k == 13:     # d16 loads and short stores
            a = r.choice([40, 42, 44])
            return [f"v_and_b32_e32 v{a}, 0xffe, {self.v()}",
                    f"{r.choice(['global_load_short_d16', 'global_load_short_d16_hi', 'global_load_ubyte_d16_hi'])} "
                    f"{self.v()}, v{a}, s[2:3]"]
        if k == 14:     # buffer: format loads, atomics, structured
            a = r.choice([40, 42, 44])
            m = r.random()
            if m < 0.3:
                return [f"v_and_b32_e32 v{a}, 0x1ffc, {self.v()}",
                        f"buffer_load_format_x {self.v()}, v{a}, s[68:71], 0 offen"]
            if m < 0.6:
                return [f"v_and_b32_e32 v{a}, 0xffc, {self.v()}",
                        f"buffer_atomic_{r.choice(['add', 'umax', 'xor', 'swap'])} {self.v()}, v{a}, s[64:67], 0 offen sc0"]
            return [f"v_and_b32_e32 v{a}, 0x1ff, {self.v()}",
                    f"buffer_load_dword {self.v()}, v{a}, s[68:71], 0 idxen"]
        if k == 15:     # LDS DMA into the wave's own slice (M0)
            a = r.choice([40, 42, 44])
            return [f"s_add_u32 m0, s6, {half}",
                    f"v_and_b32_e32 v{a}, 0x1ffc, {self.v()}",
                    f"buffer_load_dword v{a}, s[68:71], 0 offen lds",
                    "s_waitcnt vmcnt(0)"]
        if k == 16:     # (ds_*_addtid_b32 has no semantics in the emulator)
            return [f"s_bitcmp1_b32 {self.s_src()}, {r.choice([0, 5])}",
                    f"s_cselect_b64 {self.sp()}, {self.sp_src()}, {self.sp_src()}"]
        if k == 17:     # wide scalar loads, SGPR offset, s_buffer_load
            b = r.choice([12, 16, 24, 32])
            m = r.random()
            if m < 0.4:
                return [f"s_load_dwordx4 s[{b}:{b + 3}], s[4:5], {r.choice(['0x0', '0x40'])}", "s_waitcnt lgkmcnt(0)"]
            if m < 0.7:
                return [f"s_and_b32 s74, {self.s_src()}, 0x3fc", f"s_load_dword s{r.choice(DATA_S)}, s[4:5], s74",
                        "s_waitcnt lgkmcnt(0)"]
            return [f"s_buffer_load_dword{r.choice(['', 'x2'])} "
                    f"{self.sp() if r.random() < 0.5 else 's' + str(r.choice(DATA_S))}, s[68:71], 0x10",
                    "s_waitcnt lgkmcnt(0)"]
        if k == 18:
            op = r.choice(["s_quadmask_b64", "s_wqm_b64", "s_bitreplicate_b64_b32", "s_abs_i32",
                           "s_flbit_i32_b32", "s_bcnt0_i32_b64", "s_sext_i32_i16", "s_bitset0_b32"])
            if op in ("s_abs_i32", "s_flbit_i32_b32", "s_sext_i32_i16"):
                return [f"{op} {self.s()}, {self.s_src()}"]
            if op == "s_bitset0_b32":
                return [f"{op} {self.s()}, {r.choice(['3', 's8'])}"]
            if op == "s_bcnt0_i32_b64":
                return [f"{op} {self.s()}, {self.sp_src()}"]
            if op == "s_bitreplicate_b64_b32":
                return [f"{op} {self.sp()}, {self.s_src()}"]
            return [f"{op} {self.sp()}, {self.sp_src()}"]
        if k == 19:
            return [f"v_cndmask_b32_sdwa {d}, {self.v()}, {self.v()}, vcc dst_sel:WORD_0 "
                    f"dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:BYTE_0"]
        if k == 30:     # three-operand integer forms compilers emit
            op = r.choice(["v_lshl_or_b32", "v_and_or_b32", "v_or3_b32", "v_add_lshl_u32",
                           "v_div_fixup_f32", "v_fmac_f64"])
            if op == "v_fmac_f64":
                return [f"{op}_e32 {p}, {q}, {self.vp()}"]
            return [f"{op} {d}, {self.vsrc()}, {self.vsrc()}, {self.v()}"]
        if k == 31:
            op = r.choice(["v_frexp_exp_i32_f32", "v_cvt_i32_f32", "v_bcnt_u32_b32", "v_ffbl_b32",
                           "v_fmamk_f32", "v_fmaak_f32", "v_mov_b64", "v_cmp_ngt_f32"])
            if op == "v_bcnt_u32_b32":
                return [f"{op} {d}, {self.vsrc()}, {self.v()}"]
            if op == "v_fmamk_f32":
                return [f"{op} {d}, {self.v()}, {r.choice(['0x3fc00000', '0x7fc00001', '0xbf000000'])}, {self.v()}"]
            if op == "v_fmaak_f32":
                return [f"{op} {d}, {self.v()}, {self.v()}, {r.choice(['0x3fc00000', '0x7fa00001'])}"]
            if op == "v_mov_b64":
                return [f"{op} {p}, {r.choice([q, 's[10:11]', 's[8:9]', '1'])}"]
            if op == "v_cmp_ngt_f32":
                return [f"{op}_e64 {r.choice(['vcc', self.sp()])}, {self.vsrc()}, {self.v()}"]
            return [f"{op}_e32 {d}, {self.vsrc()}"]
        if k == 32:     # SOPK, wide scalar loads, more global widths
            m = r.random()
            if m < 0.3:
                return [f"s_cmpk_{r.choice(['gt_i32', 'lt_i32', 'eq_u32', 'lg_u32'])} "
                        f"s{r.choice(DATA_S)}, {r.choice(['0x10', '0x7fff', '0x8000'])}"]
            if m < 0.45:
                return [f"s_sub_i32 {self.s()}, {self.s_src()}, {self.s_src()}"]
            if m < 0.6:
                return ["s_load_dwordx8 s[16:23], s[4:5], 0x20", "s_waitcnt lgkmcnt(0)"]
            a = r.choice([40, 42, 44])
            if m < 0.75:
                return [f"v_and_b32_e32 v{a}, 0x1ff0, {self.v()}",
                        f"{r.choice(['global_load_ushort', 'global_load_dwordx3'])} "
                        f"{'v[20:22]' if r.random() < 0.5 else self.v()}, v{a}, s[4:5]"]
            return [f"v_and_b32_e32 v{a}, 0xff0, {self.v()}",
                    f"{r.choice(['global_store_dwordx4 v' + str(a) + ', v[20:23]', 'global_store_short_d16_hi v' + str(a) + ', ' + self.v()])}, s[2:3]"]
        if k == 33:
            return [f"v_mfma_f32_32x32x8_f16 {r.choice(['v[10:25]', 'a[0:15]'])}, {p}, {q}, "
                    f"{r.choice(['v[10:25]', 'a[0:15]', '0'])}"]
        if k == 22:
            return [f"v_swap_b32 {self.v()}, {self.v()}"]
        if k == 23:
            return [f"v_div_scale_f32 {d}, {r.choice(['vcc', self.sp()])}, {self.v()}, {self.v()}, {self.vsrc()}"]
        if k == 24:
            op = r.choice(["v_dot2_f32_f16", "v_dot2c_f32_f16", "v_dot4_i32_i8", "v_fma_mix_f32",
                           "v_fma_mixlo_f16", "v_cvt_pkrtz_f16_f32", "v_cvt_pk_i16_i32",
                           "v_sad_u8", "v_pk_add_f16"])
            if op in ("v_dot2c_f32_f16",):
                return [f"{op}_e32 {d}, {self.v()}, {self.v()}"]
            if op in ("v_cvt_pkrtz_f16_f32", "v_cvt_pk_i16_i32", "v_pk_add_f16"):
                return [f"{op} {d}, {self.vsrc()}, {self.v()}"
                        + (" op_sel:[1,0] op_sel_hi:[0,1]" if op == "v_pk_add_f16" and r.random() < 0.5 else "")]
            if op.startswith("v_fma_mix"):
                return [f"{op} {d}, {self.v()}, {self.vsrc()}, {self.v()} op_sel_hi:[1,0,1]"]
            return [f"{op} {d}, {self.v()}, {self.vsrc()}, {self.v()}"]
        if k == 25:     # 96-bit LDS, compare-store and returning atomics in the wave's slice
            lines, a, off = self.lds_addr(True)
            m = r.random()
            if m < 0.3:
                b = r.choice([10, 14, 20])
                return lines + [f"ds_write_b96 {a}, v[{b}:{b + 2}] offset:{off}"]
            if m < 0.5:
                b = r.choice([10, 14, 20])
                return lines + [f"ds_read_b96 v[{b}:{b + 2}], {a} offset:{off}"]
            if m < 0.75:
                return lines + [f"ds_cmpst_rtn_b32 {self.v()}, {a}, {self.v()}, {self.v()} offset:{off}"]
            return lines + [f"ds_{r.choice(['max_rtn_u32', 'xor_rtn_b32', 'add_rtn_f32', 'wrxchg_rtn_b32'])} "
                            f"{self.v()}, {a}, {self.v()} offset:{off}"]
        if k == 26:     # order-independent LDS atomics on the shared words
            a = f"v{r.randrange(40, 44)}"
            return [f"v_and_b32_e32 {a}, 0xfc, {self.v()}",
                    f"ds_{self.shared_op} {a}, {self.v()} offset:{LDS_SHARED}"]
        if k == 27:
            return [f"v_accvgpr_mov_b32 a{r.randrange(0, 8)}, a{r.randrange(0, 8)}"]
        if k == 28:     # 64-bit global atomics with return, in the wave's own region
            a = r.choice([40, 42, 44])
            op = r.choice(["add_x2", "smax_x2", "cmpswap_x2"])
            data = "v[24:27]" if op == "cmpswap_x2" else self.vp()
            return [f"v_and_b32_e32 v{a}, 0xff8, {self.v()}",
                    f"global_atomic_{op} {self.vp()}, v{a}, {data}, s[2:3] sc0"]
        # a conditional branch to the next instruction (taken or not: the same pc)
        L = self.new_label("next")
        return [f"s_{r.choice(['cbranch_execz', 'cbranch_vccnz', 'cbranch_scc1'])} {L}", f"{L}:"]

        if k == 20:
            return [f"v_readlane_b32 s74, {self.v()}, {r.choice(['s8', 's9', '1'])}",
                    f"v_writelane_b32 {d}, s74, {r.choice(['s9', '2', '63'])}"]
        return [f"v_cmp{'' if keep or self.save else r.choice(['', 'x'])}_{r.choice(['gt', 'ne'])}"
                f"_u32_sdwa {r.choice(['vcc', self.sp()])}, {self.v()}, {self.v()} "
                f"src0_sel:{r.choice(['WORD_1', 'BYTE_0'])} src1_sel:DWORD"]

    #: weights of what :meth:`body` makes, per profile ("mixed": everything; "blocks":
    #: EXEC full outside scalar ifs, so that compiled blocks run their full-EXEC forms)
    WEIGHTS = {
        "mixed": dict(if_scalar=7, if_lanes=7, loop=5, lane_loop=2.5, branch=2, stream=2.5,
                      barrier=3, end=0.5, restore=1.5, straight=69),
        "blocks": dict(if_scalar=6, if_lanes=1, loop=8, lane_loop=0.5, branch=2, stream=12,
                       barrier=3, end=0.5, restore=2, straight=65),
    }

    def body(self, n, depth, top, lane_loop=False, loop=False):
        out = []
        w = self.WEIGHTS[self.profile]
        names = list(w)
        for _ in range(n):
            k = self.r.choices(names, [w[x] for x in names])[0]
            outer = top and depth == 0 and not loop
            if depth < 3 and k == "if_scalar":
                out += self.if_scalar(depth, top, lane_loop, loop)
            elif depth < 3 and k == "if_lanes" and self.save < 7:
                out += self.if_lanes(depth, lane_loop, loop)
            elif depth < 3 and k == "loop" and self.loopc < 5:
                out += self.loop(depth, top, lane_loop)
            elif depth < 3 and k == "lane_loop" and self.lanec < 7 and self.save < 7:
                out += self.lane_loop(depth)
            elif depth < 3 and k == "branch":
                out += self.branch_vcc(depth, top, lane_loop, loop)
            elif depth < 3 and k == "stream" and self.loopc < 5 and not self.streaming:
                out += self.stream_loop(lane_loop)
            elif outer and k == "barrier":
                out.append("\n".join(self.barrier()))
            elif outer and k == "end":
                out += self.early_end()
            elif outer and k == "restore":
                out += ["s_mov_b64 exec, s[46:47]"]
            else:
                out.append("\n".join(self.straight(top and depth == 0, lane_loop)))
        return out

    def barrier(self):
        self.phase += 1
        out = ["s_waitcnt vmcnt(0) lgkmcnt(0)", "s_barrier"]
        if self.r.random() < 0.5:       # one shared atomic per stretch
            out = [f"v_mov_b32_e32 v44, {RO_BYTES + self.phase * 4}",
                   f"global_atomic_add v44, {self.v()}, s[4:5]"] + out
        return out

    def early_end(self):
        L = self.new_label("live")
        return [f"s_cmp_{self.r.choice(['eq', 'gt'])}_u32 s8, {self.r.choice([1, 2, 5])}",
                f"s_cbranch_scc0 {L}", "s_waitcnt vmcnt(0) lgkmcnt(0)", "s_endpgm", f"{L}:"]

    def if_scalar(self, depth, top, lane_loop, loop):
        """if (scalar condition) -- uniform or per wave -- with an optional else."""
        r = self.r
        Le, Lx = self.new_label("else"), self.new_label("endif")
        cond = self.sopc() if r.random() < 0.7 else \
            r.choice(["s_cmp_lt_u32 s8, 2", "s_cmp_eq_u32 s9, 0", "s_bitcmp1_b32 s8, 0"])
        out = [cond, f"s_cbranch_scc{r.choice('01')} {Le}"]
        out += self.body(r.randint(1, 5), depth + 1, top, lane_loop, loop)
        if r.random() < 0.5:
            out += [f"s_branch {Lx}", f"{Le}:"]
            out += self.body(r.randint(1, 4), depth + 1, top, lane_loop, loop)
            out += [f"{Lx}:"]
        else:
            out += [f"{Le}:"]
        return out

    def if_lanes(self, depth, lane_loop, loop):
        """if (per-lane condition) with saveexec, optionally with an else (LLVM's shape)."""
        r = self.r
        sv = 48 + 2 * self.save
        self.save += 1
        S = f"s[{sv}:{sv + 1}]"
        Lx = self.new_label("join")
        cmpd = r.choice(["vcc", self.sp()])
        out = [self.vopc(dst=cmpd)]
        if r.random() < 0.5:
            out += [f"s_and_saveexec_b64 {S}, {cmpd}"]
        else:
            out += [f"s_mov_b64 {S}, exec", f"s_and_b64 exec, exec, {cmpd}"]
        els = r.random() < 0.35
        if els:
            out += [f"s_xor_b64 {S}, exec, {S}"]
        if r.random() < 0.6:
            out += [f"s_cbranch_execz {Lx}"]
        out += self.body(r.randint(1, 6), depth + 1, False, lane_loop, loop)
        out += [f"{Lx}:"]
        if els:
            Ly = self.new_label("join")
            out += [f"s_or_saveexec_b64 {S}, {S}", f"s_xor_b64 exec, exec, {S}",
                    f"s_cbranch_execz {Ly}"]
            out += self.body(r.randint(1, 4), depth + 1, False, lane_loop, loop)
            out += [f"{Ly}:"]
        out += [f"s_or_b64 exec, exec, {S}" if r.random() < 0.7 else f"s_mov_b64 exec, {S}"]
        if els:
            out[-1] = f"s_or_b64 exec, exec, {S}"
        self.save -= 1
        return out

    def loop(self, depth, top, lane_loop):
        """A counted loop: uniform or per-wave trip count; a straight body (a self-loop
        block) or one with structure inside."""
        r = self.r
        c = f"s{40 + self.loopc}"
        self.loopc += 1
        L = self.new_label("loop")
        trips = r.choice(["2", "3", "4", "s8", "s9"])
        if trips.startswith("s"):
            out = [f"s_and_b32 {c}, {trips}, 3", f"s_add_u32 {c}, {c}, 1"]
        else:
            out = [f"s_mov_b32 {c}, {trips}"]
        out += [f"{L}:"]
        if r.random() < 0.6:
            body = []
            for _ in range(r.randint(2, 10)):
                body.append("\n".join(self.straight(False, lane_loop or True)))
            out += body
        else:
            out += self.body(r.randint(2, 6), depth + 1, False, lane_loop, True)
        tail = r.random()
        if tail < 0.5:
            out += [f"s_sub_u32 {c}, {c}, 1", f"s_cmp_lg_u32 {c}, 0", f"s_cbranch_scc1 {L}"]
        elif tail < 0.8:
            out += [f"s_add_u32 {c}, {c}, -1", f"s_cmp_eq_u32 {c}, 0", f"s_cbranch_scc0 {L}"]
        else:
            out += [f"s_add_u32 {c}, {c}, -1", f"s_cbranch_scc1 {L}"]   # (carry: c was > 0)
        self.loopc -= 1
        return out

    def stream_loop(self, lane_loop):
        """A self-loop walking pointers as compiled code does: a VGPR-pair pointer into ``ro``
        (v[46:47]) and one into the wave's own ``rw`` (v[56:57]) advanced by
        v_lshl_add_u64, a scalar pointer (s[72:73]) advanced by s_add/s_addc, FMAs of the
        loaded values with SGPR / constant / VGPR operands, random straight code between."""
        r = self.r
        self.streaming = True
        c = f"s{40 + self.loopc}"
        self.loopc += 1
        L = self.new_label("stream")
        step = r.choice([4, 4, 8, 12, 2])
        out = ["v_lshlrev_b32_e32 v46, 2, v0", "v_and_b32_e32 v46, 0x3fc, v46",
               "v_mov_b32_e32 v47, 0", "v_lshl_add_u64 v[46:47], v[46:47], 0, s[4:5]",
               "v_lshlrev_b32_e32 v56, 3, v0", "v_and_b32_e32 v56, 0x7f8, v56",
               "v_mov_b32_e32 v57, 0", "v_lshl_add_u64 v[56:57], v[56:57], 0, s[2:3]",
               "s_mov_b64 s[72:73], s[4:5]", f"s_mov_b32 {c}, {r.choice([2, 3, 5, 8])}",
               f"s_mov_b32 s76, {r.choice([4, 2, 8])}", "s_mov_b32 s77, 0",
               "v_and_b32_e32 v58, 3, v0", "v_lshlrev_b32_e32 v58, 1, v58",  # 0, 2, 4, 6
               "v_mov_b32_e32 v59, 0", f"v_mov_b32_e32 v60, {r.choice([0, 4, 2])}",
               f"{L}:"]
        body = []
        x, y = self.v(), self.v()
        items = [
            [f"global_load_dword {x}, v[46:47], off"],
            [f"global_load_dwordx2 {self.r.choice(['v[10:11]', 'v[20:21]'])}, v[46:47], off offset:8"],
            [f"s_load_dword s{r.choice(DATA_S)}, s[72:73], 0x0"],
            ["s_add_u32 s72, s72, 4", "s_addc_u32 s73, s73, 0"],
            [f"v_lshl_add_u64 v[46:47], v[46:47], 0, {step}"],
            [f"v_lshl_add_u64 v[56:57], v[56:57], 0, {r.choice([4, 8])}"],
            [f"global_store_dword v[56:57], {self.v()}, off"],
            [f"global_load_dword {y}, v[56:57], off offset:4"],
            ["s_waitcnt vmcnt(0) lgkmcnt(0)"],
            [f"v_fmac_f32_e32 {self.v()}, {self.r.choice([x, 's' + str(r.choice(DATA_S)), '0.5', '0x7fc00001', self.v()])}, {y}"],
            [f"v_fma_f32 {self.v()}, {x}, {self.r.choice(['s' + str(r.choice(DATA_S)), '2.0', self.v()])}, {self.vsrc()}"],
            [f"v_fmac_f32_e32 {self.v()}, {self.v()}, {x}"],
            [f"v_add_u32_e32 {self.v()}, {x}, {y}"],
            [f"s_cmp_eq_u32 {c}, 1"],
            [f"v_lshl_add_u64 v[46:47], v[46:47], 0, s[76:77]"],     # (s76: 4 or 2)
            [f"v_lshl_add_u64 v[46:47], v[46:47], 0, v[58:59]"],     # (per lane: 0, 4 or 6)
            [f"global_load_dword {x}, v[46:47], off offset:{r.choice([2, 4, 8])}"],
        ]
        if r.random() < 0.3:    # the pointer's dwords written by other (32-bit) instructions
            items += [["v_add_u32_e32 v46, 4, v46"], ["v_sub_u32_e32 v46, v46, v60"],
                      ["v_mov_b32_e32 v47, v47"], ["v_add_co_u32_e32 v46, vcc, 8, v46",
                                                   "v_addc_co_u32_e32 v47, vcc, 0, v47, vcc"]]
        for _ in range(r.randint(4, 12)):
            it = r.choice(items)
            body.append("\n".join(it))
        for _ in range(r.randint(0, 4)):
            body.append("\n".join(self.straight(False, True)))
        r.shuffle(body)
        out += body
        out += [f"s_sub_u32 {c}, {c}, 1", f"s_cmp_lg_u32 {c}, 0", f"s_cbranch_scc1 {L}"]
        self.loopc -= 1
        self.streaming = False
        return out

    def lane_loop(self, depth):
        """A loop whose trip count differs per lane: EXEC shrinks until it is empty."""
        r = self.r
        vc = f"v{48 + self.lanec}"
        self.lanec += 1
        sv = 48 + 2 * self.save
        self.save += 1
        S = f"s[{sv}:{sv + 1}]"
        H, X = self.new_label("lhead"), self.new_label("lexit")
        out = [f"v_and_b32_e32 {vc}, 3, {self.v()}", f"s_mov_b64 {S}, exec", f"{H}:"]
        if r.random() < 0.5:
            out += [f"v_cmp_ne_u32_e32 vcc, 0, {vc}", "s_and_b64 exec, exec, vcc"]
        else:
            out += [f"v_cmpx_ne_u32_e32 vcc, 0, {vc}"]
        out += [f"s_cbranch_execz {X}"]
        out += self.body(r.randint(1, 5), depth + 1, False, True, True)
        out += [f"v_subrev_u32_e32 {vc}, 1, {vc}", f"s_branch {H}", f"{X}:",
                f"s_mov_b64 exec, {S}"]
        self.save -= 1
        self.lanec -= 1
        return out

    def branch_vcc(self, depth, top, lane_loop, loop):
        r = self.r
        L = self.new_label("vskip")
        br = r.choice(["s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz", "s_cbranch_execnz"])
        out = [self.vopc(dst="vcc") if r.random() < 0.6 else self.salu64(), f"{br} {L}"]
        out += self.body(r.randint(1, 4), depth + 1, top, lane_loop, loop)
        return out + [f"{L}:"]

    def program(self):
        r = self.r
        out = []
        if self.f.get("outer_loop", r.random() < 0.5):
            # the whole body twice: every block is visited again and compiled
            out += ["s_mov_b32 s45, 0", ".Louter:"]
            self.loopc = 5
            p0 = self.phase
            out += self.body(self.size // 2, 0, True)
            if (self.phase - p0) % 2:
                out.append("\n".join(self.barrier()))
            out += ["s_add_u32 s45, s45, 1", "s_cmp_lt_u32 s45, 2", "s_cbranch_scc1 .Louter"]
            out += self.body(self.size // 4, 0, True)
        else:
            out += self.body(self.size, 0, True)
        out += ["s_waitcnt vmcnt(0) lgkmcnt(0)"]
        return out


_VALID: dict = {}     # instruction text -> llvm-mc accepts it for gfx942


def valid(lines):
    """``lines`` with every instruction llvm-mc (gfx942) rejects replaced by ``s_nop 0`` --
    operands the hardware cannot encode (constant bus, VOP3 literals...) -- so that the
    programs are real gfx942 code; results cached by text."""
    import subprocess
    from asmevo.llvm import MCPU, TRIPLE, find_tool
    flat = [x for e in lines for x in e.split("\n")]
    new = sorted({x for x in flat if not x.endswith(":") and x not in _VALID})
    if new:
        p = subprocess.run([find_tool("llvm-mc"), f"-triple={TRIPLE}", f"-mcpu={MCPU}",
                            "-filetype=null"], input="\n".join(new) + "\n", text=True,
                           capture_output=True)
        badn = set()
        for ln in p.stderr.splitlines():
            if ln.startswith("<stdin>:") and ": error:" in ln:
                badn.add(int(ln.split(":")[1]) - 1)
        for i, x in enumerate(new):
            _VALID[x] = i not in badn
    return ["\n".join(x if x.endswith(":") or _VALID[x] else "s_nop 0" for x in e.split("\n"))
            for e in lines]


def generate(seed, size=None, check=True):
    r = random.Random(seed * 7919 + 1)
    groups = r.choice([1, 1, 2, 3])
    nwaves = r.choice([2, 3, 4] if groups == 1 else [1, 2, 2, 3])
    if groups * nwaves < 2:
        nwaves = 2
    if seed % 10 == 9:      # (a larger lockstep set now and then: 8 to 24 waves)
        groups, nwaves = r.choice([(2, 4), (4, 2), (6, 4), (8, 1), (3, 3)])
    full = r.random() < 0.5
    partial = not full and r.random() < 0.6
    profile = "blocks" if full and r.random() < 0.8 else "mixed"
    g = Gen(seed, size=size or r.choice([20, 40, 60, 90]), full=full, profile=profile)
    lines = g.program()
    return Case(valid(lines) if check else lines, groups, nwaves, seed, partial)


# ------------------------------------------------------------------------------ running
def _state(case, data_seed=None):
    """Initial per-wave values (deterministic in the case's seed, or ``data_seed``)."""
    rng = np.random.default_rng(case.seed if data_seed is None else data_seed)
    W = case.groups * case.nwaves
    sp = SPECIAL_F32

    def vdata():
        pick = rng.integers(0, 4, (20, 64))
        x = rng.integers(0, 1 << 32, (20, 64), dtype=np.uint64).astype(np.uint32)
        small = rng.integers(0, 80, (20, 64)).astype(np.uint32)
        fl = rng.standard_normal((20, 64)).astype(np.float32).view(np.uint32)
        spc = np.array(sp, np.uint32)[rng.integers(0, len(sp), (20, 64))]
        return np.choose(pick, [x, small, fl, spc]).astype(np.uint32)
    waves = []
    uni = rng.integers(0, 1 << 32, 30, dtype=np.uint64).astype(np.uint32)
    uni[rng.integers(0, 30, 6)] = np.array(sp, np.uint32)[rng.integers(0, len(sp), 6)]
    uni[rng.integers(0, 30, 6)] = rng.integers(0, 40, 6)
    kind = rng.integers(0, 3, 30)     # 0 uniform, 1 per wave, 2 per workgroup
    pergroup = rng.integers(0, 1 << 32, (case.groups, 30), dtype=np.uint64).astype(np.uint32)
    exs = []
    for k in range(W):
        g, i = divmod(k, case.nwaves)
        v = vdata()
        s = np.where(kind == 0, uni, np.where(kind == 1, rng.integers(0, 1 << 32, 30, dtype=np.uint64).astype(np.uint32), pergroup[g]))
        if case.partial and rng.random() < 0.6:
            e = int(rng.integers(0, 1 << 63)) | int(rng.integers(0, 2)) << 63
            if rng.random() < 0.1:
                e = 0
        else:
            e = (1 << 64) - 1
        vcc = int(rng.integers(0, 1 << 63)) if rng.random() < 0.6 else (1 << 64) - 1
        m0 = int(rng.integers(0, 1 << 32)) if rng.random() < 0.5 else 0xFFFFFFFF
        scc = bool(rng.integers(0, 2)) if rng.random() < 0.5 else True
        waves.append((g, i, v, s, e, vcc, m0, scc))
        exs.append(e)
    ro = rng.integers(0, 1 << 32, RO_BYTES // 4 + 64, dtype=np.uint64).astype(np.uint32)
    ro[::3] = np.array(sp, np.uint32)[rng.integers(0, len(sp), ro[::3].size)]
    rw = rng.integers(0, 1 << 32, RW_REGION * W // 4, dtype=np.uint64).astype(np.uint32)
    lds = rng.integers(0, 1 << 32, (case.groups, LDS_BYTES // 4), dtype=np.uint64).astype(np.uint32)
    scr = rng.integers(0, 1 << 32, (W, 64, SCRATCH // 4), dtype=np.uint64).astype(np.uint32)
    return waves, ro, rw, lds, scr


class Result:
    def __init__(self, waves, wgs, mem, error):
        self.waves = waves
        self.wgs = wgs
        self.mem = mem
        self.error = error


def _launch(case, data_seed=None, rows=None):
    """Memory, workgroups and waves of ``case`` in their initial state; with ``rows`` (VGPR,
    AGPR rows: Program.register_rows) the waves' registers are columns of shared files as
    asmevo.emu.launch builds a lockstep set (returned as ``shared`` for run_lockstep, with the
    LDS layout launch gives), else None."""
    from asmevo.emu.memory import GlobalMemory, ScratchMemory
    from asmevo.emu.state import NUM_SGPR_SLOTS, Wave, Workgroup
    init, ro, rw, lds, scr = _state(case, data_seed)
    mem = GlobalMemory()
    ro_base = mem.map("ro", ro, writable=True)
    rw_base = mem.map("rw", rw)
    seg = LDS_BYTES
    buf = np.zeros(seg * case.groups, np.uint8)
    wgs = [Workgroup((g, 0, 0), LDS_BYTES, buf[g * seg:(g + 1) * seg]) for g in range(case.groups)]
    for g, wg in enumerate(wgs):
        wg.lds.words[:] = lds[g]
    waves = []
    for k, (g, i, v, s, e, vcc, m0, scc) in enumerate(init):
        regs = None
        if rows is not None:
            if k == 0:
                W = len(init)
                V = np.zeros((rows[0], W, 64), np.uint32)
                A = np.zeros((rows[1], W, 64), np.uint32)
                S = np.zeros((W, NUM_SGPR_SLOTS), np.uint32)
            regs = (V[:, k], A[:, k], S[k])
        wv = Wave(wgs[g], i, ScratchMemory(SCRATCH) if case.scratch else None, regs)
        nv = wv.v.shape[0]
        wv.v[0] = LANES + 64 * i
        wv.v[1] = k
        wv.v[10:min(30, nv)] = v[:max(0, min(30, nv) - 10)]
        if nv > 30:
            wv.v[30:min(40, nv)] = (v[:10] ^ np.uint32(0x5a5a5a5a))[:min(40, nv) - 30]
        wv.s[10:40] = s
        b = rw_base + RW_REGION * k
        wv.s[2], wv.s[3] = b & 0xFFFFFFFF, b >> 32
        wv.s[4], wv.s[5] = ro_base & 0xFFFFFFFF, ro_base >> 32
        wv.s[6] = i * LDS_SLICE
        wv.s[7] = 4 * (k % 3)
        wv.s[8] = k
        wv.s[9] = g
        wv.s[64:68] = [b & 0xFFFFFFFF, b >> 32, RW_REGION, 0x00027000]
        wv.s[68:72] = [ro_base & 0xFFFFFFFF, ro_base >> 32, RO_BYTES - 64 * (k % 2), 0x00027000]
        wv.s[106], wv.s[107] = vcc & 0xFFFFFFFF, vcc >> 32
        wv.s[124] = m0
        wv.s[126], wv.s[127] = e & 0xFFFFFFFF, e >> 32
        wv.s[46], wv.s[47] = e & 0xFFFFFFFF, e >> 32
        wv.sync_exec()
        wv.scc = scc
        if case.scratch:
            wv.scratch.words[:] = scr[k].reshape(-1)[:wv.scratch.words.size].reshape(
                wv.scratch.words.shape)
        waves.append(wv)
    shared = None
    if rows is not None:
        from asmevo.emu.lockstep import lds_layout
        shared = (V, A, S, lds_layout(buf, seg, case.groups, case.nwaves, LDS_BYTES))
    return mem, wgs, waves, shared


def run_case(case, lockstep, blocks=True, limit=20000, warm=False, launch=False):
    """Run ``case`` with the waves one at a time (``lockstep`` False) or as a lockstep group,
    with compiled blocks (``blocks``) or without; a :class:`Result`.  ``warm``: the same
    Program runs the case on other data first (a new memory, as the launches of one kernel
    reuse its Program: compiled blocks, their remembered buffers and visit counts).
    ``launch``: the registers and LDS laid out as asmevo.emu.launch lays out a lockstep set
    (shared files with only the register rows the program uses, its LDS layout)."""
    from asmevo.emu import launch as L
    from asmevo.emu import lockstep_block as LB
    from asmevo.emu.executor import Program
    from asmevo.emu.launch import _run_group
    from asmevo.emu.memory import EmuError
    from tests.emu.conftest import build_kernel

    old = L.LOCKSTEP, LB.ENABLED
    L.LOCKSTEP, LB.ENABLED = lockstep, blocks
    prog = None
    err = None
    try:
        with np.errstate(all="ignore"):
            if warm:
                mem, wgs, waves, _ = _launch(case, case.seed + 100003)
                prog = Program(build_kernel(case.flat() + ["s_endpgm"]), mem)
                try:
                    _run_group(prog, waves, limit)
                except EmuError:
                    pass
            if launch:
                prog = Program(build_kernel(case.flat() + ["s_endpgm"]), None)
                mem, wgs, waves, shared = _launch(case, rows=prog.register_rows())
                prog.ctx.mem = mem
            else:
                mem, wgs, waves, shared = _launch(case)
            if prog is None:
                prog = Program(build_kernel(case.flat() + ["s_endpgm"]), mem)
            else:
                prog.ctx.mem = mem
            _run_group(prog, waves, limit, shared)
    except EmuError as e:
        err = str(e)
    except Exception as e:     # noqa: BLE001  (an emulator crash: reported as such)
        err = f"CRASH {type(e).__name__}: {e}"
    finally:
        L.LOCKSTEP, LB.ENABLED = old
    return Result(waves, wgs, mem, err)


def compare(a, b):
    """What differs between two :class:`Result` s (a list of strings; empty: identical)."""
    out = []
    if a.error != b.error and not (a.error and b.error and "runaway" in a.error and
                                   "runaway" in b.error):
        # both fail, with other emulated faults: the two schedules meet the waves' faults in
        # another order (tests/emu/test_lockstep_fuzz_found.py test_first_fault_of_several_
        # waves) -- "soft", reported apart (a difference of state could also show this way)
        soft = a.error and b.error and not any(
            x in e for e in (a.error, b.error) for x in ("CRASH", "cannot be emulated"))
        out.append(("soft: " if soft else "") + f"error: {a.error!r} vs {b.error!r}")
        return out
    if a.error is not None:     # (the same error: the state it left is not a result)
        return out
    for k, (x, y) in enumerate(zip(a.waves, b.waves)):
        for f in ("v", "a"):
            n = min(getattr(x, f).shape[0], getattr(y, f).shape[0])   # (launch: fewer rows)
            d = np.argwhere(getattr(x, f)[:n] != getattr(y, f)[:n])
            if d.size:
                r, l = d[0]
                out.append(f"wave {k} {f}{r} lane {l}: {getattr(x, f)[r, l]:#x} vs "
                           f"{getattr(y, f)[r, l]:#x} ({len(d)} differ)")
        d = np.flatnonzero(x.s != y.s)
        if d.size:
            out.append(f"wave {k} s{list(d)}: {[hex(int(x.s[i])) for i in d[:4]]} vs "
                       f"{[hex(int(y.s[i])) for i in d[:4]]}")
        for f in ("scc", "count", "lanes", "done", "exec_n", "exec_all", "exec_any"):
            if getattr(x, f) != getattr(y, f):
                out.append(f"wave {k} {f}: {getattr(x, f)} vs {getattr(y, f)}")
        if not np.array_equal(x.exec_mask, y.exec_mask):
            out.append(f"wave {k} cached exec mask differs")
        if x.scratch is not None and not np.array_equal(x.scratch.words, y.scratch.words):
            out.append(f"wave {k} scratch differs")
    for g, (x, y) in enumerate(zip(a.wgs, b.wgs)):
        d = np.flatnonzero(x.lds.words != y.lds.words)
        if d.size:
            out.append(f"group {g} LDS words {list(d[:6])} differ ({d.size})")
    for name in ("ro", "rw"):
        x, y = a.mem.region(name).data, b.mem.region(name).data
        d = np.flatnonzero(x != y)
        if d.size:
            out.append(f"{name} bytes {list(d[:6])} differ ({d.size})")
    return out


MODES = {"lockstep": (True, True), "lockstep-noblocks": (True, False),
         "lockstep-warm": (True, True, 20000, True),
         "lockstep-launch": (True, True, 20000, False, True)}


def check(case, modes=("lockstep", "lockstep-noblocks", "lockstep-warm", "lockstep-launch"),
          soft=False):
    """{mode: differences from one wave at a time} for the modes that differ (``soft``: also
    those where both fail with other faults), and the reference :class:`Result`."""
    ref = run_case(case, False)
    bad = {}
    for m in modes:
        d = compare(run_case(case, *MODES[m]), ref)
        if d and (soft or not all(x.startswith("soft:") for x in d)):
            bad[m] = d
    return bad, ref


def shrink(case, mode, verbose=False):
    """A smaller case (fewer lines, waves, groups) that still differs in ``mode``."""
    def bad(c):
        flat = c.flat()
        labels = {x[:-1] for x in flat if x.endswith(":")}
        for x in flat:      # (a removed label: a branch that cannot be compiled)
            w = x.split()
            if w and w[0].startswith("s_") and "branch" in w[0] and w[-1] not in labels:
                return False
        try:
            a, b = run_case(c, *MODES[mode]), run_case(c, False)
        except Exception:   # noqa: BLE001  (a line removed made it unparseable...)
            return False
        if any(e and ("cannot be emulated" in e or "CRASH" in e and "CRASH" not in orig)
               for e in (a.error, b.error)):
            return False
        return bool(compare(a, b))
    orig = str(compare(run_case(case, *MODES[mode]), run_case(case, False)))
    # launch shape first
    for groups, nwaves, partial, scratch in ((1, 2, False, case.scratch),
                                              (1, 2, case.partial, case.scratch),
                                              (2, 1, case.partial, case.scratch),
                                              (1, 3, case.partial, case.scratch),
                                              (1, 4, case.partial, case.scratch),
                                              (2, 2, case.partial, case.scratch)):
        if groups * nwaves <= case.groups * case.nwaves:
            c = Case(case.lines, groups, nwaves, case.seed, partial, scratch)
            if bad(c):
                case = c
                break
    lines = list(case.lines)
    n = 2
    while len(lines) >= 2:
        chunk = max(1, len(lines) // n)
        done = False
        for i in range(0, len(lines), chunk):
            if any("s_barrier" in x for x in lines[i:i + chunk]):
                continue    # (removing a barrier can make a race: both halves of LDS in use)
            trial = lines[:i] + lines[i + chunk:]
            if trial and bad(case.with_lines(trial)):
                lines = trial
                n = max(n - 1, 2)
                done = True
                if verbose:
                    print(f"  {len(lines)} lines")
                break
        if not done:
            if chunk == 1:
                break
            n = min(len(lines), n * 2)
    return case.with_lines(lines)


if __name__ == "__main__":      # pragma: no cover
    import sys
    import time
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    t = time.time()
    fails = 0
    for seed in range(first, first + N):
        case = generate(seed)
        bad, ref = check(case)
        if bad:
            fails += 1
            print(f"seed {seed}: {bad}")
    print(f"{N} programs, {fails} mismatches, {time.time() - t:.1f}s")
