"""Compile a kernel's instructions into Python closures and run waves.

Each instruction is translated once per kernel into a closure ``f(wave) -> next
index`` (``-1``: the wave reached ``s_barrier``; ``-2``: ``s_endpgm``).  Operand
decoding (register numbers, inline constants, modifiers, DPP lane maps) happens
at compile time; at run time a closure only moves numpy rows.  Per-lane value
semantics come from the registry (:mod:`asmevo.semantics`) evaluated with the
numpy backend; memory, branches and cross-lane instructions are implemented
here by ``kind``, one module per instruction family (as :mod:`asmevo.semantics`):

* :mod:`.exec_common` -- operand readers/writers, helpers, DPP/SDWA lane maps;
* :mod:`.exec_valu` -- VALU, VOPC, VOP3P, mix, swap, movrel (:mod:`.exec_fast`: hand-written
  closures for hot plain forms -- address arithmetic, f32 FMA, simple integer/float ops);
* :mod:`.exec_salu` -- SALU, SOPC, branches (:mod:`.exec_sgen`: their semantics traced once
  per instruction shape into generated Python);
* :mod:`.exec_lane` -- cross-lane moves, s_set_gpr_idx indexing, system instructions;
* :mod:`.exec_mem` -- SMEM, FLAT/GLOBAL/SCRATCH loads, stores, atomics;
* :mod:`.exec_mubuf` -- MUBUF/MTBUF buffer instructions;
* :mod:`.exec_ds` -- LDS (DS) instructions;
* :mod:`.exec_mfma` -- MFMA/SMFMAC;
* :mod:`.program` -- :class:`Program` (the compiler table, the one-wave run loop).

This module re-exports their names (``from asmevo.emu.executor import Program, ...``).

An instruction without semantics (or with an unsupported form) compiles to a
closure that raises :class:`EmuError` when it is executed, naming it: nothing
is skipped silently.
"""

from __future__ import annotations

from .exec_common import (BARRIER, CompileError, Context, ENDPGM, LANE_COUNT, U16, U32, U64, U8,
    _DPP_MODS, _DT, _SEL, _SIGN, _b64, _clamp_omod, _const_reader, _mask_of, _no_dpp,
    _raw_reader, _regs_of, _s_imm_fix, _sgpr_index, _special_const, _wscc, dpp_map, lm_writer,
    reader, sreader, swriter, vwriter)  # noqa: F401
from .exec_valu import (_fmods, _sdwa_reader, _sdwa_writer, compile_mix, compile_movrel,
    compile_swap, compile_valu, compile_vop3p, compile_vopc)  # noqa: F401
from .exec_salu import (compile_branch, compile_salu, compile_sopc)  # noqa: F401
from .exec_lane import (_GPR_IDX, _gpr_idx_bits, _indexed, compile_lane, compile_sys)  # noqa: F401
from .exec_mem import (_ALL_LANES, _DWS, _active, _atomic_apply, _ext, _flat, _load_into,
    _load_words, _store_data, _store_words, _to_dwords, compile_smem, compile_vmem,
    compile_vmem_atomic)  # noqa: F401
from .exec_mubuf import (_BUF_DFMT, _BUF_NFMT, _DFMT_NAMES, _NFMT_NAMES, _buf_format,
    _fmt_decode, _fmt_encode, _mtbuf_word3, compile_mubuf)  # noqa: F401
from .exec_ds import (UFUNC_AT, compile_ds)  # noqa: F401
from .exec_mfma import (_ESIZE, _blgp_src, _compile_smfmac, _unpack_elems, compile_mfma,
    mfma_maps, smfmac_maps)  # noqa: F401
from .program import (COMPILERS, Program, _failing, _simple)  # noqa: F401
from .memory import EmuError, MemoryFault  # noqa: F401
