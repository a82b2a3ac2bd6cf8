"""Code object -> IR :class:`~asmevo.ir.Module` that reassembles to the same bytes.

One ``llvm-objdump -d -z --mcpu=gfx942`` call per file gives the listing
(``\\tTEXT // ADDR: WORDS <sym+0x..>``); each line becomes an
:class:`~asmevo.ir.Instruction` (``asm_parser.parse_instruction``) carrying its
``address`` and ``encoding``.  Branch immediates (SOPP ``simm16``, target =
pc + 4 + 4*simm16, CDNA3 ISA guide "Program flow control") become labels:
the symbol at the target (AITer keeps local ``label_XXXX`` symbols) or a new
``.Lasmevo_<addr>`` label.

The module lays out ``.text`` byte for byte: every function symbol's code at
its offset, padding between and after kernels as ``.fill``/``.long`` words,
code before the first symbol (objdump's ``<.text>``) as a non-kernel function.
Kernel descriptors become ``.amdhsa_kernel`` blocks when the ``.amdhsa_*``
directives reproduce the 64 bytes, else raw data at ``NAME.kd``; the metadata
becomes ``.amdgpu_metadata`` YAML when it decodes back to the same values,
else the raw note.  Both are checked by assembling the printed module once
with llvm-mc; instructions whose text does not re-encode to the original bytes
(llvm-mc folds a literal equal to an inline constant, e.g. 0x3f800000 -> 1.0)
are marked ``raw`` and printed as ``.long`` words.
"""

from __future__ import annotations

import copy
import io
import os
import re
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate, repeat
from operator import attrgetter, is_, itemgetter, ne

from ..errors import AsmevoError, AsmSyntaxError, CodeObjectError
from ..ir.instruction import Instruction, decoded_instruction
from ..ir.module import AmdhsaKernel, BasicBlock, Directive, Kernel, LabelDef, MetadataBlock, Module
from ..ir.operands import Expr, Imm, Label
from ..ir.printer import print_instruction, print_module
from ..record import Record
from .codeobject import CodeObject, Symbol, read_code_object
from .descriptor import KernelDescriptor
from .gcpause import gc_paused
from .metadata import NOTE_OWNER, NT_AMDGPU_METADATA, decode_metadata, iter_notes, to_yaml
from .objdump import run_objdump

_LINE = re.compile(r"^\t(.*?)\s*// ([0-9A-Fa-f]+): ((?:[0-9A-Fa-f]{8} ?)+)(?:\s*<(.*)>)?\s*$")
_FAST_LINE = re.compile(r"^\t([^/\n]*)// ([0-9A-Fa-f]+): ((?:[0-9A-Fa-f]{8} ?)+)(?:[ \t]*(<.*>))?[ \t]*$",
                        re.M)
#: ASCII characters other than \n that end a line for str.splitlines or are whitespace for \s
_ODD_SPACE = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")
#: the struct field of an encoding's bytes by the length of its hex text (8 digits per
#: 4-byte word, one blank between words, perhaps one after the last): 8 or 9 -> ``4s``,
#: 17 or 18 -> ``8s``...
_HEX_FIELD = {9 * k - 1 + e: f"{4 * k}s" for k in range(1, 17) for e in (0, 1)}
_HEADER = re.compile(r"^([0-9a-fA-F]+) <(.*)>:\s*$")
_U32 = "I" if array("I").itemsize == 4 else "L"
_TERMINATORS = frozenset({"s_branch", "s_setpc_b64", "s_endpgm", "s_endpgm_saved",
                          "s_endpgm_ordered_ps_done"})
S_NOP_0 = 0xBF800000
S_CODE_END = 0xBF9F0000
_PAD_WORDS = frozenset({S_NOP_0, S_CODE_END})
ANON_PREFIX = ".Lasmevo_func"
_SKIP_SECTIONS = frozenset({".text", ".relro_padding", ".dynamic"})
_VIS = {"STV_PROTECTED": ".protected", "STV_HIDDEN": ".hidden", "STV_INTERNAL": ".internal"}


class ListingEntry(Record):
    """One instruction line of the objdump listing: address, text, encoding bytes."""

    __slots__ = _fields = ("address", "text", "encoding", "comment")

    def __init__(self, address: int, text: str, encoding: bytes, comment: str | None = None):
        self.address = address
        self.text = text
        self.encoding = encoding
        self.comment = comment


class Listing:
    """The instruction lines of an llvm-objdump listing as columns: ``texts`` (stripped),
    ``addresses``, ``encodings`` (bytes), ``sizes`` (of the encodings) and ``data`` (the
    encodings concatenated).  Columns cost a fraction of one object per line (33,000 lines in
    the largest AITer kernel).  Built from the whole text, or piece by piece (:meth:`feed`
    whole lines, then :meth:`finish`) while llvm-objdump writes it."""

    __slots__ = ("texts", "addresses", "encodings", "sizes", "data", "_parts", "_data")

    def __init__(self, out: str | None = None):
        self.texts: list[str] = []
        self.addresses: list[int] = []
        self.encodings: list[bytes] = []
        self.sizes: list[int] = []
        self.data = b""
        self._parts: list[tuple[tuple, bool]] = []  # (comment column, fast regex) per feed
        self._data: list[bytes] = []
        if out is not None:
            self.feed(out)
            self.finish()

    def feed(self, out: str) -> None:
        """Add the instruction lines of ``out`` (whole lines of the listing)."""
        # One scan with a regex that needs no backtracking over the padding before ``//``;
        # it finds what _LINE finds (the text before the first ``//``, stripped below) when
        # the text is plain ASCII lines and every line starting with a tab matches it, else
        # each line goes to _LINE.
        rows = None
        fast = out.isascii() and not any(c in out for c in _ODD_SPACE)
        if fast:
            cols = _plain_columns(out)
            if cols is not None:
                self._add(*cols, fast=True)
                return
            rows = _FAST_LINE.findall(out)  # the comment group is "<sym>" or ""
            fast = len(rows) == out.count("\n\t") + out.startswith("\t")
        if not fast:
            match = _LINE.match
            rows = [m.groups() for m in map(match, out.splitlines()) if m is not None]
        # all encoding words at once: hex text is big-endian per word, the bytes little-endian
        hexdata = bytes.fromhex("".join([r[2] for r in rows]).replace(" ", ""))
        if not rows:
            self._data.append(hexdata)
            return
        texts, addresses, hexwords, comments = zip(*rows)
        del rows  # (its 33,000 tuples: memory the instructions made next can reuse)
        self._add(texts, addresses, hexwords, comments, hexdata, fast=1 if fast else False)

    def _add(self, texts, addresses, hexwords, comments, hexdata: bytes, fast) -> None:
        """Add the columns of some lines: texts (to strip), addresses (hex text, or numbers
        when ``fast is True``) and encoding words (hex text), comments (as :meth:`entries`
        reads them when ``fast`` is true: the regex's ``<sym>`` or "") and all the lines' words
        as bytes (``hexdata``: big-endian words)."""
        words = array(_U32, hexdata)
        if sys.byteorder == "little":
            words.byteswap()
        data = words.tobytes()
        self._data.append(data)
        self._parts.append((comments, fast))
        self.texts += map(str.strip, texts)
        if fast is True:  # (_plain_columns: numbers already)
            self.addresses += addresses
        else:
            self.addresses += map(int, addresses, repeat(16))
        # 8 hex digits per 4-byte word, blank-separated; the lines' encodings cut from
        # ``data`` by one struct format of ``Ns`` fields (C code, no slice object per line:
        # a third of the time of slicing)
        try:
            fmt = "".join(map(_HEX_FIELD.__getitem__, map(len, hexwords)))
        except KeyError:
            fmt = "".join([f"{(n + 1) // 9 * 4}s" for n in map(len, hexwords)])
        encodings = struct.Struct("<" + fmt).unpack(data)
        self.encodings += encodings
        self.sizes += map(len, encodings)

    def finish(self) -> "Listing":
        """After the last :meth:`feed`: join :attr:`data`."""
        self.data = b"".join(self._data)
        self._data = [self.data]
        return self

    def __len__(self) -> int:
        return len(self.texts)

    def entries(self) -> list[ListingEntry]:
        """One :class:`ListingEntry` per line (with the ``<sym+0x..>`` comment)."""
        comments = []
        for part, fast in self._parts:
            comments += [c[1:-1] if c else None for c in part] if fast else part
        return [ListingEntry(*e) for e in zip(self.addresses, self.texts, self.encodings, comments)]


