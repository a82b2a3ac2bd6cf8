"""``verify(original, candidate, ...)``: run the verification layers and combine them.

Levels are cumulative; the static layer (static checks + ABI) always runs first:

=======  ==============================================================
level    layers
=======  ==============================================================
static   static checks (registers, descriptor counts, LDS/scratch,
         waitcnt, hazards) + ABI preservation
z3       static + z3 equivalence of every changed window
diff     static + differential testing in the emulator
all      static + z3 + differential testing
=======  ==============================================================

Combination (first match wins): any rejection (layers in the order above) ->
that status; at level ``z3`` any undecided window -> ``unknown-*``; memory moved
across ``s_barrier`` -> ``unknown-unsupported`` (cross-wave ordering); an
undecided differential run (step budget, unsupported instruction in the
emulator) -> ``unknown-*``; at level ``all`` a changed window z3 did not decide
(unknown, unsupported, block structure differs) -> ``unknown-unproved`` even when
differential testing found no difference (testing is not a proof); otherwise
``accepted``.  ``accepted`` therefore needs the static checks, a z3 proof of every
changed window (or none changed; or, for a kernel whose windows are undecided one by one,
a relational proof of the whole kernel across blocks, :mod:`asmevo.verify.relational`; for a
candidate whose uniform self-loop was unrolled twice, that proof against K0 with the loop
normalised by :mod:`asmevo.ir.unroll`) and no difference in testing against K0 itself.  Level ``diff``
alone answers ``accepted`` with the message "tested, not proved".
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import AsmevoError
from ..ir.module import Module
from .verdict import Evidence, Status, Verdict

LEVEL_LAYERS = {
    "static": ("static",),
    "z3": ("static", "z3"),
    "diff": ("static", "diff"),
    "all": ("static", "z3", "diff"),
}


def load_module(path: str) -> Module:
    """Load a code object or assembly file through the frontend's one entry point.

    Raises:
        AsmevoError: unreadable or malformed input (with location).
    """
    try:
        from ..frontend.loader import load
    except ImportError:
        load = None
    if load is not None:
        return load(path)
    # Before the loader exists: assembly text only.
    from ..frontend.asm_parser import parse_asm
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise AsmevoError(f"cannot read: {e}", file=path) from None
    return parse_asm(text, path)


def needs_building(m: Module) -> bool:
    """Whether an in-memory module must be written and loaded back before it is judged:
    it did not come from a code object (parsed from text, built in memory), or a block of a
    function carries directives (whatever they emit is in the bytes, not in the IR)."""
    if m.code_object is None:
        return True
    return any(b.directives for k in m.kernels for b in k.blocks)


def _as_module(x: Any, role: str) -> tuple[Module | None, Verdict | None]:
    """Module of the bytes for ``x`` (path or Module).  An assembly file is assembled and
    linked, and the resulting code object is what is verified (:func:`asmevo.frontend.loader.load_bytes`); an
    in-memory module that came from text (or whose blocks carry directives) is written as a
    code object and loaded back (:func:`asmevo.backend.rebuild.as_built`), never trusted as
    parsed.  For the candidate, load/assembly failures are a ``build-failed`` verdict; for the
    original they raise (bad input)."""
    from ..backend.rebuild import as_built
    from ..frontend.loader import is_code_object
    if isinstance(x, Module):
        if not needs_building(x):
            return x, None
        if role == "original":
            return as_built(x), None
        try:
            return as_built(x), None
        except AsmevoError as e:
            return None, Verdict(Status.BUILD_FAILED, "candidate does not assemble",
                                 [Evidence("build", "llvm-mc", str(e)[:2000], {})])
    path = os.fspath(x)
    if role == "original":
        from ..frontend.loader import load_bytes
        return load_bytes(path), None
    from ..frontend.loader import check_input_path, check_text, load_assembled_text
    try:
        check_input_path(path)
        if is_code_object(path) or path.endswith((".co", ".hsaco")):
            return load_module(path), None
        text = check_text(path)
    except AsmevoError as e:
        return None, Verdict(Status.BUILD_FAILED, f"candidate does not load: {e}",
                             [Evidence("build", "load", str(e), {"path": path})])
    try:
        return load_assembled_text(text, path), None
    except AsmevoError as e:
        return None, Verdict(Status.BUILD_FAILED, "candidate does not assemble",
                             [Evidence("build", "llvm-mc", str(e)[:2000], {"path": path})])


def verify(original: Any, candidate: Any, *, harness: Any = None, level: str = "all",
           entry: str | None = None, trials: int = 8, seed: int = 0,
           tolerance: tuple[float, float] | None = None, timeout_ms: int = 10_000,
           memory_order: bool = True, diff_cache: dict | None = None, device=None,
           relational: bool = True) -> Verdict:
    """Verify ``candidate`` against ``original``.

    Args:
        original, candidate: a path (``.co``/``.hsaco``/``.s``) or a loaded :class:`Module`.
        harness: launch description for differential testing (path to a JSON
            harness or an already loaded harness object); required for levels
            ``diff`` and ``all``.
        level: ``static``, ``z3``, ``diff`` or ``all`` (see module docstring).
        entry: kernel to check (default: every kernel; differential testing
            needs one kernel, the harness's or this one).
        trials: differential trials (seeded random inputs plus edge-value trials).
        seed: base seed for input generation.
        tolerance: ``(rtol, atol)`` for floating-point outputs; None = bit exact.
        timeout_ms: z3 budget per window.
        memory_order: run the waitcnt and hazard checks (static layer).
        diff_cache: see :func:`asmevo.verify.diff.differential` (reuse the original's runs
            across many candidates of the same original and harness).
        device: what runs differential testing (an :class:`asmevo.device.Device`; None: the
            embedded emulator).
        relational: try the relational proof across blocks (and the loop normalisation) when
            windows are undecided one by one; False leaves them undecided (cheaper: the
            optimisation loop's chained check, which falls back to a full check against K0).

    Returns:
        A :class:`Verdict` (never raises for a bad *candidate*: that is ``build-failed``).

    Raises:
        AsmevoError: the original or the harness is bad input, or ``level`` is unknown.
    """
    if level not in LEVEL_LAYERS:
        raise AsmevoError(f"unknown level {level!r}; expected one of {', '.join(LEVEL_LAYERS)}")
    layers = LEVEL_LAYERS[level]
    if "diff" in layers and harness is None:
        raise AsmevoError(f"level {level!r} runs differential testing and needs a harness (--harness)")
    orig, _ = _as_module(original, "original")
    cand, bad = _as_module(candidate, "candidate")
    if bad is not None:
        bad.layers = {"build": "fail"}
        return bad
    from .abi import compare_abi
    from .static import check_static
    if "diff" in layers and not isinstance(harness, dict):
        from .diff import load_harness
        harness = load_harness(os.fspath(harness), entry)
    hk = harness.get("kernel") if isinstance(harness, dict) else None
    if entry and hk:
        entry = hk  # --entry picked the harness entry; verify its kernel
    kernels = [entry] if entry else None
    status: dict[str, str] = {}
    parts: list[Verdict] = []
    names = kernels or sorted(k.name for k in cand.kernels if k.is_kernel)

    abi = compare_abi(orig, cand)
    st = check_static(orig, cand, kernels=kernels, memory_order=memory_order)
    # Code the layers below do not check must not pass silently: a changed function that is
    # not a kernel with a descriptor (e.g. text assembled without .amdhsa_kernel) is unknown.
    kernel_names = {k.name for k in cand.kernels if k.is_kernel}
    unchecked = [n for n in changed_kernels(orig, cand, kernels) if n not in kernel_names]
    dead = _unreachable_changes(orig, cand, kernels)
    if dead and st.outcome == "accepted":
        st = Verdict(Status.UNKNOWN_UNSUPPORTED,
                     f"code or data that no path from the kernel entry reaches changed in "
                     f"{', '.join(dead)}; the proofs and the emulator do not see it (it may be "
                     "read as data, e.g. through s_getpc_b64)",
                     [Evidence("static", "unreachable-change", ", ".join(dead))])
    if unchecked and st.outcome == "accepted":
        st = Verdict(Status.UNKNOWN_UNSUPPORTED,
                     f"changed code in {', '.join(unchecked)}, which is not a kernel with a kernel "
                     "descriptor; asmevo verifies kernels only",
                     [Evidence("static", "unchecked-function", ", ".join(unchecked))])
    # --entry restricts every layer to one kernel; code that changed elsewhere in the code
    # object (another kernel, a device function) is then checked by nobody.
    outside = [n for n in changed_kernels(orig, cand, None) if kernels and n not in kernels]
    if outside and st.outcome == "accepted":
        st = Verdict(Status.UNKNOWN_UNSUPPORTED,
                     f"{', '.join(outside)} changed too, but only {', '.join(kernels)} is "
                     "checked (--entry); the rest of the code object is not verified",
                     [Evidence("static", "unchecked-kernels", ", ".join(outside))])
    invisible = _invisible_effects(orig, cand, kernels)
    if invisible and st.outcome == "accepted":
        st = Verdict(Status.UNKNOWN_UNSUPPORTED, invisible,
                     [Evidence("static", "invisible-effect", invisible)])
    status["abi"] = _layer_state(abi)
    status["static"] = _layer_state(st)
    for v in (st, abi):
        if v.outcome == "rejected":
            return _final(v, status, names, [st, abi])
    parts += [st, abi]

    z3v = unproved = None
    if "z3" in layers:
        from .equiv import check_kernels
        z3v = check_kernels(orig, cand, kernels=kernels, timeout_ms=timeout_ms,
                           relational=relational)
        status["z3"] = _layer_state(z3v)
        if z3v.outcome == "rejected":
            return _final(z3v, status, names, parts + [z3v])
        final = any(e.data.get("final") for e in z3v.evidence)
        if level == "z3" or z3v.outcome == "accepted" or final:
            parts.append(z3v)
        else:  # level all: differential testing may still reject; it cannot prove
            unproved = z3v
    if "diff" in layers:
        from .diff import differential
        dv = differential(orig, cand, harness, entry=entry, trials=trials, seed=seed,
                          tolerance=tolerance, cache=diff_cache, device=device)
        status["diff"] = _layer_state(dv)
        parts.append(dv)
        approx = _approximate_ops_changed(orig, cand, kernels)
        if approx and not (z3v is not None and z3v.outcome == "accepted"):
            parts.append(Verdict(Status.UNKNOWN_UNSUPPORTED, approx,
                                 [Evidence("diff", "approximate-ops", approx)]))
        untested = [n for n in changed_kernels(orig, cand, kernels) if n != hk]
        if untested and not (z3v is not None and z3v.outcome == "accepted"):
            parts.append(Verdict(Status.UNKNOWN_UNSUPPORTED,
                                 f"kernel(s) {', '.join(untested)} changed but the harness runs only "
                                 f"{hk}, and z3 did not prove them",
                                 [Evidence("diff", "untested-kernels", ", ".join(untested))]))
    if unproved is not None:
        parts.append(_unproved(unproved, parts[-1] if "diff" in layers else None))
    from .verdict import combine
    v = combine(parts, status, names)
    if v.accepted and level == "static":
        v.message = "static checks and ABI passed (level static does not check equivalence)"
    elif v.accepted and level == "diff":
        v.message = "tested, not proved: differential testing found no difference (" \
            + parts[-1].message + "); level diff does not prove equivalence"
    return v


def _unproved(z3v: Verdict, dv: Verdict | None) -> Verdict:
    """``unknown-unproved``: z3 left changed windows undecided and differential testing (when
    it ran) found no difference -- which is evidence, not a proof: trials never vary the
    harness's scalar arguments and may miss rare inputs.  The relational proof across blocks
    (evidence kind ``relational``), when it was tried and failed, is named too."""
    kinds: dict[str, int] = {}
    windows = [e for e in z3v.evidence if e.kind != "relational"]
    for e in windows:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    n = len(windows) or 1
    why = ", ".join(f"{c} {k}" for k, c in kinds.items()) or z3v.status.value
    rel = [e.message for e in z3v.evidence if e.kind == "relational"]
    if rel:
        why += "; not proved across blocks either: " + rel[0]
    if kinds.get("timeout"):
        why += " (z3's budget ran out: asmevo verify --timeout MS raises it)"
    ran = next((e.data.get("ran") for e in (dv.evidence if dv else []) if e.kind == "trials"), None)
    tested = (f"; differential testing found no difference in {ran} trial(s)" if ran is not None
              else "")
    ev = [Evidence("z3", "undecided", e.message, e.data) for e in z3v.evidence]
    return Verdict(Status.UNKNOWN_UNPROVED,
                   f"not proved: {n} window(s) undecided by z3 ({why}; first: {z3v.message})"
                   + tested, ev)


#: Instructions whose effect lies outside the wave's registers and memory (messages to the
#: host or the scheduler, halts, traps, debug and performance state): the emulator runs them
#: as no-ops or not at all, so differential testing cannot see them added or removed.
_SIDE_EFFECT = __import__("re").compile(
    r"s_(sendmsg|sendmsghalt|sethalt|trap|setkill|ttracedata|incperflevel|decperflevel|"
    r"setvskip|cbranch_cdbg)")


#: the float modes z3 and the emulator compute with (asmevo/emu/state.py MODE 0x3F0):
#: kernel descriptor COMPUTE_PGM_RSRC1 fields (AMDGPUUsage): round to nearest even, no
#: denormal flushing for f32 and f16/f64, DX10_CLAMP and IEEE_MODE on
_MODELLED_FLOAT_MODES = {"float_round_mode_32": 0, "float_round_mode_16_64": 0,
                         "float_denorm_mode_32": 3, "float_denorm_mode_16_64": 3,
                         "enable_dx10_clamp": 1, "enable_ieee_mode": 1}
#: VALU/MFMA mnemonics whose results depend on the float modes
_FLOAT_OP = __import__("re").compile(
    r"^v_.*(f16|f32|f64|bf16|fp8|bf8|xf32)|^v_(mfma|smfmac|dot|cvt|rcp|rsq|sqrt|exp|log|sin|cos|"
    r"frexp|ldexp|div|fract|trig|med3|min|max)")


#: VALU instructions the hardware computes to about 1 ULP (CDNA3 ISA guide, VOP1 notes;
#: LLVM lowers them only under afn/approximate math) and the emulator computes correctly
#: rounded (asmevo/semantics/npbackend.py): where they differ, the emulator is not the hardware
_APPROXIMATE_OP = __import__("re").compile(r"^v_(rcp|rsq|sqrt|exp|log|sin|cos)_")


def _approximate_ops_changed(orig: Module, cand: Module, kernels: list[str] | None) -> str | None:
    """Why differential testing cannot show a changed kernel equal to the original: its
    approximate instructions (:data:`_APPROXIMATE_OP`) differ from the original's (as a
    multiset of instruction texts), so their inputs or kinds changed and the emulator's
    correctly rounded results may agree where the hardware's differ in the last bit.  None
    when they are the same (moved, not changed).  z3 treats them as uninterpreted functions,
    so a proof stands whatever the hardware computes; only the tested-only path is blocked."""
    ko = {k.name: k for k in orig.kernels}
    for name in changed_kernels(orig, cand, kernels):
        kc, k0 = next((k for k in cand.kernels if k.name == name), None), ko.get(name)
        if kc is None or k0 is None:
            continue
        fa, fb = (sorted(i.text() for i in k.instructions() if _APPROXIMATE_OP.search(i.opcode))
                  for k in (k0, kc))
        if fa != fb:
            return (f"{name}: its approximate instructions (v_rcp/v_rsq/v_sqrt/v_exp/v_log/"
                    "v_sin/v_cos) changed; the emulator computes them correctly rounded where "
                    "the hardware is within about 1 ULP, so differential testing cannot show the "
                    "change equal on hardware, and z3 did not prove it")
    return None


def _float_modes(module: Module, kernel) -> dict:
    """The float-mode fields of ``kernel``'s descriptor (code object or ``.amdhsa_kernel``
    text; LLVM's defaults where the text gives none)."""
    desc = getattr(kernel, "descriptor", None)
    co = getattr(module, "code_object", None)
    if desc is None and co is not None:
        for k in getattr(co, "kernels", []) or []:
            if getattr(k, "name", None) == kernel.name:
                desc = getattr(k, "descriptor", None)
    if desc is None:
        from ..frontend.loader import amdhsa_descriptor
        ak = module.amdhsa_kernel(kernel.name) if hasattr(module, "amdhsa_kernel") else None
        desc = amdhsa_descriptor(module, ak) if ak is not None else None
    if desc is None:
        return dict(_MODELLED_FLOAT_MODES)
    return {f: int(getattr(desc, f, v)) for f, v in _MODELLED_FLOAT_MODES.items()}


def _invisible_effects(orig: Module, cand: Module, kernels: list[str] | None) -> str | None:
    """Why a changed kernel differs from the original in what neither z3 nor the emulator
    models -- cache maintenance and cache-policy bits (sc0/sc1/nt), side-effect instructions
    (``s_sendmsg``, ``s_sethalt``...), float instructions of a kernel whose descriptor sets
    float modes other than the modelled ones (denormal flushing, IEEE mode off...) -- or None.  Such a verdict stays ``unknown-unsupported``:
    "differential testing found no difference" says nothing about it, so it must not pass
    as ``unknown-unproved`` (which ``asmevo evolve --require tested`` accepts)."""
    from .equiv import _memory_policy
    ko = {k.name: k for k in orig.kernels}
    for name in changed_kernels(orig, cand, kernels):
        kc, k0 = next((k for k in cand.kernels if k.name == name), None), ko.get(name)
        if kc is None or k0 is None:
            continue
        a, b = list(k0.instructions()), list(kc.instructions())
        if _memory_policy(a) != _memory_policy(b):
            return (f"{name}: cache maintenance or cache-policy bits (sc0/sc1/nt) differ from "
                    "the original; neither z3 nor the emulator models caches")
        modes = _float_modes(orig, k0)
        if modes != _MODELLED_FLOAT_MODES:
            fa, fb = (sorted(i.text() for i in x if _FLOAT_OP.search(i.opcode)) for x in (a, b))
            if fa != fb:
                diff = {k: v for k, v in modes.items() if _MODELLED_FLOAT_MODES.get(k) != v}
                return (f"{name}: the kernel runs with float modes {diff} from its descriptor "
                        "(denormal flushing, IEEE mode, DX10 clamp or rounding), but z3 and the "
                        "emulator compute floats with denormals preserved, IEEE=1, DX10_CLAMP=1 "
                        "and round-to-nearest-even; its float instructions changed, so their "
                        "equivalence under the kernel's own modes is not established")
        fx = [[(i.opcode, tuple(str(o) for o in i.operands)) for i in x
               if _SIDE_EFFECT.match(i.opcode)] for x in (a, b)]
        if fx[0] != fx[1]:
            return (f"{name}: instructions with effects outside registers and memory "
                    "(s_sendmsg, s_sethalt, s_trap...) differ from the original; neither z3 nor "
                    "the emulator models them")
    return None


def _unreachable_changes(orig: Module, cand: Module, kernels: list[str] | None) -> list[str]:
    """Names of functions whose unreachable instructions (blocks no path from the entry
    reaches: padding, data words after ``s_endpgm``) differ between the modules, compared
    by text and by original encoding bytes."""
    from ..analysis.cfg import CFG
    ko = {k.name: k for k in orig.kernels}
    out = []
    for name in changed_kernels(orig, cand, kernels):
        kc, ok = next((k for k in cand.kernels if k.name == name), None), ko.get(name)
        if kc is None or ok is None:
            continue
        dead = []
        for k in (ok, kc):
            try:
                cfg = CFG(k)
                dead.append([(i.key(), i.encoding) for b in cfg.unreachable
                             for i in k.blocks[b].instructions])
            except Exception:  # noqa: BLE001 - no CFG: cannot tell what is reachable
                dead.append(None)
        if dead[0] is None or dead[1] is None or dead[0] != dead[1]:
            out.append(name)
    return out


def changed_kernels(orig: Module, cand: Module, kernels: list[str] | None = None) -> list[str]:
    """Names of kernels (or device functions) whose instructions differ between the modules."""
    ko = {k.name: k for k in orig.kernels}
    out = []
    for k in cand.kernels:
        if kernels and k.name not in kernels:
            continue
        o = ko.get(k.name)
        if o is None or [i.key() for i in o.instructions()] != [i.key() for i in k.instructions()] \
                or [b.label for b in o.blocks] != [b.label for b in k.blocks]:
            out.append(k.name)
    return out


def _layer_state(v: Verdict) -> str:
    return {"accepted": "pass", "rejected": "fail", "unknown": "unknown"}[v.outcome]


def _final(v: Verdict, status: dict, names: list[str], parts: list[Verdict]) -> Verdict:
    v.layers = dict(status)
    v.kernels = list(names)
    v.notes = [n for p in parts for n in p.notes]
    return v
