"""The 64-byte AMDHSA kernel descriptor, decoded field by field.

Layout and bit fields follow LLVM AMDGPUUsage, "Kernel Descriptor" (code
object v4/v5/v6) and ``llvm/Support/AMDHSAKernelDescriptor.h``:

========  =====  ===================================================
offset    bytes  field
========  =====  ===================================================
0         4      group_segment_fixed_size (LDS bytes)
4         4      private_segment_fixed_size (scratch bytes per work item)
8         4      kernarg_size (bytes)
12        4      reserved0
16        8      kernel_code_entry_byte_offset (signed, code - descriptor)
24        20     reserved1
44        4      compute_pgm_rsrc3 (gfx90a/gfx942: ACCUM_OFFSET, TG_SPLIT)
48        4      compute_pgm_rsrc1
52        4      compute_pgm_rsrc2
56        2      kernel_code_properties
58        2      kernarg_preload (LENGTH bits 0-6, OFFSET bits 7-15, in dwords)
60        4      reserved3
========  =====  ===================================================

Every bit of the 64 bytes belongs to exactly one attribute (reserved bits
included), so :meth:`KernelDescriptor.from_bytes` / :meth:`to_bytes` round-trip
any descriptor exactly, and every field can be edited on its own.
"""

from __future__ import annotations

import struct
from typing import Iterator

from ..errors import CodeObjectError

SIZE = 64

# (attribute, byte offset of the containing word, word size in bytes, lsb, width, signed)
# Bit positions: AMDHSAKernelDescriptor.h (LLVM 19), GFX9 (gfx90a/gfx942) meanings.
_LAYOUT: list[tuple[str, int, int, int, int]] = [
    ("group_segment_fixed_size", 0, 4, 0, 32),
    ("private_segment_fixed_size", 4, 4, 0, 32),
    ("kernarg_size", 8, 4, 0, 32),
    ("reserved0", 12, 4, 0, 32),
    ("kernel_code_entry_byte_offset", 16, 8, 0, 64),
    # reserved1: 20 bytes at 24, kept as bytes (see _RESERVED1)
    # compute_pgm_rsrc3 (GFX90A layout, also gfx940/941/942)
    ("accum_offset", 44, 4, 0, 6),
    ("rsrc3_reserved0", 44, 4, 6, 10),
    ("tg_split", 44, 4, 16, 1),
    ("rsrc3_reserved1", 44, 4, 17, 15),
    # compute_pgm_rsrc1
    ("granulated_workitem_vgpr_count", 48, 4, 0, 6),
    ("granulated_wavefront_sgpr_count", 48, 4, 6, 4),
    ("priority", 48, 4, 10, 2),
    ("float_round_mode_32", 48, 4, 12, 2),
    ("float_round_mode_16_64", 48, 4, 14, 2),
    ("float_denorm_mode_32", 48, 4, 16, 2),
    ("float_denorm_mode_16_64", 48, 4, 18, 2),
    ("priv", 48, 4, 20, 1),
    ("enable_dx10_clamp", 48, 4, 21, 1),
    ("debug_mode", 48, 4, 22, 1),
    ("enable_ieee_mode", 48, 4, 23, 1),
    ("bulky", 48, 4, 24, 1),
    ("cdbg_user", 48, 4, 25, 1),
    ("fp16_ovfl", 48, 4, 26, 1),
    ("rsrc1_reserved1", 48, 4, 27, 2),
    ("wgp_mode", 48, 4, 29, 1),        # GFX10+; reserved on gfx942
    ("mem_ordered", 48, 4, 30, 1),     # GFX10+; reserved on gfx942
    ("fwd_progress", 48, 4, 31, 1),    # GFX10+; reserved on gfx942
    # compute_pgm_rsrc2
    ("enable_private_segment", 52, 4, 0, 1),
    ("user_sgpr_count", 52, 4, 1, 5),
    ("enable_trap_handler", 52, 4, 6, 1),
    ("enable_sgpr_workgroup_id_x", 52, 4, 7, 1),
    ("enable_sgpr_workgroup_id_y", 52, 4, 8, 1),
    ("enable_sgpr_workgroup_id_z", 52, 4, 9, 1),
    ("enable_sgpr_workgroup_info", 52, 4, 10, 1),
    ("enable_vgpr_workitem_id", 52, 4, 11, 2),
    ("enable_exception_address_watch", 52, 4, 13, 1),
    ("enable_exception_memory", 52, 4, 14, 1),
    ("granulated_lds_size", 52, 4, 15, 9),
    ("enable_exception_ieee_754_fp_invalid_operation", 52, 4, 24, 1),
    ("enable_exception_fp_denormal_source", 52, 4, 25, 1),
    ("enable_exception_ieee_754_fp_division_by_zero", 52, 4, 26, 1),
    ("enable_exception_ieee_754_fp_overflow", 52, 4, 27, 1),
    ("enable_exception_ieee_754_fp_underflow", 52, 4, 28, 1),
    ("enable_exception_ieee_754_fp_inexact", 52, 4, 29, 1),
    ("enable_exception_int_divide_by_zero", 52, 4, 30, 1),
    ("rsrc2_reserved0", 52, 4, 31, 1),
    # kernel_code_properties (u16)
    ("enable_sgpr_private_segment_buffer", 56, 2, 0, 1),
    ("enable_sgpr_dispatch_ptr", 56, 2, 1, 1),
    ("enable_sgpr_queue_ptr", 56, 2, 2, 1),
    ("enable_sgpr_kernarg_segment_ptr", 56, 2, 3, 1),
    ("enable_sgpr_dispatch_id", 56, 2, 4, 1),
    ("enable_sgpr_flat_scratch_init", 56, 2, 5, 1),
    ("enable_sgpr_private_segment_size", 56, 2, 6, 1),
    ("kcp_reserved0", 56, 2, 7, 3),
    ("enable_wavefront_size32", 56, 2, 10, 1),
    ("uses_dynamic_stack", 56, 2, 11, 1),
    ("kcp_reserved1", 56, 2, 12, 4),
    # kernarg_preload (u16)
    ("kernarg_preload_spec_length", 58, 2, 0, 7),
    ("kernarg_preload_spec_offset", 58, 2, 7, 9),
    ("reserved3", 60, 4, 0, 32),
]