def _plain_columns(out: str):
    """The columns :data:`_FAST_LINE` finds in ``out`` (plain ASCII lines), found by string
    operations over whole blocks of lines instead of a regex scan of every character (the
    padding before ``//`` is most of the listing) or Python code per line:
    (texts, addresses, words, comments, the words' bytes), or ``None`` unless every line that
    starts with a tab has the exact shape ``\tTEXT// ADDR: WORD[ WORD...][ <SYM>]`` with a
    12-digit address, 8-digit words separated by one blank and no ``/`` in TEXT (the caller
    then lets the regex decide)."""
    heads: list[str] = []
    tails: list[str] = []
    for block in out.split("\n\n"):  # a symbol's header line, then its instruction lines
        if block[:1] == "\t":
            body = block
        else:
            start = block.find("\n\t") + 1
            if not start:
                continue  # no line starts with a tab
            body = block[start:]
        if body[-1:] == "\n":
            body = body[:-1]
        # TEXT and the rest of each line, alternately, if every line holds one "// " (else
        # the checks below fail: some TEXT part would not start with a tab, or some rest
        # would not start with the address)
        parts = body.replace("// ", "\n").split("\n")
        if len(parts) % 2:
            return None
        heads += parts[0::2]
        tails += parts[1::2]
    n = len(heads)
    if not n or len(tails) != n or "/" in "".join(heads):
        return None
    try:
        if "".join(map(itemgetter(0), heads)) != "\t" * n:
            return None
    except IndexError:  # an empty TEXT part
        return None
    comments: list[str] | tuple = ("",) * n
    if "<" in "".join(tails):  # symbol comments (branch targets): `` <sym+0x..>``
        tails, comments = list(tails), list(comments)
        for i, t in enumerate(tails):
            k = t.find("<")
            if k >= 0:
                c = t[k:].rstrip(" \t")
                if not c.endswith(">"):
                    return None
                tails[i], comments[i] = t[:k].rstrip(" \t"), c
    # "ADDR: " (12 digits) starts every rest; then the words
    p = "".join(map(itemgetter(slice(0, 14)), tails))
    if len(p) != 14 * n or p[12::14] != ":" * n or p[13::14] != " " * n:
        return None
    a = p.replace(": ", "")
    words = list(map(itemgetter(slice(14, None)), tails))
    w = " ".join(words)
    k = len(w) // 9
    if len(a) != 12 * n or "\t" in w or len(w) % 9 != 8 or w.count(" ") != k \
            or w[8::9] != " " * k:
        return None
    try:
        addr = bytes.fromhex(a)  # (6 bytes an address, unless it held blanks)
        data = bytes.fromhex(w)
    except ValueError:
        return None
    if len(addr) != 6 * n:
        return None
    # the addresses as numbers: 16 + 32 bits each, big-endian
    hilo = struct.unpack(">" + "HI" * n, addr)
    if any(hilo[0::2]):
        addresses = [(h << 32) | lo for h, lo in zip(hilo[0::2], hilo[1::2])]
    else:
        addresses = list(hilo[1::2])
    return heads, addresses, words, comments, data


def objdump_listing(path: str, *, listing: str | None = None) -> list[ListingEntry]:
    """Run ``llvm-objdump -d -z --mcpu=gfx942 -j .text`` on ``path`` and parse the listing
    (``listing``: that tool's output, when already run).

    Raises:
        ToolNotFoundError / ToolFailedError: llvm-objdump is missing or failed.
    """
    return Listing(run_objdump(path) if listing is None else listing).entries()


def is_branch(opcode: str) -> bool:
    """SOPP branches whose simm16 is a PC-relative target (s_branch, s_cbranch_*)."""
    return opcode == "s_branch" or opcode.startswith("s_cbranch_")


def branch_target(address: int, encoding: bytes) -> int:
    """Target of a SOPP branch at ``address``: pc + 4 + 4 * sext(simm16)."""
    simm = int.from_bytes(encoding[0:2], "little", signed=True)
    return address + 4 + 4 * simm


def _positions(seq: list, values) -> list[int]:
    """The positions in ``seq`` of the items equal to one of ``values`` (a few), ascending:
    ``list.index`` scans (C) instead of Python code per item."""
    out: list[int] = []
    for v in values:
        i = -1
        try:
            while True:
                i = seq.index(v, i + 1)
                out.append(i)
        except ValueError:
            pass
    if len(values) > 1:
        out.sort()
    return out


def _is_terminator(op: str) -> bool:
    return op in _TERMINATORS or op.startswith("s_cbranch_")


def _pow2_align(offset: int, cap: int = 256) -> int:
    if offset == 0:
        return cap
    a = offset & -offset
    return min(a, cap)


def _log2(n: int) -> int:
    return max(0, n.bit_length() - 1)


def _data_directives(data: bytes, nobits: bool = False) -> list[Directive]:
    """Bytes as ``.byte`` lines (16 per line), runs of >= 16 zero bytes as ``.zero N``."""
    if nobits:
        return [Directive(".zero", str(len(data)))] if data else []
    out: list[Directive] = []
    i = 0
    n = len(data)
    while i < n:
        j = i
        while j < n and data[j] == 0:
            j += 1
        if j - i >= 16 or (j == n and j > i):
            out.append(Directive(".zero", str(j - i)))
            i = j
            continue
        chunk = data[i:i + 16]
        k = len(chunk)
        # stop the chunk before a long zero run so it can become .zero
        for z in range(k):
            if data[i + z:i + z + 16] == b"\0" * 16:
                k = max(z, 1)
                break
        out.append(Directive(".byte", ", ".join(f"{b:#04x}" for b in data[i:i + k])))
        i += k
    return out


def _word_directives(words: list[int]) -> list[Directive]:
    """32-bit words as ``.fill N, 4, W`` for runs and ``.long`` otherwise."""
    out: list[Directive] = []
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and words[j] == words[i]:
            j += 1
        if j - i >= 2:
            out.append(Directive(".fill", f"{j - i}, 4, {words[i]:#010x}"))
        else:
            out.append(Directive(".long", f"{words[i]:#010x}"))
        i = j
    return out


def raw_descriptor_items(name: str, kd: KernelDescriptor) -> list:
    """The descriptor as data at ``NAME.kd``: ``.long``/``.quad``/``.short`` words,
    with the entry offset written as ``NAME - NAME.kd`` (R_AMDGPU_REL64) so it
    follows the layout.  Starts at ``LabelDef(NAME.kd)``, ends at ``.size NAME.kd, 64``."""
    b = kd.to_bytes()
    le = lambda o, n: int.from_bytes(b[o:o + n], "little")  # noqa: E731
    items: list = [LabelDef(f"{name}.kd"),
                   Directive(".long", f"{le(0, 4):#x}, {le(4, 4):#x}, {le(8, 4):#x}, {le(12, 4):#x}"),
                   Directive(".quad", f"{name} - {name}.kd")]
    items.append(Directive(".byte", ", ".join(f"{x:#04x}" for x in b[24:44])))
    items.append(Directive(".long", f"{le(44, 4):#010x}, {le(48, 4):#010x}, {le(52, 4):#010x}"))
    items.append(Directive(".short", f"{le(56, 2):#06x}, {le(58, 2):#06x}"))
    items.append(Directive(".long", f"{le(60, 4):#x}"))
    items.append(Directive(".size", f"{name}.kd, 64"))
    return items


