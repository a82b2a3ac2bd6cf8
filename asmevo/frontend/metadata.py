"""The ``NT_AMDGPU_METADATA`` note (MessagePack) as typed objects.

Format: LLVM AMDGPUUsage, "Code Object V3+ Metadata" (the ``amdhsa.*`` map with
``amdhsa.version``, ``amdhsa.target``, ``amdhsa.kernels``; each kernel a map of
``.name``, ``.symbol``, ``.args``...).  Values are read as they are; anything
inconsistent (kernarg size 0 in the descriptor, ``amdhsa.version`` 1.0 in a v5
file, argument sizes/offsets that do not fit the kernarg segment) is reported in
a ``warnings`` list, never fixed.
"""

from __future__ import annotations

import re as _re
import struct
from typing import Any

import msgpack

from ..errors import CodeObjectError
from ..record import Record

NT_AMDGPU_METADATA = 32
NOTE_OWNER = "AMDGPU"

#: ``amdhsa.version`` per code object version (AMDGPUUsage "Code Object V3+ Metadata").
VERSION_FOR_COV = {3: (1, 0), 4: (1, 1), 5: (1, 2), 6: (1, 2)}


#: Fixed sizes (bytes) per ``.value_kind`` (AMDGPUUsage "Code Object V5 Metadata",
#: hidden argument table; pointers are 64-bit in the global/flat address space).
VALUE_KIND_SIZES = {
    "global_buffer": 8, "queue": 8, "image": 8, "sampler": 8, "pipe": 8,
    "hidden_block_count_x": 4, "hidden_block_count_y": 4, "hidden_block_count_z": 4,
    "hidden_group_size_x": 2, "hidden_group_size_y": 2, "hidden_group_size_z": 2,
    "hidden_remainder_x": 2, "hidden_remainder_y": 2, "hidden_remainder_z": 2,
    "hidden_global_offset_x": 8, "hidden_global_offset_y": 8, "hidden_global_offset_z": 8,
    "hidden_grid_dims": 2, "hidden_printf_buffer": 8, "hidden_hostcall_buffer": 8,
    "hidden_multigrid_sync_arg": 8, "hidden_heap_v1": 8, "hidden_default_queue": 8,
    "hidden_completion_action": 8, "hidden_dynamic_lds_size": 4, "hidden_private_base": 4,
    "hidden_shared_base": 4, "hidden_queue_ptr": 8,
}


class KernelArg(Record):
    """One entry of a kernel's ``.args`` (offset/size in bytes within the kernarg segment)."""

    _fields = ("name", "offset", "size", "value_kind", "address_space", "type_name", "access",
               "actual_access", "is_const", "is_restrict", "is_volatile", "pointee_align", "raw")
    _norepr = frozenset({"raw"})

    def __init__(self, name: str | None, offset: int, size: int, value_kind: str,
                 address_space: str | None = None, type_name: str | None = None,
                 access: str | None = None, actual_access: str | None = None,
                 is_const: bool = False, is_restrict: bool = False, is_volatile: bool = False,
                 pointee_align: int | None = None, raw: dict | None = None):
        self.name = name
        self.offset = offset
        self.size = size
        self.value_kind = value_kind
        self.address_space = address_space
        self.type_name = type_name
        self.access = access
        self.actual_access = actual_access
        self.is_const = is_const
        self.is_restrict = is_restrict
        self.is_volatile = is_volatile
        self.pointee_align = pointee_align
        self.raw = {} if raw is None else raw

    @classmethod
    def from_dict(cls, d: dict) -> "KernelArg":
        """Build from one decoded ``.args`` map (keys with the leading dot)."""
        return cls(name=d.get(".name"), offset=int(d.get(".offset", 0)), size=int(d.get(".size", 0)),
                   value_kind=d.get(".value_kind", ""), address_space=d.get(".address_space"),
                   type_name=d.get(".type_name"), access=d.get(".access"),
                   actual_access=d.get(".actual_access"), is_const=bool(d.get(".is_const", False)),
                   is_restrict=bool(d.get(".is_restrict", False)),
                   is_volatile=bool(d.get(".is_volatile", False)),
                   pointee_align=d.get(".pointee_align"), raw=d)

    @property
    def hidden(self) -> bool:
        """Whether this is a hidden (implicit) argument (``hidden_*`` value kind)."""
        return self.value_kind.startswith("hidden_")


