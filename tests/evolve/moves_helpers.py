"""Small kernels for the move tests: examples/vadd_f32's ABI (a, b, c pointers, n) with a body
of the test's choosing, assembled with llvm-mc; a harness of one 64-lane work-group over int32
buffers; and the gate (build, verifier at level ``all``, timing) on a move's output."""

from __future__ import annotations

import json
import random
import re

from evolve_helpers import EXAMPLES

KERNEL = "vadd_f32"


def kernel_text(body: str, vgprs: int = 16, sgprs: int = 16, lds: int = 0) -> str:
    s = (EXAMPLES / "vadd_f32.s").read_text()
    start = s.index("vadd_f32:")
    end = s.index("\t.section\t.rodata")
    s = s[:start] + "vadd_f32:\n" + body.strip("\n") + "\n" + s[end:]
    for old, new in ((".amdhsa_next_free_vgpr 8", f".amdhsa_next_free_vgpr {vgprs}"),
                     (".amdhsa_accum_offset 8", f".amdhsa_accum_offset {vgprs}"),
                     (".amdhsa_next_free_sgpr 8", f".amdhsa_next_free_sgpr {sgprs}"),
                     (".vgpr_count:     8", f".vgpr_count:     {vgprs}"),
                     (".sgpr_count:     14", f".sgpr_count:     {sgprs + 6}"),
                     (".amdhsa_group_segment_fixed_size 0", f".amdhsa_group_segment_fixed_size {lds}"),
                     (".group_segment_fixed_size: 0", f".group_segment_fixed_size: {lds}")):
        assert old in s, old
        s = s.replace(old, new)
    s = re.sub(r"(\.reqd_workgroup_size:\n\s+- )256", r"\g<1>64", s)
    return s


HARNESS = {
    "name": "moves", "kernel": KERNEL, "block": [64, 1, 1], "grid": [1, 1, 1],
    "args": [
        {"name": "a", "kind": "buffer", "dtype": "int32", "count": 256,
         "init": "randint(-100000,100000)", "role": "in"},
        {"name": "b", "kind": "buffer", "dtype": "int32", "count": 256,
         "init": "randint(-100000,100000)", "role": "in"},
        {"name": "c", "kind": "buffer", "dtype": "int32", "count": 256, "init": "zeros",
         "role": "out"},
        {"name": "n", "kind": "scalar", "dtype": "int32", "value": 64, "role": "in"},
    ],
    "rtol": 0.0, "atol": 0.0,
}


def swap_lines(body: str, a: str, b: str) -> str:
    """``body`` with the instruction texts ``a`` and ``b`` exchanged (each must occur)."""
    assert a in body and b in body, (a, b)
    return body.replace(a, "\0").replace(b, a).replace("\0", b)


def build(tmp_path, name: str, body: str, **kw):
    """``(code object path, harness path, loaded module)`` of a kernel with ``body``."""
    from asmevo.backend.assemble import assemble
    from asmevo.frontend.loader import load
    co = tmp_path / f"{name}.co"
    assemble(kernel_text(body, **kw), str(co))
    h = tmp_path / f"{name}.json"
    h.write_text(json.dumps(HARNESS))
    return co, h, load(str(co))


def env_of(module, vgpr_renames: bool = True):
    """The moves' environment; VGPR renames on (the evolve operator's default is off, see
    :class:`asmevo.evolve.mutations_rename.MoveEnv`), so that their legality is tested."""
    from asmevo.evolve.mutations_rename import MoveEnv
    return MoveEnv(module, KERNEL, vgpr_renames=vgpr_renames)


def blocks_of(module):
    return module.kernel(KERNEL).blocks


def all_indices(module) -> set:
    return set(range(sum(len(b.instructions) for b in blocks_of(module))))


def run_move(module, name: str, seeds=range(40), want=None, vgpr_renames: bool = True):
    """The first output of move ``name`` (over the seeds) for which ``want(desc)`` holds."""
    from asmevo.evolve.mutations import call_move
    env = env_of(module, vgpr_renames)
    for s in seeds:
        out = call_move(name, blocks_of(module), all_indices(module), random.Random(s), env)
        if out is not None and (want is None or want(out[1])):
            return out
    return None


def text(blocks) -> list[str]:
    return [x.text() for b in blocks for x in b.instructions]


def static_ok(module, blocks) -> bool:
    """No static violation the parent does not have (the operator's filter)."""
    from asmevo.evolve.operators import ProposeContext, _violations
    ctx = ProposeContext(module, KERNEL)
    return set(_violations(ctx, blocks)) <= set(_violations(ctx, blocks_of(module)))


def gate(co, harness, blocks, seed: int = 1) -> dict:
    """The evolve gate's result for ``blocks`` (build, verify at level ``all``, timing)."""
    from asmevo.evolve.candidate import content_hash, graft
    from asmevo.evolve.gate import GateContext
    from asmevo.frontend.loader import load
    k0 = load(str(co))
    g = GateContext({"k0": str(co), "harness": str(harness), "kernel": KERNEL, "trials": 3})
    try:
        h = content_hash(graft(k0, KERNEL, blocks).kernel(KERNEL))
        return g.evaluate({"hash": h, "blocks": blocks, "seed": seed})
    finally:
        g.close()
