"""A small ELF64 little-endian reader: section headers, section names, symbols, RELA offsets.

:func:`asmevo.frontend.codeobject.read_code_object` and the disassembler's reassembly check
read code objects with it instead of pyelftools, whose import alone costs some 35 ms of every
``asmevo dis`` and ``asmevo asm`` (issue 16).  It gives the values pyelftools gives (the same
names, ``SHT_*``/``STT_*``/``STB_*``/``STV_*``/``SHN_*`` strings, or the number where pyelftools
has no name), and it *declines* -- returns ``None`` -- every file that pyelftools would read
differently or reject: compressed sections, section types whose pyelftools class parses or
checks more at construction (versions, RELR, ``SHT_SYMTAB_SHNDX``...), a link to a section of
the wrong type, a hash table running past the end of the file, and so on.  The caller then reads
the file with pyelftools as before, so errors and their messages do not change.  Every field
is read with :mod:`struct`; nothing here raises on any input (a failure is a decline).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

#: sh_type -> name (pyelftools ``ENUM_SH_TYPE_BASE``, what it uses for EM_AMDGPU)
SHT_NAMES = {
    0: "SHT_NULL", 1: "SHT_PROGBITS", 2: "SHT_SYMTAB", 3: "SHT_STRTAB", 4: "SHT_RELA",
    5: "SHT_HASH", 6: "SHT_DYNAMIC", 7: "SHT_NOTE", 8: "SHT_NOBITS", 9: "SHT_REL",
    10: "SHT_SHLIB", 11: "SHT_DYNSYM", 14: "SHT_INIT_ARRAY", 15: "SHT_FINI_ARRAY",
    16: "SHT_PREINIT_ARRAY", 17: "SHT_GROUP", 18: "SHT_SYMTAB_SHNDX", 19: "SHT_RELR",
    20: "SHT_NUM", 0x60000000: "SHT_LOOS", 0x6ffffff5: "SHT_GNU_ATTRIBUTES",
    0x6ffffff6: "SHT_GNU_HASH", 0x6ffffff7: "SHT_GNU_LIBLIST", 0x6ffffffd: "SHT_GNU_verdef",
    0x6ffffffe: "SHT_GNU_verneed", 0x6fffffff: "SHT_GNU_versym", 0x80000000: "SHT_LOUSER",
    0xffffffff: "SHT_HIUSER", 0x6ffffff3: "SHT_SUNW_LDYNSYM", 0x6ffffffc: "SHT_SUNW_syminfo",
}
STT_NAMES = {0: "STT_NOTYPE", 1: "STT_OBJECT", 2: "STT_FUNC", 3: "STT_SECTION", 4: "STT_FILE",
             5: "STT_COMMON", 6: "STT_TLS", 7: "STT_NUM", 8: "STT_RELC", 9: "STT_SRELC",
             10: "STT_LOOS", 12: "STT_HIOS", 13: "STT_LOPROC", 15: "STT_HIPROC"}
STB_NAMES = {0: "STB_LOCAL", 1: "STB_GLOBAL", 2: "STB_WEAK", 3: "STB_NUM", 10: "STB_LOOS",
             12: "STB_HIOS", 13: "STB_LOPROC", 15: "STB_HIPROC"}
STV_NAMES = {0: "STV_DEFAULT", 1: "STV_INTERNAL", 2: "STV_HIDDEN", 3: "STV_PROTECTED",
             4: "STV_EXPORTED", 5: "STV_SINGLETON", 6: "STV_ELIMINATE"}
SHN_NAMES = {0: "SHN_UNDEF", 0xFFF1: "SHN_ABS", 0xFFF2: "SHN_COMMON"}

SHF_COMPRESSED = 0x800
_SYMTABS = (2, 11)          # SHT_SYMTAB, SHT_DYNSYM
#: section types pyelftools gives a class that parses or checks more than the header at
#: construction, beyond those modelled below: declined
_DECLINE_TYPES = frozenset({18, 19, 0x6ffffff3, 0x6ffffffc, 0x6ffffffd, 0x6ffffffe, 0x6fffffff})
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")


class ElfSection(NamedTuple):
    """One section header, as pyelftools reports it (``type``: ``SHT_*`` name or number)."""

    index: int
    name: str
    type: str | int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    align: int
    entsize: int
    type_number: int


class ElfSymbol(NamedTuple):
    """One symbol: ``type``/``bind``/``visibility`` names (or numbers), ``shndx`` a section
    index or ``SHN_UNDEF``/``SHN_ABS``/``SHN_COMMON``."""

    name: str
    value: int
    size: int
    type: str | int
    bind: str | int
    visibility: str | int
    shndx: int | str


class Elf:
    """A file :func:`read_elf` accepted: ``sections`` in header order, ``by_name`` (the last
    section of each name, as pyelftools' ``get_section_by_name``)."""

    def __init__(self, data: bytes, sections: list[ElfSection]):
        self.data = data
        self.sections = sections
        self.by_name = {s.name: s for s in sections}
        self._symbols: dict[int, list[ElfSymbol]] = {}

    def section_data(self, s: ElfSection) -> bytes:
        """The section's file bytes (``b""`` for SHT_NULL and SHT_NOBITS)."""
        if s.type_number in (0, 8):
            return b""
        return self.data[s.offset:s.offset + s.size]

    def symbols(self, s: ElfSection) -> list[ElfSymbol]:
        """The symbols of symbol table ``s`` (validated by :func:`read_elf`; read once)."""
        got = self._symbols.get(s.index)
        if got is None:
            got = self._symbols[s.index] = self._read_symbols(s)
        return got

    def _read_symbols(self, s: ElfSection) -> list[ElfSymbol]:
        data = self.data
        stroff = self.sections[s.link].offset
        find = data.find
        out = []
        append = out.append
        end = s.offset + s.size // 24 * 24
        for st_name, info, other, shndx, value, size in _SYM.iter_unpack(data[s.offset:end]):
            pos = stroff + st_name
            stop = find(b"\0", pos)
            name = data[pos:stop].decode("utf-8", "replace") if stop > pos else ""
            append(ElfSymbol(name, value, size, STT_NAMES.get(info & 15, info & 15),
                             STB_NAMES.get(info >> 4, info >> 4),
                             STV_NAMES.get(other & 7, other & 7), SHN_NAMES.get(shndx, shndx)))
        return out

    def notes(self, s: ElfSection) -> list[tuple[str, int, bytes]] | None:
        """(owner, type, desc) of each note of SHT_NOTE section ``s`` (gABI layout, as
        :func:`asmevo.frontend.metadata.iter_notes`); ``None`` when that function would
        report the section as malformed."""
        data = self.section_data(s)
        out = []
        pos = 0
        n = len(data)
        while pos + 12 <= n:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name_start = pos + 12
            desc_start = name_start + ((namesz + 3) & ~3)
            if desc_start + descsz > n:
                return None
            owner = data[name_start:name_start + namesz].rstrip(b"\0").decode("latin-1")
            out.append((owner, ntype, data[desc_start:desc_start + descsz]))
            pos = desc_start + ((descsz + 3) & ~3)
        if pos != n and any(data[pos:]):
            return None
        return out

    def rela_offsets(self, s: ElfSection) -> list[int]:
        """``r_offset`` of every entry of SHT_RELA section ``s``."""
        n = s.size // 24
        return [r[0] for r in struct.iter_unpack("<Q16x", self.data[s.offset:s.offset + 24 * n])]


def read_elf(data: bytes) -> Elf | None:
    """The sections of an ELF64 little-endian file, or ``None`` when the file is not one
    this reader reads exactly as pyelftools (see the module docstring)."""
    try:
        return _read(data)
    except (struct.error, IndexError, ValueError, OverflowError):
        return None


def _read(data: bytes) -> Elf | None:
    n = len(data)
    if n < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if shoff == 0 or shnum == 0 or shentsize != 64 or shstrndx >= shnum \
            or shoff + 64 * shnum > n:
        return None
    heads = list(_SHDR.iter_unpack(data[shoff:shoff + 64 * shnum]))
    stroff = heads[shstrndx][4]
    find = data.find
    sections = []
    for i, (sh_name, typ, flags, addr, off, size, link, info, align, entsize) in enumerate(heads):
        if flags & SHF_COMPRESSED or typ in _DECLINE_TYPES:
            return None
        if typ not in (0, 8) and off + size > n:
            return None
        pos = stroff + sh_name
        stop = find(b"\0", pos)
        name = data[pos:stop].decode("utf-8", "replace") if stop > pos else ""
        if typ == 1 and name == ".stab":
            return None
        if typ in _SYMTABS:
            if entsize == 0 or size % entsize or link >= shnum or heads[link][1] != 3:
                return None
        elif typ in (4, 9):  # SHT_RELA / SHT_REL: pyelftools checks the entry size
            if entsize != (24 if typ == 4 else 16):
                return None
        elif typ == 6:  # SHT_DYNAMIC: its string table
            if link >= shnum or heads[link][1] not in (3, 8, 0):
                return None
        elif typ == 5 or typ == 0x6ffffff6:  # SHT_HASH / SHT_GNU_HASH: parsed whole at once
            if link >= shnum or heads[link][1] not in _SYMTABS:
                return None
            if typ == 5:
                if size and not _fits(data, off, 8, lambda nb, nc: 4 * (nb + nc), "<II"):
                    return None
            elif not _fits(data, off, 16, lambda nb, so, bs, sh: 8 * bs + 4 * nb, "<IIII"):
                return None
        sections.append(ElfSection(i, name, SHT_NAMES.get(typ, typ), flags, addr, off, size,
                                   link, info, align, entsize, typ))
    return Elf(data, sections)


def _fits(data: bytes, off: int, head: int, rest, fmt: str) -> bool:
    """Whether a table whose ``head``-byte header at ``off`` (``fmt``) says it needs
    ``rest(*header)`` more bytes lies inside the file."""
    if off + head > len(data):
        return False
    return off + head + rest(*struct.unpack_from(fmt, data, off)) <= len(data)
