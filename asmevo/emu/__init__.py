"""Wave64 functional emulator for gfx942 (``asmevo run``).

Public API:

* :func:`run_kernel` (``module, kernel_name, launch -> RunResult``): run one
  kernel of an asmevo Module (from :func:`asmevo.frontend.loader.load`);
* :class:`Launch`, :class:`Arg`, :class:`RunResult`, :class:`EmuError`;
* :mod:`asmevo.emu.harness`: ``load_harness(path, entry)``, ``make_inputs(harness, seed)``,
  ``make_launch(harness, inputs)``, ``reference(harness, inputs)``, ``compare(...)``.

Design (one module per concept):

* :mod:`.state` -- register files of a wave (VGPR/AGPR ``(n, 64)`` uint32
  arrays, SGPRs incl. VCC/EXEC/M0 at their GFX9 numbers, SCC, cached EXEC mask);
* :mod:`.memory` -- 64-bit global address space of named buffers (256-byte
  aligned, guard gaps, every access bounds-checked), LDS per workgroup, scratch
  per lane;
* :mod:`.lockstep` -- the waves of a lockstep set run as one group (W*64 lanes for
  VALU, VOPC, LDS, scratch and global memory; once for uniform SALU/branches/scalar
  loads; numpy over the waves for SALU bitwise/saveexec); waves that diverge run in
  groups by pc and re-merge where they meet;
* :mod:`.executor` -- each instruction compiled once per kernel into a closure;
  per-lane semantics come from the registry in :mod:`asmevo.semantics` (numpy
  backend for vector instructions; scalar ones traced once into generated Python by
  :mod:`.exec_sgen`, with the Python-int backend's meaning); memory,
  branches, lane moves, DPP/SDWA and MFMA are implemented by kind, one module per
  family (:mod:`.exec_common`, :mod:`.exec_valu`, :mod:`.exec_salu`, :mod:`.exec_lane`,
  :mod:`.exec_mem`, :mod:`.exec_mubuf`, :mod:`.exec_ds`, :mod:`.exec_mfma`,
  :mod:`.program`), re-exported by :mod:`.executor`;
* :mod:`.launch` -- AMDGPUUsage launch: kernarg segment (explicit + code object
  v5 hidden arguments), dispatch packet, initial SGPRs/VGPRs from the kernel
  descriptor, workgroups one after another, waves round-robin between barriers.

Limitations (documented, not silent): floating-point MODE other than
round-to-nearest-even stops the run; denormals are always preserved (the
kernels' MODE); transcendental results are correctly rounded rather than the
hardware's approximations (<= 1 ULP apart); MFMA sums in float64 and rounds
once; multi-block MFMA (cbsz/abid), function calls (s_swappc/s_setpc) and
traps are not emulated and stop the run with a message naming the instruction.
"""

from .launch import Arg, Launch, RunResult, run_kernel  # noqa: F401
from .memory import EmuError  # noqa: F401