def raw_note_items(desc: bytes) -> list:
    """An ``NT_AMDGPU_METADATA`` note written as data in ``.note`` (owner "AMDGPU")."""
    items: list = [Directive(".section", '.note,"a",@note'), Directive(".p2align", "2"),
                   Directive(".long", f"{len(NOTE_OWNER) + 1}, {len(desc)}, {NT_AMDGPU_METADATA}"),
                   Directive(".asciz", f'"{NOTE_OWNER}"'), Directive(".p2align", "2")]
    items.extend(_data_directives(desc))
    items.append(Directive(".p2align", "2"))
    return items


def _symbol_directives(sym: Symbol, typ: str, *, with_visibility: bool = True) -> list[Directive]:
    out = []
    if sym.bind == "STB_GLOBAL":
        out.append(Directive(".globl", sym.name))
    elif sym.bind == "STB_WEAK":
        out.append(Directive(".weak", sym.name))
    out.append(Directive(".type", f"{sym.name},{typ}"))
    if with_visibility and sym.visibility in _VIS:
        out.append(Directive(_VIS[sym.visibility], sym.name))
    return out


def _instructions(lst: Listing, start: int, parsed: dict,
                  first: dict | None = None) -> list[Instruction]:
    """Instructions of the listing's lines from ``start`` on; ``parsed``: listing text ->
    (opcode, operands, modifiers) or ``None`` (not parsed: a raw instruction), shared by the
    calls of one listing (a kernel repeats few distinct lines); ``first`` (when given, shared
    likewise): listing text -> the index of its first line, filled as texts are first met."""
    from .asm_parser import parse_line
    decoded = decoded_instruction
    insts = []
    append = insts.append
    texts, addresses, encodings = lst.texts, lst.addresses, lst.encodings
    if start:
        texts, addresses, encodings = texts[start:], addresses[start:], encodings[start:]
    for t, address, encoding in zip(texts, addresses, encodings):
        r = parsed.get(t, False)
        if r is False:  # what parse_instruction(t) accepts, without making an Instruction
            try:
                labels, stmt = parse_line(t)
            except AsmevoError:
                labels, stmt = (), None
            r = None if labels or stmt is None or stmt[0] != "i" else stmt[1:4]
            parsed[t] = r
            if first is not None:
                first[t] = start + len(insts)
        if r is not None:
            inst = decoded(r[0], r[1], r[2], encoding, address)
        else:
            op, _, rest = t.partition(" ")
            inst = Instruction(op, [Expr(rest.strip())] if rest.strip() else [], raw=True,
                               encoding=encoding, address=address)
        append(inst)
    return insts