_RESERVED1 = (24, 20)  # offset, size: kept as raw bytes
_WORD_FMT = {2: "<H", 4: "<I", 8: "<Q"}

#: Field names in layout order (plus ``reserved1``, a 20-byte ``bytes`` value).
FIELD_NAMES: tuple[str, ...] = tuple(n for n, *_ in _LAYOUT) + ("reserved1",)

# Fields without an ``.amdhsa_*`` directive in LLVM 19 for gfx942: when nonzero the
# descriptor cannot be written as an ``.amdhsa_kernel`` block.
_NO_DIRECTIVE = (
    "reserved0", "reserved3", "rsrc3_reserved0", "rsrc3_reserved1", "priority", "priv",
    "debug_mode", "bulky", "cdbg_user", "rsrc1_reserved1", "wgp_mode", "mem_ordered",
    "fwd_progress", "enable_trap_handler", "enable_exception_address_watch",
    "enable_exception_memory", "granulated_lds_size", "rsrc2_reserved0",
    "enable_sgpr_private_segment_buffer", "enable_sgpr_flat_scratch_init",
    "kcp_reserved0", "enable_wavefront_size32", "kcp_reserved1",
)

#: VGPR allocation granule on gfx90a/gfx942 (unified VGPR+AGPR file): 8 registers
#: (AMDGPUUsage, compute_pgm_rsrc1 GRANULATED_WORKITEM_VGPR_COUNT, "GFX90A, GFX942: ... granules of 8").
VGPR_GRANULE = 8
#: SGPR encoding granule: 8.  LLVM 19 (AMDGPUBaseInfo.cpp getSGPREncodingGranule / getNumSGPRBlocks)
#: writes GRANULATED_WAVEFRONT_SGPR_COUNT = ceil(max(1, n) / 8) - 1 with n including the extra
#: SGPRs; the clang corpus confirms it (next_free_sgpr 11 + 6 = 17 SGPRs -> SGPRBlocks 2, which a
#: 16-granule "2*ceil(n/16)-1" reading of AMDGPUUsage would make 3).
SGPR_GRANULE = 8
#: SGPRs that llvm-mc adds to ``.amdhsa_next_free_sgpr`` on gfx942 before granulating: VCC (2) and
#: XNACK mask (2) and FLAT_SCRATCH (2), the latter always counted because gfx942 has architected
#: flat scratch (AMDGPUBaseInfo.cpp getNumExtraSGPRs).
GFX942_EXTRA_SGPRS = 6
#: Addressable SGPRs on GFX9 (``.amdhsa_next_free_sgpr`` must not exceed it).
MAX_SGPRS = 102


