"""Check parsed instructions against the gfx942 ISA table and register files.

Checks, each raising :class:`~asmevo.errors.AsmSyntaxError` with
``file:line:column`` and what was expected:

* unknown mnemonic (with close names suggested, ``difflib``);
* wrong operand count (the table's operand names are listed);
* operand of the wrong class (a VGPR where an SGPR is required, an immediate
  where a register is required, ...) or the wrong width in dwords
  (``s_load_dwordx2 s[4:6], ...``: 3 dwords where 2 are required);
* register index out of range: VGPRs and AGPRs are v0..v255 / a0..a255, SGPRs
  s0..s101 (s102..s105 hold flat_scratch and xnack_mask and are only
  reachable through those names on gfx942), ttmp0..ttmp15;
* misaligned register tuples: SGPR/ttmp pairs start at an even index and
  tuples of 4 or more dwords at a multiple of 4; VGPR/AGPR tuples start at an
  even index on gfx90a/gfx94x ("vgpr tuples must be 64 bit aligned");
* constants: inline constants per operand type (f16/f32/f64 bit patterns,
  1/(2*pi)), literals only where the encoding has one (SOP*, VOP1/VOP2/VOPC
  ``_e32`` src0; never VOP3/VOP3P/DPP/SDWA on gfx9), one unique literal per
  instruction, 32-bit (16-bit for 16-bit operands) literal range, simm16 and
  SMEM offset ranges;
* the VALU constant bus (one SGPR/literal per instruction on gfx9), MFMA
  ``acc_cd`` (dst and src2 in one register file) and src2 overlap;
* modifiers that the instruction kind has no field for (DPP/SDWA controls,
  cache/addressing flags, DS offsets, ``gds``, clamp/omod, op_sel, MFMA
  cbsz/abid/blgp) and source modifiers (``-x``, ``|x|``, ``neg``, ``abs``,
  ``sext``) where the encoding or operand type has none; clamp, omod, op_sel,
  op_sel_hi and neg_lo/neg_hi per VALU record from :mod:`.valu_modifiers` (LLVM's VOP
  profiles as llvm-mc 19 applies them; no op_sel/op_sel_hi on gfx940 ``v_dot*``);
* the gfx940 cache policy: vector memory takes ``sc0``/``sc1``/``nt``, never the
  gfx90a ``glc``/``slc``; SMEM takes only ``glc``, and only on loads, stores and
  atomics; a FLAT/GLOBAL atomic that returns the old value must set ``sc0`` and
  one that does not must not (AMDGPUAsmParser validateCoherencyBits);
* modifiers given twice or out of the order llvm-mc takes them in (each LLVM asm
  string lists its optional operands in one order: :data:`MOD_RANK`), two DPP
  controls or none; ``offset:`` ranges per family, ``'null'`` (a gfx10+ register),
  M0/EXEC as SMEM data, the implicit VCC read of ``v_div_fmas`` and the K literal of
  ``v_fmamk``/``v_fmaak`` on the constant bus.

Suffix-less VALU mnemonics get the encoding llvm-mc picks (:func:`select_encoding`,
called by the parser): ``v_cmp_le_u32 s[0:1], 1, v55`` is ``v_cmp_le_u32_e64``.

The ISA table records one operand form per mnemonic; :func:`_normalize` and
:func:`_alternatives` add the other forms LLVM accepts (global ``saddr``,
scratch ``off``, MUBUF ``vaddr`` by offen/idxen, AGPR memory data, SMEM
``soffset``, ``lds`` loads, optional operands).  Verdicts are memoised per
instruction value.  Differential tests against llvm-mc: tests/frontend/
test_typecheck_mutations.py (corpus mutants: no false errors, >= 95% of llvm-mc's
rejections caught) and test_parser_isa_property.py (mutants of every ISA-table
example: accept/reject parity with llvm-mc, except the llvm-mc laxities listed there).

Rules: CDNA3 ISA guide ("Scalar Operands", "Vector Operands", SGPR/VGPR
alignment) and LLVM AMDGPUAsmParser.cpp (the diagnostics llvm-mc gives for the
same mistakes: "register index is out of range", "invalid register
alignment", "register not available on this GPU", "invalid operand for
instruction").  The ISA table is :mod:`asmevo.isa` (``lookup(mnemonic)``).
"""

from __future__ import annotations

import re
from typing import Iterable

from ..errors import AsmSyntaxError
from ..ir.instruction import Instruction
from ..ir.module import Module
from ..ir.operands import Expr, Func, FuncList, Imm, Label, Reg, Special, Src

__all__ = ["check_module", "check_instruction", "check_register", "select_encoding"]

#: Highest addressable register index per file on gfx942.
REG_LIMIT = {"v": 255, "a": 255, "s": 101, "ttmp": 15}

#: Specials that are SGPR-file aliases and may stand where an SGPR is required.
_SGPR_SPECIALS = frozenset({
    "vcc", "vcc_lo", "vcc_hi", "exec", "exec_lo", "exec_hi", "m0", "flat_scratch",
    "flat_scratch_lo", "flat_scratch_hi", "xnack_mask", "xnack_mask_lo", "xnack_mask_hi",
    "tba", "tba_lo", "tba_hi", "tma", "tma_lo", "tma_hi", "null"})
#: Read-only source constants (src_shared_base...) usable as scalar sources.
_SRC_CONSTANTS = frozenset({
    "src_shared_base", "src_shared_limit", "src_private_base", "src_private_limit",
    "src_pops_exiting_wave_id", "src_vccz", "src_execz", "src_scc", "shared_base",
    "shared_limit", "private_base", "private_limit", "pops_exiting_wave_id", "vccz", "execz",
    "scc", "src_lds_direct", "lds_direct"})
_WIDTH_SPECIALS = {"vcc": 2, "exec": 2, "flat_scratch": 2, "xnack_mask": 2, "tba": 2, "tma": 2,
                   "vcc_lo": 1, "vcc_hi": 1, "exec_lo": 1, "exec_hi": 1, "m0": 1,
                   "flat_scratch_lo": 1, "flat_scratch_hi": 1, "xnack_mask_lo": 1,
                   "xnack_mask_hi": 1}
_CLASS_WORDS = {
    "VGPR": "a VGPR", "AGPR": "an AGPR", "SGPR": "an SGPR", "AV": "a VGPR or AGPR",
    "SSRC": "an SGPR, constant or literal", "SCSRC": "an SGPR or inline constant",
    "VSRC": "a VGPR, SGPR, constant or literal", "VCSRC": "a VGPR, SGPR or inline constant",
    "VS": "a VGPR, SGPR or constant", "VISRC": "a VGPR or inline constant",
    "AVSRC": "a VGPR, AGPR or inline constant", "IMM": "an immediate or label",
    "HWREG": "hwreg(...) or an immediate", "SENDMSG": "sendmsg(...) or an immediate",
    "WAITCNT": "vmcnt(...)/expcnt(...)/lgkmcnt(...) or an immediate",
    "GPR_IDX": "gpr_idx(...) or an immediate", "SWIZZLE": "swizzle(...) or an immediate",
    "SADDR": "an SGPR address or off", "SMEM_OFFSET": "an offset or SGPR",
    "LABEL": "a label or branch offset", "KIMM32": "a 32-bit constant",
}


# Inline constants (CDNA3 ISA guide, "Scalar Operands": codes 128..208 and 240..248).
# llvm-mc also folds the bit patterns of the inline floats (f16/f32/f64) written as
# integers, and the 32-bit two's complement of -16..-1.
_INLINE_FLOATS = frozenset({0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.15915494,
                            0.15915494309189535})
_INLINE_PATTERNS = frozenset(
    [0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000, 0xc0000000, 0x40800000,
     0xc0800000, 0x3e22f983,
     0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
     0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
     0x4000000000000000, 0xc000000000000000, 0x4010000000000000, 0xc010000000000000,
     0x3fc45f306dc9c882]
    + [(1 << 32) - k for k in range(1, 17)] + [(1 << 64) - k for k in range(1, 17)])