class _Builder:
    def __init__(self, co: CodeObject, listing: Listing):
        self.co = co
        self.listing = listing
        #: the instructions when made while the listing was read (:func:`disassemble`)
        self.prebuilt: list[Instruction] | None = None
        #: listing text -> index of its first line (:func:`_instructions`), once made
        self.first: dict[str, int] | None = None
        #: listing text -> its printed line, for the texts :func:`_quick_check` printed
        self.printed: dict[str, str] = {}
        #: the instructions' opcodes and the positions of the branches (build_text)
        self.opcodes: list[str] = []
        self.branch_pos: list[int] = []
        #: work for the check to do while its llvm-mc runs (:func:`disassemble_and_print`)
        self.meanwhile: _Meanwhile | None = None
        self.text = co.text
        self.items: list = []
        self.labels: dict[int, str] = {}       # address -> label used in code
        self.aliases: list[tuple[str, str]] = []
        self.kd_items: dict[str, list] = {}
        self.deferred_vis: list[Directive] = []
        self.anon = 0
        self.data_labels: dict[int, str] = {}  # data address -> generated label (PC-relative targets)
        #: symbolized PC-relative pairs: (add, addc, original operands/raw of both) for undo
        self.pcrel: list[tuple] = []

    # -- .text ----------------------------------------------------------
    def check_listing(self) -> None:
        t = self.text
        lst = self.listing
        # the common case at once: contiguous and the same bytes
        if len(lst.data) == t.size and lst.data == t.data \
                and lst.addresses == list(accumulate(lst.sizes[:-1], initial=t.addr)):
            return
        pos = t.addr
        for address, encoding in zip(lst.addresses, lst.encodings):
            if address != pos:
                raise CodeObjectError(f"llvm-objdump listing skips from {pos:#x} to {address:#x}; "
                                      "expected every .text byte to be disassembled",
                                      file=self.co.path, offset=t.offset + pos - t.addr)
            off = address - t.addr
            if t.data[off:off + len(encoding)] != encoding:
                raise CodeObjectError(f"llvm-objdump words at {address:#x} differ from the file bytes",
                                      file=self.co.path, offset=t.offset + off)
            pos += len(encoding)
        if pos != t.addr + t.size:
            raise CodeObjectError(f"llvm-objdump listing ends at {pos:#x}, .text ends at "
                                  f"{t.addr + t.size:#x}; expected the whole section",
                                  file=self.co.path, offset=t.offset + pos - t.addr)

    def make_instructions(self) -> list[Instruction]:
        if self.prebuilt is not None:
            return self.prebuilt
        self.first = {}
        return _instructions(self.listing, 0, {}, self.first)

    # -- .text ----------------------------------------------------------

    def build_text(self) -> None:
        co, t = self.co, self.text
        text_end = t.addr + t.size
        insts = self.make_instructions()
        self.insts = insts
        # (one instruction per listing line: the listing's addresses are theirs)
        addresses = self.listing.addresses if len(insts) == len(self.listing) \
            else list(map(attrgetter("address"), insts))
        self.index = index = dict(zip(addresses, range(len(insts))))
        opcodes = list(map(attrgetter("opcode"), insts))
        # symbols in .text
        funcs: list[Symbol] = []
        seen_func_addr: dict[int, str] = {}
        local_names: dict[int, list[str]] = {}
        for s in sorted((s for s in co.symbols if s.section == ".text" and s.name
                         and s.type not in ("STT_SECTION", "STT_FILE")), key=lambda s: s.value):
            if s.type == "STT_FUNC":
                if s.value in seen_func_addr:
                    self.aliases.append((s.name, seen_func_addr[s.value]))
                    continue
                seen_func_addr[s.value] = s.name
                funcs.append(s)
            else:
                local_names.setdefault(s.value, []).append(s.name)
        # branch targets
        targets: set[int] = set()
        distinct_ops = set(opcodes)
        branch_ops = {op for op in distinct_ops if is_branch(op)}
        self.branch_ops = branch_ops
        #: positions of the branches in insts (ascending)
        self.branch_pos = _positions(opcodes, branch_ops)
        branches = list(map(insts.__getitem__, self.branch_pos))
        term_ops = {op for op in distinct_ops if _is_terminator(op)}
        #: positions of the terminators in insts (a block ends after each, see blocks())
        self.term_pos = _positions(opcodes, term_ops)
        self.opcodes = opcodes
        for inst in branches:
            if not inst.raw:
                tgt = branch_target(inst.address, inst.encoding)
                if tgt in index:
                    targets.add(tgt)
        label_addrs = set(local_names) | targets
        label_addrs |= self.find_pc_relative(insts, index, {f.value for f in funcs})
        for a in sorted(label_addrs):
            names = local_names.get(a)
            if names:
                self.labels[a] = names[0]
                self.aliases.extend((n, names[0]) for n in names[1:])
            elif a in self.pc_labels:
                self.labels[a] = self.pc_labels[a]
            else:
                self.labels[a] = f".Lasmevo_{a:x}"
        self.symbolize_pc_relative()
        #: positions in insts of the instructions at a label (a block starts at each)
        self.label_pos = sorted(index[a] for a in self.labels if a in index)
        for inst in branches:
            if not inst.raw:
                tgt = branch_target(inst.address, inst.encoding)
                if tgt in self.labels and inst.operands and isinstance(inst.operands[-1], (Imm, Label)):
                    inst.operands[-1] = Label(self.labels[tgt])
        # regions
        self.items.append(Directive(".text"))
        pos = t.addr
        self.kernels: dict[str, Kernel] = {}
        kmap = {k.name: k for k in co.kernels}
        for fi, f in enumerate(funcs):
            nxt = funcs[fi + 1].value if fi + 1 < len(funcs) else text_end
            if f.value > pos:
                self.gap(pos, f.value, insts, index, label_addrs)
            end = f.value + f.size if f.size > 0 else nxt
            end = min(max(end, f.value), nxt)
            if f.size > 0 and end < nxt and any(end <= a < nxt for a in label_addrs):
                end = nxt  # labels after the symbol's end: the code goes on
            for what, a in (("starts", f.value), ("ends", end)):
                if a not in index and a != text_end:  # a corrupt st_value / st_size
                    raise CodeObjectError(
                        f"function symbol {f.name!r} (value {f.value:#x}, size {f.size}) {what} at "
                        f"{a:#x}, inside an instruction; expected instruction boundaries",
                        file=co.path, offset=t.offset + (a - t.addr))
            if f.size == 0:
                end = self.trim_padding(f.value, end, insts, index, label_addrs)
            align = _pow2_align(f.value - t.addr)
            self.items.append(Directive(".p2align", str(_log2(align))))
            kinfo = kmap.get(f.name)
            kd_sym = kinfo.kd_symbol if kinfo else None
            same_vis = kd_sym is None or kd_sym.visibility == f.visibility
            self.items.extend(_symbol_directives(f, "@function", with_visibility=same_vis))
            k = Kernel(f.name, self.blocks(f.name, f.value, end, insts, index),
                       is_kernel=kinfo is not None, address=f.value)
            if kinfo is not None:
                k.descriptor = kinfo.descriptor.copy()
                k.metadata = copy.deepcopy(kinfo.metadata.raw) if kinfo.metadata else None
            self.kernels[f.name] = k
            co.code_ranges[f.name] = (f.value, end)
            self.items.append(k)
            if f.size > 0 and end == f.value + f.size:
                self.items.append(LabelDef(f".Lasmevo_end_{f.name}"))
                self.items.append(Directive(".size", f"{f.name}, .Lasmevo_end_{f.name}-{f.name}"))
            elif f.size > 0:
                self.items.append(Directive(".size", f"{f.name}, {f.size}"))
            if not same_vis and f.visibility in _VIS:
                self.deferred_vis.append(Directive(_VIS[f.visibility], f.name))
            pos = end
        if pos < text_end:
            self.gap(pos, text_end, insts, index, label_addrs)
        for a, b in self.aliases:
            self.items.append(Directive(".set", f"{a}, {b}"))

    # -- PC-relative data references --------------------------------------
    def find_pc_relative(self, insts: list[Instruction], index: dict[int, int],
                         func_starts: set[int]) -> set[int]:
        """Find ``s_getpc_b64 s[N:N+1]; s_add_u32 sN, sN, LO; s_addc_u32 sN+1, sN+1, HI``
        whose result ``pc + sext64(HI:LO)`` lies in an allocated data section (clang's
        ``sym@rel32@lo+4`` / ``sym@rel32@hi+12`` after linking).  Returns the addresses that
        need a label (the PC value, i.e. the instruction after each ``s_getpc_b64``)."""
        from ..ir.operands import Reg
        self.pc_labels: dict[int, str] = {}
        self.pc_pairs: list[tuple[Instruction, Instruction, int, int]] = []
        kd_ranges = [(k.kd_address, k.kd_address + 64) for k in self.co.kernels]
        opcodes = self.opcodes if len(self.opcodes) == len(insts) \
            else list(map(attrgetter("opcode"), insts))
        for n in _positions(opcodes[:-2], ("s_getpc_b64",)):
            g = insts[n]
            if g.raw or not g.operands:
                continue
            d = g.operands[0]
            if not (isinstance(d, Reg) and d.file == "s" and d.count == 2):
                continue
            add, addc = insts[n + 1], insts[n + 2]
            if add.address in func_starts or addc.address in func_starts:
                continue  # the three must belong to one function
            lo = self._pcrel_operand(add, "s_add_u32", d.index)
            hi = self._pcrel_operand(addc, "s_addc_u32", d.index + 1)
            if lo is None or hi is None or len(add.encoding) != 8 or len(addc.encoding) != 8:
                continue  # both must carry a 32-bit literal for a rel32 fixup to fit in place
            off = (hi << 32) | lo
            if off >= 1 << 63:
                off -= 1 << 64
            pc = g.address + len(g.encoding)
            target = pc + off
            sec = self.co.section_at(target)
            if sec is None or sec.executable or sec.name in _SKIP_SECTIONS \
                    or sec.type not in ("SHT_PROGBITS", "SHT_NOBITS"):
                continue
            if any(a <= target < b for a, b in kd_ranges):
                continue
            self.pc_labels[pc] = f".Lasmevo_pc_{pc:x}"
            self.pc_pairs.append((add, addc, pc, target))
        return set(self.pc_labels)

    @staticmethod
    def _pcrel_operand(inst: Instruction, opcode: str, reg: int) -> int | None:
        """The 32-bit value of ``opcode sREG, sREG, IMM`` (literal or inline constant)."""
        from ..ir.operands import Reg, Src
        if inst.opcode != opcode or len(inst.operands) != 3 or inst.encoding is None:
            return None
        d, s0, s1 = inst.operands
        s0 = s0.base if isinstance(s0, Src) else s0
        for r in (d, s0):
            if not (isinstance(r, Reg) and r.file == "s" and r.index == reg and r.count == 1):
                return None
        if len(inst.encoding) == 8:
            return int.from_bytes(inst.encoding[4:8], "little")
        return None

    def symbolize_pc_relative(self) -> None:
        """Rewrite each pair found by :meth:`find_pc_relative` as
        ``SYM@rel32@lo+(.+4-.Lasmevo_pc_PC)`` / ``SYM@rel32@hi+(.+4-.Lasmevo_pc_PC)``: the
        ld.lld fixup (R_AMDGPU_REL32_LO/HI = S + A - P, P the literal's address, 4 bytes
        into the SOP2 instruction) then gives ``SYM - PC`` wherever the code and data end
        up.  SYM is a data symbol at the target, else a ``.Lasmevo_data_ADDR`` label that
        :meth:`build_data` places there."""
        by_addr: dict[int, str] = {}
        for sym in self.co.symbols:
            if sym.section and sym.section != ".text" and sym.name and not sym.name.endswith(".kd") \
                    and sym.type in ("STT_OBJECT", "STT_NOTYPE") and sym.bind != "STB_WEAK":
                by_addr.setdefault(sym.value, sym.name)
        for add, addc, pc, target in self.pc_pairs:
            name = by_addr.get(target)
            if name is None:
                name = self.data_labels.setdefault(target, f".Lasmevo_data_{target:x}")
            label = self.labels.get(pc, self.pc_labels[pc])  # a local symbol there keeps its name
            self.pcrel.append((add, addc, list(add.operands), list(addc.operands), add.raw, addc.raw))
            add.operands[2] = Expr(f"{name}@rel32@lo+(.+4-{label})")
            addc.operands[2] = Expr(f"{name}@rel32@hi+(.+4-{label})")
            add.raw = addc.raw = False

    def undo_pc_relative(self) -> None:
        """Put the literal operands back (the symbolic form did not reproduce the code)."""
        for add, addc, ops_a, ops_c, raw_a, raw_c in self.pcrel:
            add.operands[:] = ops_a
            addc.operands[:] = ops_c
            add.raw, addc.raw = raw_a, raw_c
        self.pcrel = []

    def trim_padding(self, start: int, end: int, insts, index, label_addrs) -> int:
        i = index.get(end, len(insts)) - 1
        first = index[start]
        while i > first:
            inst = insts[i]
            w = int.from_bytes(inst.encoding[:4], "little")
            if len(inst.encoding) != 4 or w not in _PAD_WORDS or inst.address in label_addrs:
                break
            prev = insts[i - 1]
            if prev.opcode not in _TERMINATORS and int.from_bytes(prev.encoding[:4], "little") \
                    not in _PAD_WORDS:
                break  # padding must follow a terminator (or more padding)
            i -= 1
        return insts[i].address + len(insts[i].encoding)

    def gap(self, start: int, end: int, insts, index, label_addrs) -> None:
        """Bytes between functions: padding words, or code (a non-kernel function)."""
        i, j = index[start], index.get(end, len(insts))
        chunk = insts[i:j]
        is_pad = all(len(x.encoding) == 4 and int.from_bytes(x.encoding, "little") in _PAD_WORDS
                     for x in chunk) and not any(start <= a < end for a in label_addrs)
        if is_pad:
            self.items.extend(_word_directives([int.from_bytes(x.encoding, "little") for x in chunk]))
            return
        self.anon += 1
        name = f"{ANON_PREFIX}{self.anon}"
        self.items.append(Directive(".p2align", str(_log2(_pow2_align(start - self.text.addr, 4)))))
        self.items.append(Kernel(name, self.blocks(name, start, end, insts, index), is_kernel=False,
                                 address=start))
        self.co.code_ranges[name] = (start, end)

    def blocks(self, name: str, start: int, end: int, insts, index) -> list[BasicBlock]:
        """The code from ``start`` to ``end`` as blocks: one starts at each label and after
        each terminator (found by position: :attr:`label_pos`, :attr:`term_pos`)."""
        i, j = index[start], index.get(end, len(insts))
        labels = self.labels
        cuts: dict[int, str | None] = {}
        tp = self.term_pos
        for k in range(bisect_left(tp, i), bisect_left(tp, j - 1)):
            cuts[tp[k] + 1] = None  # after a terminator (not the range's last instruction)
        lp = self.label_pos
        for k in range(bisect_right(lp, i), bisect_left(lp, j)):
            cuts[lp[k]] = labels[insts[lp[k]].address]  # a label (not at start)
        blocks = []
        label = labels.get(start, name)
        pos = i
        for c in sorted(cuts):
            blocks.append(BasicBlock(label, insts[pos:c]))
            label, pos = cuts[c], c
        blocks.append(BasicBlock(label, insts[pos:j]))
        return blocks

    # -- data sections -----------------------------------------------------
    def build_data(self) -> None:
        co = self.co
        kd_names = {k.name + ".kd": k for k in co.kernels}
        for s in co.sections:
            if not s.alloc or s.name in _SKIP_SECTIONS or s.type not in ("SHT_PROGBITS", "SHT_NOBITS"):
                continue
            nobits = s.type == "SHT_NOBITS"
            flags = "a" + ("w" if s.flags & 1 else "") + ("x" if s.flags & 4 else "")
            self.items.append(Directive(".section", f'{s.name},"{flags}",@{"nobits" if nobits else "progbits"}'))
            if s.align > 1:
                self.items.append(Directive(".p2align", str(_log2(s.align))))
            syms = sorted((x for x in co.symbols if x.section == s.name and x.name
                           and x.type not in ("STT_SECTION", "STT_FILE")), key=lambda x: (x.value, x.name))
            pos = s.addr
            data = s.data if not nobits else b"\0" * s.size
            cuts = sorted(a for a in self.data_labels if s.addr <= a < s.addr + s.size)

            def emit(a: int, b: int) -> None:
                """Data bytes [a, b) with the generated labels that fall inside."""
                for c in [x for x in cuts if a <= x < b] + [b]:
                    self.items.extend(_data_directives(data[a - s.addr:c - s.addr], nobits))
                    if c < b:
                        self.items.append(LabelDef(self.data_labels[c]))
                    a = c
            for sym in syms:
                if sym.value < pos:  # overlapping symbol: alias into data already written
                    self.items.append(Directive(".set", f"{sym.name}, . - {pos - sym.value}"))
                    continue
                emit(pos, sym.value)
                pos = sym.value
                if sym.name in kd_names and not nobits:
                    k = kd_names[sym.name]
                    if not (pos == s.addr and s.align >= 64):
                        self.items.append(Directive(".p2align", "6"))
                    start = len(self.items)
                    self.items.append(AmdhsaKernel(k.name, k.descriptor.to_directives())
                                      if not k.descriptor.directive_blockers() else None)
                    if self.items[-1] is None:
                        self.items.pop()
                        self.items.extend(self.raw_kd(k.name))
                    self.kd_items[k.name] = [start, len(self.items)]
                    pos += 64
                    continue
                typ = {"STT_OBJECT": "@object", "STT_FUNC": "@function"}.get(sym.type)
                if typ:
                    self.items.extend(_symbol_directives(sym, typ))
                self.items.append(LabelDef(sym.name))
                size = min(sym.size, s.addr + s.size - pos)
                if size:
                    emit(pos, pos + size)
                if sym.size:
                    self.items.append(Directive(".size", f"{sym.name}, {sym.size}"))
                pos += size
            emit(pos, s.addr + s.size)
        # Kernel symbols whose descriptor visibility differed: declared after the descriptors.
        self.items.extend(self.deferred_vis)

    def raw_kd(self, name: str) -> list:
        k = next(k for k in self.co.kernels if k.name == name)
        items = []
        kd = k.kd_symbol
        if kd.bind == "STB_GLOBAL":
            items.append(Directive(".globl", kd.name))
        elif kd.bind == "STB_WEAK":
            items.append(Directive(".weak", kd.name))
        items.append(Directive(".type", f"{kd.name},@object"))
        if kd.visibility in _VIS:
            items.append(Directive(_VIS[kd.visibility], kd.name))
        return items + raw_descriptor_items(name, k.descriptor)

    def make_raw_kd(self, name: str) -> None:
        a, b = self.kd_items[name]
        new = self.raw_kd(name)
        self.items[a:b] = new
        delta = len(new) - (b - a)
        for n, (x, y) in self.kd_items.items():
            if x >= b:
                self.kd_items[n] = [x + delta, y + delta]
        self.kd_items[name] = [a, a + len(new)]

    # -- metadata -----------------------------------------------------------
    def build_metadata(self) -> None:
        co = self.co
        self.meta_index = None
        if co.metadata is None:
            return
        self.meta_index = len(self.items)
        try:
            self.items.append(MetadataBlock(to_yaml(co.metadata.raw)))
        except ValueError:
            self.items[self.meta_index:] = raw_note_items(co.metadata_note)

    def make_raw_metadata(self) -> None:
        self.items[self.meta_index:] = raw_note_items(self.co.metadata_note)


