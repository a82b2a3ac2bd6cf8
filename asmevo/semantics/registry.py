"""The one registry: base mnemonic -> semantic specification.

Every instruction's meaning is written once, as a small function over the
abstract value interface of :mod:`asmevo.semantics.values`; the emulator
(:mod:`asmevo.emu`, numpy backend, 64 lanes) and the verifier
(:mod:`asmevo.semantics.z3backend`, z3 bit-vectors) both look instructions up
here.  Instructions whose effect is not a per-lane function of register values
(memory, branches, cross-lane moves, MFMA) are registered with ``kind`` naming
the emulator handler family and ``fn=None``; the z3 backend raises
:class:`Unsupported` for them.

Operand type names (widths in bits): ``b32 u32 i32 f32``, ``b16 u16 i16 f16``,
``b64 u64 i64 f64``; ``lm`` is a lane mask (one bit per lane: ``vcc``, an SGPR
pair; a boolean per lane inside a semantic function); ``u24``/``i24`` are 32-bit
operands of which the function uses 24 bits.  Implicit operands: ``scc``
(a boolean), ``exec`` (64-bit mask; for SALU a b64 value), ``vcc``, ``m0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import AsmevoError

SUFFIXES = ("_e32", "_e64", "_dpp", "_sdwa")


class Unsupported(AsmevoError):
    """An instruction (or a form of it) that has no semantics in this backend."""


@dataclass(frozen=True)
class SemSpec:
    """Semantics of one base mnemonic.

    Attributes:
        name: base mnemonic without encoding suffix (``"v_add_f32"``).
        fn: ``fn(B, *srcs, [tied,] *imp_in) -> result | tuple`` over backend ``B``
            (``tied``: the old value of the first destination, when
            ``extra['tied']``, e.g. ``v_fmac_f32``, ``s_cmov_b32``); the
            results are the explicit destinations then the implicit outputs, in
            order.  ``None`` for emulator-only instructions.
        kind: ``"valu"``, ``"vopc"``, ``"salu"``, ``"sopc"``, ``"vop3p"`` (packed,
            ``fn`` is the per-element function) or an emulator handler family
            (``"smem"``, ``"ds"``, ``"flat"``, ``"mubuf"``, ``"branch"``,
            ``"lane"``, ``"mfma"``, ``"nop"``...), or ``"unsupported"``: an instruction
            both backends refuse, with ``extra['reason']`` (e.g. ``v_mad_f16``).
        dst, src: operand type names of the explicit destinations and sources,
            in assembly order.
        imp_in, imp_out: implicit operands read / written.
    """

    name: str
    fn: Callable | None
    kind: str
    dst: tuple = ()
    src: tuple = ()
    imp_in: tuple = ()
    imp_out: tuple = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)


REGISTRY: dict[str, SemSpec] = {}


def base_mnemonic(opcode: str) -> str:
    """``v_add_f32_e32`` -> ``v_add_f32`` (strip one encoding suffix)."""
    for s in SUFFIXES:
        if opcode.endswith(s):
            return opcode[: -len(s)]
    return opcode


def _split(t) -> tuple:
    if isinstance(t, str):
        return tuple(t.split())
    return tuple(t)


def register(name: str, kind: str, dst="", src="", imp_in="", imp_out="", **extra):
    """Decorator: register ``fn`` as the semantics of ``name``.

    ``dst``/``src``/``imp_in``/``imp_out`` are space-separated type lists.
    Raises ``ValueError`` on a duplicate name (one definition per mnemonic).
    """
    def deco(fn):
        define(name, fn, kind, dst, src, imp_in, imp_out, **extra)
        return fn
    return deco


def define(name, fn, kind, dst="", src="", imp_in="", imp_out="", **extra) -> SemSpec:
    """Register without decorator syntax (used by table-driven families)."""
    if name in REGISTRY:
        raise ValueError(f"duplicate semantics for {name}")
    spec = SemSpec(name, fn, kind, _split(dst), _split(src), _split(imp_in), _split(imp_out),
                   dict(extra))
    REGISTRY[name] = spec
    return spec


def lookup(opcode: str) -> SemSpec | None:
    """The spec for ``opcode`` (with or without ``_e32``/``_e64``/``_dpp``/``_sdwa``), or None."""
    _load()
    s = REGISTRY.get(opcode)
    if s is None:
        s = REGISTRY.get(base_mnemonic(opcode))
    return s


_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import salu, valu, vopc, special  # noqa: F401  (populate REGISTRY)


def all_specs() -> dict[str, SemSpec]:
    """Every registered spec (name -> SemSpec)."""
    _load()
    return dict(REGISTRY)


def width(t: str) -> int:
    """Bit width of an operand type name (``lm`` -> 64, ``b1`` -> 1)."""
    if t in ("lm",):
        return 64
    if t in ("b1", "scc"):
        return 1
    if t in ("u24", "i24"):
        return 32
    return int(t[1:])


def is_float(t: str) -> bool:
    """Whether type ``t`` is a floating-point type (``f16``/``f32``/``f64``)."""
    return t[0] == "f"