def is_inline_constant(imm: Imm) -> bool:
    """Whether an immediate encodes as an inline constant (no literal dword)."""
    v = imm.value
    if isinstance(v, float):
        return v in _INLINE_FLOATS
    return -16 <= v <= 64 or v in _INLINE_PATTERNS


_TYPE_TOKEN = re.compile(r"(?:^|_)(bf16|f16|b16|u16|i16|f32|xf32|b32|u32|i32|f64|b64|u64|i64)"
                         r"(?=_|$)")
_F32_PATTERNS = frozenset({0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
                           0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983})
_F16_PATTERNS = frozenset({0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400,
                           0x3118})
_F64_PATTERNS = frozenset({0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
                           0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
                           0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882})


def operand_type(base: str, width: int | None) -> str:
    """Type of a source operand for constant checks: ``"f16"``, ``"i16"``, ``"f16x2"``,
    ``"i16x2"`` (packed halves), ``"f32"``, ``"i32"``, ``"f64"`` or ``"i64"``, from the
    last type token of the mnemonic's base
    (the source type of ``v_cvt_<dst>_<src>``) and the operand width in dwords."""
    toks = _TYPE_TOKEN.findall(base)
    t = toks[-1] if toks else "b32"
    if base.startswith(("v_mfma", "v_smfmac")) and toks:
        t = toks[0]  # the accumulator (src2) type: v_mfma_f32_16x16x16_bf16 -> f32
    isfloat = t.startswith(("f", "bf", "xf"))
    # 64-bit when the type says so, or a 2+-dword operand of a scalar/VOP3 op; MFMA and
    # packed-math operands hold 32-bit (or 16-bit) elements
    packed = base.startswith(("v_mfma", "v_smfmac", "v_pk_"))
    if width and width >= 2 and not packed:
        return "f64" if isfloat else "i64"
    pair16 = base.startswith(("v_pk_", "v_dot2"))  # two 16-bit halves in one dword
    if base.startswith("v_sat_pk_u8_i16"):
        return "i32"  # its source is both 16-bit halves: a 32-bit operand
    if base.startswith("s_"):  # SALU operands are whole dwords (s_pack_ll_b32_b16)
        return "f32" if isfloat else "i32"
    if t in ("f16", "bf16"):
        return "f16x2" if pair16 else "f16"
    if t in ("b16", "u16", "i16"):
        return "i16x2" if pair16 else "i16"
    return "f32" if isfloat else "i32"


def is_inline_for(imm: Imm, typ: str) -> bool:
    """Whether ``imm`` is an inline constant for an operand of type ``typ`` (LLVM
    AMDGPUBaseInfo isInlinableLiteral16/32/64: integers -16..64, the floats 0, +-0.5,
    +-1, +-2, +-4, 1/(2*pi), and integers equal to those floats' bit patterns)."""
    v = imm.value
    if isinstance(v, float):
        if v in (0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0):
            return True
        # 1/(2*pi): 64-bit operands need the double's precision (0.15915494309189535),
        # 32/16-bit operands take the short spelling (0.15915494)
        tol = 1e-15 if typ in ("f64", "i64") else 1e-7
        return abs(v - 0.15915494309189535) < tol
    typ = typ[:3]  # f16x2 -> f16: the inline constant applies to the low half
    bits = 16 if typ in ("f16", "i16") else 64 if typ in ("f64", "i64") else 32
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        return False
    u = v & ((1 << bits) - 1)
    sv = u - (1 << bits) if u >> (bits - 1) else u
    if -16 <= sv <= 64:
        return True
    if bits == 16:
        return typ == "f16" and u in _F16_PATTERNS
    if bits == 32:
        return u in _F32_PATTERNS
    return u in _F64_PATTERNS


def _inline_ok(imm: Imm, typ: str, width: int | None) -> bool:
    """Inline for the operand; a 2-dword operand of 32-bit elements (packed f32, e.g.
    ``v_pk_add_f32``) also takes the 64-bit inline patterns, as llvm-mc does."""
    return is_inline_for(imm, typ) or (width == 2 and typ in ("f32", "i32") and (
        is_inline_for(imm, "f64") or is_inline_for(imm, "i64")))


def _literal_key(op, typ: str | None = None, width: int | None = None):
    """A key naming the literal an operand needs, or ``None`` (register / inline constant)."""
    b = op.base if isinstance(op, Src) else op
    if isinstance(b, Imm):
        inline = is_inline_constant(b) if typ is None else _inline_ok(b, typ, width)
        return None if inline else ("imm", b.value)
    if isinstance(b, (Label, Expr)):
        return ("sym", str(b))
    return None


def _scalar_key(op):
    """A key naming the scalar register an operand reads over the constant bus, or ``None``."""
    b = op.base if isinstance(op, Src) else op
    if isinstance(b, Reg) and b.file in ("s", "ttmp"):
        return (b.file, b.index)
    if isinstance(b, Special) and (b.name in _SGPR_SPECIALS or b.name in _SRC_CONSTANTS) \
            and b.name not in ("null",):
        return ("special", b.name)
    return None


