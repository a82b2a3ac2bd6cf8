"""A small launchable text kernel for behaviour tests of the emulator and verifier.

``run_text_kernel(body, inp)`` wraps ``body`` (gfx942 assembly) in the ABI clang -O0 gives
``__kernel void k(__global uint *out, __global const uint *in, int n)``, then runs it with
:func:`asmevo.emu.run_kernel` (the public entry point, so the test does not depend on how
the emulator is organised inside).  A prologue loads ``out`` -> s[4:5], ``in`` -> s[8:9],
``n`` -> s7 and sets v0 = work-item id x, v1 = 4 * v0.
"""

from __future__ import annotations

import textwrap

import numpy as np

PROLOGUE = """
s_load_dwordx2 s[4:5], s[2:3], 0x0
s_load_dwordx2 s[8:9], s[2:3], 0x8
s_load_dword s7, s[2:3], 0x10
s_waitcnt lgkmcnt(0)
v_and_b32_e32 v0, 0x3ff, v0
v_lshlrev_b32_e32 v1, 2, v0
"""

_HEAD = """\t.text
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
"""
_TAIL = """\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel k
\t\t.amdhsa_group_segment_fixed_size 0
\t\t.amdhsa_private_segment_fixed_size 0
\t\t.amdhsa_kernarg_size 20
\t\t.amdhsa_user_sgpr_count 6
\t\t.amdhsa_user_sgpr_dispatch_ptr 1
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_user_sgpr_dispatch_id 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_system_vgpr_workitem_id 0
\t\t.amdhsa_next_free_vgpr 32
\t\t.amdhsa_next_free_sgpr 32
\t\t.amdhsa_accum_offset 32
\t\t.amdhsa_reserve_vcc 1
\t\t.amdhsa_reserve_xnack_mask 1
\t.end_amdhsa_kernel
\t.text
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
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
    .private_segment_fixed_size: 0
    .sgpr_count:     32
    .sgpr_spill_count: 0
    .symbol:         k.kd
    .uses_dynamic_stack: false
    .vgpr_count:     32
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

\t.end_amdgpu_metadata
"""


def kernel_text(body: str, prologue: bool = True) -> str:
    """The whole assembly file for ``body`` (with the prologue unless told otherwise)."""
    src = (PROLOGUE if prologue else "") + textwrap.dedent(body)
    lines = []
    for line in src.strip().splitlines():
        line = line.strip()
        if line:
            lines.append(line + "\n" if line.endswith(":") else "\t" + line + "\n")
    return _HEAD + "".join(lines) + _TAIL


def load_text_kernel(body: str, prologue: bool = True):
    """The parsed module (descriptor and metadata filled as a code object would hold them)."""
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.frontend.loader import fill_text_abi
    m = parse_asm(kernel_text(body, prologue), "k.s")
    fill_text_abi(m)
    return m


def run_text_kernel(body: str, inp: np.ndarray, block: int = 64, n: int = 0,
                    out_words: int = 1024, out_init: int = 0, prologue: bool = True) -> np.ndarray:
    """Run ``body`` on one workgroup of ``block`` work items; the ``out`` buffer (uint32)."""
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    m = load_text_kernel(body, prologue)
    la = Launch((block, 1, 1), (1, 1, 1), [
        Arg("out", "buffer", "uint32", data=np.full(out_words, out_init, np.uint32), role="out"),
        Arg("in", "buffer", "uint32", data=np.ascontiguousarray(inp, np.uint32), role="in"),
        Arg("n", "scalar", "int32", value=n)])
    with np.errstate(all="ignore"):
        res = run_kernel(m, "k", la)
    return np.asarray(res.outputs["out"]).view(np.uint32).copy()
