"""Cross-lane moves (readlane/writelane/readfirstlane...), s_set_gpr_idx indexing and
system instructions (s_getreg/s_setreg, s_memtime, s_sendmsg, traps...).
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Func, Imm, Reg, Src, base_of
from .memory import EmuError
from .state import EXEC, M0, VCC
from .exec_common import CompileError, U32, _b64, _regs_of, _sgpr_index, reader, sreader, swriter

def compile_lane(inst, spec, ctx, nxt):
    ops = inst.operands
    name = spec.name
    if name == "v_readfirstlane_b32":
        wr = swriter(ops[0], "b32")
        r = reader(ops[1], "b32")

        def run(wv):
            x = _b64(r(wv))
            ln = int(np.argmax(wv.exec_mask)) if wv.exec_any else 0
            wr(wv, x.item(ln))
            return nxt
        return run
    if name == "v_readlane_b32":
        src = base_of(ops[1])
        di = _sgpr_index(ops[0])
        lsel = base_of(ops[2])
        if isinstance(src, Reg) and src.file in ("v", "a") and di is not None and di < EXEC \
                and di != VCC and di != VCC + 1:
            si, sf = src.index, src.file
            if isinstance(lsel, Imm):
                ln0 = int(lsel.value) & 63

                def run(wv):
                    wv.s[di] = (wv.v if sf == "v" else wv.a)[si, ln0]
                    return nxt
                return run
            li = _sgpr_index(lsel)
            if li is not None:
                def run(wv):
                    wv.s[di] = (wv.v if sf == "v" else wv.a)[si, wv.s[li] & 63]
                    return nxt
                return run
        wr = swriter(ops[0], "b32")
        r = reader(ops[1], "b32")
        sel = reader(ops[2], "u32", vector_ok=False)

        def run(wv):
            x = _b64(r(wv))
            ln = int(sel(wv)[0]) & 63
            wr(wv, x.item(ln))
            return nxt
        return run
    if name == "v_writelane_b32":
        d = _regs_of(ops[0])
        r = reader(ops[1], "b32", vector_ok=False)
        sel = reader(ops[2], "u32", vector_ok=False)
        i = d.index

        def run(wv):
            wv.v[i, int(sel(wv)[0]) & 63] = r(wv)[0]
            return nxt
        return run
    raise CompileError(name)


_GPR_IDX = {"SRC0": 1, "SRC1": 2, "SRC2": 4, "DST": 8}


def _gpr_idx_bits(op) -> int:
    b = base_of(op)
    if isinstance(b, Func) and b.name == "gpr_idx":
        return sum(_GPR_IDX[str(a).upper()] for a in b.args)
    if isinstance(b, Imm):
        return int(b.value) & 0xF
    raise CompileError("expected gpr_idx(...)")


def _indexed(inst, spec, ctx, nxt, comp):
    """A VALU instruction inside s_set_gpr_idx_on/off: VGPR operands named by the
    M0[15:12] mode bits are offset by M0[7:0] at run time (compiled once per offset)."""
    cache = {}
    plain = comp(inst, spec, ctx, nxt)
    nd = 1 if spec.kind in ("vopc", "lane") else len(spec.dst)

    def shifted(off, modes):
        ops = list(inst.operands)
        for k, op in enumerate(ops):
            if k < nd:
                on = modes & 8
            else:
                on = modes & (1 << min(k - nd, 2))
            b = base_of(op)
            if on and isinstance(b, Reg) and b.file == "v":
                nb = Reg("v", b.index + off, b.count)
                ops[k] = Src(nb, op.neg, op.abs, op.sext, op.style) if isinstance(op, Src) else nb
        return comp(inst.evolve(operands=ops), spec, ctx, nxt)

    def run(wv):
        if wv.gpr_idx is None:
            return plain(wv)
        m0 = wv.s.item(M0)
        key = m0 & 0xF0FF
        f = cache.get(key)
        if f is None:
            f = cache[key] = shifted(m0 & 0xFF, (m0 >> 12) & 0xF)
        return f(wv)
    return run


def compile_sys(inst, spec, ctx, nxt):
    name = spec.name
    ops = inst.operands
    if name == "s_getpc_b64":
        addr = ctx.addresses[nxt] if nxt < len(ctx.addresses) and ctx.addresses[nxt] is not None else None
        if addr is None:
            raise CompileError("s_getpc_b64 needs instruction addresses")
        wr = swriter(ops[0], "b64")
        return lambda wv: (wr(wv, addr), nxt)[1]
    if name in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        f = base_of(ops[1] if name == "s_getreg_b32" else ops[0])
        if not isinstance(f, Func) or f.name != "hwreg":
            raise CompileError("expected hwreg(...)")
        reg = f.args[0]
        off = int(f.args[1]) if len(f.args) > 1 else 0
        size = int(f.args[2]) if len(f.args) > 2 else 32
        if reg not in ("HW_REG_MODE", 1, "1"):
            raise CompileError(f"hardware register {reg} is not emulated")
        m = ((1 << size) - 1) << off
        if name == "s_getreg_b32":
            wr = swriter(ops[0], "b32")
            return lambda wv: (wr(wv, (wv.mode & m) >> off), nxt)[1]
        src = reader(ops[1], "b32", vector_ok=False) if name == "s_setreg_b32" else \
            (lambda wv, c=np.array([int(base_of(ops[1]).value) & 0xFFFFFFFF], U32): c)

        def run(wv):
            v = int(src(wv)[0])
            new = (wv.mode & ~m) | ((v << off) & m)
            if (new & 0xF) != 0:
                raise EmuError(f"s_setreg to MODE selects a rounding mode other than "
                               f"round-to-nearest-even ({new & 0xF:#x}); not emulated")
            if (new & 0x3F0) != 0x3F0:
                # the semantics always preserve denormals with IEEE=1 and DX10_CLAMP=1
                raise EmuError(f"s_setreg to MODE selects denormal flushing, IEEE=0 or "
                               f"DX10_CLAMP=0 ({new & 0x3F0:#x}); not emulated")
            wv.mode = new
            return nxt
        return run
    if name == "s_set_gpr_idx_on":
        # M0[7:0] = index, M0[15:12] = enabled operands; VGPR indexing on (CDNA3 ISA guide,
        # "VGPR indexing"); the indexed VALU instructions are compiled in Program._compile
        src = sreader(ops[0], "u32")
        bits = _gpr_idx_bits(ops[1])

        def run(wv):
            m0 = wv.s.item(M0)
            wv.s[M0] = (m0 & 0xFFFF0F00) | (int(src(wv)) & 0xFF) | (bits << 12)
            wv.gpr_idx = True
            return nxt
        return run
    if name == "s_set_gpr_idx_off":
        def run(wv):
            wv.gpr_idx = None
            return nxt
        return run
    if name == "s_set_gpr_idx_mode":
        bits = _gpr_idx_bits(ops[0])

        def run(wv):
            wv.s[M0] = (wv.s.item(M0) & 0xFFFF0FFF) | (bits << 12)
            return nxt
        return run
    if name in ("s_memtime", "s_memrealtime"):
        # the clock: the instructions the wave has run before this one (``clock``: the run
        # loops bring ``wv.count`` up to date before they call it)
        wr = swriter(ops[0], "b64")

        def clock(wv):
            wr(wv, wv.count & 0xFFFFFFFFFFFFFFFF)
            return nxt
        clock.clock = True
        return clock
    if name == "s_trap":
        # the emulator has no trap handler: a trap ends the run with an error naming the
        # trap id (CDNA3 ISA guide, SOPP S_TRAP: enter the trap handler with TRAPID=SIMM16[7:0])
        tid = int(base_of(ops[0]).value) & 0xFF if ops else 0

        def run(wv):
            raise EmuError(f"s_trap {tid}: the wave entered the trap handler (wave {wv.index} of "
                           f"workgroup {wv.group.id}); the emulator has no trap handler")
        return run
    if name == "s_sendmsg":
        # compute waves on gfx942: messages (MSG_INTERRUPT, MSG_SYSMSG, MSG_DEALLOC_VGPRS...)
        # have no effect on the wave's registers or memory
        return lambda wv: nxt
    if name in ("s_setpc_b64", "s_swappc_b64"):
        # indirect jump to a byte address inside this kernel (CDNA3 ISA guide, SOP1 S_SETPC_B64,
        # S_SWAPPC_B64: SDST = address of the next instruction, PC = SSRC)
        addrs = ctx.addresses
        if any(a is None for a in addrs):
            raise CompileError(f"{name} needs instruction addresses")
        index = {a: k for k, a in enumerate(addrs)}
        src = sreader(ops[-1], "b64")
        wr = None
        if name == "s_swappc_b64":
            if nxt >= len(addrs):
                raise CompileError("s_swappc_b64 is the last instruction")
            wr = swriter(ops[0], "b64")
            ret = addrs[nxt]

        def run(wv):
            target = int(src(wv))
            k = index.get(target)
            if k is None:
                raise EmuError(f"{name}: target {target:#x} is not an instruction address of "
                               "this kernel")
            if wr is not None:
                wr(wv, ret)
            return k
        return run
    raise CompileError(f"{name} is not emulated")