def _field(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _isa():
    from .. import isa  # the table is loaded on first use
    return isa


def _all_mnemonics() -> list[str]:
    isa = _isa()
    for attr in ("mnemonics", "all_mnemonics", "names"):
        f = getattr(isa, attr, None)
        if callable(f):
            return list(f())
        if isinstance(f, (list, tuple, set, frozenset, dict)):
            return list(f)
    for attr in ("TABLE", "INSTRUCTIONS", "table", "_TABLE"):
        t = getattr(isa, attr, None)
        if isinstance(t, dict):
            return list(t)
    return []


def _lookup(opcode: str):
    isa = _isa()
    info = isa.lookup(opcode)
    if info is None and not opcode.endswith(("_e32", "_e64", "_dpp", "_sdwa")):
        # LLVM accepts the mnemonic without an encoding suffix and picks one
        for suffix in ("_e32", "_e64"):
            info = isa.lookup(opcode + suffix)
            if info is not None:
                break
    return info


# ---------------------------------------------------------------------------
# Columns: where operand k starts in the source line
# ---------------------------------------------------------------------------

def _operand_columns(line: str) -> tuple[int, list[int]]:
    """1-based column of the mnemonic and of each comma-separated operand."""
    i = 0
    n = len(line)
    while i < n and line[i] in " \t":
        i += 1
    mcol = i + 1
    while i < n and not line[i].isspace():
        i += 1
    cols = []
    depth = 0
    start = True
    while i < n:
        c = line[i]
        if c == ";" or line.startswith("//", i):
            break
        if start and not c.isspace():
            cols.append(i + 1)
            start = False
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            start = True
        i += 1
    return mcol, cols


class _Ctx:
    """Where an instruction came from; columns are computed only when reporting an error."""

    __slots__ = ("inst", "filename", "line_text")

    def __init__(self, inst: Instruction, filename: str, line_text: str | None):
        self.inst = inst
        self.filename = filename
        self.line_text = line_text

    @property
    def text(self) -> str:
        return self.line_text if self.line_text is not None else "\t" + self.inst.text()

    def error_at_word(self, msg: str, word: str) -> AsmSyntaxError:
        """An error located at ``word`` after the operands (a modifier name)."""
        text = self.text
        mcol, cols = _operand_columns(text)
        start = cols[-1] if cols else mcol
        i = text.find(word, start - 1)
        return self._error(msg, i + 1 if i >= 0 else mcol)

    def error(self, msg: str, k: int | None = None) -> AsmSyntaxError:
        mcol, cols = _operand_columns(self.text)
        col = mcol
        if k is not None and k < len(cols):
            col = cols[k]
        return self._error(msg, col)

    def _error(self, msg: str, col: int) -> AsmSyntaxError:
        from .asm_parser import source_excerpt
        return AsmSyntaxError(f"{msg}\n{source_excerpt(self.text, col)}", file=self.filename,
                              line=self.inst.line, column=col)


def check_register(op) -> str | None:
    """Range and alignment check of one operand; returns an error message or ``None``."""
    b = op.base if isinstance(op, Src) else op
    if not isinstance(b, Reg):
        return None
    limit = REG_LIMIT.get(b.file)
    if limit is None:
        return f"unknown register file {b.file!r}"
    if b.last > limit:
        if b.file == "s" and b.last <= 105:
            return (f"register {b} is not available on gfx942: s102..s105 are reachable only as "
                    f"flat_scratch / xnack_mask; SGPRs are s0..s{limit}")
        return f"register index is out of range: {b}; expected {b.file}0..{b.file}{limit}"
    if b.count >= 2:
        if b.file in ("s", "ttmp"):
            align = 2 if b.count == 2 else 4
            if b.index % align:
                return (f"invalid register alignment: {b} must start at a multiple of {align} "
                        f"(SGPR tuples of {b.count} dwords)")
        elif b.index % 2:
            return (f"invalid register alignment: {b}: {b.file.upper()}GPR tuples must be 64-bit "
                    f"aligned (start at an even index) on gfx942")
    return None


def _kind_ok(op, cls: str, width: int | None, name: str, mfma: bool,
             typ: str = "i32") -> bool:
    """Whether operand ``op`` fits table class ``cls`` (``typ``: its constant type)."""
    b = op.base if isinstance(op, Src) else op
    if cls in ("IMM", "LABEL", "SMEM_OFFSET", "KIMM32") and isinstance(b, Imm):
        v = b.value
        if cls == "KIMM32":
            if typ in ("f16", "i16") and not isinstance(v, float):  # v_madmk_f16: 16-bit K
                return -(1 << 15) <= v < (1 << 16)
            return isinstance(v, float) or -(1 << 31) <= v < (1 << 32)
        if isinstance(v, float):
            return False  # 16/21-bit integer fields
        if cls == "SMEM_OFFSET":
            if name == "soffset_unsigned":
                return 0 <= v < (1 << 20)
            return -(1 << 20) <= v < (1 << 20)
        if name == "simm16":
            return -(1 << 15) <= v < (1 << 16)
        if name == "simm":  # s_set_gpr_idx_on mode bits
            return 0 <= v < 16
        if name == "uimm16":
            return 0 <= v < (1 << 16)
        if name == "probe":  # a 7-bit field; llvm-mc truncates any 16-bit value into it
            return -(1 << 15) <= v < (1 << 16)
        return True
    if cls in ("IMM", "HWREG", "SENDMSG", "WAITCNT", "GPR_IDX", "SWIZZLE", "LABEL", "KIMM32"):
        if isinstance(b, Imm) and cls in ("HWREG", "SENDMSG") and (
                isinstance(b.value, float) or not 0 <= b.value < (1 << 16)):
            return False  # llvm-mc: "invalid immediate: only 16-bit values are legal"
        return isinstance(b, (Imm, Label, Expr, Func, FuncList))
    if cls == "SADDR":  # an SGPR (pair for global_*) or off
        return b == Special("off") or (isinstance(b, Reg) and b.file in ("s", "ttmp"))
    if cls == "SMEM_OFFSET":  # immediate offset or SGPR soffset (or an SGPR alias)
        return isinstance(b, (Imm, Label, Expr)) or (
            isinstance(b, Special) and b.name in _SGPR_SPECIALS) or (
            isinstance(b, Reg) and b.file in ("s", "ttmp"))
    if cls == "special":
        if isinstance(b, Special):
            if name == "off" or b.name == name:
                return True
            if name.startswith("vcc"):  # the fixed VCC of an _e32/DPP/SDWA form (vcc2: carry-in)
                return b.name == "vcc"
            return name != "off" and b.name in _SGPR_SPECIALS
        if isinstance(b, Reg):  # "off" stands for an optional SGPR address (saddr)
            return name not in ("vcc",) and b.file in ("s", "ttmp")
        return False
    files = set()
    consts = lits = False
    if cls == "VGPR":
        files = {"v", "a"} if mfma else {"v"}
    elif cls == "AGPR":
        files = {"a", "v"} if mfma else {"a"}
    elif cls == "AV":
        files = {"v", "a"}
    elif cls == "SGPR":
        files = {"s", "ttmp"}
    elif cls in ("SSRC",):
        files, consts, lits = {"s", "ttmp"}, True, True
    elif cls == "SCSRC":
        files, consts = {"s", "ttmp"}, True
    elif cls == "VSRC":
        files, consts, lits = {"v", "s", "ttmp"}, True, True
    elif cls in ("VCSRC", "VS"):  # VOP3/VOP3P/SDWA sources: no literal on gfx9
        files, consts = {"v", "s", "ttmp"}, True
    elif cls == "VISRC":
        files, consts = ({"v", "a"} if mfma else {"v"}), True
    elif cls == "AVSRC":
        files, consts = {"v", "a"}, True
    else:
        return True  # a class this checker does not know: accept
    if isinstance(b, Reg):
        return b.file in files
    if isinstance(b, Special):
        if b.name in ("off",):
            return False
        if cls == "SGPR":  # a register operand: src_scc, src_shared_base... are constants
            return b.name in _SGPR_SPECIALS
        return bool(files & {"s", "ttmp"}) and (b.name in _SGPR_SPECIALS
                                                or b.name in _SRC_CONSTANTS)
    if isinstance(b, Imm):
        if _inline_ok(b, typ, width):
            return consts or lits
        if not lits:
            return False
        v = b.value
        if typ in ("f16", "i16") and isinstance(v, int):
            return -(1 << 15) <= v < (1 << 16)  # a 16-bit literal
        # a 32-bit literal: a float cannot stand for a 64-bit integer operand
        return not (isinstance(v, float) and typ == "i64")
    if isinstance(b, (Label, Expr)):
        return lits
    return False


def _width_of(op) -> int | None:
    b = op.base if isinstance(op, Src) else op
    if isinstance(b, Reg):
        return b.count
    if isinstance(b, Special):
        return _WIDTH_SPECIALS.get(b.name)
    return None


def _specs(info, inst: Instruction) -> list[tuple[str, str, int | None]]:
    ops = _field(info, "operands", ()) or ()
    rtn = _field(info, "rtn_operands", None)
    if rtn and len(rtn) == len(inst.operands) and len(ops) != len(inst.operands):
        ops = rtn
    return [(_field(o, "name", f"op{i}") or f"op{i}", _field(o, "cls", "") or "",
             _field(o, "width", None)) for i, o in enumerate(ops)]


#: Instructions whose last immediate operand may be omitted (LLVM SOPPInstructions.td:
#: ``s_endpgm`` has an optional imm16).
_OPTIONAL_LAST_IMM = frozenset({"s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done"})
#: v_readlane/v_writelane lane selects and sources take an SGPR, M0 or an inline constant
#: (LLVM VOP3Instructions.td: SCSrc_b32 / SSrcOrLds_b32).
_LANE_OPS = frozenset({"v_readlane_b32", "v_writelane_b32"})


def _flat_specs(inst: Instruction, specs: list) -> list:
    """global_*/scratch_* address forms (LLVM FLATInstructions.td, CDNA3 ISA guide "Flat,
    Scratch and Global Instructions"): global takes ``vaddr`` = VGPR pair with ``off``, or a
    32-bit VGPR offset with an SGPR-pair ``saddr``; scratch takes a VGPR or ``off`` and an
    SGPR or ``off``."""
    scratch = inst.opcode.startswith("scratch_")
    out = []
    for k, (n, c, w) in enumerate(specs):
        if n == "vaddr":
            if scratch:
                out.append((n, "VGPR_OR_OFF", 1))
            else:
                saddr_is_reg = any((isinstance(o, Reg) or (isinstance(o, Special)
                                                           and o.name != "off"))
                                   and (sc == "SADDR" or sn == "off")
                                   for o, (sn, sc, _w) in zip(inst.operands, specs))
                out.append((n, "VGPR", 1 if saddr_is_reg else 2))
        elif c == "SADDR" or (c == "special" and n == "off"):
            out.append(("saddr", "SGPR_OR_OFF", 1 if scratch else 2))
        else:
            out.append((n, c, w))
    return out


_MEM_DATA_NAMES = frozenset({"vdst", "vdata", "data", "data0", "data1"})


def _normalize(info, inst: Instruction, specs: list, enc: str) -> list:
    """The table's operand list adjusted to the form this instruction uses (count kept).

    The ISA table records one form per mnemonic; LLVM also accepts (AMDGPU
    ``FLATInstructions.td``, ``SMInstructions.td``, ``BUFInstructions.td``,
    ``VOP3Instructions.td``): global_* with an SGPR-pair ``saddr`` and a 32-bit VGPR
    offset; scratch_* with ``off`` for the VGPR address; MUBUF/MTBUF ``vaddr`` = ``off``
    without offen/idxen and a VGPR pair with both; AGPR data for vector memory on
    gfx90a+; SMEM with an SGPR ``soffset``; v_readlane/v_writelane lane selects that are
    constants or M0.
    """
    op = inst.opcode
    out = list(specs)
    if op.startswith(("global_", "scratch_")):
        out = _flat_specs(inst, out)
    if enc in ("MUBUF", "MTBUF") or op.startswith(("buffer_", "tbuffer_")):
        idx, ofs = inst.has_mod("idxen"), inst.has_mod("offen")
        out = [(n, ("VGPR" if idx or ofs else "OFF"), (2 if idx and ofs else 1))
               if n == "vaddr" else (n, c, w) for n, c, w in out]
    if enc in _MEM_FAMILIES or op.startswith(("buffer_", "tbuffer_", "global_", "scratch_",
                                              "flat_", "ds_")):
        out = [(n, "AV", w) if c == "VGPR" and n in _MEM_DATA_NAMES else (n, c, w)
               for n, c, w in out]
    if enc == "SMEM" or op.startswith(("s_load", "s_store", "s_buffer", "s_atomic",
                                       "s_scratch")):
        out = [(n, "SOFFSET", w) if c == "IMM" else (n, c, w) for n, c, w in out]
        if op.startswith("s_buffer_"):  # "expected a 20-bit unsigned offset"
            out = [("soffset_unsigned", c, w) if c == "SMEM_OFFSET" else (n, c, w)
                   for n, c, w in out]
    if op.startswith("s_atc_probe") and out:
        out[0] = ("probe", "IMM", 1)  # the 7-bit probe-kind field (the table names it offset)
    if op in _LANE_OPS:
        out = [(n, "SCSRC", w) if c == "SGPR" and w == 1 and i > 0 else (n, c, w)
               for i, (n, c, w) in enumerate(out)]
    if op.startswith("v_cmp") and op.endswith("_sdwa") and out and out[0][1] == "special":
        out[0] = ("sdst", "SGPR", 2)  # GFX9 SDWA VOPC writes any SGPR pair (sdst field)
    return out


def _alternatives(info, inst: Instruction, specs: list) -> list[list]:
    """Operand lists this instruction may match: the normalised table form first (see
    :func:`_normalize`), then forms with fewer operands: MUBUF loads with ``lds`` (no
    vdata), an omitted optional immediate (``s_endpgm``, SMEM offset 0), VOP2/VOPC
    ``_e32`` without the implicit ``vcc`` operands."""
    enc = (_field(info, "enc", "") or _field(info, "family", "") or "").upper()
    op = inst.opcode
    norm = _normalize(info, inst, specs, enc)
    alts = [norm]
    if (enc in ("MUBUF", "MTBUF") or op.startswith("buffer_")) and inst.has_mod("lds") \
            and norm and norm[0][0] in ("vdata", "vdst"):
        alts = [norm[1:]]  # an LDS DMA load has no vdata (llvm-mc refuses one)
    if op in _OPTIONAL_LAST_IMM and norm and norm[-1][1] == "IMM":
        alts.append(norm[:-1])
    if (enc == "SMEM" or op.startswith(("s_load", "s_buffer_load"))) and norm \
            and norm[-1][1] in ("IMM", "SMEM_OFFSET", "SOFFSET"):
        alts.append(norm[:-1])  # the offset may be omitted (0)
    if op.endswith("_e32") and any(c == "special" and n.startswith("vcc") for n, c, w in norm):
        # llvm-mc accepts VOP2/VOPC e32 forms without the implicit vcc operands
        alts.append([(n, c, w) for n, c, w in norm
                     if not (c == "special" and n.startswith("vcc"))])
    return alts


_MEM_FAMILIES = frozenset({"DS", "SMEM", "MUBUF", "MTBUF", "GLOBAL", "FLAT", "SCRATCH"})
_VMEM_FAMILIES = frozenset({"MUBUF", "MTBUF", "GLOBAL", "FLAT", "SCRATCH"})
_DPP_MODS = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr",
                       "wave_rol", "wave_ror", "row_mirror", "row_half_mirror", "row_bcast",
                       "row_newbcast", "row_mask", "bank_mask", "bound_ctrl", "fi"})
