"""VOPC compares (``v_cmp_*``, ``v_cmpx_*``, ``v_cmp_class_*``): one boolean per lane.

``v_cmp`` writes the lane mask to its destination (VCC or an SGPR pair);
``v_cmpx`` (``extra['cmpx']``) also writes it to EXEC (GFX9 behaviour: both).
Inactive lanes produce 0 bits (CDNA3 ISA guide, "VOPC").
"""

from __future__ import annotations

from .registry import define
from .values import FCMP_PREDS, ICMP_PREDS


def _reg(name, src, fn):
    define(f"v_cmp_{name}", fn, "vopc", "lm", src)
    define(f"v_cmpx_{name}", fn, "vopc", "lm", src, cmpx=True)


for _t in ("f16", "f32", "f64"):
    for _p in FCMP_PREDS:
        _reg(f"{_p}_{_t}", f"{_t} {_t}", lambda B, a, b, _p=_p: B.fcmp(_p, a, b))
    _reg(f"class_{_t}", f"{_t} u32", lambda B, a, m: B.fclass(a, m))
for _t in ("i16", "i32", "i64", "u16", "u32", "u64"):
    for _p in ICMP_PREDS:
        _reg(f"{_p}_{_t}", f"{_t} {_t}", lambda B, a, b, _p=_p, _s=_t[0] == "i": B.icmp(_p, a, b, _s))
