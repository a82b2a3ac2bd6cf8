"""SALU, SOPC and branch instructions compiled to closures (scalar values as Python
integers through the semantics' int backend).
"""

from __future__ import annotations

from ..ir.operands import Label, Special, base_of
from ..semantics.intbackend import INT, TYPES as ITYPES
from .state import EXEC, VCC
from .exec_common import CompileError, _s_imm_fix, _wscc, sreader, swriter
from .exec_sgen import gen_scalar

def compile_salu(inst, spec, ctx, nxt):
    f = gen_scalar(inst, spec, nxt)     # the same effect as generated code (exec_sgen)
    if f is not None:
        return f
    ops = inst.operands
    nd = len(spec.dst)
    ns = len(spec.src)
    if len(ops) != nd + ns:
        raise CompileError(f"expected {nd} destination(s) and {ns} source(s), got {len(ops)} operands")
    rds = [sreader(_s_imm_fix(inst, op, ty), ty) for op, ty in zip(ops[nd:], spec.src)]
    if spec.extra.get("tied"):
        rds.append(sreader(ops[0], spec.dst[0]))
    for imp in spec.imp_in:
        if imp == "scc":
            rds.append(lambda wv: wv.scc)
        elif imp == "exec":
            rds.append(lambda wv: ITYPES[64](wv.s.item(EXEC) | (wv.s.item(EXEC + 1) << 32)))
        else:
            raise CompileError(f"implicit input {imp}")
    wrs = [swriter(op, ty) for op, ty in zip(ops[:nd], spec.dst)]
    for imp in spec.imp_out:
        if imp == "scc":
            wrs.append(_wscc)
        elif imp == "exec":
            wrs.append(swriter(Special("exec"), "b64"))
        else:
            raise CompileError(f"implicit output {imp}")
    fn = spec.fn
    nout = len(wrs)
    B = INT
    if nout == 1:
        w0 = wrs[0]
        if len(rds) == 1:
            r0 = rds[0]

            def run(wv):
                w0(wv, fn(B, r0(wv)))
                return nxt
            return run
        if len(rds) == 2:
            r0, r1 = rds

            def run(wv):
                w0(wv, fn(B, r0(wv), r1(wv)))
                return nxt
            return run
    if nout == 2 and len(rds) == 2:
        w0, w1 = wrs
        r0, r1 = rds

        def run(wv):
            a, b = fn(B, r0(wv), r1(wv))
            w0(wv, a)
            w1(wv, b)
            return nxt
        return run

    def run(wv):
        res = fn(B, *[r(wv) for r in rds])
        if nout == 1:
            res = (res,)
        # destinations are written before the implicit outputs (saveexec: sdst gets the old EXEC)
        for w_, v in zip(wrs, res):
            w_(wv, v)
        return nxt
    return run


def compile_sopc(inst, spec, ctx, nxt):
    f = gen_scalar(inst, spec, nxt, sopc=True)
    if f is not None:
        return f
    ops = inst.operands
    rds = [sreader(_s_imm_fix(inst, op, ty), ty) for op, ty in zip(ops, spec.src)]
    r0, r1 = rds
    fn = spec.fn

    def run(wv):
        wv.scc = bool(fn(INT, r0(wv), r1(wv)))
        return nxt
    return run


# ----------------------------------------------------------------------------- flow
def compile_branch(inst, spec, ctx, nxt):
    op = inst.operands[0] if inst.operands else None
    b = base_of(op)
    if not isinstance(b, Label):
        raise CompileError("branch target must be a label")
    if b.name not in ctx.labels:
        raise CompileError(f"branch to unknown label {b.name}")
    if b.addend:
        raise CompileError("branch target with an addend")
    t = ctx.labels[b.name]
    name = spec.name
    if name == "s_branch":
        f = lambda wv: t                                        # noqa: E731
    elif name == "s_cbranch_scc0":
        f = lambda wv: nxt if wv.scc else t                     # noqa: E731
    elif name == "s_cbranch_scc1":
        f = lambda wv: t if wv.scc else nxt                     # noqa: E731
    elif name == "s_cbranch_vccz":
        f = lambda wv: nxt if wv.s[VCC] or wv.s[VCC + 1] else t  # noqa: E731
    elif name == "s_cbranch_vccnz":
        f = lambda wv: t if wv.s[VCC] or wv.s[VCC + 1] else nxt  # noqa: E731
    elif name == "s_cbranch_execz":
        f = lambda wv: nxt if wv.exec_any else t                # noqa: E731
    elif name == "s_cbranch_execnz":
        f = lambda wv: t if wv.exec_any else nxt                # noqa: E731
    else:
        raise CompileError(name)
    f.branch = (name, t, nxt)   # for asmevo.emu.lockstep: per-wave conditions at once
    return f