_SDWA_MODS = frozenset({"dst_sel", "dst_unused", "src0_sel", "src1_sel"})
_MAI_MODS = frozenset({"cbsz", "abid", "blgp"})
_VOP3_MODS = frozenset({"op_sel", "op_sel_hi", "neg_lo", "neg_hi"})
_DS_PAIR = re.compile(r"ds_[a-z]+2(?:st64)?_")
#: No clamp/omod: MFMA, lane access and bitwise/shift operations (LLVM VOP3 profiles
#: without HasClamp/HasOMod).
_NO_OUTPUT_MODS = ("v_mfma", "v_smfmac", "v_accvgpr", "v_readlane", "v_writelane",
                   "v_readfirstlane", "v_and_", "v_or_", "v_xor_", "v_lshl", "v_lshr", "v_ashr",
                   "v_not_", "v_or3", "v_perm", "v_alignb")


_CPOL = ("glc", "slc", "sc0", "sc1", "nt")
#: modifiers whose presence per instruction comes from :mod:`asmevo.frontend.valu_modifiers`
_TABLE_KEYS = {"clamp": "clamp", "mul": "omod", "div": "omod", "op_sel": "op_sel",
               "op_sel_hi": "op_sel_hi", "neg_lo": "neg_lo_hi", "neg_hi": "neg_lo_hi"}
_TABLE_WORDS = {"clamp": "clamp", "omod": "output-modifier (mul:/div:)", "op_sel": "op_sel",
                "op_sel_hi": "op_sel_hi (packed-math (VOP3P) instructions have one)",
                "neg_lo_hi": "neg_lo/neg_hi (packed-math (VOP3P) and DOT instructions have one)"}
_DPP_CTRL = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr",
                       "wave_rol", "wave_ror", "row_mirror", "row_half_mirror", "row_bcast",
                       "row_newbcast"})
#: The order in which llvm-mc takes optional operands: each instruction's LLVM asm string
#: lists them in this order (``offen offset:N sc0``, ``op_sel... clamp``, ``clamp mul:2
#: dst_sel... src1_sel...``, ``quad_perm row_mask bank_mask bound_ctrl``, ``cbsz abid
#: blgp``) and the matcher accepts them only so; the cache-policy bits are one operand
#: (any order among themselves).  Same order as llvm-objdump prints them.
_MOD_ORDER = (["format", "idxen", "offen", "addr64", "offset", "offset0", "offset1",
               _CPOL, "lds", "tfe", "gds", "op_sel", "op_sel_hi", "neg_lo", "neg_hi", "clamp",
               ("mul", "div"), "dst_sel", "dst_unused", "src0_sel", "src1_sel",
               tuple(sorted(_DPP_CTRL)), "row_mask", "bank_mask", "bound_ctrl", "fi", "cbsz",
               "abid", "blgp", "neg"])
MOD_RANK = {n: r for r, g in enumerate(_MOD_ORDER) for n in ((g,) if isinstance(g, str) else g)}


