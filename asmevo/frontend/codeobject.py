"""Read an AMDGPU code object (ELF64, EM_AMDGPU) with pyelftools.

:func:`read_code_object` returns a :class:`CodeObject` with the sections,
symbols, target id (from ``e_flags``: EF_AMDGPU_MACH and the v4+ xnack/sramecc
feature bits, LLVM ``BinaryFormat/ELF.h``), the code object version (ELF ABI
version and ``amdhsa.version``), the decoded ``NT_AMDGPU_METADATA`` note and
every kernel: a function symbol ``NAME`` with a matching ``NAME.kd`` object
symbol (AMDGPUUsage "Symbols").  Anything that is not a well-formed gfx942
code object raises :class:`~asmevo.errors.CodeObjectError` with the file, the
byte offset and what was expected.
"""

from __future__ import annotations

import io
import os
import struct
from ..errors import CodeObjectError
from ..record import Record
from .descriptor import SIZE as KD_SIZE, KernelDescriptor
from .metadata import NOTE_OWNER, NT_AMDGPU_METADATA, KernelMeta, Metadata, decode_metadata, iter_notes

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
#: ELF ABI version -> code object version (ELF.h ELFABIVERSION_AMDGPU_HSA_V*).
ABI_TO_COV = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}
EF_AMDGPU_MACH = 0x0FF
EF_AMDGPU_FEATURE_XNACK_V4 = 0x300
EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xC00
_FEATURE_V4 = {0x000: None, 0x100: "any", 0x200: "off", 0x300: "on"}
GFX942_MACH = 0x4C

#: EF_AMDGPU_MACH values (LLVM 19 ELF.h) for messages about foreign code objects.
MACH_NAMES = {
    0x20: "gfx600", 0x21: "gfx601", 0x22: "gfx700", 0x23: "gfx701", 0x24: "gfx702", 0x25: "gfx703",
    0x26: "gfx704", 0x28: "gfx801", 0x29: "gfx802", 0x2A: "gfx803", 0x2B: "gfx810", 0x2C: "gfx900",
    0x2D: "gfx902", 0x2E: "gfx904", 0x2F: "gfx906", 0x30: "gfx908", 0x31: "gfx909", 0x32: "gfx90c",
    0x33: "gfx1010", 0x34: "gfx1011", 0x35: "gfx1012", 0x36: "gfx1030", 0x37: "gfx1031",
    0x38: "gfx1032", 0x39: "gfx1033", 0x3A: "gfx602", 0x3B: "gfx705", 0x3C: "gfx805",
    0x3D: "gfx1035", 0x3E: "gfx1034", 0x3F: "gfx90a", 0x40: "gfx940", 0x41: "gfx1100",
    0x42: "gfx1013", 0x43: "gfx1150", 0x44: "gfx1103", 0x45: "gfx1036", 0x46: "gfx1101",
    0x47: "gfx1102", 0x48: "gfx1200", 0x4A: "gfx1151", 0x4B: "gfx941", 0x4C: "gfx942",
    0x4E: "gfx1201", 0x4F: "gfx950", 0x51: "gfx9-generic", 0x52: "gfx10-1-generic",
    0x53: "gfx10-3-generic", 0x54: "gfx11-generic", 0x55: "gfx1152", 0x59: "gfx12-generic",
    0x5F: "gfx9-4-generic",
}
#: EF_AMDGPU_MACH values of the generic targets (LLVM 19 ELF.h EF_AMDGPU_MACH_AMDGCN_*_GENERIC).
GENERIC_MACHS = {0x51, 0x52, 0x53, 0x54, 0x59, 0x5F}
#: e_flags bits 24-31: EF_AMDGPU_GENERIC_VERSION (code object v6 generic targets).
EF_AMDGPU_GENERIC_VERSION = 0xFF000000
EF_AMDGPU_GENERIC_VERSION_OFFSET = 24
_MACH_OF = {v: k for k, v in MACH_NAMES.items()}
_FEATURE_BITS = {None: 0x0, "any": 0x1, "off": 0x2, "on": 0x3}   # v4 encoding, shifted below