# -- checking by assembling -----------------------------------------------------

def _line_owners(module: Module) -> list:
    """For each printed line (1-based index - 1): the IR object it came from, mirroring
    :func:`asmevo.ir.printer.print_module`."""
    owners: list = []
    for it in module.items:
        if isinstance(it, (Directive, LabelDef)):
            owners.append(it)
        elif isinstance(it, Kernel):
            owners.append(it)
            for i, b in enumerate(it.blocks):
                owners.extend([it] * len(b.directives))
                if b.label and not (i == 0 and b.label == it.name):
                    owners.append(it)
                owners.extend(b.instructions)
        elif isinstance(it, AmdhsaKernel):
            owners.extend([it] * (len(it.fields) + 2))
        elif isinstance(it, MetadataBlock):
            n = it.text.count("\n") + (0 if it.text.endswith("\n") else 1)
            owners.extend([it] * (n + 2))
    return owners


class _ObjInfo(Record):
    """What the check compares of llvm-mc's object: ``.text`` bytes, descriptor bytes by
    kernel name, the decoded metadata, and ``text_relocs``: offsets in ``.text`` of relocated
    4-byte fields (RELA: the field holds 0 until linking)."""

    _fields = ("text", "kds", "metadata", "text_relocs")

    def __init__(self, text: bytes, kds: dict[str, bytes], metadata: dict | None,
                 text_relocs: tuple[int, ...] = ()):
        self.text = text
        self.kds = kds
        self.metadata = metadata
        self.text_relocs = text_relocs


def _read_object_data(data: bytes, *, with_elf: bool = False):
    """The parts of llvm-mc's object ``data`` that the check compares
    (:mod:`asmevo.frontend.elf`; a file it declines goes to :func:`_read_object_pyelftools`);
    with ``with_elf``, the pair (info, the :class:`asmevo.frontend.elf.Elf` read, ``None`` if
    declined)."""
    from .elf import read_elf
    elf = read_elf(data)
    info = _object_info(elf, data)
    return (info, elf) if with_elf else info