def _order_problem(inst: Instruction) -> tuple[str, str] | None:
    """Modifiers given twice or out of llvm-mc's order (:data:`MOD_RANK`); two DPP
    controls, or DPP without one (AMDGPUAsmParser: "not a valid operand")."""
    seen: set = set()
    last, last_name = -1, None
    ctrls = []
    for name, _v in inst.modifiers:
        if name in seen:
            return (f"modifier '{name}' is given twice", name)
        seen.add(name)
        if name in _DPP_CTRL:
            ctrls.append(name)
        r = MOD_RANK.get(name)
        if name == "lds" and inst.opcode == "buffer_store_lds_dword":
            r = MOD_RANK["offset1"]  # "... offset:N lds sc0": lds is a token before the cpol
        if r is None:
            continue
        if r < last:
            return (f"modifier '{name}' must come before '{last_name}' (llvm-mc takes "
                    f"optional operands in a fixed order)", name)
        last, last_name = r, name
    if len(ctrls) > 1:
        return (f"only one DPP control is allowed, got {' and '.join(ctrls)}", ctrls[1])
    if (inst.opcode.endswith("_dpp") or inst.opcode == "v_nop") and not ctrls and any(
            n in _DPP_MODS for n, _v in inst.modifiers):
        name = next(n for n, _v in inst.modifiers if n in _DPP_MODS)
        return ("a DPP instruction needs a DPP control (quad_perm, row_shl, row_newbcast...) "
                "before row_mask/bank_mask/bound_ctrl", name)
    return None


def _modifier_problem(inst: Instruction, info) -> tuple[str, str] | None:
    """A modifier that cannot appear on this kind of instruction: (message, modifier name).

    Families per LLVM AMDGPU *.td operand lists: DPP controls only on ``_dpp``, SDWA
    selects only on ``_sdwa``, cache/addressing flags only on memory instructions,
    ``offset0``/``offset1``/``gds`` only on DS, ``format`` only on MTBUF,
    ``cbsz``/``abid``/``blgp`` only on MFMA, clamp/omod/op_sel not on ``_e32``/DPP forms.
    """
    fam = (_field(info, "family", "") or _field(info, "enc", "") or "").upper()
    if not fam:
        return None
    op = inst.opcode
    dpp = op.endswith("_dpp") or op == "v_nop"  # llvm-objdump prints DPP v_nop unsuffixed
    sdwa = op.endswith("_sdwa") or op == "v_nop"
    valu = fam.startswith(("VOP",))
    rec = _field(info, "name", None) or op
    for name, _v in inst.modifiers:
        where = None
        table_no = None
        key = _TABLE_KEYS.get(name)
        if key is not None and op.startswith("v_"):
            from .valu_modifiers import takes
            t = takes(rec if not op.endswith(_VARIANTS) else op, key)
            if t is False:
                table_no = (f"modifier '{name}' is not valid for {op}: its encoding has no "
                            f"{_TABLE_WORDS[key]} field (LLVM VOP profile, llvm-mc for gfx942)",
                            name)
            elif t:
                if name in ("op_sel", "op_sel_hi") and _field(info, "is_dot", False) and (
                        name == "op_sel_hi" or any(_v if isinstance(_v, tuple) else (_v,))):
                    return (f"invalid {name} operand for {op}: gfx940 DOT instructions take no "
                            f"{name} (AMDGPUAsmParser validateOpSel)", name)
                continue
        if name in _DPP_MODS:
            if not dpp:
                where = "DPP (_dpp) instructions"
        elif name in _SDWA_MODS:
            vop = (_field(info, "vop", None) or fam).upper()
            if not sdwa or op == "v_nop":
                where = "SDWA (_sdwa) instructions"
            elif name == "src1_sel" and vop == "VOP1":
                where = "two-source SDWA instructions (VOP2/VOPC), not VOP1"
            elif name in ("dst_sel", "dst_unused") and (
                    vop == "VOPC" or op.startswith("v_cmp")
                    or "src0_sel" in (_field(info, "modifiers", ()) or ())
                    and "dst_sel" not in (_field(info, "modifiers", ()) or ())):
                where = "SDWA instructions with a VGPR destination (not VOPC)"
        elif name in _MAI_MODS:
            if not op.startswith(("v_mfma", "v_smfmac")):
                where = "MFMA instructions"
            elif name == "blgp" and (op.startswith("v_smfmac") or "_f64" in op):
                where = "MFMA instructions other than SMFMAC and f64 (\"blgp is not supported\")"
        elif name in ("glc", "slc", "nt", "sc0", "sc1"):
            if fam not in _MEM_FAMILIES - {"DS"}:
                where = "vector and scalar memory instructions"
            elif fam == "SMEM":
                if name != "glc":
                    return (f"modifier '{name}' is not valid for {op}: gfx942 scalar memory "
                            f"instructions take only 'glc' (llvm-mc: \"invalid cache policy for "
                            f"SMEM instruction\")", name)
                if not op.startswith(_SMEM_CPOL):
                    where = ("scalar loads, stores and atomics (not s_atc_probe, s_dcache_*, "
                             "s_memtime)")
            elif name in ("glc", "slc"):
                return (f"modifier '{name}' is not valid for {op}: gfx940/gfx942 vector memory "
                        f"instructions spell the cache policy sc0, sc1 and nt (glc/slc/dlc are "
                        f"gfx90a and older; AMDGPUAsmParser, CDNA3 ISA guide \"Memory Scope\")",
                        name)
            elif op.startswith("buffer_wbinvl1"):
                where = "memory instructions with a cache policy (buffer_wbinvl1 has none)"
        elif name in ("offen", "idxen", "addr64", "tfe", "lds"):
            if fam not in ("MUBUF", "MTBUF"):
                where = "buffer instructions"
            elif name in ("offen", "idxen") and not any(
                    _field(o, "name", "") == "vaddr" for o in (_field(info, "operands", ()) or ())):
                where = "buffer instructions with a VGPR address (vaddr)"
            elif name == "lds" and not _LDS_LOAD.match(op):
                where = ("buffer_load_{dword,ubyte,sbyte,ushort,sshort,format_x} (LDS DMA loads on "
                         "gfx942)")
            elif not inst.operands:
                where = "buffer instructions with an address (not cache controls)"
        elif name == "format":
            if fam != "MTBUF":
                where = "typed buffer (tbuffer_*) instructions"
        elif name == "gds":
            if not op.startswith("ds_gws_"):
                where = "ds_gws_* only (GDS is not supported on this GPU)"
        elif name in ("offset0", "offset1"):
            if fam != "DS" or not _DS_PAIR.match(op):
                where = "two-address DS instructions (ds_read2*, ds_write2*, ds_wrxchg2*)"
            elif isinstance(_v, int) and not isinstance(_v, bool) and not 0 <= _v <= 255:
                return (f"invalid {name} value {_v} for {op}: expected 0..255 (8 bits)", name)
        elif name == "offset":
            if fam not in _MEM_FAMILIES:
                where = "memory instructions"
            elif fam == "DS" and _DS_PAIR.match(op):
                where = "single-address DS instructions (use offset0/offset1)"
            elif (not inst.operands and not op.startswith("ds_gws_")) or (fam == "SMEM" and (
                    _field((_field(info, "operands", ()) or (None,))[-1], "cls", "")
                    not in ("SMEM_OFFSET", "IMM"))) or (
                    fam == "SMEM" and not isinstance(
                    inst.operands[-1].base if isinstance(inst.operands[-1], Src)
                    else inst.operands[-1], (Reg, Special))):
                # an SMEM immediate offset is an operand; offset:N comes only after an
                # SGPR soffset (gfx9 SOE form, "s_load_dword s1, s[2:3], s0 offset:8")
                where = ("memory instructions with an offset field (SMEM: only after an "
                         "SGPR soffset)")
            elif isinstance(_v, int) and not isinstance(_v, bool):
                lo, hi, what = _OFFSET_RANGE.get(fam, (None, None, ""))
                if lo is not None and not lo <= _v <= hi:
                    return (f"offset:{_v} is out of range for {op}: expected a {what} offset "
                            f"({lo}..{hi})", name)
        elif name in ("clamp", "mul", "div"):
            if not valu or dpp or op.endswith("_e32"):
                where = "VOP3 (_e64) and SDWA instructions"
            elif op.startswith(_NO_OUTPUT_MODS) and not sdwa:
                where = "VALU arithmetic (not MFMA, lane or bitwise operations)"
            elif name != "clamp" and op.startswith(("v_cmp", "v_pk_")):
                where = "VALU arithmetic with a floating-point result (not compares)"
        elif name in _VOP3_MODS:
            vop3p = op.startswith(("v_pk_", "v_dot", "v_fma_mix", "v_mad_mix")) or fam == "VOP3P"
            if not valu or dpp or sdwa or op.endswith("_e32"):
                where = "VOP3/VOP3P instructions"
            elif name != "op_sel" and not vop3p:
                where = "packed-math (VOP3P) instructions"
            elif name == "op_sel" and not vop3p and (
                    op.endswith("_e64") or op.startswith(("v_mfma", "v_smfmac", "v_accvgpr"))):
                where = "VOP3P and VOP3-only instructions"
        if where:
            return (f"modifier '{name}' is not valid for {op}; it applies to {where}", name)
        if table_no is not None:
            return table_no
    if op.startswith("ds_gws_"):
        if not inst.has_mod("gds"):
            return (f"{op} needs the gds modifier (llvm-mc: \"too few operands\")", None)
        b = inst.operands[0].base if inst.operands and isinstance(inst.operands[0], Src) \
            else (inst.operands[0] if inst.operands else None)
        if isinstance(b, Reg) and b.index % 2:
            return (f"invalid register alignment: {b}: the ds_gws data VGPR must be even "
                    f"aligned on gfx942", 0)
    return _atomic_sc0_problem(inst, info, fam)