class KernelMeta(Record):
    """One entry of ``amdhsa.kernels``.  ``raw`` is the decoded map as it is."""

    _fields = ("name", "symbol", "kernarg_segment_size", "kernarg_segment_align",
               "group_segment_fixed_size", "private_segment_fixed_size", "sgpr_count",
               "vgpr_count", "agpr_count", "wavefront_size", "max_flat_workgroup_size",
               "reqd_workgroup_size", "args", "raw", "warnings")
    _norepr = frozenset({"raw"})

    def __init__(self, name: str, symbol: str, kernarg_segment_size: int | None,
                 kernarg_segment_align: int | None, group_segment_fixed_size: int | None,
                 private_segment_fixed_size: int | None, sgpr_count: int | None,
                 vgpr_count: int | None, agpr_count: int | None, wavefront_size: int | None,
                 max_flat_workgroup_size: int | None,
                 reqd_workgroup_size: tuple[int, int, int] | None, args: list[KernelArg],
                 raw: dict, warnings: list[str] | None = None):
        self.name = name
        self.symbol = symbol
        self.kernarg_segment_size = kernarg_segment_size
        self.kernarg_segment_align = kernarg_segment_align
        self.group_segment_fixed_size = group_segment_fixed_size
        self.private_segment_fixed_size = private_segment_fixed_size
        self.sgpr_count = sgpr_count
        self.vgpr_count = vgpr_count
        self.agpr_count = agpr_count
        self.wavefront_size = wavefront_size
        self.max_flat_workgroup_size = max_flat_workgroup_size
        self.reqd_workgroup_size = reqd_workgroup_size
        self.args = args
        self.raw = raw
        self.warnings = [] if warnings is None else warnings

    @classmethod
    def from_dict(cls, d: dict) -> "KernelMeta":
        """Build from one decoded ``amdhsa.kernels`` map; checks argument layout (warnings)."""
        rw = d.get(".reqd_workgroup_size")
        km = cls(name=d.get(".name", ""), symbol=d.get(".symbol", ""),
                 kernarg_segment_size=d.get(".kernarg_segment_size"),
                 kernarg_segment_align=d.get(".kernarg_segment_align"),
                 group_segment_fixed_size=d.get(".group_segment_fixed_size"),
                 private_segment_fixed_size=d.get(".private_segment_fixed_size"),
                 sgpr_count=d.get(".sgpr_count"), vgpr_count=d.get(".vgpr_count"),
                 agpr_count=d.get(".agpr_count"), wavefront_size=d.get(".wavefront_size"),
                 max_flat_workgroup_size=d.get(".max_flat_workgroup_size"),
                 reqd_workgroup_size=tuple(rw) if rw else None,
                 args=[KernelArg.from_dict(a) for a in d.get(".args", []) or []], raw=d)
        km._check()
        return km

    def _check(self) -> None:
        w = self.warnings
        if self.symbol and self.symbol != self.name + ".kd":
            w.append(f"kernel {self.name}: .symbol is {self.symbol!r}, expected {self.name + '.kd'!r}")
        end = 0
        for i, a in enumerate(self.args):
            label = a.name or f"#{i}"
            if a.size <= 0:
                w.append(f"kernel {self.name}: argument {label} has size {a.size}")
            want = VALUE_KIND_SIZES.get(a.value_kind)
            if want is not None and a.size > 0 and a.size != want:
                w.append(f"kernel {self.name}: argument {label} ({a.value_kind}) has size {a.size}, "
                         f"expected {want}")
            if a.offset < end:
                w.append(f"kernel {self.name}: argument {label} at offset {a.offset} overlaps the "
                         f"previous argument (ends at {end})")
            end = max(end, a.offset + a.size)
        if self.kernarg_segment_size is not None and end > self.kernarg_segment_size:
            w.append(f"kernel {self.name}: arguments end at byte {end} but .kernarg_segment_size is "
                     f"{self.kernarg_segment_size}")

    def explicit_args(self) -> list[KernelArg]:
        """Arguments that are not hidden."""
        return [a for a in self.args if not a.hidden]

    def arg_offset(self, value_kind: str) -> int | None:
        """Kernarg-segment byte offset of the first argument of ``value_kind``
        (``"hidden_group_size_x"``...), as its ``.offset`` in ``.args`` says, or ``None``.

        Code object v5 hidden arguments (``hidden_block_count_*``, ``hidden_group_size_*``,
        ``hidden_remainder_*``, ``hidden_grid_dims``...) sit wherever the metadata puts
        them (AMDGPUUsage "Code Object V5 Metadata"; PITFALLS BR-26): never assume a fixed
        offset; under v4 the workgroup size comes from the dispatch packet and there is
        no ``hidden_group_size_*`` entry.
        """
        for a in self.args:
            if a.value_kind == value_kind:
                return a.offset
        return None

    def hidden_args(self) -> dict[str, int]:
        """``{value_kind: offset}`` of every hidden argument (first one of each kind)."""
        out: dict[str, int] = {}
        for a in self.args:
            if a.hidden:
                out.setdefault(a.value_kind, a.offset)
        return out