class DirectiveValueError(ValueError):
    """An ``.amdhsa_*`` value is not a plain integer (an expression or a symbol), so the
    descriptor cannot be computed without llvm-mc."""


class KernelDescriptor:
    """A decoded kernel descriptor; one attribute per bit field (see :data:`FIELD_NAMES`).

    Values are plain ints (``reserved1`` is 20 bytes).  Units: the ``*_size``
    fields are bytes; ``kernel_code_entry_byte_offset`` is a signed byte
    distance from the descriptor to the kernel's first instruction; granulated
    counts are in allocation blocks minus one; ``accum_offset`` is the raw
    ACCUM_OFFSET field (first AGPR-usable VGPR index / 4 - 1).
    """

    __slots__ = FIELD_NAMES

    def __init__(self, **fields):
        for n in FIELD_NAMES:
            setattr(self, n, b"\0" * _RESERVED1[1] if n == "reserved1" else 0)
        for k, v in fields.items():
            if k not in FIELD_NAMES:
                raise TypeError(f"unknown kernel descriptor field {k!r}")
            setattr(self, k, v)

    # -- bytes ----------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes, *, file: str | None = None,
                   offset: int | None = None) -> "KernelDescriptor":
        """Decode 64 descriptor bytes.

        Raises:
            CodeObjectError: ``data`` is not exactly 64 bytes (``file``/``offset``
                locate it in the code object for the message).
        """
        if len(data) != SIZE:
            raise CodeObjectError(f"expected a {SIZE}-byte kernel descriptor, got {len(data)} bytes",
                                  file=file, offset=offset)
        kd = cls()
        for name, off, size, lsb, width in _LAYOUT:
            (word,) = struct.unpack_from(_WORD_FMT[size], data, off)
            val = (word >> lsb) & ((1 << width) - 1)
            if name == "kernel_code_entry_byte_offset" and val >= 1 << 63:
                val -= 1 << 64
            setattr(kd, name, val)
        kd.reserved1 = bytes(data[_RESERVED1[0]:_RESERVED1[0] + _RESERVED1[1]])
        return kd

    def to_bytes(self) -> bytes:
        """Encode to 64 bytes.

        Raises:
            ValueError: a field does not fit its bit width.
        """
        out = bytearray(SIZE)
        for name, off, size, lsb, width in _LAYOUT:
            val = getattr(self, name)
            if name == "kernel_code_entry_byte_offset":
                if not -(1 << 63) <= val < (1 << 64):
                    raise ValueError(f"{name} = {val} does not fit 64 bits")
                val &= (1 << 64) - 1
            elif not 0 <= val < (1 << width):
                raise ValueError(f"kernel descriptor field {name} = {val} does not fit {width} bits")
            (word,) = struct.unpack_from(_WORD_FMT[size], out, off)
            struct.pack_into(_WORD_FMT[size], out, off, word | (val << lsb))
        r = bytes(self.reserved1)
        if len(r) != _RESERVED1[1]:
            raise ValueError(f"reserved1 must be {_RESERVED1[1]} bytes")
        out[_RESERVED1[0]:_RESERVED1[0] + _RESERVED1[1]] = r
        return bytes(out)

    # -- comparison -----------------------------------------------------
    def fields(self) -> Iterator[tuple[str, object]]:
        """``(name, value)`` for every field in layout order."""
        for n in FIELD_NAMES:
            yield n, getattr(self, n)

    def as_dict(self) -> dict:
        """All fields as a dict."""
        return dict(self.fields())

    def diff(self, other: "KernelDescriptor") -> list[tuple[str, object, object]]:
        """Fields that differ: ``[(name, self_value, other_value)]``."""
        return [(n, getattr(self, n), getattr(other, n)) for n in FIELD_NAMES
                if getattr(self, n) != getattr(other, n)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelDescriptor) and not self.diff(other)

    def copy(self) -> "KernelDescriptor":
        """An independent copy."""
        return KernelDescriptor(**self.as_dict())

    def __repr__(self) -> str:
        nz = ", ".join(f"{n}={v}" for n, v in self.fields() if v and n != "reserved1")
        return f"KernelDescriptor({nz})"

    # -- derived counts ---------------------------------------------------
    @property
    def vgpr_count(self) -> int:
        """VGPRs+AGPRs allocated per work item: (GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8.

        gfx90a/gfx942 have a unified 512-entry file allocated in granules of 8
        (AMDGPUUsage, compute_pgm_rsrc1 table).
        """
        return (self.granulated_workitem_vgpr_count + 1) * VGPR_GRANULE

    @property
    def sgpr_count(self) -> int:
        """SGPRs allocated per wave: (GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 8
        (LLVM getSGPREncodingGranule() = 8; includes VCC/XNACK/FLAT_SCRATCH)."""
        return (self.granulated_wavefront_sgpr_count + 1) * SGPR_GRANULE

    @property
    def accum_offset_vgprs(self) -> int:
        """First VGPR index that holds AGPRs in the unified file: (ACCUM_OFFSET + 1) * 4
        (AMDGPUUsage compute_pgm_rsrc3 GFX90A)."""
        return (self.accum_offset + 1) * 4

    @property
    def group_segment_granules(self) -> int:
        """Alias of ``granulated_lds_size`` (set by the CP, normally 0 in the descriptor)."""
        return self.granulated_lds_size

    @staticmethod
    def granulate_vgprs(num_vgprs: int) -> int:
        """GRANULATED_WORKITEM_VGPR_COUNT for ``num_vgprs`` (VGPRs + AGPRs, unified file)."""
        n = max(1, num_vgprs)
        return (n + VGPR_GRANULE - 1) // VGPR_GRANULE - 1

    @staticmethod
    def granulate_sgprs(num_sgprs: int) -> int:
        """GRANULATED_WAVEFRONT_SGPR_COUNT for ``num_sgprs`` (already including extra SGPRs)."""
        n = max(1, num_sgprs)
        return (n + SGPR_GRANULE - 1) // SGPR_GRANULE - 1

    def set_register_counts(self, *, num_vgprs: int | None = None, num_sgprs: int | None = None,
                            accum_offset_vgprs: int | None = None) -> None:
        """Recompute the granulated counts.

        ``num_vgprs`` is the total of the unified file (ArchVGPRs rounded up to
        4 plus AGPRs); ``num_sgprs`` the SGPRs used *including* the 6 extra ones
        (:data:`GFX942_EXTRA_SGPRS`) and user SGPRs (see PITFALLS BR-24);
        ``accum_offset_vgprs`` a multiple of 4 in [4, 256].
        """
        if num_vgprs is not None:
            self.granulated_workitem_vgpr_count = self.granulate_vgprs(num_vgprs)
        if num_sgprs is not None:
            self.granulated_wavefront_sgpr_count = self.granulate_sgprs(num_sgprs)
        if accum_offset_vgprs is not None:
            if accum_offset_vgprs % 4 or not 4 <= accum_offset_vgprs <= 256:
                raise ValueError(f"accum_offset {accum_offset_vgprs} must be a multiple of 4 in [4, 256]")
            self.accum_offset = accum_offset_vgprs // 4 - 1

    @property
    def implied_user_sgprs(self) -> int:
        """User SGPRs implied by the enable bits plus preloaded kernarg SGPRs
        (AMDGPUUsage "Initial Kernel Execution State")."""
        n = (4 * self.enable_sgpr_private_segment_buffer + 2 * self.enable_sgpr_dispatch_ptr
             + 2 * self.enable_sgpr_queue_ptr + 2 * self.enable_sgpr_kernarg_segment_ptr
             + 2 * self.enable_sgpr_dispatch_id + 2 * self.enable_sgpr_flat_scratch_init
             + self.enable_sgpr_private_segment_size)
        return n + self.kernarg_preload_spec_length

    # -- directives -------------------------------------------------------
    @classmethod
    def from_directives(cls, fields: dict[str, str], target: str | None = None) -> "KernelDescriptor":
        """The descriptor llvm-mc 19 builds for an ``.amdhsa_kernel`` block on gfx942
        (``fields``: directive -> value text, as in :class:`asmevo.ir.AmdhsaKernel`).

        Defaults per AMDGPUUsage "AMDHSA Kernel Assembler Directives": IEEE mode
        and DX10 clamp on, FLOAT_DENORM_MODE_16_64 = 3, workgroup id X enabled,
        USER_SGPR_COUNT = the implied user SGPRs.  Granulated counts come from
        ``.amdhsa_next_free_vgpr`` and ``.amdhsa_next_free_sgpr`` + 6 extra SGPRs
        (see :data:`GFX942_EXTRA_SGPRS`).  ``kernel_code_entry_byte_offset`` is left 0
        (the linker resolves it).

        ``target`` (the ``.amdgcn_target`` id, e.g. ``amdgcn-amd-amdhsa--gfx942:xnack-``)
        enables llvm-mc's check of ``.amdhsa_reserve_xnack_mask`` against the target id's
        xnack setting (AMDGPUAsmParser.cpp ParseDirectiveAMDHSAKernel: the value must be
        1 for ``xnack+`` or unspecified xnack, 0 for ``xnack-``; PITFALLS BR-28).

        Raises:
            DirectiveValueError: a value is not an integer (expressions are not evaluated).
            ValueError: a required directive (next_free_vgpr/sgpr, accum_offset) is missing,
                a value does not fit its field, ``.amdhsa_user_sgpr_count`` is below the
                implied user SGPRs, or ``.amdhsa_reserve_xnack_mask`` does not match ``target``
                (the errors llvm-mc reports).
        """
        def val(key: str, default: int | None = None) -> int:
            if key not in fields:
                if default is None:
                    raise ValueError(f"{key} is required")
                return default
            text = str(fields[key]).strip()
            try:
                return int(text, 0)
            except ValueError:
                pass
            if text.isdigit():  # "010": llvm-mc reads a leading 0 as octal; Python's int(.., 0) refuses
                return int(text, 8)
            raise DirectiveValueError(f"{key} {fields[key]!r} is not an integer") from None
        if target is not None and ".amdhsa_reserve_xnack_mask" in fields:
            from .codeobject import parse_target_id
            xnack = parse_target_id(target)[1].get("xnack")
            if val(".amdhsa_reserve_xnack_mask") != (0 if xnack == "off" else 1):
                raise ValueError(f".amdhsa_reserve_xnack_mask {fields['.amdhsa_reserve_xnack_mask']} "
                                 f"does not match target id {target!r} (xnack {xnack or 'any'})")
        kd = cls(enable_ieee_mode=1, enable_dx10_clamp=1, float_denorm_mode_16_64=3,
                 enable_sgpr_workgroup_id_x=1)
        for key, attr in DIRECTIVE_FIELDS.items():
            if key in fields and attr != "user_sgpr_count":
                setattr(kd, attr, val(key))
        kd.user_sgpr_count = val(".amdhsa_user_sgpr_count", kd.implied_user_sgprs)
        if kd.user_sgpr_count < kd.implied_user_sgprs:
            raise ValueError(f".amdhsa_user_sgpr_count {kd.user_sgpr_count} is smaller than the "
                             f"{kd.implied_user_sgprs} user SGPRs the enabled fields imply")
        kd.set_register_counts(num_vgprs=val(".amdhsa_next_free_vgpr"),
                               num_sgprs=val(".amdhsa_next_free_sgpr") + GFX942_EXTRA_SGPRS,
                               accum_offset_vgprs=val(".amdhsa_accum_offset"))
        return kd

    def directive_blockers(self) -> list[str]:
        """Nonzero fields that no ``.amdhsa_*`` directive can express (LLVM 19, gfx942)."""
        out = [n for n in _NO_DIRECTIVE if getattr(self, n)]
        if any(self.reserved1):
            out.append("reserved1")
        if self.granulated_wavefront_sgpr_count and self._next_free_sgpr() > MAX_SGPRS:
            out.append("granulated_wavefront_sgpr_count")
        return out

    def _next_free_sgpr(self) -> int:
        return max(0, (self.granulated_wavefront_sgpr_count + 1) * SGPR_GRANULE - GFX942_EXTRA_SGPRS)

    def to_directives(self) -> dict[str, str]:
        """The ``.amdhsa_*`` directives (name -> value text) that make llvm-mc emit these
        fields on gfx942 (AMDGPUUsage "Code Object V3+ Kernel Descriptor Directives").

        ``next_free_vgpr`` / ``next_free_sgpr`` are chosen so that llvm-mc's
        granulation (next_free_sgpr + 6 extra SGPRs on gfx942) reproduces the
        granulated counts.  ``kernel_code_entry_byte_offset`` is computed by the
        assembler.  Fields listed by :meth:`directive_blockers` are not
        expressible; callers must then emit the raw bytes instead.
        """
        d = {
            ".amdhsa_group_segment_fixed_size": self.group_segment_fixed_size,
            ".amdhsa_private_segment_fixed_size": self.private_segment_fixed_size,
            ".amdhsa_kernarg_size": self.kernarg_size,
            ".amdhsa_user_sgpr_count": self.user_sgpr_count,
            ".amdhsa_user_sgpr_dispatch_ptr": self.enable_sgpr_dispatch_ptr,
            ".amdhsa_user_sgpr_queue_ptr": self.enable_sgpr_queue_ptr,
            ".amdhsa_user_sgpr_kernarg_segment_ptr": self.enable_sgpr_kernarg_segment_ptr,
            ".amdhsa_user_sgpr_dispatch_id": self.enable_sgpr_dispatch_id,
            ".amdhsa_user_sgpr_kernarg_preload_length": self.kernarg_preload_spec_length,
            ".amdhsa_user_sgpr_kernarg_preload_offset": self.kernarg_preload_spec_offset,
            ".amdhsa_user_sgpr_private_segment_size": self.enable_sgpr_private_segment_size,
            ".amdhsa_uses_dynamic_stack": self.uses_dynamic_stack,
            ".amdhsa_enable_private_segment": self.enable_private_segment,
            ".amdhsa_system_sgpr_workgroup_id_x": self.enable_sgpr_workgroup_id_x,
            ".amdhsa_system_sgpr_workgroup_id_y": self.enable_sgpr_workgroup_id_y,
            ".amdhsa_system_sgpr_workgroup_id_z": self.enable_sgpr_workgroup_id_z,
            ".amdhsa_system_sgpr_workgroup_info": self.enable_sgpr_workgroup_info,
            ".amdhsa_system_vgpr_workitem_id": self.enable_vgpr_workitem_id,
            ".amdhsa_next_free_vgpr": self.vgpr_count,
            ".amdhsa_next_free_sgpr": self._next_free_sgpr(),
            ".amdhsa_accum_offset": self.accum_offset_vgprs,
            ".amdhsa_float_round_mode_32": self.float_round_mode_32,
            ".amdhsa_float_round_mode_16_64": self.float_round_mode_16_64,
            ".amdhsa_float_denorm_mode_32": self.float_denorm_mode_32,
            ".amdhsa_float_denorm_mode_16_64": self.float_denorm_mode_16_64,
            ".amdhsa_dx10_clamp": self.enable_dx10_clamp,
            ".amdhsa_ieee_mode": self.enable_ieee_mode,
            ".amdhsa_fp16_overflow": self.fp16_ovfl,
            ".amdhsa_tg_split": self.tg_split,
            ".amdhsa_exception_fp_ieee_invalid_op": self.enable_exception_ieee_754_fp_invalid_operation,
            ".amdhsa_exception_fp_denorm_src": self.enable_exception_fp_denormal_source,
            ".amdhsa_exception_fp_ieee_div_zero": self.enable_exception_ieee_754_fp_division_by_zero,
            ".amdhsa_exception_fp_ieee_overflow": self.enable_exception_ieee_754_fp_overflow,
            ".amdhsa_exception_fp_ieee_underflow": self.enable_exception_ieee_754_fp_underflow,
            ".amdhsa_exception_fp_ieee_inexact": self.enable_exception_ieee_754_fp_inexact,
            ".amdhsa_exception_int_div_zero": self.enable_exception_int_divide_by_zero,
        }
        return {k: str(v) for k, v in d.items()}