#: SMEM instructions with a cache-policy (glc) field: loads, stores, atomics
_LDS_LOAD = re.compile(r"buffer_(load_(dword|ubyte|sbyte|ushort|sshort|format_x)|store_lds_dword)$")
_SMEM_CPOL = ("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_atomic",
              "s_buffer_atomic", "s_scratch_load", "s_scratch_store")
#: offset:N ranges llvm-mc 19 takes for gfx942 (AMDGPUAsmParser validateOffset /
#: validateFlatOffset: MUBUF "16-bit unsigned", GLOBAL/SCRATCH "13-bit signed", FLAT
#: "12-bit unsigned", DS 16-bit unsigned)
_OFFSET_RANGE = {"MUBUF": (0, 65535, "16-bit unsigned"), "MTBUF": (0, 65535, "16-bit unsigned"),
                 "GLOBAL": (-4096, 4095, "13-bit signed"), "SCRATCH": (-4096, 4095, "13-bit signed"),
                 "FLAT": (0, 4095, "12-bit unsigned"), "DS": (0, 65535, "16-bit unsigned")}


def _atomic_sc0_problem(inst: Instruction, info, fam: str) -> tuple[str, str | None] | None:
    """gfx940 FLAT/GLOBAL atomics: the form that returns the old value (with a ``vdst``)
    must set ``sc0``, the other must not (AMDGPUAsmParser validateCoherencyBits:
    "instruction must use sc0" / "instruction must not use sc0")."""
    if fam not in ("FLAT", "GLOBAL") or "_atomic" not in inst.opcode:
        return None
    rtn_ops = _field(info, "rtn_operands", None)
    ops = _field(info, "operands", ()) or ()
    if not rtn_ops or len(rtn_ops) == len(ops):
        return None
    returns = len(inst.operands) == len(rtn_ops)
    has = inst.has_mod("sc0")
    if returns and not has:
        return (f"{inst.opcode} with a destination (returning the old value) must use sc0", None)
    if not returns and has and len(inst.operands) == len(ops):
        return (f"{inst.opcode} without a destination must not use sc0 (sc0 asks for the "
                f"old value)", "sc0")
    return None


_PROBLEMS: dict = {}
_PROBLEMS_LIMIT = 100_000
_VARIANTS = ("_e32", "_e64", "_dpp", "_sdwa")
_SELECTED: dict = {}


_TABLE_STRINGS: frozenset[str] | None = None  # empty: unknown, ask the table


def _maybe_in_table(mnemonic: str) -> bool:
    """False only when ``isa.lookup(mnemonic)`` is certainly ``None``: the name (a ``v_``
    mnemonic) is no string of the ISA table's JSON, where every record name, base name and
    alias is one.  Reading the strings takes a few milliseconds, building the table some 60:
    a disassembly's suffix-less VOP3-only mnemonics (``v_fma_f32``, ``v_mfma_*``...) have no
    ``_e32``/``_e64`` form, so it never needs the table."""
    global _TABLE_STRINGS
    import sys
    isa = sys.modules.get("asmevo.isa")
    if isa is not None:
        info = getattr(getattr(isa, "_table", None), "cache_info", None)
        if info is None or info().currsize:
            return True  # the table is built (or replaced): ask it
    if _TABLE_STRINGS is None:
        import os
        # asmevo.isa._JSON, without importing asmevo.isa
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "isa_specs", "gfx942.json")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError):
            text = ""
        # an escaped string could spell a name differently: then always ask the table
        _TABLE_STRINGS = frozenset(re.findall(r'"(v_[^"]*)"', text)) if "\\" not in text \
            else frozenset()
    if not _TABLE_STRINGS:
        return True
    return mnemonic.lower() in _TABLE_STRINGS


def select_encoding(opcode: str, operands, modifiers) -> str:
    """The mnemonic llvm-mc encodes a suffix-less VALU mnemonic as.

    llvm-mc accepts ``v_cmp_le_u32 s[0:1], 1, v55``, ``v_cmpx_le_u32 exec, 1, v55``,
    ``v_add_co_u32 v1, s[4:5], v2, v3``, ``v_add_f32 v1, v2, s3`` or ``... clamp`` and
    encodes them as VOP3 (``_e64``) because the VOP1/VOP2/VOPC ``_e32`` form has no field
    for them (a fixed ``vcc``, a VGPR src1, no output or source modifiers); DPP controls
    select ``_dpp`` and SDWA selects ``_sdwa`` (LLVM AMDGPUAsmParser: the matcher tries
    every encoding of the mnemonic, ``_e32`` first).  Returns ``opcode`` unchanged when
    the ``_e32`` form fits (or the mnemonic has a suffix, or no form fits: the type
    checker then reports against the ``_e32`` form); otherwise the suffixed mnemonic of
    the first form that fits, so that the ISA record (operand roles, size) is the one
    llvm-mc encodes.  Never raises.
    """
    if not opcode.startswith("v_") or opcode.endswith(_VARIANTS):
        return opcode
    try:
        key = (opcode, tuple(operands), tuple(modifiers))
        hit = _SELECTED.get(key)
    except TypeError:
        return opcode
    if hit is not None:
        return hit
    out = opcode
    try:
        names = {n for n, _v in modifiers}
        if names & _DPP_MODS:
            cands = [opcode + "_dpp"]
        elif names & _SDWA_MODS:
            cands = [opcode + "_sdwa"]
        else:
            cands = [opcode + "_e32", opcode + "_e64"]
        cands = [c for c in cands if _maybe_in_table(c)]
        if cands:
            isa = _isa()
            cands = [c for c in cands if isa.lookup(c) is not None]
        if cands and not (len(cands) == 2 and _find_problem(
                Instruction(cands[0], operands, modifiers)) is None):
            for c in cands[1:] if len(cands) == 2 else cands:
                if _find_problem(Instruction(c, operands, modifiers)) is None:
                    out = c
                    break
    except Exception:  # noqa: BLE001 - a parser helper; the type checker reports problems
        out = opcode
    if len(_SELECTED) >= _PROBLEMS_LIMIT:
        _SELECTED.clear()
    _SELECTED[key] = out
    return out


