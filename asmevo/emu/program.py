"""A kernel compiled to closures (:class:`Program`): the compiler table by instruction kind
and the one-wave run loop.
"""

from __future__ import annotations

from ..semantics.registry import lookup
from .memory import EmuError, MemoryFault
from .exec_common import BARRIER, CompileError, Context, ENDPGM
from .exec_valu import (compile_mix, compile_movrel, compile_swap, compile_valu, compile_vop3p,
    compile_vopc)
from .exec_salu import compile_branch, compile_salu, compile_sopc
from .exec_lane import _indexed, compile_lane, compile_sys
from .exec_mem import compile_smem, compile_vmem, compile_vmem_atomic
from .exec_mubuf import compile_mubuf
from .exec_ds import compile_ds
from .exec_mfma import compile_mfma

# ----------------------------------------------------------------------------- compile
def _simple(kind):
    def comp(inst, spec, ctx, nxt):
        if kind == "nop":
            if inst.opcode == "s_sethalt" and _halts(inst):
                def halt(wv):  # the wave stops issuing: it never reaches s_endpgm
                    raise EmuError(f"{inst.text()} halts the wave; it never reaches s_endpgm "
                                   "(the dispatch hangs on hardware)")
                return halt
            return lambda wv: nxt
        if kind == "barrier":
            def run(wv):
                wv.pc = nxt
                return BARRIER
            return run
        if kind == "endpgm":
            def run(wv):
                wv.done = True
                return ENDPGM
            return run
        raise CompileError(kind)
    return comp


def _halts(inst) -> bool:
    """``s_sethalt`` with SIMM16[0] set (CDNA3 ISA guide: 1 = halt), or an operand that is
    not a plain constant."""
    from ..ir.operands import Imm, base_of
    b = base_of(inst.operands[0]) if inst.operands else None
    return not isinstance(b, Imm) or bool(int(b.value) & 1)


COMPILERS = {
    "valu": compile_valu, "vopc": compile_vopc, "vop3p": compile_vop3p, "salu": compile_salu,
    "sopc": compile_sopc, "branch": compile_branch, "lane": compile_lane, "sys": compile_sys,
    "smem": compile_smem, "vmem": compile_vmem, "vmem_atomic": compile_vmem_atomic,
    "mubuf": compile_mubuf, "mubuf_atomic": compile_mubuf, "ds": compile_ds, "mfma": compile_mfma,
    "mix": compile_mix, "movrel": compile_movrel, "swap": compile_swap,
    "nop": _simple("nop"), "barrier": _simple("barrier"), "endpgm": _simple("endpgm"),
}


def _failing(msg):
    def run(wv):
        raise EmuError(msg)
    run.unsupported = msg
    return run