def _object_info(elf, data: bytes) -> _ObjInfo:
    """:func:`_read_object`'s info from ``elf`` (by pyelftools when ``None``)."""
    if elf is None:
        return _read_object_pyelftools(data)
    symtab = elf.by_name.get(".symtab")
    rela = elf.by_name.get(".rela.text")
    if (symtab is not None and (symtab.type_number not in (2, 11) or symtab.entsize != 24)) \
            or (rela is not None and rela.type_number != 4):
        return _read_object_pyelftools(data)
    sec = elf.by_name.get(".text")
    text = b""
    if sec is not None:
        text = b"\0" * sec.size if sec.type_number == 8 else elf.section_data(sec)
    kds: dict[str, bytes] = {}
    for sym in elf.symbols(symtab) if symtab else []:
        if sym.name.endswith(".kd") and isinstance(sym.shndx, int) and sym.shndx:
            if sym.shndx >= len(elf.sections):
                return _read_object_pyelftools(data)
            s = elf.sections[sym.shndx]
            if s.type_number != 8:
                d = elf.section_data(s)
                kds[sym.name[:-3]] = d[sym.value:sym.value + 64]
    relocs = elf.rela_offsets(rela) if rela is not None else []
    md = None
    for s in elf.sections:
        if s.type_number == 7:
            for n in iter_notes(elf.section_data(s)):
                if n.owner == NOTE_OWNER and n.type == NT_AMDGPU_METADATA:
                    md = decode_metadata(n.desc).raw
    return _ObjInfo(text, kds, md, tuple(relocs))


def _read_object_pyelftools(data: bytes) -> _ObjInfo:
    """:func:`_read_object` by pyelftools."""
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(data))
    text = b""
    sec = elf.get_section_by_name(".text")
    if sec is not None:
        text = sec.data()
    kds: dict[str, bytes] = {}
    symtab = elf.get_section_by_name(".symtab")
    for sym in symtab.iter_symbols() if symtab else []:
        if sym.name.endswith(".kd") and isinstance(sym["st_shndx"], int) and sym["st_shndx"]:
            s = elf.get_section(sym["st_shndx"])
            if s.header.sh_type != "SHT_NOBITS":
                d = s.data()
                kds[sym.name[:-3]] = d[sym["st_value"]:sym["st_value"] + 64]
    relocs: list[int] = []
    rela = elf.get_section_by_name(".rela.text")
    if rela is not None:
        relocs = [r["r_offset"] for r in rela.iter_relocations()]
    md = None
    for s in elf.iter_sections():
        if s.header.sh_type == "SHT_NOTE":
            for n in iter_notes(s.data()):
                if n.owner == NOTE_OWNER and n.type == NT_AMDGPU_METADATA:
                    md = decode_metadata(n.desc).raw
    return _ObjInfo(text, kds, md, tuple(relocs))


def _mc_object(text: str, *, with_elf: bool = False, meanwhile=None):
    """llvm-mc's object of ``text``: its :class:`_ObjInfo`; with ``with_elf``, the pair
    (info, :class:`asmevo.frontend.elf.Elf` or ``None`` when that reader declines the file).
    ``meanwhile()`` is called while llvm-mc runs (which then waits on a thread).  The object
    comes through a pipe (no temporary file)."""
    from ..backend.assemble import object_bytes
    if meanwhile is None:
        return _read_object_data(object_bytes(text, filename="<disassembly>"), with_elf=with_elf)
    import threading

    from ..llvm import WAIT_S, signals_held, stop_tools
    done: list = []
    failed: list[BaseException] = []
    finished = threading.Event()

    def run() -> None:
        try:
            done.append(object_bytes(text, filename="<disassembly>"))
        except BaseException as e:  # noqa: BLE001 - raised again below
            failed.append(e)
        finally:
            finished.set()
    worker = threading.Thread(target=run, name="asmevo-check")
    try:
        with signals_held():    # (a Ctrl-C as the thread starts acts once it runs)
            worker.start()
        meanwhile()
        # timed waits: a Ctrl-C or SIGTERM that comes just before one acts at once (and not
        # Thread.join: interrupted, it can take a running thread for ended, bpo-45274)
        while not finished.wait(WAIT_S):
            pass
    except BaseException:   # (Ctrl-C): llvm-mc is stopped, not waited for
        while worker.ident is not None and not finished.is_set():
            stop_tools(worker.ident)
            finished.wait(WAIT_S)
        raise
    worker.join()
    if failed:
        raise failed[0]
    return _read_object_data(done[0], with_elf=with_elf)


_ENC = re.compile(r"encoding: \[([^\]]*)\]")


def _show_encodings(lines: list[str], target: str = "amdgcn-amd-amdhsa--gfx942") -> list[list[int | None]]:
    """Encode instruction lines with ``llvm-mc -show-encoding``; one byte list per line
    (``None`` where a fixup fills the byte)."""
    from ..backend.assemble import run_mc
    src = f'\t.amdgcn_target "{target}"\n\t.text\n' + "\n".join(lines) + "\n"
    out = run_mc(src, ["-show-encoding"], filename="<disassembly>").stdout
    res = []
    for m in _ENC.finditer(out):
        bs = []
        for tok in m.group(1).split(","):
            tok = tok.strip()
            bs.append(int(tok, 16) if tok.startswith("0x") else None)
        res.append(bs)
    return res


def _mark_raw_by_encoding(insts: list[Instruction]) -> int:
    """Set ``raw`` on instructions whose printed text does not re-encode identically."""
    cand = [i for i in insts if not i.raw]
    marked = 0
    while cand:
        lines = [print_instruction(i) for i in cand]
        try:
            encs = _show_encodings(lines)
        except AsmSyntaxError as e:
            if e.line is None or not 3 <= e.line < 3 + len(cand):
                raise
            for ln in {e.line, *getattr(e, "error_lines", ())}:
                if 3 <= ln < 3 + len(cand) and not cand[ln - 3].raw:
                    cand[ln - 3].raw = True
                    marked += 1
            cand = [i for i in insts if not i.raw]
            continue
        if len(encs) != len(cand):
            raise AsmevoError(f"llvm-mc -show-encoding gave {len(encs)} encodings for {len(cand)} "
                              "instructions")
        for inst, enc in zip(cand, encs):
            if len(enc) != len(inst.encoding) or any(b is not None and b != o
                                                     for b, o in zip(enc, inst.encoding)):
                inst.raw = True
                marked += 1
        break
    return marked


def disassemble(code_object: CodeObject | str | os.PathLike, *, check: bool = True,
                listing=None, _meanwhile=None) -> Module:
    """Disassemble a gfx942 code object into a :class:`Module`.

    ``code_object`` is a :class:`CodeObject` or a path.  With ``check`` (the
    default) the module is assembled once with llvm-mc and compared with the
    original (``.text`` bytes, descriptor bytes, decoded metadata), switching
    instructions to ``raw``, descriptors to raw data and metadata to the raw
    note where the text form does not reproduce them.

    ``listing``: llvm-objdump already started on the same file (``asmevo dis`` starts it
    before importing this module): an :class:`asmevo.frontend.objdump.StartedObjdump`, whose
    listing is parsed while the tool writes it.

    Raises:
        CodeObjectError: bad input file (see :func:`read_code_object`).
        ToolNotFoundError / ToolFailedError: llvm-objdump / llvm-mc missing or failed.
    """
    with gc_paused():  # about a third of the time went to collections (see gcpause)
        co = code_object if isinstance(code_object, CodeObject) else read_code_object(code_object)
        if listing is None:
            b = _Builder(co, Listing(run_objdump(co.path)))
        else:  # parse (and make instructions) while llvm-objdump writes the listing
            lst = Listing()
            parsed: dict = {}
            first: dict = {}
            insts: list[Instruction] = []
            for piece in listing.chunks():
                n = len(lst)
                lst.feed(piece)
                insts += _instructions(lst, n, parsed, first)
            b = _Builder(co, lst.finish())
            b.prebuilt = insts
            b.first = first
        b.check_listing()
        b.items.append(Directive(".amdgcn_target", f'"{co.target_id}"'))
        b.items.append(Directive(".amdhsa_code_object_version", str(co.code_object_version)))
        b.build_text()
        b.build_data()
        b.build_metadata()
        module = Module(b.items, source=co.path, code_object=co)
        meanwhile = None
        if _meanwhile is not None:  # (see disassemble_and_print)
            meanwhile, box = _meanwhile
            box += [module, b]
        b.meanwhile = meanwhile
        if check:
            _check(module, b)
        return module


