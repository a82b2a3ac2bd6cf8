"""Corpus tier (slow): every instruction of every AITer gfx942 code object has semantics.

Static check: each kernel is compiled by the emulator (:class:`asmevo.emu.executor.Program`);
an instruction without a registry entry, or in a form the emulator cannot run, compiles
to a closure that would raise when executed and is listed in ``Program.unsupported``.
The test reports every such instruction with its kernel and pc."""

import pytest

from asmevo.emu.executor import Program
from asmevo.emu.memory import GlobalMemory
from asmevo.frontend.loader import load
from asmevo.semantics.registry import lookup
from tests.conftest import CORPUS

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


def _aiter_objects():
    if CORPUS is None or not (CORPUS / "aiter").is_dir():
        return []
    return sorted((CORPUS / "aiter").rglob("*.co"))


@pytest.mark.parametrize("path", _aiter_objects(),
                         ids=[p.name for p in _aiter_objects()])
def test_aiter_every_instruction_has_semantics(corpus_dir, path):
    module = load(str(path))
    assert module.kernels, f"{path.name}: no kernels"
    missing = []
    ninst = 0
    for k in module.kernels:
        prog = Program(k, GlobalMemory())
        ninst += len(prog.insts)
        for i, inst in enumerate(prog.insts):
            if lookup(inst.opcode) is None:
                missing.append(f"{k.name} {prog.where(i)}: no registry entry: {inst.text()}")
        missing += [msg for _, msg in prog.unsupported]
    assert ninst > 0
    assert not missing, f"{path.name}: {len(missing)} instruction(s) without semantics:\n" + \
        "\n".join(sorted(set(missing))[:50])