_EM_NAMES = {3: "x86 (EM_386)", 62: "x86-64 (EM_X86_64)", 40: "ARM (EM_ARM)",
             183: "AArch64 (EM_AARCH64)", 243: "RISC-V (EM_RISCV)", 190: "CUDA (EM_CUDA)",
             224: "AMDGPU (EM_AMDGPU)"}


class Section(Record):
    """An ELF section: ``addr`` (virtual), ``offset`` (file), ``size`` (bytes), ``data``
    (file bytes; empty for SHT_NOBITS), ``flags`` (SHF_*), ``align``."""

    _fields = ("index", "name", "type", "addr", "offset", "size", "flags", "align", "data",
               "entsize")
    _norepr = frozenset({"data"})

    def __init__(self, index: int, name: str, type: str, addr: int, offset: int, size: int,
                 flags: int, align: int, data: bytes, entsize: int = 0):
        self.index = index
        self.name = name
        self.type = type
        self.addr = addr
        self.offset = offset
        self.size = size
        self.flags = flags
        self.align = align
        self.data = data
        self.entsize = entsize

    @property
    def alloc(self) -> bool:
        """SHF_ALLOC: loaded into memory."""
        return bool(self.flags & 0x2)

    @property
    def executable(self) -> bool:
        """SHF_EXECINSTR."""
        return bool(self.flags & 0x4)


class Symbol(Record):
    """An ELF symbol (from ``.symtab``, else ``.dynsym``): ``value`` is its address,
    ``size`` bytes, ``type`` ``STT_FUNC``/``STT_OBJECT``/``STT_NOTYPE``..., ``bind``
    ``STB_GLOBAL``/``STB_LOCAL``/``STB_WEAK``, ``visibility`` ``STV_*``,
    ``section`` the section name or ``None`` (undefined/absolute)."""

    _fields = ("name", "value", "size", "type", "bind", "visibility", "shndx", "section")

    def __init__(self, name: str, value: int, size: int, type: str, bind: str, visibility: str,
                 shndx: int | str, section: str | None):
        self.name = name
        self.value = value
        self.size = size
        self.type = type
        self.bind = bind
        self.visibility = visibility
        self.shndx = shndx
        self.section = section


class CodeObjectKernel(Record):
    """One kernel: code symbol ``name`` at ``address`` (``size`` bytes per the symbol;
    AITer objects give 0), its descriptor symbol ``name.kd`` at ``kd_address``,
    the 64 descriptor bytes and their decoding, and its metadata entry."""

    _fields = ("name", "address", "size", "symbol", "kd_symbol", "kd_address",
               "descriptor_bytes", "descriptor", "metadata")
    _norepr = frozenset({"descriptor_bytes", "descriptor", "metadata"})

    def __init__(self, name: str, address: int, size: int, symbol: Symbol, kd_symbol: Symbol,
                 kd_address: int, descriptor_bytes: bytes, descriptor: KernelDescriptor,
                 metadata: KernelMeta | None = None):
        self.name = name
        self.address = address
        self.size = size
        self.symbol = symbol
        self.kd_symbol = kd_symbol
        self.kd_address = kd_address
        self.descriptor_bytes = descriptor_bytes
        self.descriptor = descriptor
        self.metadata = metadata

    @property
    def code_entry(self) -> int:
        """Address of the first instruction per the descriptor (kd address + entry offset)."""
        return self.kd_address + self.descriptor.kernel_code_entry_byte_offset


