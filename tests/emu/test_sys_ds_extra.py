"""ds_append/ds_consume, s_trap, s_sendmsg, s_setpc/s_swappc and the compile-time list of
instructions without semantics (Program.unsupported)."""

import numpy as np
import pytest

from asmevo.emu.executor import Program
from asmevo.emu.memory import EmuError, GlobalMemory
from tests.emu.conftest import build_kernel

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)


def test_ds_append_counts_active_lanes(snippet):
    # LDS[0x40 + 8] = 100; 40 active lanes: every active lane gets 100, LDS becomes 140
    s = snippet(["s_mov_b32 m0, 0x40", "ds_append v1 offset:8", "ds_read_b32 v2, v3 offset:0x48"])
    s.group.lds.words[0x48 // 4] = 100
    s.w.v[1] = 7
    s.w.set_exec(LANES < 40)
    s.run()
    assert np.array_equal(s.w.v[1], np.where(LANES < 40, 100, 7))
    assert s.group.lds.words[0x48 // 4] == 140


def test_ds_consume_wraps_and_two_waves(snippet):
    # two waves of 64 lanes consume from 100: first gets 100, second 36; LDS = 100-128 mod 2^32
    s = snippet(["s_mov_b32 m0, 0x10", "ds_consume v1"], nwaves=2)
    s.group.lds.words[4] = 100
    s.run()
    assert (s.waves[0].v[1] == 100).all() and (s.waves[1].v[1] == 36).all()
    assert s.group.lds.words[4] == (100 - 128) & 0xFFFFFFFF


def test_ds_append_out_of_range_faults(snippet):
    s = snippet(["s_mov_b32 m0, 0x1000", "ds_append v1"], lds=256)
    with pytest.raises(EmuError):
        s.run()


def test_s_trap_names_trap_id(snippet):
    s = snippet(["v_mov_b32_e32 v1, 3", "s_trap 2", "v_mov_b32_e32 v1, 4"])
    with pytest.raises(EmuError, match="s_trap 2"):
        s.run()
    assert (s.w.v[1] == 3).all()


def test_s_sendmsg_has_no_register_effect(snippet):
    s = snippet(["v_mov_b32_e32 v1, 3", "s_sendmsg sendmsg(MSG_INTERRUPT)", "v_mov_b32_e32 v2, 4"])
    s.run()
    assert (s.w.v[1] == 3).all() and (s.w.v[2] == 4).all()


def _with_addresses(kernel):
    a = 0
    for b in kernel.blocks:
        for inst in b.instructions:
            inst.address = a
            a += 4          # every instruction below is 4 bytes (inline constants only)
    return kernel


def test_s_setpc_and_swappc(snippet):
    # addresses: 0 s_mov, 4 s_mov, 8 swappc, 12 v_mov, 16 endpgm, 20 v_mov, 24 setpc
    lines = ["s_mov_b32 s4, 20", "s_mov_b32 s5, 0", "s_swappc_b64 s[6:7], s[4:5]",
             "v_mov_b32_e32 v1, 1", "s_endpgm", "v_mov_b32_e32 v2, 2", "s_setpc_b64 s[6:7]"]
    s = snippet([])
    s.kernel = _with_addresses(build_kernel(lines))
    s.run()
    assert s.w.s[6] == 12 and s.w.s[7] == 0
    assert (s.w.v[1] == 1).all() and (s.w.v[2] == 2).all()


def test_unsupported_instructions_listed_at_compile_time():
    k = build_kernel(["v_mov_b32_e32 v1, 1", "v_mfma_f32_4x4x1f32 v[0:3], v4, v5, v[0:3]",
                      "s_endpgm"])
    prog = Program(k, GlobalMemory())
    assert [i for i, _ in prog.unsupported] == [1]
    assert "v_mfma_f32_4x4x1" in prog.unsupported[0][1]
