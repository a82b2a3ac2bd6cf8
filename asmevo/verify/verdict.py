"""The verdict taxonomy of ``asmevo verify`` and ``asmevo equiv``.

A verdict has exactly one :class:`Status` plus evidence.  The statuses are
fixed and documented (docs/verify.md); each belongs to one of three
*outcomes*, which give the exit status of the command line tools:

=========  ===========  ===================================================
outcome    exit status  statuses
=========  ===========  ===================================================
accepted   0            ``accepted``
rejected   1            ``rejected-register-bounds``, ``rejected-descriptor-counts``,
                        ``rejected-waitcnt``, ``rejected-hazard``, ``rejected-abi``,
                        ``rejected-counterexample``, ``rejected-output-mismatch``,
                        ``rejected-stray-write``, ``rejected-emulation-fault``,
                        ``build-failed``
unknown    3            ``unknown-timeout``, ``unknown-unsupported``, ``unknown-unproved``
(bad input 2: raised as :class:`asmevo.errors.AsmevoError`, never a verdict)
=========  ===========  ===================================================

The cardinal rule: a verdict is ``accepted`` only when every requested layer
found no problem *and* could decide; a layer that cannot decide (a solver
timeout, an instruction without semantics) yields ``unknown-*``, never
``accepted``.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any


class Status(str, enum.Enum):
    """One verdict status.  The value is the spelling used on the command line and in JSON."""

    ACCEPTED = "accepted"
    REJECTED_REGISTER_BOUNDS = "rejected-register-bounds"
    REJECTED_DESCRIPTOR_COUNTS = "rejected-descriptor-counts"
    REJECTED_WAITCNT = "rejected-waitcnt"
    REJECTED_HAZARD = "rejected-hazard"
    REJECTED_ABI = "rejected-abi"
    REJECTED_COUNTEREXAMPLE = "rejected-counterexample"
    REJECTED_OUTPUT_MISMATCH = "rejected-output-mismatch"
    REJECTED_STRAY_WRITE = "rejected-stray-write"
    REJECTED_EMULATION_FAULT = "rejected-emulation-fault"
    BUILD_FAILED = "build-failed"
    UNKNOWN_TIMEOUT = "unknown-timeout"
    UNKNOWN_UNSUPPORTED = "unknown-unsupported"
    UNKNOWN_UNPROVED = "unknown-unproved"

    @property
    def outcome(self) -> str:
        """``"accepted"``, ``"rejected"`` or ``"unknown"``."""
        if self is Status.ACCEPTED:
            return "accepted"
        if self.value.startswith("unknown-"):
            return "unknown"
        return "rejected"

    @property
    def exit_status(self) -> int:
        """Process exit status: 0 accepted, 1 rejected, 3 unknown."""
        return {"accepted": 0, "rejected": 1, "unknown": 3}[self.outcome]

    @property
    def layer(self) -> str:
        """The verification layer that produces this status:
        ``static``, ``abi``, ``z3``, ``diff``, ``build`` or ``any``."""
        return _LAYER[self]


_LAYER = {
    Status.ACCEPTED: "any",
    Status.REJECTED_REGISTER_BOUNDS: "static",
    Status.REJECTED_DESCRIPTOR_COUNTS: "static",
    Status.REJECTED_WAITCNT: "static",
    Status.REJECTED_HAZARD: "static",
    Status.REJECTED_ABI: "abi",
    Status.REJECTED_COUNTEREXAMPLE: "z3",
    Status.REJECTED_OUTPUT_MISMATCH: "diff",
    Status.REJECTED_STRAY_WRITE: "diff",
    Status.REJECTED_EMULATION_FAULT: "diff",
    Status.BUILD_FAILED: "build",
    Status.UNKNOWN_TIMEOUT: "any",
    Status.UNKNOWN_UNSUPPORTED: "any",
    Status.UNKNOWN_UNPROVED: "any",
}

#: One-line meaning of every status (printed by ``--help`` and docs/verify.md).
DESCRIPTIONS = {
    Status.ACCEPTED: "every requested layer ran, decided, and found no difference",
    Status.REJECTED_REGISTER_BOUNDS:
        "a register the candidate uses does not exist under its own kernel descriptor",
    Status.REJECTED_DESCRIPTOR_COUNTS:
        "descriptor/metadata register counts, LDS or scratch sizes do not cover what the code uses",
    Status.REJECTED_WAITCNT:
        "a use of a memory result, or a memory-order point, is not covered by an s_waitcnt",
    Status.REJECTED_HAZARD: "too few wait states between a hazard producer and consumer",
    Status.REJECTED_ABI:
        "kernel symbols, kernarg layout, metadata, data or entry conditions differ from the "
        "original (incl. new reads of registers the ABI leaves undefined)",
    Status.REJECTED_COUNTEREXAMPLE: "z3 found inputs for which the two windows differ",
    Status.REJECTED_OUTPUT_MISMATCH: "an output buffer differs on some emulated trial",
    Status.REJECTED_STRAY_WRITE: "the candidate wrote memory outside the output buffers",
    Status.REJECTED_EMULATION_FAULT:
        "the candidate faulted (bad address, hang, illegal instruction) where the original did not",
    Status.BUILD_FAILED: "the candidate could not be loaded, assembled or linked (a path "
                         "that names no file, or a directory, is bad input instead: exit 2)",
    Status.UNKNOWN_TIMEOUT: "a layer ran out of time (solver timeout, emulator step budget)",
    Status.UNKNOWN_UNSUPPORTED:
        "a layer could not decide: an instruction or feature it does not model",
    Status.UNKNOWN_UNPROVED:
        "z3 did not prove every changed window; differential testing found no difference, "
        "which is not a proof",
}

#: Verification layers in the order ``--level all`` runs them.
LEVELS = ("static", "z3", "diff")


@dataclass
class Evidence:
    """One finding that supports a verdict.

    Attributes:
        layer: ``static``, ``abi``, ``z3``, ``diff`` or ``build``.
        kind: a short machine-readable tag (``"vgpr-out-of-range"``, ``"first-mismatch"``).
        message: one human-readable line.
        data: JSON-serialisable details (kernel, instruction text, address, values...).
    """

    layer: str
    kind: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"layer": self.layer, "kind": self.kind, "message": self.message,
                "data": _jsonable(self.data)}


@dataclass
class Verdict:
    """The answer of :func:`asmevo.verify.verify`: one status, its evidence and what ran.

    Attributes:
        status: the :class:`Status`.
        message: one line summarising why.
        evidence: findings, the deciding one first.
        layers: ``{layer: "pass"|"fail"|"unknown"|"skipped"}`` for each layer considered.
        kernels: names of the kernels checked.
        notes: non-deciding remarks (e.g. over-allocated registers).
    """

    status: Status
    message: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    layers: dict[str, str] = field(default_factory=dict)
    kernels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        """``accepted``, ``rejected`` or ``unknown``."""
        return self.status.outcome

    @property
    def accepted(self) -> bool:
        """True only for :attr:`Status.ACCEPTED`."""
        return self.status is Status.ACCEPTED

    @property
    def exit_status(self) -> int:
        """0 accepted, 1 rejected, 3 unknown."""
        return self.status.exit_status

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record (the ``--json`` output)."""
        return {"status": self.status.value, "outcome": self.outcome,
                "exit_status": self.exit_status, "message": self.message,
                "kernels": list(self.kernels), "layers": dict(self.layers),
                "evidence": [e.to_json() for e in self.evidence], "notes": list(self.notes)}

    def dumps(self) -> str:
        """:meth:`to_json` as indented JSON text."""
        return json.dumps(self.to_json(), indent=2, sort_keys=False)

    def text(self) -> str:
        """Human-readable report: the status line, then one line per evidence item (an item
        whose message the status line ends by quoting, as ``candidate does not load: ERROR``
        quotes the load error of a candidate that does not parse, is not printed again)."""
        lines = [f"{self.status.value}: {self.message}" if self.message else self.status.value]
        for e in self.evidence:
            if e.message and self.message.endswith(": " + e.message):
                continue
            lines.append(f"  [{e.layer}] {e.kind}: {e.message}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        if self.layers:
            lines.append("  layers: " + ", ".join(f"{k}={v}" for k, v in self.layers.items()))
        return "\n".join(lines)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (str, int, bool)) or x is None:
        return x
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            return repr(x)
        return x
    if hasattr(x, "item"):  # numpy scalar
        return _jsonable(x.item())
    return str(x)


# Order of precedence when several layers report: the first rejection found wins
# (layers run static -> abi -> z3 -> diff); unknowns only win when nothing rejected.
def combine(parts: list[Verdict], layers: dict[str, str] | None = None,
            kernels: list[str] | None = None) -> Verdict:
    """Combine per-layer verdicts into one: the first rejection, else the first
    unknown, else accepted.  Never accepted when ``parts`` is empty."""
    notes = [n for p in parts for n in p.notes]
    lay = dict(layers or {})
    ks = list(kernels or [])
    for p in parts:
        if p.outcome == "rejected":
            return Verdict(p.status, p.message, p.evidence, lay, ks, notes)
    for p in parts:
        if p.outcome == "unknown":
            return Verdict(p.status, p.message, p.evidence, lay, ks, notes)
    if not parts:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, "no verification layer ran", [], lay, ks, notes)
    ev = [e for p in parts for e in p.evidence]
    return Verdict(Status.ACCEPTED, "no difference found by " + ", ".join(
        k for k, v in lay.items() if v == "pass") if lay else "accepted", ev, lay, ks, notes)