class Program:
    """A kernel compiled to closures: ``code[i]`` runs ``insts[i]``."""

    def __init__(self, kernel, mem):
        self.kernel = kernel
        self.insts = list(kernel.instructions())
        labels = {}
        idx = 0
        for b in kernel.blocks:
            if b.label:
                labels[b.label] = idx
            idx += len(b.instructions)
        # also allow branches to the end (label after the last instruction)
        addresses = [i.address for i in self.insts]
        self.ctx = Context(mem, labels, addresses)
        self.code = []
        #: ``(index, message)`` of every instruction compiled to a closure that raises
        #: EmuError when executed (no semantics, or an unsupported form)
        self.unsupported = []
        self._gpr_idx = False
        self._indexed = set()       # instructions compiled under s_set_gpr_idx_on
        self._lockstep = None
        self._rows = None
        for n, inst in enumerate(self.insts):
            f = self._compile(inst, n + 1)
            if getattr(f, "unsupported", None):
                self.unsupported.append((n, f.unsupported))
            self.code.append(f)
        self.code.append(_failing(f"kernel {kernel.name}: execution ran past the last instruction "
                                  "without s_endpgm"))
        #: pcs of instructions that read the wave's instruction count (s_memtime): a run loop
        #: adds what it has counted to ``wv.count`` before it calls them; None when none does
        self.clock = frozenset(i for i, f in enumerate(self.code)
                               if getattr(f, "clock", False)) or None

    def _compile(self, inst, nxt):
        spec = lookup(inst.opcode)
        where = f"kernel {self.kernel.name}, {self.where(nxt - 1)}: "
        if spec is None:
            return _failing(where + f"instruction '{inst.text()}' has no semantics in the emulator")
        comp = COMPILERS.get(spec.kind)
        if comp is None:
            return _failing(where + f"instruction '{inst.text()}' (kind {spec.kind}) is not emulated")
        if spec.name == "s_set_gpr_idx_on":
            self._gpr_idx = True
        elif spec.name == "s_set_gpr_idx_off":
            self._gpr_idx = False
        try:
            if self._gpr_idx and spec.kind in ("valu", "vopc", "vop3p", "lane"):
                self._indexed.add(nxt - 1)
                return _indexed(inst, spec, self.ctx, nxt, comp)
            return comp(inst, spec, self.ctx, nxt)
        except CompileError as e:
            return _failing(where + f"instruction '{inst.text()}' cannot be emulated: {e}")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            return _failing(where + f"instruction '{inst.text()}' cannot be emulated: "
                            f"{type(e).__name__}: {e}")

    def lockstep_modes(self) -> list:
        """Per instruction, how :mod:`asmevo.emu.lockstep` may run it for several waves at
        once (``lockstep.classify``, or None) and the SGPRs/SCC it writes
        (``lockstep.sgpr_writes``, or None when unknown); computed once."""
        if self._lockstep is None:
            from .lockstep import classify, sgpr_writes
            bad = {i for i, _ in self.unsupported} | self._indexed
            self._lockstep = ([None if i in bad else classify(inst, self.code[i])
                               for i, inst in enumerate(self.insts)] + [None],
                              [sgpr_writes(inst) for inst in self.insts] + [None])
        return self._lockstep

    def register_rows(self) -> tuple:
        """(VGPR rows, AGPR rows) a wave of this program can touch: one past the highest
        register of any operand (all 512 / 256 when registers are addressed indirectly:
        s_set_gpr_idx, v_movrel)."""
        if self._rows is None:
            nv = na = 1
            full = bool(self._indexed)
            for inst in self.insts:
                if "movrel" in inst.opcode or inst.opcode.startswith("s_set_gpr_idx"):
                    full = True
                for op in inst.operands:
                    b = getattr(op, "base", op)
                    f = getattr(b, "file", None)
                    if f == "v":
                        nv = max(nv, b.index + b.count)
                    elif f == "a":
                        na = max(na, b.index + b.count)
            # (+8: a malformed operand narrower than its instruction still stays in range)
            self._rows = (512, 256) if full else (min(512, nv + 8), min(256, na + 8))
        return self._rows

    def where(self, i: int) -> str:
        """``pc 0x1c (#7)`` for instruction index ``i``."""
        if 0 <= i < len(self.insts):
            a = self.insts[i].address
            line = self.insts[i].line
            s = f"pc {a:#x}" if a is not None else (f"line {line}" if line else "")
            return f"{s} (instruction #{i})".strip()
        return f"instruction #{i}"

    def runaway(self, limit: int, pc: int) -> EmuError:
        """The error of a wave that ran more than ``limit`` instructions (stopped at ``pc``)."""
        return EmuError(f"kernel {self.kernel.name}: more than {limit} instructions in one wave "
                        f"(runaway loop?) at {self.where(pc)}")

    def fault(self, pc: int, e) -> EmuError:
        """The error of a memory fault ``e`` of the instruction at ``pc``, naming the lane."""
        return EmuError(f"kernel {self.kernel.name}, {self.where(pc)}, "
                        f"'{self.insts[pc].text()}': lane {e.lane}: {e}")

    def run_wave(self, wv, limit: int) -> int:
        """Run ``wv`` until s_barrier / s_endpgm; returns BARRIER or ENDPGM."""
        code = self.code
        clock = self.clock
        pc = wv.pc
        n = 0
        done = 0    # of n, already added to wv.count (before an s_memtime)
        ln = 0      # lanes: popcount(EXEC) at each issue
        try:
            while pc >= 0:
                pc_cur = pc
                ln += wv.exec_n
                if clock is not None and pc in clock:
                    wv.count += n - done
                    done = n
                pc = code[pc](wv)
                n += 1
                if n > limit:
                    raise self.runaway(limit, pc_cur)
        except MemoryFault as e:
            raise self.fault(pc_cur, e) from None
        finally:
            wv.count += n - done
            wv.lanes += ln
        if pc == ENDPGM:
            wv.done = True
        return pc