class Metadata(Record):
    """The whole decoded note: ``version`` (major, minor), ``target``, ``kernels``, ``raw``."""

    _fields = ("version", "target", "kernels", "raw", "warnings")
    _norepr = frozenset({"raw"})

    def __init__(self, version: tuple[int, ...] | None, target: str | None,
                 kernels: list[KernelMeta], raw: dict, warnings: list[str] | None = None):
        self.version = version
        self.target = target
        self.kernels = kernels
        self.raw = raw
        self.warnings = [] if warnings is None else warnings

    def kernel(self, name: str) -> KernelMeta | None:
        """The entry whose ``.name`` is ``name`` (or whose ``.symbol`` is ``name.kd``)."""
        for k in self.kernels:
            if k.name == name or k.symbol == name + ".kd":
                return k
        return None

    def check_code_object_version(self, cov: int) -> None:
        """Warn when ``amdhsa.version`` does not match code object version ``cov``."""
        want = VERSION_FOR_COV.get(cov)
        if want and self.version and tuple(self.version[:2]) != want:
            self.warnings.append(
                f"amdhsa.version is {'.'.join(map(str, self.version))} but the ELF says code object "
                f"v{cov} (expected {want[0]}.{want[1]})")


def decode_metadata(data: bytes, *, file: str | None = None, offset: int | None = None) -> Metadata:
    """Decode the MessagePack payload of an ``NT_AMDGPU_METADATA`` note.

    Raises:
        CodeObjectError: not valid MessagePack, or not a map (``offset`` = the
            payload's file offset, for the message).
    """
    try:
        raw = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception as e:  # msgpack raises several unrelated exception types
        raise CodeObjectError(f"NT_AMDGPU_METADATA is not valid MessagePack ({e})",
                              file=file, offset=offset) from None
    if not isinstance(raw, dict):
        raise CodeObjectError("NT_AMDGPU_METADATA: expected a MessagePack map at the top level, got "
                              f"{type(raw).__name__}", file=file, offset=offset)
    return metadata_from_map(raw, file=file, offset=offset)


class Note(Record):
    """One ELF note: ``owner``, ``type``, ``desc`` bytes, and ``desc_offset`` in the file."""

    _fields = ("owner", "type", "desc", "offset", "desc_offset")

    def __init__(self, owner: str, type: int, desc: bytes, offset: int, desc_offset: int):
        self.owner = owner
        self.type = type
        self.desc = desc
        self.offset = offset
        self.desc_offset = desc_offset