def disassemble_and_print(code_object: CodeObject | str | os.PathLike, *,
                          listing=None) -> tuple[Module, str]:
    """:func:`disassemble` and :func:`asmevo.ir.printer.print_module` of the result (what
    ``asmevo dis`` writes), the printing done while llvm-mc assembles the check's text (on
    the other core); printed again only when the check changed the module."""
    box: list = []
    meanwhile = _Meanwhile(lambda: _print_built(*box))
    module = disassemble(code_object, listing=listing, _meanwhile=(meanwhile, box))
    if meanwhile.valid:
        return module, meanwhile.result
    return module, print_module(module)


def _print_built(module: Module, b: _Builder) -> str:
    """``print_module(module)`` of a module :class:`_Builder` ``b`` has just built, in a
    fraction of the time: an instruction prints as every other one made from the same listing
    text (they share their operand and modifier objects, the same fact
    :func:`asmevo.ir.printer.print_block`'s memo relies on), so one line is printed per
    listing text and a block's lines are looked up by their texts; branches (operands
    rewritten to labels), raw instructions and symbolized PC-relative pairs print one by one.
    Other items print as :func:`print_module` prints them."""
    texts = b.listing.texts
    insts = b.insts
    index = b.index
    branch_ops = b.branch_ops
    first = b.first
    if first is None or len(insts) != len(texts):
        first = dict(zip(reversed(texts), range(len(texts) - 1, -1, -1)))
    # the lines of a text share opcode and raw flag (made from one parse) unless changed
    # since: found by text, then checked one by one (symbolized PC-relative pairs are
    # special by identity)
    odd = {t for t, n in first.items() if insts[n].raw or insts[n].opcode in branch_ops}
    if all(insts[first[t]].opcode in branch_ops and not insts[first[t]].raw for t in odd) \
            and len(b.branch_pos) == sum(1 for n in b.branch_pos if texts[n] in odd):
        special = list(b.branch_pos)  # (no raw text: the special lines are the branches)
    else:
        special = [n for n, t in enumerate(texts) if t in odd] if odd else []
    if b.pcrel:
        special = sorted({*special, *(index[x.address] for p in b.pcrel for x in p[:2])})
    not_plain = set(special)
    printed = b.printed
    line_of = {t: printed.get(t) or "\t" + insts[n].text()
               for t, n in first.items()
               if n not in not_plain}  # a text whose first line is special: its blocks go slowly
    get = line_of.__getitem__
    parts: list[str] = []
    others: list = []
    for it in module.items:
        if not isinstance(it, Kernel):
            others.append(it)
            continue
        if others:
            parts.append(print_module(Module(others)))
            others = []
        out = [f"{it.name}:\n"]
        for i, blk in enumerate(it.blocks):
            for d in blk.directives:
                out.append("\t" + d.text() + "\n")
            if blk.label and not (i == 0 and blk.label == it.name):
                out.append(blk.label + ":\n")
            code = blk.instructions
            if not code:
                continue
            n0 = index.get(code[0].address, -1)
            n1 = n0 + len(code)
            lines = None
            if n0 >= 0 and n1 <= len(insts) and all(map(is_, code, insts[n0:n1])):
                lines = []
                pos = n0
                j = bisect_left(special, n0)
                try:
                    while j < len(special) and special[j] < n1:
                        k = special[j]
                        lines += map(get, texts[pos:k])
                        lines.append(print_instruction(insts[k]))
                        pos = k + 1
                        j += 1
                    lines += map(get, texts[pos:n1])
                except KeyError:
                    lines = None
            if lines is None:
                lines = [print_instruction(inst) for inst in code]
            lines.append("")
            out.append("\n".join(lines))
        parts.append("".join(out))
    if others:
        parts.append(print_module(Module(others)))
    return "".join(parts)


class _Meanwhile:
    """Work done while the check's first llvm-mc run goes on (printing the module); its
    ``result`` holds (``valid``) only when the check then changes nothing."""

    def __init__(self, fn):
        self.fn = fn
        self.ran = False
        self.valid = False
        self.result = None

    def run(self) -> None:
        self.ran = True
        self.result = self.fn()
        self.valid = True


#: the section of :func:`_quick_check`'s object that holds each distinct instruction text once,
#: each after a label ``CHECK_LABEL<n>`` (so that the object's symbols say where each starts)
CHECK_SECTION = ".asmevo_check"
CHECK_LABEL = "__asmevo_check_"


def _layout_text(module: Module, t, path: str, check: list[str] | None = None) -> tuple[str, list]:
    """:func:`_quick_check`'s text: the module with every block's code as ``.incbin`` of its
    original bytes, except a branch at a block's end (printed, so that llvm-mc encodes its
    label where the layout puts it), and ``check`` (instruction lines) in
    :data:`CHECK_SECTION` after everything; and the item each line of the text comes from
    (``None`` for the check lines)."""
    parts: list[str] = []
    owners: list = []
    for it in module.items:
        if isinstance(it, Kernel):
            lines = [f"{it.name}:"]
            for i, blk in enumerate(it.blocks):
                lines.extend("\t" + d.text() for d in blk.directives)
                if blk.label and not (i == 0 and blk.label == it.name):
                    lines.append(blk.label + ":")
                insts = blk.instructions
                if not insts:
                    continue
                last = insts[-1]
                branch = not last.raw and is_branch(last.opcode)
                a = insts[0].address
                end = last.address if branch else last.address + len(last.encoding)
                if end > a:
                    lines.append(f'\t.incbin "{path}", {t.offset + a - t.addr}, {end - a}')
                if branch:
                    lines.append(print_instruction(last))
            chunk = "\n".join(lines) + "\n"
        else:
            chunk = print_module(Module([it]))
        parts.append(chunk)
        owners.extend([it] * chunk.count("\n"))
    if check:
        parts.append(f'\t.section {CHECK_SECTION},"ax",@progbits\n')
        parts.extend(f"{CHECK_LABEL}{n}:\n{line}\n" for n, line in enumerate(check))
    return "".join(parts), owners


def _check_section_matches(elf, want: list[bytes]) -> bool:
    """Whether :data:`CHECK_SECTION` of ``elf`` holds ``want[n]`` right at label n, one after
    another and nothing else, with no relocation (a fixup left for the linker)."""
    sec = elf.by_name.get(CHECK_SECTION)
    if sec is None or sec.type_number != 1:
        return False
    if any(s.type_number in (4, 9) and s.info == sec.index for s in elf.sections):
        return False
    symtab = elf.by_name.get(".symtab")
    if symtab is None or symtab.type_number != 2 or symtab.entsize != 24:
        return False
    starts = {s.name: s.value for s in elf.symbols(symtab)
              if s.shndx == sec.index and s.name.startswith(CHECK_LABEL)}
    data = elf.section_data(sec)
    pos = 0
    for n, w in enumerate(want):
        if starts.get(f"{CHECK_LABEL}{n}") != pos or data[pos:pos + len(w)] != w:
            return False
        pos += len(w)
    return pos == len(data)