def check_instruction(inst: Instruction, filename: str = "<input>",
                      line_text: str | None = None) -> None:
    """Check one instruction against the ISA table and the register files.

    ``line_text`` is the source line (for accurate columns); without it
    columns refer to the printed instruction after a tab.  Verdicts are
    memoised per (opcode, operands, modifiers), so passes may call this as a
    cheap legality test.

    Raises:
        AsmSyntaxError: the first problem found, with file:line:column.
    """
    key = inst.key()
    try:
        problem = _PROBLEMS[key]
    except KeyError:
        problem = _find_problem(inst)
        if len(_PROBLEMS) >= _PROBLEMS_LIMIT:
            _PROBLEMS.clear()
        _PROBLEMS[key] = problem
    except TypeError:  # an unhashable operand or modifier value
        problem = _find_problem(inst)
    if problem is None:
        return
    ctx = _Ctx(inst, filename, line_text)
    msg, where = problem
    if isinstance(where, str):
        raise ctx.error_at_word(msg, where)
    raise ctx.error(msg, where)


def _find_problem(inst: Instruction) -> tuple[str, int | str | None] | None:
    """The first problem of ``inst``: (message, operand index / modifier name / None)."""
    for k, op in enumerate(inst.operands):
        msg = check_register(op)
        if msg:
            return msg, k
        if (op.base if isinstance(op, Src) else op) == Special("null"):
            return ("'null' operand is not supported on gfx942 (a gfx10+ register; "
                    "AMDGPUAsmParser: \"'null' operand is not supported on this GPU\")", k)
    info = _lookup(inst.opcode)
    if info is None:
        import difflib  # only for this message (an import of ~1 ms on every asmevo dis)
        close = difflib.get_close_matches(inst.opcode, _all_mnemonics(), n=3, cutoff=0.75)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown mnemonic {inst.opcode!r} for gfx942{hint}", None
    mp = _modifier_problem(inst, info) or _order_problem(inst)
    if mp is not None:
        return mp
    specs = _specs(info, inst)
    alts = _alternatives(info, inst, specs)
    base = _field(info, "base", None) or inst.opcode
    first = _first_problem(inst, alts[0], base)
    if first is None:
        return None
    for alt in alts[1:]:
        if _first_problem(inst, alt, base) is None:
            return None
    return first


def _first_problem(inst: Instruction, specs: list, base: str = "") -> tuple[str, int | None] | None:
    """The first mismatch of ``inst`` against one operand list: (message, operand index)."""
    if len(specs) != len(inst.operands):
        names = ", ".join(n for n, _c, _w in specs) or "none"
        k = len(specs) if len(inst.operands) > len(specs) else None
        return (f"wrong number of operands for {inst.opcode}: expected {len(specs)} "
                f"({names}), got {len(inst.operands)}", k)
    mfma = inst.opcode.startswith(("v_mfma", "v_smfmac"))
    for k, (op, (name, cls, width)) in enumerate(zip(inst.operands, specs)):
        if cls == "OFF":
            if base_is(op, Special("off")):
                continue
            return (f"invalid operand {k + 1} ({name}) of {inst.opcode}: {op}; expected off "
                    f"(no offen/idxen)", k)
        if cls in ("VGPR_OR_OFF", "SGPR_OR_OFF"):
            b = op.base if isinstance(op, Src) else op
            if b == Special("off"):
                continue
            cls = "VGPR" if cls == "VGPR_OR_OFF" else "SGPR"
        elif cls == "SOFFSET":  # SMEM offset: immediate or SGPR soffset
            b = op.base if isinstance(op, Src) else op
            if isinstance(b, Imm):
                unsigned = inst.opcode.startswith(("s_buffer_", "s_atc_probe_buffer"))
                lo = 0 if unsigned else -(1 << 20)
                if isinstance(b.value, float) or not lo <= b.value < (1 << 20):
                    return (f"invalid operand {k + 1} ({name}) of {inst.opcode}: {op} is not "
                            f"a {'20-bit unsigned' if unsigned else '21-bit signed'} offset", k)
                continue
            if isinstance(b, (Label, Expr)) or (isinstance(b, Reg) and b.file in ("s", "ttmp")
                                                      and b.count == 1) or (
                    isinstance(b, Special) and b.name in _SGPR_SPECIALS
                    and _WIDTH_SPECIALS.get(b.name, 1) == 1):
                continue
            cls = "SSRC"
        if cls == "IMM" and inst.opcode == "s_setreg_imm32_b32":
            cls = "KIMM32"  # a 32-bit immediate despite its simm16 field name
        if cls == "IMM" and inst.opcode == "s_set_gpr_idx_mode":
            name = "simm"  # "invalid immediate: only 4-bit values are legal"
        if cls == "IMM" and ((inst.opcode.startswith("s_cmpk_") and inst.opcode.endswith("_u32"))
                             or inst.opcode.startswith("s_endpgm")):
            name = "uimm16"  # unsigned compare immediate; s_endpgm's imm16
        strict = mfma and inst.opcode.startswith("v_smfmac") and name == "src2"  # the index
        if not _kind_ok(op, cls, width, name, mfma and not strict,
                        operand_type(base or inst.opcode, width)):
            want = _CLASS_WORDS.get(cls, cls if cls != "special" else f"'{name}'")
            return (f"invalid operand {k + 1} ({name}) of {inst.opcode}: {op} is not {want}", k)
        w = _width_of(op)
        if w is not None and width and cls not in ("IMM",) and w != width and not (
                cls == "special" and name == "off" and not isinstance(op, Reg)):
            return (f"invalid operand {k + 1} ({name}) of {inst.opcode}: {op} is "
                    f"{w} dword{'s' if w != 1 else ''} wide; expected {width}", k)
    return _operand_rules(inst, specs, base or inst.opcode)


_INT_TYPES = re.compile(r"_(?:[biu](?:8|16|24|32|64)|u24|i24)(?:_|$)")
_FLOAT_TYPES = re.compile(r"_(?:f16|bf16|f32|f64|xf32)(?:_|$)")