def iter_notes(data: bytes, base_offset: int = 0, *, file: str | None = None) -> list[Note]:
    """Split a note section's bytes into notes (ELF gABI: namesz, descsz, type, name, desc,
    each padded to 4 bytes).

    Raises:
        CodeObjectError: a note runs past the end of the section (``offset`` given).
    """
    out = []
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        name_start = pos + 12
        desc_start = name_start + ((namesz + 3) & ~3)
        end = desc_start + ((descsz + 3) & ~3)
        if desc_start + descsz > len(data):
            raise CodeObjectError(f"note of {descsz} bytes runs past the end of its section "
                                  f"({len(data) - pos} bytes left); expected a complete ELF note",
                                  file=file, offset=base_offset + pos)
        owner = data[name_start:name_start + namesz].rstrip(b"\0").decode("latin-1")
        out.append(Note(owner, ntype, bytes(data[desc_start:desc_start + descsz]),
                        base_offset + pos, base_offset + desc_start))
        pos = end
    if pos != len(data) and any(data[pos:]):
        raise CodeObjectError("trailing bytes after the last note; expected a complete ELF note",
                              file=file, offset=base_offset + pos)
    return out


# -- YAML for .amdgpu_metadata ------------------------------------------------

def _yaml_scalar(v: Any) -> str:
    if v is None:
        return "''"  # llvm-mc stores an empty string as nil
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (bytes, bytearray)):
        raise ValueError("binary values cannot be written as YAML")
    s = str(v)
    return "'" + s.replace("'", "''") + "'"


def _yaml_lines(v: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            key = k if isinstance(k, str) and k and all(c.isalnum() or c in "._-" for c in k) \
                else _yaml_scalar(k)
            if isinstance(x, (dict, list)) and x:
                out.append(f"{pad}{key}:")
                _yaml_lines(x, indent + 2, out)
            elif isinstance(x, dict):
                out.append(f"{pad}{key}: {{}}")
            elif isinstance(x, list):
                out.append(f"{pad}{key}: []")
            else:
                out.append(f"{pad}{key}: {_yaml_scalar(x)}")
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, dict) and x:
                sub: list[str] = []
                _yaml_lines(x, indent + 2, sub)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            elif isinstance(x, list) and x:
                sub = []
                _yaml_lines(x, indent + 2, sub)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            else:
                out.append(f"{pad}- " + ("{}" if isinstance(x, dict) else "[]" if isinstance(x, list)
                                         else _yaml_scalar(x)))


def to_yaml(raw: dict) -> str:
    """The decoded metadata map as the YAML document ``.amdgpu_metadata`` takes.
    Strings are quoted, but llvm-mc 19 types scalars by their text whatever the quoting
    (``'1'`` becomes the integer 1, ``'on'`` true; see :func:`llvm_yaml_scalar`), so callers
    check the result with :func:`read_yaml_metadata` and fall back to a raw note.

    Raises:
        ValueError: a value (binary) has no YAML form here.
    """
    lines = ["---"]
    _yaml_lines(raw, 0, lines)
    lines.append("...")
    return "\n".join(lines) + "\n"


# -- reading .amdgpu_metadata YAML with llvm-mc's types ------------------------

_UINT_RE = {16: _re.compile(r"[0-9a-fA-F]+"), 8: _re.compile(r"[0-7]+"), 2: _re.compile(r"[01]+"),
            10: _re.compile(r"[0-9]+")}
#: llvm::yaml::parseBool (YAMLTraits.h), the spellings llvm-mc reads as booleans.
_YAML_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_YAML_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
#: What strtod accepts as a whole string (ScalarTraits<double>::input uses llvm::to_float).
_FLOAT_RE = _re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                        r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                        r"|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))")