class CodeObject(Record):
    """A parsed gfx942 code object (see module docstring)."""

    _fields = ("path", "data", "e_flags", "abi_version", "mach", "xnack", "sramecc",
               "code_object_version", "sections", "symbols", "kernels", "metadata",
               "metadata_note", "warnings", "code_ranges")
    _norepr = frozenset({"data", "sections", "symbols", "metadata", "metadata_note",
                         "code_ranges"})

    def __init__(self, path: str, data: bytes, e_flags: int, abi_version: int, mach: int,
                 xnack: str | None, sramecc: str | None, code_object_version: int,
                 sections: list[Section], symbols: list[Symbol],
                 kernels: list[CodeObjectKernel], metadata: Metadata | None,
                 metadata_note: bytes | None = None, warnings: list[str] | None = None,
                 code_ranges: dict[str, tuple[int, int]] | None = None):
        self.path = path
        self.data = data
        self.e_flags = e_flags
        self.abi_version = abi_version
        self.mach = mach
        self.xnack = xnack
        self.sramecc = sramecc
        self.code_object_version = code_object_version
        self.sections = sections
        self.symbols = symbols
        self.kernels = kernels
        self.metadata = metadata
        self.metadata_note = metadata_note
        self.warnings = [] if warnings is None else warnings
        #: function name -> (start, end) addresses of the code the disassembler gave it
        #: (filled by :func:`asmevo.frontend.disasm.disassemble`; used for in-place patching)
        self.code_ranges = {} if code_ranges is None else code_ranges

    @property
    def processor(self) -> str:
        """``gfx942``."""
        return MACH_NAMES.get(self.mach, f"mach {self.mach:#x}")

    @property
    def target_id(self) -> str:
        """The target id as llvm-mc's ``.amdgcn_target`` spells it, e.g.
        ``amdgcn-amd-amdhsa--gfx942`` or ``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``
        (features sorted, only the on/off ones appear; "any" is the default)."""
        try:
            return target_for_e_flags(self.e_flags)
        except ValueError:  # an unknown EF_AMDGPU_MACH (the reader only accepts gfx942)
            return f"amdgcn-amd-amdhsa--{self.processor}"

    def section(self, name: str) -> Section | None:
        """The first section called ``name`` (``.text``), or ``None``."""
        for s in self.sections:
            if s.name == name:
                return s
        return None

    @property
    def text(self) -> Section:
        """The ``.text`` section.

        Raises:
            CodeObjectError: the file has none.
        """
        s = self.section(".text")
        if s is None:
            raise CodeObjectError("no .text section; expected the kernels' code in .text", file=self.path)
        return s

    def symbol(self, name: str) -> Symbol | None:
        """The symbol called ``name``, or ``None``."""
        for s in self.symbols:
            if s.name == name:
                return s
        return None

    def section_at(self, addr: int) -> Section | None:
        """The allocated section whose address range holds ``addr``."""
        for s in self.sections:
            if s.alloc and s.size and s.addr <= addr < s.addr + s.size:
                return s
        return None

    def read(self, addr: int, size: int) -> bytes:
        """``size`` bytes at virtual address ``addr``.

        Raises:
            CodeObjectError: the range is not inside one section with file data.
        """
        s = self.section_at(addr)
        if s is None or s.type == "SHT_NOBITS" or addr + size > s.addr + s.size:
            raise CodeObjectError(f"address {addr:#x}+{size} is not inside a section with data",
                                  file=self.path)
        return s.data[addr - s.addr:addr - s.addr + size]

    def function_symbols(self) -> list[Symbol]:
        """STT_FUNC symbols defined in ``.text``, sorted by address."""
        return sorted((s for s in self.symbols if s.type == "STT_FUNC" and s.section == ".text"),
                      key=lambda s: (s.value, s.name))


def parse_target_id(target: str) -> tuple[str, dict[str, str]]:
    """Split a target id into the processor and its feature settings.

    Accepts the full triple form (``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``), Triton's
    ``amdgpu9.42-amd-amdhsa-unknown-gfx942`` spelling, or a bare processor
    (``gfx9-4-generic:xnack+``).  Returns ``("gfx942", {"sramecc": "on", "xnack": "off"})``;
    an unspecified feature is absent (meaning "any").

    Raises:
        ValueError: a feature is not ``NAME+`` / ``NAME-`` or the processor is missing.
    """
    t = target.strip().strip('"')
    head, *feats = t.split(":")
    proc = head.split("--", 1)[1] if "--" in head else head.rsplit("-unknown-", 1)[-1] \
        if "-unknown-" in head else head
    if not proc.startswith("gfx"):
        raise ValueError(f"target id {target!r}: expected a gfx processor name")
    out: dict[str, str] = {}
    for f in feats:
        if len(f) < 2 or f[-1] not in "+-":
            raise ValueError(f"target id {target!r}: feature {f!r} is not NAME+ or NAME-")
        out[f[:-1]] = "on" if f[-1] == "+" else "off"
    return proc, out