def _src_modifier_problem(inst: Instruction, specs: list) -> tuple[str, int] | None:
    """Source modifiers (``-x``, ``|x|``, ``neg()``, ``abs()``, ``sext()``) where the
    encoding has no field for them (LLVM VOP*InputMods operands; CDNA3 ISA guide VOP3,
    DPP and SDWA formats): only VALU sources of VOP3 (``_e64``/VOP3-only), DPP and SDWA
    forms of floating-point operations; ``sext`` only in SDWA."""
    op = inst.opcode
    for k, o in enumerate(inst.operands):
        if not isinstance(o, Src) or not (o.neg or o.abs or o.sext):
            continue
        name, cls = (specs[k][0], specs[k][1]) if k < len(specs) else ("", "")
        where = None
        table_no = None
        if isinstance(o.base, Reg) and op.startswith("v_"):
            # register operands: the per-operand table swept from llvm-mc decides
            from .valu_modifiers import takes_source_modifier
            info = _lookup(op)
            rec = op if op.endswith(_VARIANTS) or info is None else info.name
            verdicts = [takes_source_modifier(rec, kind, k) for kind, on in
                        (("neg", o.neg), ("abs", o.abs), ("sext", o.sext)) if on]
            if verdicts and None not in verdicts:
                if all(verdicts):
                    continue
                bad = [kind for kind, on in (("neg", o.neg), ("abs", o.abs), ("sext", o.sext))
                       if on and not takes_source_modifier(rec, kind, k)]
                table_no = (f"source modifier on operand {k + 1} ({o}) is not valid for {op}: "
                            f"the operand has no {'/'.join(bad)} field (LLVM VOP input "
                            f"modifiers, llvm-mc for gfx942)", k)
        base = op[:-4] if op.endswith(("_e32", "_e64")) else op
        if not op.startswith("v_"):
            where = "VALU instructions"
        elif base in ("v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16",
                      "v_fmamk_f16", "v_fmaak_f16"):
            where = "VOP3/DPP/SDWA forms (the K-constant forms have no source modifiers)"
        elif op.startswith("v_ldexp") and k == 2 and (o.neg or o.abs):
            where = "the mantissa source (v_ldexp's exponent is an integer)"
        elif op.startswith("v_div_scale") and o.abs:
            where = "VOP3A sources (\"ABS not allowed in VOP3B instructions\")"
        elif op.startswith("v_cndmask") and o.sext and not op.endswith("_sdwa"):
            where = "SDWA sources (sext)"
        elif isinstance(o.base, Imm):
            # llvm-mc folds modifiers of a constant into its value where the operand type
            # allows: neg/abs for floating-point operands, sext for integer VOP1/VOP2/VOPC
            isint = bool(_INT_TYPES.search(op)) and not _FLOAT_TYPES.search(op)
            if op.startswith(("v_mfma", "v_smfmac", "v_accvgpr")):
                where = "non-MFMA VALU instructions"
            elif (o.neg or o.abs) and isint and not op.startswith("v_cndmask") \
                    and not (o.neg and o.style == "bar" and not o.abs):
                where = "floating-point operations (neg/abs)"
            elif o.sext and not op.endswith("_sdwa") and (
                    not isint or not op.endswith(("_e32", "_e64"))):
                where = "integer VOP1/VOP2/VOPC sources (sext)"
            else:
                continue
        elif op.endswith("_e32"):
            where = "VOP3 (_e64), DPP and SDWA encodings, not _e32"
        elif op.startswith(("v_mfma", "v_smfmac", "v_accvgpr")):
            where = "non-MFMA VALU instructions"
        elif not name.startswith("src") or cls in ("SGPR", "SSRC", "SCSRC"):
            where = "vector source operands"
        elif op.startswith("v_pk_") and (o.neg or o.abs):
            where = "non-packed operations (packed math uses neg_lo/neg_hi)"
        elif o.sext and not (op.endswith("_sdwa") or (op.endswith("_dpp")
                                                       and op.startswith("v_ldexp"))):
            # llvm-mc takes sext() in DPP only for v_ldexp's integer exponent operand
            where = "SDWA and DPP sources (sext)"
        elif (o.neg or o.abs) and _INT_TYPES.search(op) \
                and not _FLOAT_TYPES.search(op) and not op.startswith("v_cndmask"):
            where = "floating-point operations (neg/abs)"
        if where:
            return (f"source modifier on operand {k + 1} ({o}) is not valid for {op}; "
                    f"it applies to {where}", k)
        if table_no is not None:
            return table_no
    return None


def _operand_rules(inst: Instruction, specs: list, base: str = "") -> tuple[str, int | None] | None:
    """Rules across operands (LLVM AMDGPUAsmParser::validateInstruction, gfx9 limits)."""
    ops = inst.operands
    sm = _src_modifier_problem(inst, specs)
    if sm is not None:
        return sm
    # one unique 32-bit literal per instruction
    lits: dict = {}
    for k, op in enumerate(ops):
        cls = specs[k][1] if k < len(specs) else ""
        if cls in ("IMM", "LABEL", "SMEM_OFFSET", "HWREG", "SENDMSG", "WAITCNT"):
            continue  # encoded in the instruction word, not as a literal dword
        key = _literal_key(op, operand_type(base or inst.opcode, specs[k][2])
                           if k < len(specs) else None, specs[k][2] if k < len(specs) else None)
        if key is not None:
            if key[0] == "imm" and isinstance(key[1], int) and not -(1 << 31) <= key[1] < (1 << 32):
                return (f"literal {op} does not fit in 32 bits", k)
            lits.setdefault(key, k)
    if len(lits) > 1:
        return ("only one unique literal operand is allowed", list(lits.values())[1])
    opc = inst.opcode
    # vector memory / DS: data and destination registers all VGPRs or all AGPRs
    # (LLVM AMDGPUAsmParser::validateGWS/validateAGPRLdSt: "data and dst should be all VGPR
    # or AGPR")
    files: dict[str, int] = {}
    for k, (op, (name, _c, _w)) in enumerate(zip(ops, specs)):
        b = op.base if isinstance(op, Src) else op
        if name in _MEM_DATA_NAMES and isinstance(b, Reg) and b.file in ("v", "a"):
            files.setdefault(b.file, k)
    if len(files) > 1:
        return ("invalid register class: data and dst should be all VGPR or all AGPR",
                max(files.values()))
    if ops and specs and specs[0][0] in ("sdata", "sdst") and (
            opc.startswith(_SMEM_CPOL) or opc.startswith(("s_memtime", "s_memrealtime"))):
        b0 = ops[0].base if isinstance(ops[0], Src) else ops[0]
        if isinstance(b0, Special) and b0.name in ("m0", "exec", "exec_lo", "exec_hi"):
            # LLVM SReg_*_XM0_XEXEC: SMEM data is never M0 or EXEC
            return (f"invalid operand 1 ({specs[0][0]}) of {opc}: {b0} cannot hold scalar "
                    f"memory data (SReg_XM0_XEXEC)", 0)
    if opc.startswith("v_"):
        # constant bus: one scalar value (SGPR, special or literal) per VALU instruction
        last = len(specs) - 1
        used: dict = {}
        info = _lookup(opc)
        if info is not None and "vcc_lo" in (_field(info, "implicit_uses", ()) or ()) \
                and not opc.endswith("_e32") and opc.startswith("v_"):
            used[("special", "vcc")] = None  # v_div_fmas reads VCC over the constant bus
        for k, (op, (name, cls, _w)) in enumerate(zip(ops, specs)):
            is_src = name.startswith("src") or cls == "KIMM32" or (
                cls == "special" and name.startswith("vcc") and k == last and k > 0)
            if not is_src:
                continue
            if opc == "v_writelane_b32" and k == 2 and base_is(op, Special("m0")):
                continue  # the M0 lane select does not count
            if cls == "KIMM32":  # v_fmamk/v_fmaak: the K constant is the literal
                kb = op.base if isinstance(op, Src) else op
                used.setdefault(("imm", kb.value) if isinstance(kb, Imm) else ("kimm",), k)
                continue
            key = _scalar_key(op) or _literal_key(op, operand_type(base or opc, _w), _w)
            if key is not None:
                used.setdefault(key, k)
        if len(used) > 1:
            return ("invalid operand (violates constant bus restrictions): gfx942 VALU "
                    "instructions read at most one SGPR or literal (an implicit VCC read "
                    "counts)", list(used.values())[1])
        if opc.startswith("v_mfma") and len(ops) >= 4:  # v_smfmac: src2 is the index
            d, c = (o.base if isinstance(o, Src) else o for o in (ops[0], ops[3]))
            if isinstance(d, Reg) and isinstance(c, Reg) and d.file != c.file:
                return (f"invalid operand: MFMA src2 {c} and destination {d} must be in the same "
                        f"register file (acc_cd selects both)", 3)
            if isinstance(d, Reg) and isinstance(c, Reg) and d != c and d.count > 4 \
                    and c.index <= d.last and d.index <= c.last:
                return (f"invalid operand: MFMA src2 {c} must not partially overlap the "
                        f"destination {d}", 3)
    return None


def base_is(op, other) -> bool:
    """Whether ``op`` without source modifiers equals ``other``."""
    return (op.base if isinstance(op, Src) else op) == other


def check_module(module: Module, filename: str | None = None, text: str | None = None) -> None:
    """Check every instruction of every function of ``module``.

    ``text`` (the source the module was parsed from) gives exact columns.

    Raises:
        AsmSyntaxError: the first problem found, with file:line:column.
    """
    filename = filename or module.source or "<input>"
    lines = text.split("\n") if text is not None else None
    for k in module.kernels:
        for inst in k.instructions():
            if inst.raw and inst.encoding is not None:
                continue  # words written as .long: their bytes are what they are
            lt = None
            if lines is not None and inst.line is not None and 0 < inst.line <= len(lines):
                lt = lines[inst.line - 1]
            check_instruction(inst, filename, lt)


def check_all(instructions: Iterable[Instruction], filename: str = "<input>") -> None:
    """Check a sequence of instructions (e.g. a listing)."""
    for inst in instructions:
        check_instruction(inst, filename)