def _llvm_uint(s: str) -> int | None:
    """llvm::getAsUnsignedInteger(s, radix 0): 0x/0b/0o/leading-0 prefixes, whole string."""
    if s[:2] in ("0x", "0X"):
        radix, digits = 16, s[2:]
    elif s[:2] in ("0b", "0B"):
        radix, digits = 2, s[2:]
    elif s[:2] == "0o":
        radix, digits = 8, s[2:]
    elif len(s) > 1 and s[0] == "0":
        radix, digits = 8, s[1:]
    else:
        radix, digits = 10, s
    if not digits or not _UINT_RE[radix].fullmatch(digits):
        return None
    v = int(digits, radix)
    return v if v < 1 << 64 else None


def llvm_yaml_scalar(s: str) -> Any:
    """The msgpack value llvm-mc 19 stores for a YAML scalar of ``.amdgpu_metadata``
    (``msgpack::DocNode::fromString``, MsgPackDocumentYAML.cpp), quoted or not:

    * an unsigned then signed 64-bit integer (``getAsUnsignedInteger`` radix 0:
      ``0x10`` -> 16, ``010`` -> 8, ``0b101`` -> 5, ``'1'`` -> 1);
    * a boolean per ``yaml::parseBool`` (``true``, ``on``, ``yes``, ``y``, ``off``...);
    * a floating-point number: llvm-mc 19 writes it as msgpack nil (checked
      against its output), so ``None``;
    * otherwise the string (``null`` and ``~`` stay strings);
    * the empty string ``''`` is stored as nil (``None``); a value left out entirely
      (``key:``) is an empty array, see :func:`read_yaml_metadata`.
    """
    if s == "":
        return None  # llvm-mc 19 stores an empty (quoted) string as nil
    v = _llvm_uint(s)
    if v is not None:
        return v
    if s.startswith("-"):
        v = _llvm_uint(s[1:])
        if v is not None and v <= 1 << 63:
            return -v
    if s in _YAML_TRUE:
        return True
    if s in _YAML_FALSE:
        return False
    if _FLOAT_RE.fullmatch(s):
        return None
    return s


class _EmptyPlain:
    """Marker for a value left out (``key:``), which llvm-mc stores as an empty array."""


_EMPTY_PLAIN = _EmptyPlain()


def _yaml_loader():
    import yaml
    base = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    def scalar(loader, node):
        if node.value == "" and not node.style:  # plain style: None (PyYAML) or "" (libyaml)
            return _EMPTY_PLAIN
        return node.value

    Loader.add_constructor("tag:yaml.org,2002:str", scalar)
    return Loader