#: Map from ``.amdhsa_*`` directive to descriptor field, for directives that set one field
#: directly (used to read clang ``.s`` files as an oracle).
DIRECTIVE_FIELDS = {
    ".amdhsa_group_segment_fixed_size": "group_segment_fixed_size",
    ".amdhsa_private_segment_fixed_size": "private_segment_fixed_size",
    ".amdhsa_kernarg_size": "kernarg_size",
    ".amdhsa_user_sgpr_count": "user_sgpr_count",
    ".amdhsa_user_sgpr_dispatch_ptr": "enable_sgpr_dispatch_ptr",
    ".amdhsa_user_sgpr_queue_ptr": "enable_sgpr_queue_ptr",
    ".amdhsa_user_sgpr_kernarg_segment_ptr": "enable_sgpr_kernarg_segment_ptr",
    ".amdhsa_user_sgpr_dispatch_id": "enable_sgpr_dispatch_id",
    ".amdhsa_user_sgpr_kernarg_preload_length": "kernarg_preload_spec_length",
    ".amdhsa_user_sgpr_kernarg_preload_offset": "kernarg_preload_spec_offset",
    ".amdhsa_user_sgpr_private_segment_size": "enable_sgpr_private_segment_size",
    ".amdhsa_uses_dynamic_stack": "uses_dynamic_stack",
    ".amdhsa_enable_private_segment": "enable_private_segment",
    ".amdhsa_system_sgpr_workgroup_id_x": "enable_sgpr_workgroup_id_x",
    ".amdhsa_system_sgpr_workgroup_id_y": "enable_sgpr_workgroup_id_y",
    ".amdhsa_system_sgpr_workgroup_id_z": "enable_sgpr_workgroup_id_z",
    ".amdhsa_system_sgpr_workgroup_info": "enable_sgpr_workgroup_info",
    ".amdhsa_system_vgpr_workitem_id": "enable_vgpr_workitem_id",
    ".amdhsa_float_round_mode_32": "float_round_mode_32",
    ".amdhsa_float_round_mode_16_64": "float_round_mode_16_64",
    ".amdhsa_float_denorm_mode_32": "float_denorm_mode_32",
    ".amdhsa_float_denorm_mode_16_64": "float_denorm_mode_16_64",
    ".amdhsa_dx10_clamp": "enable_dx10_clamp",
    ".amdhsa_ieee_mode": "enable_ieee_mode",
    ".amdhsa_fp16_overflow": "fp16_ovfl",
    ".amdhsa_tg_split": "tg_split",
    ".amdhsa_exception_fp_ieee_invalid_op": "enable_exception_ieee_754_fp_invalid_operation",
    ".amdhsa_exception_fp_denorm_src": "enable_exception_fp_denormal_source",
    ".amdhsa_exception_fp_ieee_div_zero": "enable_exception_ieee_754_fp_division_by_zero",
    ".amdhsa_exception_fp_ieee_overflow": "enable_exception_ieee_754_fp_overflow",
    ".amdhsa_exception_fp_ieee_underflow": "enable_exception_ieee_754_fp_underflow",
    ".amdhsa_exception_fp_ieee_inexact": "enable_exception_ieee_754_fp_inexact",
    ".amdhsa_exception_int_div_zero": "enable_exception_int_divide_by_zero",
}
