"""Dynamic relocations of a code object, in a form two layouts can be compared by.

The loader applies the relocations of a code object's allocated ``SHT_RELA``/``SHT_REL``
sections (``.rela.dyn``) when it maps the file: ``R_AMDGPU_RELATIVE64`` writes load base +
addend over the 8 bytes at the place, whatever the file holds there (llvm-mc + ld.lld leave
zeros).  Those words are data a kernel may read (a pointer table in ``.data.rel.ro``), so a
candidate must keep every one: same type, same place, same target.  The sections' addresses
may move in a rebuild, so places and ``RELATIVE`` targets are named relative to the symbol
(else the section) that holds them: ``tab+8``, ``.rodata+0x40``.

Sources: LLVM AMDGPUUsage, "Relocation Records"; the ELF gABI (Elf64_Rela, Elf64_Sym).
Every field is read with :mod:`struct` and checked against the file's size; a malformed
table gives a :class:`Reloc` whose ``type`` says so (it then compares unequal to anything
a well-formed file gives), never an exception.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

#: r_type -> name (AMDGPUUsage, "AMDHSA ELF Relocation Records")
R_AMDGPU = {0: "R_AMDGPU_NONE", 1: "R_AMDGPU_ABS32_LO", 2: "R_AMDGPU_ABS32_HI",
            3: "R_AMDGPU_ABS64", 4: "R_AMDGPU_REL32", 5: "R_AMDGPU_REL64", 6: "R_AMDGPU_ABS32",
            7: "R_AMDGPU_GOTPCREL", 8: "R_AMDGPU_GOTPCREL32_LO", 9: "R_AMDGPU_GOTPCREL32_HI",
            10: "R_AMDGPU_REL32_LO", 11: "R_AMDGPU_REL32_HI", 13: "R_AMDGPU_RELATIVE64",
            14: "R_AMDGPU_REL16"}
R_AMDGPU_RELATIVE64 = 13

_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
SHF_ALLOC = 0x2


class Reloc(NamedTuple):
    """One dynamic relocation: ``place`` (``sym+off`` / ``section+off``), ``type``
    (``R_AMDGPU_*``), ``symbol`` (its name, ``""`` for none), ``target`` (for a
    ``RELATIVE`` relocation the addend as ``sym+off``, else the addend as a number)."""

    place: str
    type: str
    symbol: str
    target: str | int

    def text(self) -> str:
        tgt = self.target if isinstance(self.target, str) else f"addend {self.target:#x}"
        sym = f"{self.symbol}, " if self.symbol else ""
        return f"{self.type} at {self.place} ({sym}{tgt})"


class _Sec(NamedTuple):
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


def _cstr(data: bytes, pos: int) -> str:
    if not 0 <= pos < len(data):
        return f"<name at {pos:#x}>"
    end = data.find(b"\0", pos)
    return data[pos:end if end >= 0 else len(data)].decode("utf-8", "replace")


def _sections(data: bytes) -> list[_Sec] | None:
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if shnum == 0:
        return []
    if shentsize != 64 or shoff + 64 * shnum > len(data) or shstrndx >= shnum:
        return None
    heads = list(_SHDR.iter_unpack(data[shoff:shoff + 64 * shnum]))
    stroff = heads[shstrndx][4]
    return [_Sec(_cstr(data, stroff + h[0]), h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[9])
            for h in heads]


class _Namer:
    """Addresses as ``sym+off`` (the innermost sized symbol holding them, else a symbol at
    exactly that address) or ``section+off``."""

    def __init__(self, secs: list[_Sec], syms: list[tuple[str, int, int, int]]):
        self.secs = [s for s in secs if s.flags & SHF_ALLOC and s.size and s.name]
        self.syms = syms  # (name, value, size, shndx)

    def name(self, addr: int) -> str:
        held = [(-v, size, n) for n, v, size, _ in self.syms
                if n and (v <= addr < v + size or (size == 0 and v == addr))]
        if held:
            v, _, n = min(held)  # the innermost: the highest start, then the smallest
            return f"{n}+{addr + v:#x}"
        for s in self.secs:
            if s.addr <= addr < s.addr + s.size:
                return f"{s.name}+{addr - s.addr:#x}"
        return f"<outside any section>+{addr:#x}"


def _symbols(data: bytes, secs: list[_Sec], index: int) -> list[tuple[str, int, int, int]] | None:
    if not 0 <= index < len(secs):
        return None
    s = secs[index]
    if s.type not in (2, 11) or s.offset + s.size > len(data) or not 0 <= s.link < len(secs):
        return None
    stroff = secs[s.link].offset
    out = []
    for st_name, info, _other, shndx, value, size in _SYM.iter_unpack(data[s.offset:s.offset + s.size // 24 * 24]):
        name = _cstr(data, stroff + st_name) if st_name else ""
        if info & 15 == 3 and 0 < shndx < len(secs):  # STT_SECTION: named by its section
            name = secs[shndx].name
        out.append((name, value, size, shndx))
    return out


def dynamic_relocations(data: bytes) -> list[Reloc]:
    """The relocations the loader applies to the ELF file ``data`` (its allocated
    ``SHT_RELA``/``SHT_REL`` sections), sorted, each named by :class:`Reloc`."""
    secs = _sections(data)
    if secs is None:
        return [Reloc("<file>", "malformed ELF header", "", 0)]
    # places and RELATIVE targets by the full symbol table when there is one
    symtab = next((i for i, s in enumerate(secs) if s.type == 2), None)
    named = _symbols(data, secs, symtab) if symtab is not None else None
    out: list[Reloc] = []
    for s in secs:
        if s.type not in (4, 9) or not s.flags & SHF_ALLOC:
            continue
        rela = s.type == 4
        ent = 24 if rela else 16
        if s.entsize != ent or s.size % ent or s.offset + s.size > len(data):
            out.append(Reloc(s.name, "malformed relocation section", "", 0))
            continue
        syms = _symbols(data, secs, s.link) if s.link else []
        if syms is None:
            out.append(Reloc(s.name, "relocation section without a symbol table", "", 0))
            continue
        namer = _Namer(secs, [x for x in (named if named is not None else syms) if x[0]])
        fmt = "<QQq" if rela else "<QQ"
        for r in struct.iter_unpack(fmt, data[s.offset:s.offset + s.size]):
            off, info = r[0], r[1]
            addend = r[2] if rela else 0
            typ, si = info & 0xFFFFFFFF, info >> 32
            tname = R_AMDGPU.get(typ, f"relocation type {typ}")
            sym = syms[si][0] if si < len(syms) else f"<symbol #{si}>"
            target: str | int = addend
            if typ == R_AMDGPU_RELATIVE64 and not si:
                target = namer.name(addend)
            if s.info:  # applies to one section: r_offset is relative to it
                place = (f"{secs[s.info].name}+{off:#x}" if s.info < len(secs)
                         else f"<section #{s.info}>+{off:#x}")
            else:
                place = namer.name(off)
            out.append(Reloc(place, tname, sym, target))
    return sorted(out, key=lambda r: (r.place, r.type, r.symbol, str(r.target)))