def _quick_check(module: Module, b: _Builder) -> bool:
    """The check of :func:`_check` in one small llvm-mc run instead of one of the whole
    listing; True when it proves what the whole-module reassembly would (nothing to change),
    False when the caller must run the whole-module check (which then decides and repairs).

    The text assembled (:func:`_layout_text`) is the module with every block's code replaced
    by ``.incbin`` of its original bytes (same lengths, so the layout is the module's), except
    a branch ending a block, which is printed; then, in a section of its own, every distinct
    text of the other instructions once (a kernel repeats few distinct lines: about 2,300 in
    33,000 for the largest AITer kernel).  The object must hold the original ``.text``
    (branches included: their labels are defined where the module defines them, so they
    encode to the module's offsets), descriptors and metadata, as in the whole-module check,
    and each distinct text must encode to the bytes of every instruction it is printed for.
    Only without symbolized PC-relative operands (those need the linked bytes).

    ``b.meanwhile`` (a :class:`_Meanwhile` or ``None``): run while the first llvm-mc run
    goes on; left ``valid`` only when this returns True without repairing anything."""
    co = b.co
    meanwhile = b.meanwhile
    if len(b.insts) != len(b.listing):
        return False
    if b.pcrel or not os.path.isfile(co.path) or any(ch in co.path for ch in '"\\\n'):
        return False
    # a non-branch instruction prints as every other one parsed from the same listing text
    # (only branch operands are rewritten, to labels): print one per listing text
    want: dict[str, bytes] = {}  # printed text -> the bytes it must encode to
    by_listing: dict[str, str] = {}  # listing text -> printed text
    branch_ops = b.branch_ops  # the opcodes of b.insts that is_branch() accepts
    texts, encodings = b.listing.texts, b.listing.encodings
    # the lines of one listing text share opcode and raw flag (made from one parse): unless a
    # non-branch text has lines with different bytes, one line per listing text will do
    first = b.first  # text -> first line
    if first is None:
        first = dict(zip(reversed(texts), range(len(texts) - 1, -1, -1)))
    # the texts with more than one encoding: those of the lines whose bytes differ from their
    # text's first line's (found by C-level maps and list.index, not Python code per line)
    expect = list(map(dict(zip(first, map(encodings.__getitem__, first.values()))).__getitem__,
                      texts))
    mixed: set[str] = set()
    if expect != encodings:
        differs = list(map(ne, expect, encodings))
        i = -1
        try:
            while True:
                i = differs.index(True, i + 1)
                mixed.add(texts[i])
        except ValueError:
            pass
    del expect
    if all(b.insts[first[t]].opcode in branch_ops for t in mixed):
        pairs = [(b.insts[i], texts[i]) for i in sorted(first.values())]
    else:
        pairs = zip(b.insts, texts)
    for inst, lt in pairs:
        if inst.raw or inst.opcode in branch_ops:
            continue
        t = by_listing.get(lt)
        if t is None:
            t = by_listing[lt] = print_instruction(inst)
        w = want.setdefault(t, inst.encoding)
        if w != inst.encoding:
            return False
    b.printed = by_listing  # (what _print_built prints these texts as)
    check: list[str] | None = list(want) or None
    tsec = co.text
    path = os.path.abspath(co.path)
    # layout, branches, distinct texts, descriptors and metadata; repaired as the
    # whole-module check repairs them
    for _attempt in range(len(co.kernels) + 3):
        module.items = b.items
        text, owners = _layout_text(module, tsec, path, check)
        try:
            if meanwhile is not None and not meanwhile.ran:
                info, elf = _mc_object(text, with_elf=True, meanwhile=meanwhile.run)
            else:
                info, elf = _mc_object(text, with_elf=True)
        except AsmSyntaxError as e:
            owner = owners[e.line - 1] if e.line and 0 < e.line <= len(owners) else None
            if meanwhile is not None:
                meanwhile.valid = False
            if isinstance(owner, AmdhsaKernel):
                b.make_raw_kd(owner.name)
                continue
            if isinstance(owner, MetadataBlock):
                b.make_raw_metadata()
                continue
            return False
        except AsmevoError:
            return False
        if info.text_relocs or info.text != tsec.data:
            return False
        if check is not None:
            if elf is None or not _check_section_matches(elf, [want[t] for t in check]):
                return False
            check = None  # proved; the repairs below change no instruction
        changed = False
        for k in co.kernels:
            got, kdb = info.kds.get(k.name), k.descriptor_bytes
            if got is None or got[:16] + got[24:] != kdb[:16] + kdb[24:]:
                if not any(isinstance(it, AmdhsaKernel) and it.name == k.name for it in b.items):
                    return False  # raw data that does not reassemble: the whole check says so
                b.make_raw_kd(k.name)
                changed = True
        if co.metadata is not None and info.metadata != co.metadata.raw:
            if not any(isinstance(it, MetadataBlock) for it in b.items):
                return False
            b.make_raw_metadata()
            changed = True
        if not changed:
            return True
        if meanwhile is not None:
            meanwhile.valid = False
    return False


def _check(module: Module, b: _Builder) -> None:
    co = b.co
    if _quick_check(module, b):
        return
    if b.meanwhile is not None:
        b.meanwhile.valid = False
    orig_text = co.text.data
    want_kd = {k.name: k.descriptor_bytes for k in co.kernels}
    for _attempt in range(len(b.insts) + len(co.kernels) + 3):
        module.items = b.items
        text = print_module(module)
        try:
            info = _mc_object(text)
        except AsmSyntaxError as e:
            owners = _line_owners(module)
            owner = owners[e.line - 1] if e.line and 0 < e.line <= len(owners) else None
            if isinstance(owner, Instruction) and not owner.raw:
                owner.raw = True
                # every other instruction llvm-mc rejected in the same run: one reassembly
                # for all of them (one per instruction took minutes on a zeroed .text)
                for ln in getattr(e, "error_lines", ()):
                    o = owners[ln - 1] if 0 < ln <= len(owners) else None
                    if isinstance(o, Instruction):
                        o.raw = True
                continue
            if isinstance(owner, AmdhsaKernel):
                b.make_raw_kd(owner.name)
                continue
            if isinstance(owner, MetadataBlock):
                b.make_raw_metadata()
                continue
            raise AsmevoError(f"the disassembly does not reassemble: {e}", file=co.path) from None
        changed = False
        if _mask(info.text, info.text_relocs) != _mask(orig_text, info.text_relocs):
            if _mark_raw_by_encoding(b.insts) == 0:
                raise AsmevoError("reassembled .text differs from the original, and no "
                                  "instruction re-encodes differently", file=co.path)
            changed = True
        for name, kdb in want_kd.items():
            got = info.kds.get(name)
            if got is None or got[:16] + got[24:] != kdb[:16] + kdb[24:]:
                if any(isinstance(it, AmdhsaKernel) and it.name == name for it in b.items):
                    b.make_raw_kd(name)
                    changed = True
                else:
                    raise AsmevoError(f"raw descriptor {name}.kd does not reassemble "
                                      "to the same bytes", file=co.path)
        if co.metadata is not None and info.metadata != co.metadata.raw:
            if any(isinstance(it, MetadataBlock) for it in b.items):
                b.make_raw_metadata()
                changed = True
            else:
                raise AsmevoError("raw metadata note does not reassemble to the same values", file=co.path)
        if not changed and b.pcrel and not _linked_text_matches(module, orig_text):
            b.undo_pc_relative()  # the symbolic PC-relative operands did not link to the same bytes
            changed = True
        if not changed:
            return
    raise AsmevoError("could not make the disassembly reassemble identically", file=co.path)


def _mask(text: bytes, offsets: tuple[int, ...]) -> bytes:
    if not offsets:
        return text
    b = bytearray(text)
    for o in offsets:
        b[o:o + 4] = b"\0\0\0\0"
    return bytes(b)


def _linked_text_matches(module: Module, orig_text: bytes) -> bool:
    """Assemble and link the module (as the rebuild does) and compare its .text bytes."""
    from ..backend.assemble import assemble_bytes
    import tempfile
    with tempfile.TemporaryDirectory(prefix="asmevo-dis-") as d:
        p = os.path.join(d, "linked.co")
        try:
            with open(p, "wb") as f:
                f.write(assemble_bytes(print_module(module), filename="<disassembly>"))
            new = read_code_object(p)
        except AsmevoError:
            return False
        return new.text.data == orig_text
