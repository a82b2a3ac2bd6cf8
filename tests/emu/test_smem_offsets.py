"""SMEM immediate offsets are signed (21 bits on gfx940) for stores as for loads; an
SGPR offset is an unsigned 32-bit value (CDNA3 ISA guide, "Scalar Memory Operations")."""

from __future__ import annotations

import numpy as np

from asmevo.emu.executor import compile_smem


class _Mem:
    def __init__(self):
        self.writes = []

    def write(self, addr, data, lanes):
        self.writes.append(int(addr[0]))


class _Ctx:
    def __init__(self):
        self.mem = _Mem()


class _Wave:
    def __init__(self):
        self.s = np.zeros(108, np.uint32)
        self.s[2], self.s[3] = 0x1000, 0   # base s[2:3] = 0x1000


def _store_addr(text: str) -> int:
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.semantics.registry import lookup
    inst = next(parse_asm("k:\n" + text + "\ns_endpgm\n", "t.s").kernels[0].instructions())
    ctx = _Ctx()
    run = compile_smem(inst, lookup(inst.opcode), ctx, None)
    run(_Wave())
    return ctx.mem.writes[0]


def test_negative_immediate_offset_of_a_store_is_signed():
    assert _store_addr("s_store_dword s4, s[2:3], -4") == 0x1000 - 4


def test_positive_immediate_offset_of_a_store():
    assert _store_addr("s_store_dword s4, s[2:3], 0x10") == 0x1010
