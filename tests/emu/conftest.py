"""Helpers to run hand-written instruction snippets on emulated waves."""

import numpy as np
import pytest

from asmevo.emu.executor import Program
from asmevo.emu.launch import _run_group
from asmevo.emu.memory import GlobalMemory, ScratchMemory
from asmevo.emu.state import Wave, Workgroup
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.ir.module import BasicBlock, Kernel


def build_kernel(lines, name="snippet"):
    """Kernel from text lines; ``LABEL:`` lines start blocks."""
    blocks = [BasicBlock()]
    for ln in lines:
        ln = ln.strip()
        if not ln:
            continue
        if ln.endswith(":"):
            blocks.append(BasicBlock(label=ln[:-1]))
        else:
            blocks[-1].instructions.append(parse_instruction(ln))
    return Kernel(name, blocks)


class Snippet:
    def __init__(self, lines, nwaves=1, lds=1024, scratch=0):
        self.mem = GlobalMemory()
        self.kernel = build_kernel(list(lines) + ["s_endpgm"])
        self.group = Workgroup((0, 0, 0), lds)
        self.waves = [Wave(self.group, i, ScratchMemory(scratch) if scratch else None)
                      for i in range(nwaves)]
        self.w = self.waves[0]
        for w in self.waves:
            w.set_exec(np.ones(64, bool))

    def run(self):
        prog = Program(self.kernel, self.mem)
        with np.errstate(all="ignore"):
            _run_group(prog, self.waves, 100000)
        return self


@pytest.fixture
def snippet():
    return Snippet


def run_group(lines, waves, mem=None, lockstep=True, limit=100000):
    """Run ``lines`` (then ``s_endpgm``) on ``waves`` as one group of waves with the lockstep
    executor on or off (``asmevo.emu.launch.LOCKSTEP``, restored after), float warnings
    silenced; the lockstep tests compare the two.  Returns ``waves``."""
    import numpy as np
    from asmevo.emu import launch as L
    from asmevo.emu.executor import Program
    from asmevo.emu.launch import _run_group
    from asmevo.emu.memory import GlobalMemory
    prog = Program(build_kernel(list(lines) + ["s_endpgm"]), mem if mem is not None else GlobalMemory())
    old = L.LOCKSTEP
    L.LOCKSTEP = lockstep
    try:
        with np.errstate(all="ignore"):
            _run_group(prog, waves, limit)
    finally:
        L.LOCKSTEP = old
    return waves
