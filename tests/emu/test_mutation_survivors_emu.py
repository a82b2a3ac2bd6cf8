"""Tests for mutants of asmevo/emu that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_setreg_of_a_mode_field_at_an_offset_reads_back(snippet):
    # exec_lane s_setreg: the value goes to bits [offset, offset+size) of MODE
    # (mutant: `v << off` -> `v >> off`, which wrote 0 to every field above bit 0)
    s = snippet(["s_getreg_b32 s10, hwreg(HW_REG_MODE, 0, 32)",
                 "s_mov_b32 s0, 0x5",
                 "s_setreg_b32 hwreg(HW_REG_MODE, 12, 9), s0",        # EXCP_EN
                 "s_getreg_b32 s11, hwreg(HW_REG_MODE, 12, 9)",
                 "s_getreg_b32 s12, hwreg(HW_REG_MODE, 0, 32)",
                 "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 12, 9), 0x3",
                 "s_getreg_b32 s13, hwreg(HW_REG_MODE, 12, 9)"])
    s.run()
    assert int(s.w.s[11]) == 0x5
    assert int(s.w.s[12]) == (int(s.w.s[10]) & ~(0x1FF << 12)) | (0x5 << 12)
    assert int(s.w.s[13]) == 0x3


@pytest.mark.parametrize("swap,wgid", [
    (("\t\t.amdhsa_user_sgpr_dispatch_ptr 1\n", "\t\t.amdhsa_user_sgpr_queue_ptr 1\n"), "s6"),
    (("\t\t.amdhsa_user_sgpr_dispatch_id 1\n",
      "\t\t.amdhsa_user_sgpr_dispatch_id 1\n\t\t.amdhsa_user_sgpr_private_segment_size 1\n"), "s7"),
], ids=["queue_ptr", "private_segment_size"])
def test_user_sgpr_count_derived_from_the_enabled_user_sgprs(swap, wgid):
    # launch.kernel_config: a text kernel read from its directives (no descriptor) without
    # .amdhsa_user_sgpr_count gets it from the enabled user SGPRs (dispatch or queue ptr 2 +
    # kernarg ptr 2 + dispatch id 2 [+ private segment size 1]), so the workgroup id lands
    # in s6 / s7 (mutants: the queue or kernarg pointer counted as 1 SGPR, the private
    # segment size as 2)
    import numpy as np
    import planted_kernels as pk
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    from asmevo.frontend.asm_parser import parse_asm
    body = f"""
        s_load_dwordx2 s[10:11], s[2:3], 0x0
        s_waitcnt lgkmcnt(0)
        v_and_b32_e32 v0, 0x3ff, v0
        v_mov_b32_e32 v2, {wgid}
        v_lshl_add_u32 v3, {wgid}, 6, v0
        v_lshlrev_b32_e32 v3, 2, v3
        global_store_dword v3, v2, s[10:11]
    """
    text = pk.kernel_text(body, prologue=False)
    assert "\t\t.amdhsa_user_sgpr_count 6\n" in text and swap[0] in text
    text = text.replace("\t\t.amdhsa_user_sgpr_count 6\n", "").replace(*swap)
    m = parse_asm(text, "k.s")          # no fill_text_abi: the directives are what is read
    la = Launch((64, 1, 1), (3, 1, 1), [
        Arg("out", "buffer", "uint32", data=np.full(192, 0xDEAD, np.uint32), role="out"),
        Arg("in", "buffer", "uint32", data=np.zeros(4, np.uint32), role="in"),
        Arg("n", "scalar", "int32", value=0)])
    out = np.asarray(run_kernel(m, "k", la).outputs["out"]).view(np.uint32)
    assert out.tolist() == [0] * 64 + [1] * 64 + [2] * 64


@pytest.mark.parametrize("body", ["s_mov_b32 s10, 0\nscratch_load_dword v2, off, s10",
                                  "scratch_store_dword off, v1, off offset:8",
                                  "v_mov_b32_e32 v3, 8\nscratch_store_dword v3, v1, off"])
def test_scratch_access_without_a_private_segment_says_so(body):
    # launch: a wave gets no scratch memory when the private segment size is 0, and the
    # fault says why (mutant: `priv > 0` -> `>= 0`: a 0-byte scratch, a bare out-of-range)
    import numpy as np
    import planted_kernels as pk
    from asmevo.emu.memory import EmuError
    with pytest.raises(EmuError, match=r"scratch \(kernel has no private segment\) access of 4 bytes"):
        pk.run_text_kernel(body, np.zeros(4, np.uint32))


def test_float_global_atomic_adds_add():
    # exec_mem atomics: add_f64 / add_f32 are old + value (mutant: old - value for f64)
    import numpy as np
    import planted_kernels as pk
    body = """
        v_mov_b32_e32 v2, 0
        v_mov_b32_e32 v3, 0x40020000
        v_lshlrev_b32_e32 v4, 3, v0
        global_atomic_add_f64 v4, v[2:3], s[4:5]
        global_atomic_add_f64 v4, v[2:3], s[4:5]
        v_mov_b32_e32 v5, 0x3fc00000
        global_atomic_add_f32 v1, v5, s[4:5] offset:512
        global_atomic_add_f32 v1, v5, s[4:5] offset:512
    """
    out = pk.run_text_kernel(body, np.zeros(4, np.uint32), out_words=256)
    assert out[:128].view(np.float64).tolist() == [4.5] * 64            # 0 + 2.25 + 2.25
    assert out[128:192].view(np.float32).tolist() == [3.0] * 64         # 0 + 1.5 + 1.5


def test_harness_compare_is_bit_exact_without_tolerances():
    # harness.compare: rtol/atol default to 0 (mutant: rtol 1 when the entry gives none,
    # which let any output within 100% pass differential testing)
    import numpy as np
    from asmevo.emu.harness import compare
    want = {"out": np.array([1.0, 2.0], np.float32)}
    got = {"out": np.array([1.0, 2.5], np.float32)}
    assert compare({}, got, want) != []
    assert compare({"rtol": 0, "atol": 0}, got, want) != []
    assert compare({"rtol": 0.5}, got, want) == []
    assert compare({}, want, want) == []


def test_s_buffer_load_base_is_the_48_bit_field_of_the_descriptor():
    # exec_mem SMEM buffer loads: base = V#[47:0]; bits [63:48] of the second dword are the
    # stride and flags (mutant: `& 0xFFFF` -> `& 0x10000`: the base's bits 32..47 lost)
    import numpy as np
    from asmevo.emu.executor import compile_smem
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.semantics.registry import lookup

    class Mem:
        def __init__(self):
            self.reads = []

        def read_scalar(self, addr, size):
            self.reads.append(int(addr))
            return bytes(size)

    class Ctx:
        mem = Mem()

    class Wave:
        s = np.zeros(108, np.uint32)

    w = Wave()
    w.s[4:8] = [0x1000, 0xABCD1234, 0x100, 0]       # base 0x1234_00001000, stride bits set
    inst = next(parse_asm("k:\ns_buffer_load_dword s10, s[4:7], 0x8\ns_endpgm\n", "t.s")
                .kernels[0].instructions())
    compile_smem(inst, lookup(inst.opcode), Ctx, None)(w)
    assert Ctx.mem.reads == [0x1234_0000_1008]


def test_traced_global_address_with_an_sgpr_base_adds_the_offset():
    # trace.py global access with saddr: vaddr + base (s[n], s[n+1]) + offset (mutants:
    # - offset; the base's high dword from s[n-1])
    import numpy as np
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    from asmevo.emu.trace import Tracer
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.frontend.loader import fill_text_abi
    from planted_kernels import kernel_text
    m = parse_asm(kernel_text("""
        s_mov_b32 s11, 0x12345
        s_mov_b64 s[12:13], s[4:5]
        global_store_dword v1, v0, s[4:5]
        global_store_dword v1, v0, s[4:5] offset:256
        global_store_dword v1, v0, s[12:13]
    """), "k.s")
    fill_text_abi(m)
    tr = Tracer()
    la = Launch((64, 1, 1), (1, 1, 1), [
        Arg("out", "buffer", "uint32", data=np.zeros(128, np.uint32), role="out"),
        Arg("in", "buffer", "uint32", data=np.zeros(4, np.uint32), role="in"),
        Arg("n", "scalar", "int32", value=0)])
    out = run_kernel(m, "k", la, trace=tr).outputs["out"]
    assert np.asarray(out).view(np.uint32).tolist() == list(range(64)) * 2
    (w,) = tr.waves
    a0, a1, a2 = [np.asarray(a, np.uint64) for _, a in sorted(w.addrs.items())][-3:]
    assert (a1.astype(np.int64) - a0.astype(np.int64)).tolist() == [256] * 64
    assert a2.tolist() == a0.tolist()              # the same base in other SGPRs


def test_manifest_entry_name_must_be_a_string(tmp_path):
    # harness.load_harness on a manifest list: an entry whose name is not a string is
    # refused by position (mutant: `"name" in x` -> `not in`: a nameless entry raised
    # KeyError and a numeric name got another message)
    import json
    from asmevo.emu.harness import load_harness
    from asmevo.errors import AsmevoError
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"name": 5, "block": [64], "grid": [1], "args": []}]))
    with pytest.raises(AsmevoError, match=r"manifest entry #0: name is"):
        load_harness(str(p))
    p.write_text(json.dumps([{"block": [64], "grid": [1], "args": []}]))
    assert load_harness(str(p))["block"] == [64]


@pytest.mark.parametrize("block,grid,dims", [((64, 1, 1), (4, 1, 1), 1), ((8, 8, 1), (1, 1, 1), 2),
                                             ((64, 1, 1), (1, 3, 1), 2), ((4, 4, 4), (1, 1, 1), 3),
                                             ((64, 1, 1), (1, 1, 2), 3)])
def test_hidden_grid_dims(block, grid, dims):
    # launch._hidden_value: hidden_grid_dims is the highest dimension with more than one
    # work-item in the dispatch (mutant: 2-D dispatches said 1)
    from asmevo.emu.launch import Launch, _hidden_value
    assert _hidden_value("hidden_grid_dims", Launch(block, grid, [])) == dims


@pytest.mark.parametrize("text", ["s_mov_b32 s0, v1", "s_add_u32 s0, v1, s2",
                                  "v_readlane_b32 s0, v1, v2"])
def test_vgpr_as_a_scalar_source_is_refused(snippet, text):
    # exec_common.reader: a VGPR where a scalar source belongs (llvm-mc rejects such text)
    # is refused by name (mutant: the check dropped -> read as a vector)
    from asmevo.emu.memory import EmuError
    with pytest.raises(EmuError, match="a vector register cannot be a scalar source"):
        snippet([text]).run()


@pytest.mark.parametrize("lines,what", [
    (["v_mov_b32_e32 v0, 1020", "ds_write_b64 v0, v[2:3]"], "LDS access of 8 bytes at 0x3fc"),
    (["v_mov_b32_e32 v0, 1016", "ds_write_b128 v0, v[4:7]"], "LDS access of 16 bytes at 0x3f8"),
])
def test_multi_dword_lds_write_past_the_end_faults(snippet, lines, what):
    # memory LDS write_words: the bounds check covers all 4 * ndw bytes (mutant: 4 // ndw,
    # an IndexError instead of the memory fault)
    from asmevo.emu.memory import EmuError
    with pytest.raises(EmuError, match=what):
        snippet(lines, lds=1024).run()
    snippet(["v_mov_b32_e32 v0, 1016", "ds_write_b64 v0, v[2:3]"], lds=1024).run()   # fits


def test_s_load_negative_immediate_offset_is_signed():
    # exec_mem SMEM load: an immediate offset is signed (mutant: 0xFFFFFFFC - 2**31)
    import numpy as np
    from asmevo.emu.executor import compile_smem
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.semantics.registry import lookup

    class Mem:
        reads = []

        def read_scalar(self, addr, size):
            self.reads.append(int(addr))
            return bytes(size)

    class Ctx:
        mem = Mem()

    class Wave:
        s = np.zeros(108, np.uint32)

        def sync_exec(self):
            pass

    w = Wave()
    w.s[2:4] = [0x1000, 0]
    inst = next(parse_asm("k:\ns_load_dword s10, s[2:3], -4\ns_endpgm\n", "t.s")
                .kernels[0].instructions())
    compile_smem(inst, lookup(inst.opcode), Ctx, None)(w)
    assert Ctx.mem.reads == [0x1000 - 4]


@pytest.mark.parametrize("sel", ["[0,0]", "[1,0]", "[0,1]", "[1,1]"])
def test_pk_mov_b32_op_sel_picks_the_dwords(snippet, sel):
    # exec_valu v_pk_mov_b32: D.lo = src0 dword op_sel[0], D.hi = src1 dword op_sel[1]
    # (mutant: halves[0][2] for op_sel[0] = 1)
    import numpy as np
    s = snippet([f"v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:{sel}"])
    for k in range(2, 6):
        s.w.v[k] = np.full(64, 0x1000 * k, np.uint32)
    s.run()
    a, b = int(sel[1]), int(sel[3])
    assert int(s.w.v[0][0]) == 0x1000 * (2 + a) and int(s.w.v[1][0]) == 0x1000 * (4 + b)
