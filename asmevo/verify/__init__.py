"""Verification of candidate kernels: static checks, ABI, z3 windows, differential testing.

Public API:

* :func:`verify` -- ``verify(original, candidate, harness=..., level=...) -> Verdict``
  (:mod:`asmevo.verify.driver`);
* :func:`check_windows` -- z3 equivalence of two straight-line windows
  (:mod:`asmevo.verify.equiv`);
* :class:`Verdict`, :class:`Status` -- the fixed verdict taxonomy
  (:mod:`asmevo.verify.verdict`, docs/verify.md).
"""

from __future__ import annotations

from .verdict import Evidence, Status, Verdict

#: Raised by one whenever a fix changes what the verifier may accept (a soundness fix).
#: ``asmevo evolve`` stamps every gate verdict with it and lets a stored verdict start a chain
#: of proofs (:meth:`asmevo.evolve.gate.GateContext._chained`) only when it was given by this
#: version: a run directory resumed after such a fix must not build on a verdict the fixed
#: verifier might refuse.
VERIFIER_VERSION = 8


def verify(*args, **kwargs) -> Verdict:
    """See :func:`asmevo.verify.driver.verify`."""
    from .driver import verify as _verify
    return _verify(*args, **kwargs)


def check_windows(*args, **kwargs):
    """See :func:`asmevo.verify.equiv.check_windows`."""
    from .equiv import check_windows as _cw
    return _cw(*args, **kwargs)


__all__ = ["VERIFIER_VERSION", "Evidence", "Status", "Verdict", "check_windows", "verify"]