def e_flags_for_target(target: str, generic_version: int = 0) -> int:
    """``e_flags`` for a target id (code object v4+): EF_AMDGPU_MACH of the processor, the
    xnack (bits 8-9) and sramecc (bits 10-11) settings as UNSUPPORTED/ANY/OFF/ON = 0/1/2/3
    (both are supported, hence "any" by default, on gfx90a/gfx940/941/942/950 and the gfx9
    generics), and for generic targets ``generic_version`` in bits 24-31 (LLVM ``ELF.h``,
    AMDGPUUsage "ELF Header").

    Raises:
        ValueError: unknown processor or feature.
    """
    proc, feats = parse_target_id(target)
    if proc not in _MACH_OF:
        raise ValueError(f"unknown AMDGPU processor {proc!r}")
    flags = _MACH_OF[proc]
    for name, shift in (("xnack", 8), ("sramecc", 10)):
        flags |= _FEATURE_BITS[feats.pop(name, "any")] << shift
    if feats:
        raise ValueError(f"target id {target!r}: unknown feature(s) {', '.join(feats)}")
    if generic_version:
        flags |= (generic_version & 0xFF) << EF_AMDGPU_GENERIC_VERSION_OFFSET
    return flags


def target_for_e_flags(e_flags: int) -> str:
    """The target id (``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``) that ``e_flags``
    encode, the inverse of :func:`e_flags_for_target` (generic version not included).

    Raises:
        ValueError: an EF_AMDGPU_MACH value LLVM 19 does not define.
    """
    mach = e_flags & EF_AMDGPU_MACH
    if mach not in MACH_NAMES:
        raise ValueError(f"unknown EF_AMDGPU_MACH {mach:#x}")
    feats = ""
    sramecc = _FEATURE_V4[(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 2]
    xnack = _FEATURE_V4[e_flags & EF_AMDGPU_FEATURE_XNACK_V4]
    for name, val in (("sramecc", sramecc), ("xnack", xnack)):
        if val in ("on", "off"):
            feats += f":{name}{'+' if val == 'on' else '-'}"
    return f"amdgcn-amd-amdhsa--{MACH_NAMES[mach]}{feats}"


def _fail(path: str, msg: str, offset: int | None = None) -> CodeObjectError:
    return CodeObjectError(msg, file=path, offset=offset)


def _check_header(path: str, data: bytes) -> None:
    """Validate the ELF identification and header fields pyelftools does not check."""
    if len(data) < 4 or data[:4] != b"\x7fELF":
        raise _fail(path, "not an ELF file: expected the magic bytes 7f 45 4c 46 ('\\x7fELF') "
                          f"at the start, got {data[:4].hex(' ') or 'an empty file'}", 0)
    if len(data) < 64:
        raise _fail(path, f"truncated ELF header: the file has {len(data)} bytes, expected at least 64",
                    len(data))
    if data[4] != 2:
        raise _fail(path, f"expected a 64-bit ELF (EI_CLASS 2), got EI_CLASS {data[4]}", 4)
    if data[5] != 1:
        raise _fail(path, f"expected a little-endian ELF (EI_DATA 1), got EI_DATA {data[5]}", 5)
    (e_machine,) = struct.unpack_from("<H", data, 18)
    if e_machine != EM_AMDGPU:
        got = _EM_NAMES.get(e_machine, f"e_machine {e_machine}")
        raise _fail(path, f"expected an AMDGPU gfx942 code object, got an ELF file for {got}", 18)
    (e_flags,) = struct.unpack_from("<I", data, 48)
    mach = e_flags & EF_AMDGPU_MACH
    if mach != GFX942_MACH:
        got = MACH_NAMES.get(mach, f"unknown EF_AMDGPU_MACH {mach:#x}")
        if mach in GENERIC_MACHS:
            gv = (e_flags & EF_AMDGPU_GENERIC_VERSION) >> EF_AMDGPU_GENERIC_VERSION_OFFSET
            raise _fail(path, f"expected an AMDGPU gfx942 code object, got the generic target {got} "
                              f"(generic version {gv}; e_flags {e_flags:#x}, EF_AMDGPU_MACH {mach:#x}; "
                              "gfx942 is 0x4c): not gfx942; asmevo does not re-target code, rebuild "
                              "it for gfx942", 48)
        raise _fail(path, f"expected an AMDGPU gfx942 code object, got {got} "
                          f"(e_flags {e_flags:#x}, EF_AMDGPU_MACH {mach:#x}; gfx942 is 0x4c)", 48)
    if data[7] != ELFOSABI_AMDGPU_HSA:
        raise _fail(path, f"expected OS ABI AMDGPU_HSA (64), got {data[7]}", 7)
    e_type, = struct.unpack_from("<H", data, 16)
    e_shoff, = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    if e_shnum == 0:
        raise _fail(path, "the ELF has no section headers; expected a linked code object with sections", 60)
    if e_shentsize != 64:
        raise _fail(path, f"e_shentsize is {e_shentsize}, expected 64", 58)
    if e_shoff + e_shnum * e_shentsize > len(data):
        raise _fail(path, f"truncated: section headers at {e_shoff:#x} ({e_shnum} x 64 bytes) run past "
                          f"the end of the file ({len(data)} bytes); expected at least "
                          f"{e_shoff + e_shnum * e_shentsize} bytes", min(e_shoff, len(data)))
    if e_shstrndx >= e_shnum:
        raise _fail(path, f"e_shstrndx {e_shstrndx} is not a section index; expected a value below "
                          f"e_shnum {e_shnum}", 62)
    for i in range(e_shnum):
        base = e_shoff + i * 64
        sh_type, = struct.unpack_from("<I", data, base + 4)
        sh_offset, sh_size = struct.unpack_from("<QQ", data, base + 24)
        if sh_type != 8 and sh_type != 0 and sh_offset + sh_size > len(data):  # 8 = SHT_NOBITS
            raise _fail(path, f"truncated or corrupt: section {i} (header at {base:#x}) covers bytes "
                              f"{sh_offset:#x}..{sh_offset + sh_size:#x}, past the end of the file "
                              f"({len(data):#x}); expected it to end within the file", base + 24)
    if data[8] not in ABI_TO_COV:
        raise _fail(path, f"ELF ABI version (EI_ABIVERSION) {data[8]} is not an AMDHSA code object "
                          f"version; expected 2, 3 or 4 (code object v4, v5, v6)", 8)
    if e_type not in (1, 3):
        raise _fail(path, f"expected a relocatable or shared ELF (e_type 1 or 3), got e_type {e_type}", 16)


def read_code_object(path: str | os.PathLike) -> CodeObject:
    """Parse the gfx942 code object at ``path``.

    Returns:
        A :class:`CodeObject` (kernels in ``.text`` address order).

    Raises:
        CodeObjectError: the file is missing, not an ELF, truncated or corrupt
            (byte offset of the bad structure given), an ELF for another
            machine or another AMDGPU processor ("expected an AMDGPU gfx942
            code object, got ..."), or a kernel descriptor lies outside its section.
    """
    path = os.fspath(path)
    from ..limits import check_input_size, max_input_bytes
    try:
        with open(path, "rb") as f:
            data = f.read(max_input_bytes() + 1)
    except FileNotFoundError:
        raise CodeObjectError("no such file", file=path) from None
    except IsADirectoryError:
        raise CodeObjectError("is a directory, expected a code object file", file=path) from None
    except OSError as e:
        raise CodeObjectError(f"cannot read: {e.strerror}", file=path) from None
    check_input_size(len(data), path, "code object")
    _check_header(path, data)
    e_flags, = struct.unpack_from("<I", data, 48)
    abi = data[8]
    sections, symbols, symtab = _read_tables(path, data)

    # symbols in .text lie inside it: the disassembly splits .text at them
    text_sec = next((s for s in sections if s.name == ".text"), None)
    if text_sec is not None and symtab is not None:
        t_end = text_sec.addr + text_sec.size
        for i, s in enumerate(symbols):
            if s.section != ".text" or s.type in ("STT_SECTION", "STT_FILE"):
                continue
            if not (text_sec.addr <= s.value < t_end or (s.value == t_end and s.type != "STT_FUNC")):
                raise _fail(path, f"symbol {s.name!r} (entry {i} of {symtab[0]}) has value "
                                  f"{s.value:#x}, outside .text [{text_sec.addr:#x}, {t_end:#x}); "
                                  "expected an address inside its section",
                            symtab[1] + i * symtab[2])

    # metadata note
    metadata = None
    note_bytes = None
    for s in sections:
        if s.type == "SHT_NOTE":
            for n in iter_notes(s.data, s.offset, file=path):
                if n.owner == NOTE_OWNER and n.type == NT_AMDGPU_METADATA:
                    note_bytes = n.desc
                    from .metadata import check_note_metadata
                    try:
                        import msgpack
                        check_note_metadata(msgpack.unpackb(n.desc, raw=False, strict_map_key=False),
                                            file=path, offset=n.desc_offset)
                    except (ValueError, TypeError, msgpack.exceptions.ExtraData,
                            msgpack.exceptions.UnpackException):
                        pass  # not valid MessagePack: decode_metadata says so
                    metadata = decode_metadata(n.desc, file=path, offset=n.desc_offset)
    cov = ABI_TO_COV.get(abi, 0)
    co = CodeObject(path=path, data=data, e_flags=e_flags, abi_version=abi, mach=e_flags & 0xFF,
                    xnack=_FEATURE_V4[e_flags & EF_AMDGPU_FEATURE_XNACK_V4],
                    sramecc=_FEATURE_V4[(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 2],
                    code_object_version=cov, sections=sections, symbols=symbols, kernels=[],
                    metadata=metadata, metadata_note=note_bytes)
    if abi < 2:
        co.warnings.append(f"ELF ABI version {abi} (code object v{cov}): feature bits are read as v4+")
    if metadata is not None:
        metadata.check_code_object_version(cov)
        co.warnings.extend(metadata.warnings)
        if metadata.target:
            # exact: processor and every xnack/sramecc setting (PITFALLS BR-30); Triton's
            # "amdgpu9.42-amd-amdhsa-unknown-gfx942" spelling names the same target
            try:
                meta_tid = parse_target_id(str(metadata.target))
            except ValueError:
                meta_tid = None
            if meta_tid != parse_target_id(co.target_id):
                co.warnings.append(f"amdhsa.target is {metadata.target!r} but e_flags {e_flags:#x} say "
                                   f"{co.target_id!r}")
    else:
        co.warnings.append("no NT_AMDGPU_METADATA note")

    # kernels: NAME (function) + NAME.kd (object)
    by_name = {s.name: s for s in symbols}
    for sym in co.function_symbols():
        kd = by_name.get(sym.name + ".kd")
        if kd is None or kd.type != "STT_OBJECT":
            continue
        ksec = next((s for s in sections if s.name == kd.section), None)
        if ksec is None or not (ksec.addr <= kd.value and kd.value + KD_SIZE <= ksec.addr + ksec.size):
            raise _fail(path, f"kernel descriptor {kd.name} at {kd.value:#x} is not inside a section "
                              f"with {KD_SIZE} bytes of data", ksec.offset if ksec else None)
        off = kd.value - ksec.addr
        kd_bytes = ksec.data[off:off + KD_SIZE]
        desc = KernelDescriptor.from_bytes(kd_bytes, file=path, offset=ksec.offset + off)
        meta = metadata.kernel(sym.name) if metadata else None
        k = CodeObjectKernel(sym.name, sym.value, sym.size, sym, kd, kd.value, kd_bytes, desc, meta)
        co.kernels.append(k)
        if k.code_entry != sym.value:
            co.warnings.append(f"kernel {sym.name}: descriptor entry offset points to {k.code_entry:#x}, "
                               f"symbol is at {sym.value:#x}")
        if meta is None:
            co.warnings.append(f"kernel {sym.name} has no metadata entry")
        else:
            if desc.kernarg_size == 0 and meta.kernarg_segment_size:
                co.warnings.append(f"kernel {sym.name}: descriptor kernarg_size is 0, metadata "
                                   f".kernarg_segment_size is {meta.kernarg_segment_size}")
            elif meta.kernarg_segment_size is not None and desc.kernarg_size != meta.kernarg_segment_size:
                co.warnings.append(f"kernel {sym.name}: descriptor kernarg_size {desc.kernarg_size} != "
                                   f"metadata .kernarg_segment_size {meta.kernarg_segment_size}")
            if meta.group_segment_fixed_size is not None and \
                    desc.group_segment_fixed_size != meta.group_segment_fixed_size:
                co.warnings.append(f"kernel {sym.name}: descriptor group_segment_fixed_size "
                                   f"{desc.group_segment_fixed_size} != metadata "
                                   f"{meta.group_segment_fixed_size}")
    return co


def _read_tables(path: str, data: bytes) -> tuple[list[Section], list[Symbol], tuple | None]:
    """Sections, symbols (``.symtab``, else ``.dynsym``) and that table's (name, file offset,
    entry size) (``None`` without one), by :mod:`asmevo.frontend.elf`; files that reader
    declines go to pyelftools (:func:`_read_tables_pyelftools`), which reports what is wrong."""
    from . import elf as _elf
    f = _elf.read_elf(data)
    if f is None:
        return _read_tables_pyelftools(path, data)
    symtab = f.by_name.get(".symtab") or f.by_name.get(".dynsym")
    if symtab is not None and (symtab.type_number not in (2, 11) or symtab.entsize != 24):
        return _read_tables_pyelftools(path, data)  # pyelftools says what is wrong
    sections = [Section(s.index, s.name, s.type, s.addr, s.offset, s.size, s.flags, s.align,
                        f.section_data(s), s.entsize) for s in f.sections]
    symbols = []
    if symtab is not None:
        n = len(sections)
        for sym in f.symbols(symtab):
            shndx = sym.shndx
            sec = sections[shndx].name if isinstance(shndx, int) and 0 < shndx < n else None
            symbols.append(Symbol(sym.name, sym.value, sym.size, sym.type, sym.bind,
                                  sym.visibility, shndx, sec))
        return sections, symbols, (symtab.name, symtab.offset, symtab.entsize)
    return sections, symbols, None


def _read_tables_pyelftools(path: str, data: bytes) -> tuple[list[Section], list[Symbol], tuple | None]:
    """:func:`_read_tables` with pyelftools (any file; its errors become CodeObjectError)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        elf = ELFFile(io.BytesIO(data))
        sections = []
        for i, s in enumerate(elf.iter_sections()):
            h = s.header
            sdata = b"" if h.sh_type in ("SHT_NOBITS", "SHT_NULL") else bytes(s.data())
            sections.append(Section(i, s.name, h.sh_type, h.sh_addr, h.sh_offset, h.sh_size,
                                    h.sh_flags, h.sh_addralign, sdata, h.sh_entsize))
        symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        symbols = []
        if symtab is not None:
            if symtab.header.sh_entsize != 24:
                raise _fail(path, f"symbol table entry size {symtab.header.sh_entsize}, expected 24",
                            symtab.header.sh_offset)
            for sym in symtab.iter_symbols():
                shndx = sym["st_shndx"]
                sec = sections[shndx].name if isinstance(shndx, int) and 0 < shndx < len(sections) \
                    else None
                symbols.append(Symbol(sym.name, sym["st_value"], sym["st_size"], sym["st_info"]["type"],
                                      sym["st_info"]["bind"], sym["st_other"]["visibility"], shndx, sec))
    except CodeObjectError:
        raise
    except (ELFError, struct.error, UnicodeDecodeError, ValueError, IndexError, KeyError) as e:
        raise _fail(path, f"corrupt ELF: {e}; expected well-formed section and symbol tables", None) from None
    except Exception as e:  # construct.core errors and similar from pyelftools internals
        raise _fail(path, f"corrupt ELF ({type(e).__name__}: {e}); expected well-formed section and "
                          "symbol tables", None) from None

    if symtab is None:
        return sections, symbols, None
    return sections, symbols, (symtab.name, symtab.header.sh_offset, symtab.header.sh_entsize)