def _llvm_yaml_value(node: Any) -> Any:
    if node is _EMPTY_PLAIN:
        return []
    if isinstance(node, dict):
        return {(k if isinstance(k, str) else k): _llvm_yaml_value(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_llvm_yaml_value(v) for v in node]
    return llvm_yaml_scalar(node)


def read_yaml_metadata(text: str, *, file: str | None = None, line: int | None = None) -> dict:
    """Parse the YAML between ``.amdgpu_metadata`` and ``.end_amdgpu_metadata`` into the
    map llvm-mc would store in the ``NT_AMDGPU_METADATA`` note, with the same Python
    types :func:`decode_metadata` gives for that note (see :func:`llvm_yaml_scalar`:
    llvm-mc ignores quoting, so ``'1'`` is the integer 1).  Map keys stay strings.

    The YAML structure is read with PyYAML's ``BaseLoader`` (every scalar a string, no
    YAML 1.1 typing); the types are then assigned by llvm-mc's rules.

    Args:
        line: line number of the ``.amdgpu_metadata`` directive, so errors point into the file.

    Raises:
        AsmSyntaxError: malformed YAML, or a document that is not a map
            (located at ``file:line:column``).
    """
    import yaml
    from ..errors import AsmSyntaxError
    try:
        doc = yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        ln = col = None
        if mark is not None:
            ln = (line + 1 if line is not None else 1) + mark.line
            col = mark.column + 1
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise AsmSyntaxError(f"malformed .amdgpu_metadata YAML: {problem}", file=file,
                             line=ln if ln is not None else line, column=col) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise AsmSyntaxError(f".amdgpu_metadata: expected a YAML map at the top level, got "
                             f"{'a list' if isinstance(doc, list) else 'a scalar'}", file=file, line=line)
    return _llvm_yaml_value(doc)


def metadata_from_map(raw: dict, *, file: str | None = None, offset: int | None = None) -> Metadata:
    """A :class:`Metadata` from an already decoded ``amdhsa.*`` map (msgpack or YAML).

    Raises:
        CodeObjectError: an ``amdhsa.kernels`` entry is not a map.
    """
    ver = raw.get("amdhsa.version")
    kernels = []
    for k in raw.get("amdhsa.kernels", []) or []:
        if not isinstance(k, dict):
            raise CodeObjectError("NT_AMDGPU_METADATA: amdhsa.kernels entry is not a map",
                                  file=file, offset=offset)
        kernels.append(KernelMeta.from_dict(k))
    md = Metadata(version=tuple(ver) if isinstance(ver, list) else None,
                  target=raw.get("amdhsa.target"), kernels=kernels, raw=raw)
    for k in kernels:
        md.warnings.extend(k.warnings)
    return md


# -- value types (llvm-mc's HSA metadata verifier) ------------------------------

def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _uint(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _ints(n: int | None):
    def ok(v: Any) -> bool:
        return isinstance(v, list) and (n is None or len(v) == n) and all(_is_int(x) for x in v)
    return ok


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


#: Types of the ``amdhsa.kernels`` entry keys (AMDGPUMetadataVerifier.cpp, V3+), with what
#: the message says is expected.  Keys that are absent or unknown are not checked.
KERNEL_KEY_TYPES = {
    ".name": (_str, "a string"), ".symbol": (_str, "a string"), ".language": (_str, "a string"),
    ".language_version": (_ints(2), "a list of 2 integers"),
    ".args": (lambda v: isinstance(v, list), "a list of argument maps"),
    ".reqd_workgroup_size": (_ints(3), "a list of 3 integers"),
    ".workgroup_size_hint": (_ints(3), "a list of 3 integers"),
    ".vec_type_hint": (_str, "a string"), ".device_enqueue_symbol": (_str, "a string"),
    ".kernarg_segment_size": (_uint, "a non-negative integer"),
    ".group_segment_fixed_size": (_uint, "a non-negative integer"),
    ".private_segment_fixed_size": (_uint, "a non-negative integer"),
    ".uses_dynamic_stack": (_bool, "a boolean"),
    ".kernarg_segment_align": (_uint, "a non-negative integer"),
    ".wavefront_size": (_uint, "a non-negative integer"),
    ".sgpr_count": (_uint, "a non-negative integer"), ".vgpr_count": (_uint, "a non-negative integer"),
    ".agpr_count": (_uint, "a non-negative integer"),
    ".max_flat_workgroup_size": (_uint, "a non-negative integer"),
    ".sgpr_spill_count": (_uint, "a non-negative integer"),
    ".vgpr_spill_count": (_uint, "a non-negative integer"),
}
ARG_KEY_TYPES = {
    ".name": (_str, "a string"), ".type_name": (_str, "a string"),
    ".size": (_uint, "a non-negative integer"), ".offset": (_uint, "a non-negative integer"),
    ".value_kind": (_str, "a string"), ".pointee_align": (_uint, "a non-negative integer"),
    ".address_space": (_str, "a string"), ".access": (_str, "a string"),
    ".actual_access": (_str, "a string"), ".is_const": (_bool, "a boolean"),
    ".is_restrict": (_bool, "a boolean"), ".is_volatile": (_bool, "a boolean"),
    ".is_pipe": (_bool, "a boolean"),
}


def metadata_type_error(raw: dict) -> tuple[list, str] | None:
    """The first value of the ``amdhsa.*`` map whose type llvm-mc's metadata verifier
    rejects, as ``(path, message)`` (path: the keys and list indices leading to it), or
    ``None``.  Only the types of the keys present are checked."""
    def show(v: Any) -> str:
        if v is None:  # llvm-mc stores a floating-point number or '' as nil
            return "empty or a floating-point number"
        r = repr(v)
        return r if len(r) <= 40 else r[:37] + "..."
    ver = raw.get("amdhsa.version")
    if "amdhsa.version" in raw and not _ints(2)(ver):
        return ["amdhsa.version"], f"amdhsa.version is {show(ver)}; expected a list of 2 integers"
    if "amdhsa.target" in raw and not _str(raw["amdhsa.target"]):
        return ["amdhsa.target"], f"amdhsa.target is {show(raw['amdhsa.target'])}; expected a string"
    ks = raw.get("amdhsa.kernels")
    if ks is None:
        return None
    if not isinstance(ks, list):
        return ["amdhsa.kernels"], "amdhsa.kernels is not a list of kernel maps"
    for i, k in enumerate(ks):
        if not isinstance(k, dict):
            return ["amdhsa.kernels", i], f"amdhsa.kernels entry #{i} is not a map"
        kname = k.get(".name") if isinstance(k.get(".name"), str) else f"#{i}"
        for key, (ok, want) in KERNEL_KEY_TYPES.items():
            if key in k and not ok(k[key]):
                return (["amdhsa.kernels", i, key],
                        f"kernel {kname}: {key} is {show(k[key])}; expected {want}")
        for j, a in enumerate(k.get(".args") or []):
            if not isinstance(a, dict):
                return ["amdhsa.kernels", i, ".args", j], f"kernel {kname}: argument #{j} is not a map"
            for key, (ok, want) in ARG_KEY_TYPES.items():
                if key in a and not ok(a[key]):
                    return (["amdhsa.kernels", i, ".args", j, key],
                            f"kernel {kname}: argument #{j}: {key} is {show(a[key])}; expected {want}")
    return None


def yaml_position(text: str, path: list) -> tuple[int, int] | None:
    """0-based (line, column) of the value at ``path`` in the YAML ``text``, or ``None``."""
    import yaml
    try:
        node = yaml.compose(text, Loader=_yaml_loader())
    except yaml.YAMLError:
        return None
    for step in path:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if getattr(k, "value", None) == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            nxt = node.value[step]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
    if node is None:
        return None
    return node.start_mark.line, node.start_mark.column


def check_yaml_metadata(doc: dict, text: str, *, file: str | None = None,
                        line: int | None = None) -> None:
    """Reject a ``.amdgpu_metadata`` document (read by :func:`read_yaml_metadata` from
    ``text``, whose ``.amdgpu_metadata`` directive is at ``line``) holding a value of the
    wrong type (:func:`metadata_type_error`; llvm-mc: "invalid HSA metadata").

    Raises:
        AsmSyntaxError: at the ``file:line:column`` of the offending value.
    """
    from ..errors import AsmSyntaxError
    bad = metadata_type_error(doc)
    if bad is None:
        return
    path, msg = bad
    pos = yaml_position(text, path)
    ln = col = None
    if pos is not None:
        ln = (line + 1 if line is not None else 1) + pos[0]
        col = pos[1] + 1
    raise AsmSyntaxError(f"invalid .amdgpu_metadata: {msg} (llvm-mc: invalid HSA metadata)",
                         file=file, line=ln if ln is not None else line, column=col)


def check_note_metadata(raw: dict, *, file: str | None = None, offset: int | None = None) -> None:
    """Reject an ``NT_AMDGPU_METADATA`` map holding a value of the wrong type.

    Raises:
        CodeObjectError: naming the key path, at the note's byte offset.
    """
    bad = metadata_type_error(raw)
    if bad is not None:
        raise CodeObjectError(f"NT_AMDGPU_METADATA: {bad[1]}", file=file, offset=offset)
