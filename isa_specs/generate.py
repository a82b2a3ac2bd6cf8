#!/usr/bin/env python3
"""Generate ``isa_specs/gfx942.json``: the asmevo ISA table for gfx942 (CDNA3, MI300).

Run ``python isa_specs/generate.py`` (about a minute on 2 cores); the output is
deterministic (sorted keys, sorted records).

Sources
-------
1. **Mnemonics, opcodes, sizes, operand order/width/class** come from a sweep of
   the LLVM 19 disassembler (``llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx942
   --disassemble -show-encoding``), per encoding format, as described in
   ``../shared/research/ISA_NOTES.md`` section 3.  For each format the
   opcode field is stepped through its whole range with fixed operand fields
   (distinct register numbers per field, so each printed operand can be traced
   back to its field); the sweep is repeated with other operand kinds (SGPR,
   inline constant, literal, AGPR via the ``acc``/``acc_cd`` bits) to learn
   which kinds each source field accepts.  Every candidate is followed by a
   marker word ``s_nop <n>``; a candidate whose marker is consumed took a
   literal dword.  Field layouts: CDNA3 ISA guide, "Microcode Formats"
   (checked against what LLVM 19 decodes).
2. **Roles, implicit registers, memory behaviour, waitcnt counters, branch kind,
   latency class and flags** come from rules in :func:`semantics` keyed on the
   family and mnemonic, following:

   * LLVM ``llvm/lib/Target/AMDGPU/SOPInstructions.td``, ``VOPCInstructions.td``,
     ``VOP2Instructions.td``, ``SIInstructions.td`` (``Defs``/``Uses``: SCC, VCC,
     EXEC, M0);
   * LLVM ``llvm/lib/Target/AMDGPU/SIInsertWaitcnts.cpp`` (which counter an
     instruction increments; ISA_NOTES section 8);
   * LLVM ``llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp`` / ``SIInstrInfo``
     (``isTRANS``, ``isDOT``, ``isDGEMM``, ``getMAIIsGFX940XDL``);
   * the gfx940 scheduling model via ``llvm-mca`` (MFMA pass counts, ISA_NOTES
     section 9);
   * CDNA3 ISA guide ("Program Flow Control", "Scalar Memory", "Vector Memory",
     "LDS", "Matrix Arithmetic" chapters).

3. **Cross-check** (:func:`cross_check`): the AMDGPU assembler's own mnemonic
   table (AsmMatcher ``MnemonicTable``, read from the llvm-mc/libLLVM binary) is
   fed to llvm-mc; every spelling it accepts for gfx942 must resolve to a record
   or become an alias (old MFMA names, ``v_mul_lo_i32``), stored in the JSON.
4. **Timings** (:func:`mca_timings`): ``llvm-mca -mcpu=gfx942`` latency and
   reciprocal throughput per record; MFMA passes = reciprocal throughput, checked
   against rules.MFMA_PASSES (ISA_NOTES section 9).

Record schema: see ``isa_specs/README.md``.
"""

from __future__ import annotations

import json
import os
import pty
import termios
import threading
import re
import struct
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from asmevo.llvm import MCPU, TRIPLE, find_tool  # noqa: E402

sys.path.insert(0, HERE)
import rules  # noqa: E402

LIT = 0x12345678          # literal dword used by the "literal" operand kinds
MARK = 0xBF800000         # s_nop 0; the marker is MARK | n


# ---------------------------------------------------------------------------
# llvm-mc driver
# ---------------------------------------------------------------------------

def _hexwords(words):
    return " ".join(",".join("0x%02x" % b for b in struct.pack("<I", w & 0xFFFFFFFF)) for w in words)


_OUT_RE = re.compile(r"^\s+(.*?)\s*; encoding: \[(.*)\]\s*$")
_WARN_RE = re.compile(r"<stdin>:(\d+):\d+: (?:warning|error)")


def _run_pty(args, data):
    """Run ``args`` with stdout on a pseudo-terminal, so that LLVM's raw_fd_ostream is
    unbuffered and the output survives a crash (llvm-mc 19 segfaults on a few
    encodings, e.g. ``v_swap_b32`` with a literal)."""
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []

    def reader():
        while True:
            try:
                b = os.read(master, 1 << 16)
            except OSError:
                break
            if not b:
                break
            chunks.append(b)

    def writer():
        try:
            p.stdin.write(data.encode())
            p.stdin.close()
        except BrokenPipeError:
            pass
    t1, t2 = threading.Thread(target=reader), threading.Thread(target=writer)
    t1.start()
    t2.start()
    err = p.stderr.read()
    p.wait()
    t1.join()
    t2.join()
    os.close(master)
    return p.returncode, b"".join(chunks).decode(errors="replace"), err.decode(errors="replace")


def disassemble(cands):
    """Disassemble candidate word lists; return a list (one per candidate) of
    ``(text, nbytes)`` or ``None`` when the words are not one valid instruction.

    Each candidate goes on its own line followed by two markers ``s_nop i+1``;
    a candidate that consumed a marker took a literal dword.  A candidate that crashes llvm-mc is dropped and the sweep
    resumes after it.
    """
    out = [None] * len(cands)
    mc = find_tool("llvm-mc")
    pos = 0
    while pos < len(cands):
        chunk = cands[pos:pos + 30000]
        # two markers: an undecodable first word makes the disassembler skip 4 bytes
        # and decode the rest as another (8-byte) instruction, which can swallow one
        # marker but never two (gfx942 has no 8-byte encoding with a literal)
        lines = [_hexwords(list(w) + [MARK | (i + 1)] * 2) for i, w in enumerate(chunk)]
        rc, stdout, stderr = _run_pty([mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", "--disassemble",
                                       "-show-encoding"], "\n".join(lines) + "\n")
        bad = {int(m.group(1)) - 1 for m in _WARN_RE.finditer(stderr)}
        seg = []
        prev = 0          # index of the first candidate of the current segment
        for ln in stdout.splitlines():
            m = _OUT_RE.match(ln)
            if not m:
                continue
            text = m.group(1).strip()
            nbytes = len(m.group(2).split(","))
            mm = re.fullmatch(r"s_nop (\S+)", text)
            k = None
            if mm and nbytes == 4:
                try:
                    k = int(mm.group(1), 0)
                except ValueError:
                    k = None
            if k is not None and k == prev and not seg:
                continue          # the second marker of the pair
            if k is not None and prev < k <= len(chunk):
                ids = list(range(prev, k))
                if len(seg) == len(ids) and not any(i in bad for i in ids):
                    for i, s in zip(ids, seg):
                        if "Invalid" not in s[0] and "/*" not in s[0]:
                            out[pos + i] = s
                seg = []
                prev = k
                continue
            seg.append((text, nbytes))
        if rc == 0:
            pos += len(chunk)
        else:             # crashed on candidate `prev`: drop it, resume after it
            pos += prev + 1
    return out


# ---------------------------------------------------------------------------
# printed-operand parsing
# ---------------------------------------------------------------------------

FLAG_MODS = {"sc0", "sc1", "nt", "glc", "slc", "lds", "gds", "offen", "idxen", "addr64", "tfe",
             "lwe", "clamp", "bound_ctrl:0", "bound_ctrl:1", "nv", "dlc", "da", "unorm", "r128",
             "a16", "d16"}


def split_top(s, sep):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out if x.strip() != ""]


def parse_text(text):
    """``"v_add_f32_e32 v1, v2, v3 clamp"`` -> (mnemonic, [operand tokens], [modifier tokens])."""
    parts = text.split(None, 1)
    mn = parts[0]
    if len(parts) == 1:
        return mn, [], []
    rest = parts[1]
    ops = split_top(rest, ",")
    last = split_top(ops[-1], " ")
    mods = []
    if mn == "s_waitcnt" or all(re.fullmatch(r"[a-z_]+\(.*\)", t) for t in last):
        ops[-1] = " ".join(last)
    else:
        ops[-1] = last[0]
        mods = last[1:]
    if len(ops) == 1 and (ops[0] in FLAG_MODS or ":" in ops[0] and not ops[0].startswith("s[")
                          and not ops[0].startswith("v[") and not ops[0].startswith("a[")
                          and "(" not in ops[0]):
        mods = [ops[0]] + mods
        ops = []
    return mn, ops, mods


_REG_RE = re.compile(r"^(s|v|a|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")
SPECIALS = {"vcc", "vcc_lo", "vcc_hi", "exec", "exec_lo", "exec_hi", "m0", "scc", "off", "null",
            "flat_scratch", "flat_scratch_lo", "flat_scratch_hi", "xnack_mask", "xnack_mask_lo",
            "xnack_mask_hi", "src_vccz", "src_execz", "src_scc", "src_lds_direct",
            "src_shared_base", "src_shared_limit", "src_private_base", "src_private_limit",
            "src_pops_exiting_wave_id", "tba", "tma", "tba_lo", "tba_hi", "tma_lo", "tma_hi"}
INLINE_FLOATS = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"}


def classify(tok):
    """Printed operand token -> (kind, file, index, width).

    kind is 'reg' (file s/v/a/ttmp), 'special', 'inline', 'literal', 'func', 'other'.
    """
    t = tok
    t = re.sub(r"^-", "", t)
    t = re.sub(r"^\|(.*)\|$", r"\1", t)
    t = re.sub(r"^(?:neg|abs|sext)\((.*)\)$", r"\1", t)
    t = re.sub(r"^\|(.*)\|$", r"\1", t)
    m = _REG_RE.match(t)
    if m:
        f = m.group(1)
        if m.group(2) is not None:
            return ("reg", f, int(m.group(2)), 1)
        a, b = int(m.group(3)), int(m.group(4))
        return ("reg", f, a, b - a + 1)
    if t in SPECIALS:
        return ("special", t, None, 2 if t in ("vcc", "exec", "flat_scratch", "xnack_mask") else 1)
    if re.fullmatch(r"lit\((.*)\)", t):
        return ("literal", None, None, 1)
    if re.fullmatch(r"-?\d+", t):
        v = int(t)
        return ("inline" if -16 <= v <= 64 else "literal", None, v, 1)
    if re.fullmatch(r"0x[0-9a-f]+", t):
        v = int(t, 16)
        return ("inline" if v <= 64 else "literal", None, v, 1)
    if re.fullmatch(r"-?\d+\.\d+(e[+-]?\d+)?", t):
        return ("inline" if t in INLINE_FLOATS or t.lstrip("-") in INLINE_FLOATS else "literal",
                None, None, 1)
    if "(" in t:
        return ("func", t.split("(")[0], None, 1)
    return ("other", t, None, 1)


# ---------------------------------------------------------------------------
# format sweeps
# ---------------------------------------------------------------------------
# Register numbers used for the fields (distinct, aligned for 64..512-bit tuples).
VDST, VS0, VS1, VS2 = 40, 8, 24, 96
SDST, SS0, SS1 = 40, 8, 24


def bits(v, lo):
    """``v`` shifted to bit ``lo`` of an encoding word."""
    return v << lo


class Kind:
    """One operand-kind setting for a format.

    ``build(op) -> words``; ``fields`` maps a field name to the ``(file, index)``
    it was given (to trace printed operands back to fields); ``probe`` names the
    field whose accepted kinds this setting tests (``None`` for a base setting)
    and ``probe_kind`` the kind tested ('s', 'i', 'l', 'a', 'rtn', ...).
    """

    def __init__(self, name, build, fields, probe=None, probe_kind=None):
        self.name, self.build, self.fields = name, build, fields
        self.probe, self.probe_kind = probe, probe_kind


def _src9(kind, reg):
    """9-bit VOP/SOP source field value for operand kind (v/s/i/l); CDNA3 ISA guide
    "Scalar/Vector operands": 0-101 SGPR, 128-192 int 0..64, 193-208 -1..-16,
    242-248 float constants, 255 literal, 256-511 VGPR."""
    return {"v": 0x100 + reg, "s": reg, "i": 0x83, "l": 0xFF, "0": 0}[kind]


class Fmt:
    """A format sweep: ``enc(op, vals) -> words`` where ``vals`` maps field or flag
    names to raw field values; ``fields`` maps register fields to (file, index,
    kind letter); ``patterns`` are sets of fields to leave zero (LLVM rejects
    non-zero unused fields), tried in order; ``probes`` are (field, kind)
    settings, ``flags`` extra named settings {name: (overrides, probe field,
    probe kind, field-file changes)}."""

    def __init__(self, ops, enc, fields, raw, patterns=((),), probes=(), flags=None, lit=True):
        self.ops, self.enc, self.fields, self.raw = ops, enc, fields, raw
        self.patterns, self.probes, self.flags, self.lit = patterns, probes, flags or {}, lit

    def kinds(self):
        out = []
        for j, zero in enumerate(self.patterns):
            base_vals = {f: (0 if f in zero else self.raw(f, k, r))
                         for f, (k, r) in self.fields.items()}
            tracing = {f: (k if k in "sva" else "s", r) for f, (k, r) in self.fields.items()
                       if f not in zero}

            def mk(vals, extra=()):
                lit = "l" in extra

                def b(op, vals=dict(vals), lit=lit):
                    return self.enc(op, vals) + ([LIT] if lit else [])
                return b
            out.append(Kind(f"p{j}", mk(base_vals), tracing))
            for f, k in self.probes:
                if f in zero:
                    continue
                vals = dict(base_vals)
                vals[f] = self.raw(f, k, self.fields[f][1])
                tr = dict(tracing)
                tr[f] = (k if k in "sva" else "s", self.fields[f][1])
                out.append(Kind(f"p{j}_{f}{k}", mk(vals, k), tr, f, k))
            for fname, (over, pf, pk, trch) in self.flags.items():
                vals = dict(base_vals)
                vals.update(over)
                tr = dict(tracing)
                for f, file in trch.items():
                    if f in tr:
                        tr[f] = (file, tr[f][1])
                out.append(Kind(f"p{j}_{fname}", mk(vals), tr, pf, pk))
        return out



def _raw_vop(f, k, r):
    if f in ("src0", "src1", "src2") and k != "vr":
        return _src9(k, r)
    return r


def _subsets(fields):
    out = []
    n = len(fields)
    for m in range(1 << n):
        out.append(tuple(f for i, f in enumerate(fields) if m >> i & 1))
    return sorted(out, key=len)


def formats():
    """Return {format: Fmt}; field layouts from the CDNA3 ISA guide, "Microcode Formats"."""
    F = {}
    sraw = lambda f, k, r: {"s": r, "i": 0x83, "l": 0xFF}[k]  # noqa: E731

    # SOP2: [31:30]=10 op[29:23] sdst[22:16] ssrc1[15:8] ssrc0[7:0]
    F["SOP2"] = Fmt(range(0, 0x60), lambda op, v: [(0b10 << 30) | bits(op, 23) | bits(v["sdst"], 16)
                                                  | bits(v["ssrc1"], 8) | v["ssrc0"]],
                    {"sdst": ("s", SDST), "ssrc0": ("s", SS0), "ssrc1": ("s", SS1)}, sraw,
                    _subsets(["sdst", "ssrc0", "ssrc1"])[:4],
                    [(f, k) for f in ("ssrc0", "ssrc1") for k in "il"])
    # SOPK: [31:28]=1011 op[27:23] sdst[22:16] simm16[15:0]
    F["SOPK"] = Fmt(range(0, 0x1d), lambda op, v: [(0b1011 << 28) | bits(op, 23) | bits(v["sdst"], 16)
                                                  | 0x1234],
                    {"sdst": ("s", SDST)}, sraw, ((), ("sdst",)))
    # SOP1: [31:23]=0x17D sdst[22:16] op[15:8] ssrc0[7:0]
    F["SOP1"] = Fmt(range(0, 0x100), lambda op, v: [(0x17D << 23) | bits(v["sdst"], 16) | bits(op, 8)
                                                   | v["ssrc0"]],
                    {"sdst": ("s", SDST), "ssrc0": ("s", SS0)}, sraw,
                    _subsets(["sdst", "ssrc0"]), [("ssrc0", k) for k in "il"])
    # SOPC: [31:23]=0x17E op[22:16] ssrc1[15:8] ssrc0[7:0]
    F["SOPC"] = Fmt(range(0, 0x80), lambda op, v: [(0x17E << 23) | bits(op, 16) | bits(v["ssrc1"], 8)
                                                  | v["ssrc0"]],
                    {"ssrc0": ("s", SS0), "ssrc1": ("s", SS1)}, sraw, _subsets(["ssrc0", "ssrc1"]),
                    [(f, k) for f in ("ssrc0", "ssrc1") for k in "il"])
    # SOPP: [31:23]=0x17F op[22:16] simm16[15:0]
    F["SOPP"] = Fmt(range(0, 0x80), lambda op, v: [(0x17F << 23) | bits(op, 16) | v["simm16"]],
                    {"simm16": ("i", 0x10)}, lambda f, k, r: r, ((), ("simm16",)))
    # SMEM: [31:26]=110000 op[25:18] imm[17] glc[16] sdata[12:6] sbase[5:0]; dword1 offset
    F["SMEM"] = Fmt(range(0, 0x100),
                    lambda op, v: [(0b110000 << 26) | bits(op, 18) | bits(v.get("imm", 1), 17)
                                   | bits(v["sdata"], 6) | (v["sbase"] >> 1),
                                   0x10 if v.get("imm", 1) else v["soffset"]],
                    {"sdata": ("s", SDST), "sbase": ("s", SS0), "soffset": ("s", SS1)},
                    lambda f, k, r: r, _subsets(["sdata", "sbase"]),
                    flags={"sgproff": ({"imm": 0}, "soffset", "s", {})})

    # VOP2 / VOP1 / VOPC (+ DPP, SDWA): src0 9 bits, vsrc1/vdst 8 bits
    def vop(prefix):
        def enc(op, v):
            if prefix == "VOP2":
                head = bits(op, 25) | bits(v["vdst"], 17) | bits(v["src1"] & 0xFF, 9)
            elif prefix == "VOP1":
                head = (0x3F << 25) | bits(v["vdst"], 17) | bits(op, 9)
            else:
                head = (0x3E << 25) | bits(op, 17) | bits(v["src1"] & 0xFF, 9)
            ext = v.get("ext")
            s0 = v["src0"]
            if ext in ("dpp", "dpp64"):
                ctrl = 0xE4 if ext == "dpp" else 0x151
                return [head | 0xFA, (s0 & 0xFF) | bits(ctrl, 8) | (0xF << 24) | (0xF << 28)]
            if ext == "sdwa":
                # SDWA9: S0 (bit 23) / S1 (bit 31) select the scalar operand space
                # (SGPR or inline constant) for src0 / src1
                sgpr = (1 << 23) if s0 < 0x100 else 0
                sels = bits(6, 16) | (bits(6, 24) if prefix != "VOP1" else 0) | \
                    (bits(6, 8) if prefix != "VOPC" else 0)
                return [head | 0xF9, (s0 & 0xFF) | sels | sgpr | bits(v.get("s1", 0), 31)]
            return [head | s0]
        return enc
    for prefix, ops, flds in (("VOP2", range(0, 0x3F), ["vdst", "src0", "src1"]),
                              ("VOP1", range(0, 0x100), ["vdst", "src0"]),
                              ("VOPC", range(0, 0x100), ["src0", "src1"])):
        fields = {f: ("v", {"vdst": VDST, "src0": VS0, "src1": VS1}[f]) for f in flds}
        pats = _subsets([f for f in flds if f != "src1"])
        F[prefix] = Fmt(ops, vop(prefix), fields, _raw_vop, pats,
                        [("src0", k) for k in "sil"],
                        flags={"dpp": ({"ext": "dpp"}, None, None, {}),
                               "dpp64": ({"ext": "dpp64"}, None, None, {}),
                               "sdwa": ({"ext": "sdwa"}, None, None, {}),
                               "sdwa_s": ({"ext": "sdwa", "src0": VS0}, "src0", "s",
                                          {"src0": "s"}),
                               "sdwa_i": ({"ext": "sdwa", "src0": 0x83}, "src0", "i", {}),
                               "sdwa_s1": ({"ext": "sdwa", "src1": VS1, "s1": 1}, "src1", "s",
                                           {"src1": "s"}),
                               "sdwa_i1": ({"ext": "sdwa", "src1": 0x83, "s1": 1}, "src1", "i",
                                           {})})

    # VOP3 (a/b): [31:26]=110100 op[25:16] clamp[15] sdst/abs,op_sel[14:8] vdst[7:0];
    #             dword1 neg[31:29] omod[28:27] src2[26:18] src1[17:9] src0[8:0]
    def vop3(op, v):
        return [(0b110100 << 26) | bits(op, 16) | bits(v["sdst"], 8) | v["vdst"],
                bits(v["src2"], 18) | bits(v["src1"], 9) | v["src0"]]
    F["VOP3"] = Fmt(range(0, 0x380), vop3,
                    {"vdst": ("v", VDST), "sdst": ("s", 72), "src0": ("v", VS0), "src1": ("v", VS1),
                     "src2": ("v", VS2)}, _raw_vop,
                    [("sdst",), ("sdst", "src2"), ("sdst", "src1", "src2"),
                     ("sdst", "src0", "src1", "src2"), ("sdst", "vdst", "src0", "src1", "src2"),
                     (), ("src2",), ("src1", "src2"), ("vdst", "sdst", "src1", "src2")],
                    [(f, k) for f in ("src0", "src1", "src2") for k in "si"],
                    flags={"ss": ({"src0": SS0, "src1": SS1}, None, None, {"src0": "s", "src1": "s"}),
                           "vs": ({"src1": SS1}, None, None, {"src1": "s"})})

    # VOP3P (incl. MAI): [31:23]=0x1A7 op[22:16] clamp/acc_cd[15] op_sel_hi2[14] ... vdst[7:0];
    #                    dword1 neg/blgp[31:29] op_sel_hi/acc[28:27] src2 src1 src0
    def vop3p(op, v):
        return [(0x1A7 << 23) | bits(op, 16) | bits(v.get("acc_cd", 0), 15) |
                bits(v.get("hi2", 1), 14) | v["vdst"],
                bits(v.get("hi", 3), 27) | bits(v["src2"], 18) | bits(v["src1"], 9) | v["src0"]]
    F["VOP3P"] = Fmt(range(0, 0x80), vop3p,
                     {"vdst": ("v", VDST), "src0": ("v", VS0), "src1": ("v", VS1), "src2": ("v", VS2)},
                     _raw_vop, [(), ("src2",), ("src1", "src2"), ("vdst", "src0", "src1", "src2")],
                     [(f, k) for f in ("src0", "src1", "src2") for k in "si"],
                     flags={"mai": ({"hi2": 0, "hi": 0}, None, None, {}),
                            "mai_acc": ({"hi2": 0, "hi": 0, "acc_cd": 1}, "vdst", "a",
                                        {"vdst": "a", "src2": "a"}),
                            "mai_acc2": ({"hi2": 0, "hi": 0, "acc_cd": 1}, "src2", "a",
                                         {"vdst": "a", "src2": "a"}),
                            "mai_a0": ({"hi2": 0, "hi": 1}, "src0", "a", {"src0": "a"}),
                            "mai_a1": ({"hi2": 0, "hi": 2}, "src1", "a", {"src1": "a"}),
                            "mai_acc_i2": ({"hi2": 0, "hi": 0, "acc_cd": 1, "src2": 0x83}, "src2",
                                           "i", {"vdst": "a"}),
                            "acc_cd": ({"acc_cd": 1}, "vdst", "a", {"vdst": "a", "src2": "a"}),
                            "acc0": ({"hi": 1}, "src0", "a", {"src0": "a"}),
                            "acc1": ({"hi": 2}, "src1", "a", {"src1": "a"})})

    # DS: [31:26]=110110 acc[25] op[24:17] gds[16] offset1[15:8] offset0[7:0];
    #     dword1 vdst[31:24] data1[23:16] data0[15:8] addr[7:0]
    def ds(op, v):
        return [(0b110110 << 26) | bits(v.get("acc", 0), 25) | bits(op, 17) | bits(v.get("gds", 0), 16),
                bits(v["vdst"], 24) | bits(v["data1"], 16) | bits(v["data0"], 8) | v["addr"]]
    F["DS"] = Fmt(range(0, 0x100), ds,
                  {"vdst": ("v", VDST), "addr": ("v", VS0), "data0": ("v", VS1), "data1": ("v", VS2)},
                  lambda f, k, r: r, _subsets(["vdst", "addr", "data0", "data1"]),
                  flags={"acc": ({"acc": 1}, "vdst", "a", {"vdst": "a", "data0": "a", "data1": "a"}),
                         "acc_d": ({"acc": 1}, "data0", "a",
                                   {"vdst": "a", "data0": "a", "data1": "a"}),
                         "gds": ({"gds": 1}, "gds", "gds", {})})

    # FLAT/GLOBAL/SCRATCH: [31:26]=110111 sc1[25] op[24:18] nt[17] sc0[16] seg[15:14] sve[13]
    #     offset[12:0]; dword1 vdst[31:24] acc[23] saddr[22:16] data[15:8] addr[7:0]
    def flat(seg):
        def enc(op, v):
            return [(0b110111 << 26) | bits(op, 18) | bits(v.get("sc0", 0), 16) | bits(seg, 14) |
                    bits(v.get("sve", int(seg == 1)), 13),
                    bits(v["vdst"], 24) | bits(v.get("acc", 0), 23) |
                    bits(v.get("saddr", 0x7F if seg else 0), 16) |
                    bits(v["vdata"], 8) | v["vaddr"]]
        return enc
    for seg, name in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
        F[name] = Fmt(range(0, 0x80), flat(seg),
                      {"vdst": ("v", VDST), "vaddr": ("v", VS0), "vdata": ("v", VS1)},
                      lambda f, k, r: r, _subsets(["vdst", "vdata", "vaddr"]),
                      flags={"sc0": ({"sc0": 1}, "sc0", "rtn", {}),
                             "acc": ({"acc": 1}, "vdata", "a", {"vdst": "a", "vdata": "a"}),
                             "accd": ({"acc": 1, "sc0": 1}, "vdst", "a", {"vdst": "a", "vdata": "a"}),
                             "saddr": ({"saddr": 72}, "saddr", "s", {}),
                             "sve": ({"sve": 0}, "sve", "v", {})})

    # MUBUF: [31:26]=111000 op[24:18] nt[17] lds[16] sc1[15] sc0[14] idxen[13] offen[12]
    #        offset[11:0]; dword1 soffset[31:24] acc[23] srsrc[20:16] vdata[15:8] vaddr[7:0]
    # MTBUF: [31:26]=111010 nfmt[25:23] dfmt[22:19] op[18:15] ...
    def mubuf(mt):
        def enc(op, v):
            if mt:
                w0 = (0b111010 << 26) | bits(op, 15) | bits(4, 19)
            else:
                w0 = (0b111000 << 26) | bits(op, 18) | bits(v.get("lds", 0), 16)
            offen = v.get("offen", 1 if v["vaddr"] else 0)
            w0 |= bits(v.get("sc0", 0), 14) | bits(v.get("idxen", 0), 13) | bits(offen, 12)
            return [w0, bits(v["soffset"], 24) | bits(v.get("acc", 0), 23) |
                    bits(v["srsrc"] >> 2, 16) | bits(v["vdata"], 8) | v["vaddr"]]
        return enc
    for name, mt, ops in (("MUBUF", False, range(0, 0x80)), ("MTBUF", True, range(0, 0x10))):
        F[name] = Fmt(ops, mubuf(mt),
                      {"vaddr": ("v", VS0), "vdata": ("v", VS1), "srsrc": ("s", SS0),
                       "soffset": ("s", 72)},
                      lambda f, k, r: r,
                      [(), ("vdata",), ("vaddr", "vdata"), ("vaddr", "vdata", "srsrc", "soffset")],
                      flags={"sc0": ({"sc0": 1}, "sc0", "rtn", {}),
                             "acc": ({"acc": 1}, "vdata", "a", {"vdata": "a"}),
                             "idxoff": ({"idxen": 1}, "idxen", "v", {}),
                             "noaddr": ({"offen": 0}, "offen0", "v", {}),
                             "soffi": ({"soffset": 0x80}, "soffset", "i", {}),
                             "lds": ({"offen": 0, "lds": 1}, "lds", "lds", {})})
    return F


# ---------------------------------------------------------------------------
# sweep
# ---------------------------------------------------------------------------

def split_suffix(mn):
    for suf in ("_e32", "_e64", "_dpp", "_sdwa"):
        if mn.endswith(suf):
            return mn[: -len(suf)], suf[1:]
    return mn, ""


def sweep():
    """Run every format sweep; return {mnemonic: raw record}."""
    F = formats()
    cands, meta = [], []
    for fmt, spec in F.items():
        for kind in spec.kinds():
            for op in spec.ops:
                cands.append(kind.build(op))
                meta.append((fmt, kind, op))
    res = disassemble(cands)
    recs = {}
    order = 0
    for (fmt, kind, op), r in zip(meta, res):
        order += 1
        if r is None:
            continue
        text, nbytes = r
        mn, toks, mods = parse_text(text)
        given = len(kind.build(op)) * 4
        rec = recs.get(mn)
        if rec is None:
            rec = recs[mn] = {"name": mn, "fmt": fmt, "kinds": {}, "mods": set(),
                              "cands": []}
        if rec["fmt"] != fmt:
            continue   # same mnemonic from another format (not expected)
        rec["mods"].update(m.split(":")[0] for m in mods)
        cls = [classify(t) for t in toks]
        rec["kinds"].setdefault(kind.name, (toks, cls, kind, nbytes))
        # score for choosing the decode that names the operands: fewest operands
        # that cannot be traced to a field (index 0 is ambiguous: unused fields are 0),
        # then fewest modifiers, base settings before probes, then sweep order
        amb = sum(1 for c in cls if c[0] == "reg" and (c[2] == 0 or match_field(kind, c, fmt) is None))
        amb += sum(1 for c in cls if c[0] == "literal")
        if fmt in ("MUBUF", "MTBUF"):   # prefer the offen form (vaddr present)
            amb += sum(1 for c in cls if c[0] == "special" and c[1] == "off")
        score = (amb, len(mods), kind.probe is not None, order)
        rec["cands"].append((score, op, toks, cls, kind, nbytes, given, text))
    for rec in recs.values():
        score, op, toks, cls, kind, nbytes, given, text = min(rec["cands"], key=lambda c: c[0])
        rec["example"] = text
        rec["opcode"] = op
        rec["ops"] = (toks, cls, kind)
        # size without an optional literal; a consumed marker is a mandatory literal
        rec["mandatory_literal"] = nbytes > given
        rec["size"] = nbytes
        # other decodes with the same operand count, best first: example fallbacks
        rec["alt_texts"] = [c[7] for c in sorted(rec["cands"], key=lambda c: c[0])
                            if len(c[2]) == len(toks) and c[7] != text]
        del rec["cands"]
    return recs


def pick_examples(recs):
    """Prefer an example the assembler accepts: the disassembler prints a few forms
    llvm-mc rejects (e.g. two SGPRs on the gfx9 constant bus); try the other decodes
    of the same record in score order."""
    names = sorted(recs)
    res = _assemble_lines([recs[n]["example"] for n in names])
    todo = [n for n, (mn, err, _e) in zip(names, res) if err]
    for n in todo:
        alts = recs[n]["alt_texts"][:200]
        # a 32-bit marker literal is too wide for a 16-bit KIMM: try a small one
        alts = alts + [re.sub(r"0x[0-9a-f]{5,8}\b", "0x1234", recs[n]["example"])]
        hit = next((t for t, (mn, err, _e) in zip(alts, _assemble_lines(alts)) if not err), None)
        if hit:
            recs[n]["example"] = hit


FALLBACK = {("VOP3", "s", 0): "sdst", ("VOP3", "s", 72): "sdst", ("FLAT", "s", 72): "saddr",
            ("GLOBAL", "s", 72): "saddr", ("SCRATCH", "s", 72): "saddr",
            ("MUBUF", "s", 72): "soffset", ("MTBUF", "s", 72): "soffset"}


def match_field(kind, c, fmt):
    """Field name of a printed register ``c`` (from :func:`classify`) under ``kind``."""
    for f, (file, idx) in kind.fields.items():
        if file == c[1] and idx == c[2]:
            return f
    if (fmt, c[1], c[2]) in FALLBACK:
        return FALLBACK[(fmt, c[1], c[2])]
    hits = [f for f, (file, idx) in kind.fields.items() if idx == c[2]]
    return hits[0] if len(hits) == 1 else None


def trace_fields(rec):
    """Name each printed operand of the base decode after the field it came from,
    and collect the operand kinds each field accepts."""
    toks, cls, kind = rec["ops"]
    names = []
    for t, c in zip(toks, cls):
        name = None
        if c[0] == "reg":
            name = match_field(kind, c, rec["fmt"])
        elif c[0] == "special":
            name = c[1]
        elif c[0] == "func":
            name = c[1]
        elif c[0] in ("inline", "literal"):
            name = "imm"
        names.append(name or "op")
    # de-duplicate names
    seen = defaultdict(int)
    for i, n in enumerate(names):
        seen[n] += 1
        if seen[n] > 1:
            names[i] = f"{n}{seen[n]}"
    accepts = defaultdict(set)
    for i, (t, c) in enumerate(zip(toks, cls)):
        if c[0] == "reg":
            accepts[i].add(c[1])
        elif c[0] in ("inline", "literal"):
            accepts[i].add("i" if c[0] == "inline" else "l")
    # probe kinds: same mnemonic, same operand count, the field's position
    pos = {n: i for i, n in enumerate(names)}
    for kname, (ktoks, kcls, kind2, _nb) in rec["kinds"].items():
        if kind2.probe is None or len(ktoks) != len(toks):
            continue
        i = pos.get(kind2.probe)
        if i is None:
            continue
        c = kcls[i]
        if c[0] == "reg":
            accepts[i].add({"s": "s", "v": "v", "a": "a", "ttmp": "s"}[c[1]])
        elif c[0] == "inline":
            accepts[i].add("i")
        elif c[0] == "literal":
            accepts[i].add("l")
    # widths for AV data fields: a probe may print a[..] at the same position
    for kname, (ktoks, kcls, kind2, _nb) in rec["kinds"].items():
        if kind2.probe is None or len(ktoks) != len(toks):
            continue
        for i, c in enumerate(kcls):
            if c[0] == "reg" and c[1] == "a" and cls[i][0] == "reg":
                accepts[i].add("a")
    return names, accepts


def operand_class(c, acc):
    """Register class from the printed kind and the set of accepted kinds."""
    kind = c[0]
    if kind == "special":
        return "special"
    if kind == "func":
        return {"hwreg": "HWREG", "sendmsg": "SENDMSG", "vmcnt": "WAITCNT", "expcnt": "WAITCNT",
                "lgkmcnt": "WAITCNT", "gpr_idx": "GPR_IDX", "swizzle": "SWIZZLE"}.get(c[1], "IMM")
    if kind in ("inline", "literal", "other"):
        return "IMM"
    a = set(acc)
    if "ttmp" in a:
        a.discard("ttmp")
        a.add("s")
    if a == {"v"}:
        return "VGPR"
    if a == {"s"}:
        return "SGPR"
    if a == {"a"}:
        return "AGPR"
    if a == {"v", "a"}:
        return "AV"
    if a == {"s", "i", "l"} or a == {"s", "l"}:
        return "SSRC"
    if a == {"s", "i"}:
        return "SCSRC"
    if a == {"v", "s", "i", "l"}:
        return "VSRC"
    if a == {"v", "s", "i"}:
        return "VCSRC"
    if a == {"v", "s"}:
        return "VS"
    if a == {"v", "a", "i"} or a == {"v", "a", "s", "i"}:
        return "AVSRC"
    if a == {"v", "i"}:
        return "VISRC"
    return "|".join(sorted(a)).upper()


def build():
    recs = sweep()
    pick_examples(recs)
    table = {}
    for mn, rec in sorted(recs.items()):
        toks, cls, kind = rec["ops"]
        names, accepts = trace_fields(rec)
        base, variant = split_suffix(mn)
        operands = []
        for i, (t, c) in enumerate(zip(toks, cls)):
            width = c[3]
            operands.append({"name": names[i], "cls": operand_class(c, accepts[i]), "width": width})
        r = {"name": mn, "base": base, "variant": variant, "opcode": rec["opcode"],
             "size": rec["size"], "operands": operands, "enc": rec["fmt"],
             "mandatory_literal": rec["mandatory_literal"],
             "example": rec["example"]}
        # return-form operands for FLAT/MUBUF atomics (printed differently with sc0)
        for kn, (ktoks, kcls, kind2, _nb) in sorted(rec["kinds"].items()):
            if kind2.probe == "sc0" and len(ktoks) != len(toks):
                kn_names = []
                for t, c in zip(ktoks, kcls):
                    nm = None
                    if c[0] == "reg":
                        nm = match_field(kind2, c, rec["fmt"])
                    elif c[0] == "special":
                        nm = c[1]
                    kn_names.append(nm or "op")
                r["rtn_operands"] = [
                    {"name": n, "cls": next((o["cls"] for o in operands if o["name"] == n),
                                            operand_class(c, {c[1]} if c[0] == "reg" else set())),
                     "width": c[3]} for n, c in zip(kn_names, kcls)]
                break
        r["modifiers"] = sorted(rec["mods"])
        table[mn] = r
    rules.apply(table)
    mca_timings(table)
    return table


def _mca_rows(examples):
    """llvm-mca -instruction-info on ``examples`` (one batch); returns a list of
    (latency, rthroughput) per example, or None when llvm-mca fails (it crashes on
    MUBUF loads/stores in LLVM 19)."""
    p = subprocess.run([find_tool("llvm-mca"), f"-mtriple={TRIPLE}", f"-mcpu={MCPU}",
                        "-instruction-info", "-iterations=1", "-resource-pressure=0"],
                       input="\n".join(examples) + "\n", capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        return None
    rows = [ln.split() for ln in p.stdout.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]+\s", ln)]
    if len(rows) != len(examples):
        return None
    return [(int(r[1]), float(r[2])) for r in rows]


def mca_timings(table):
    """Fill ``mca_latency`` / ``mca_rthroughput`` (cycles, gfx940 scheduling model via
    ``llvm-mca -mcpu=gfx942``, ISA_NOTES section 9) for every record whose example
    llvm-mc assembles and llvm-mca accepts; ``passes`` of every MFMA is its
    reciprocal throughput, checked against rules.MFMA_PASSES."""
    names = sorted(table)
    res = _assemble_lines([table[n]["example"] for n in names])
    ok = [n for n, (mn, err, _e) in zip(names, res) if mn]
    by_fam = defaultdict(list)
    for n in ok:
        by_fam[table[n]["family"]].append(n)
    got = {}
    for fam, group in sorted(by_fam.items()):
        rows = _mca_rows([table[n]["example"] for n in group])
        if rows is None:      # find the crashers one by one
            for n in group:
                one = _mca_rows([table[n]["example"]])
                if one:
                    got[n] = one[0]
        else:
            got.update(zip(group, rows))
    for n, rec in table.items():
        rec["mca_latency"], rec["mca_rthroughput"] = got.get(n, (None, None))
        if rec["is_mfma"]:
            if n not in got:
                raise SystemExit(f"llvm-mca gave no timing for {n}")
            passes = int(round(got[n][1]))
            if rec["passes"] and rec["passes"] != passes:
                raise SystemExit(f"{n}: llvm-mca passes {passes} != rules.MFMA_PASSES {rec['passes']}")
            rec["passes"] = passes


# ---------------------------------------------------------------------------
# cross-check: the assembler's mnemonic table
# ---------------------------------------------------------------------------

_MN_OK = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.")


def llvm_asm_mnemonics():
    """Base mnemonics of the AMDGPU assembler (all generations), read from the
    AsmMatcher ``MnemonicTable`` (length-prefixed strings, sorted) compiled into
    llvm-mc or libLLVM.  Returns [] when the table cannot be found."""
    mc = os.path.realpath(find_tool("llvm-mc"))
    libdir = os.path.join(os.path.dirname(os.path.dirname(mc)), "lib")
    paths = [mc] + sorted(os.path.join(libdir, f) for f in (os.listdir(libdir) if
                                                             os.path.isdir(libdir) else [])
                          if f.startswith("libLLVM") and ".so" in f)
    key = b"\x16v_mfma_f32_32x32x8_f16"
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        at = data.find(key)
        if at < 0:
            continue

        def parse(p, limit):
            out = []
            while p < limit:
                n = data[p]
                w = data[p + 1:p + 1 + n]
                if n == 0 or n > 80 or not all(c in _MN_OK for c in w):
                    return None, p
                out.append(w.decode())
                p += 1 + n
            return out, p
        start = at
        for back in range(1, 1 << 20):      # earliest start that parses up to `at`
            q = at - back
            if q < 0:
                break
            if 0 < data[q] <= 80:
                r, end = parse(q, at)
                if r is not None and end == at:
                    start = q
        out, p = [], start
        while True:
            n = data[p]
            w = data[p + 1:p + 1 + n]
            if n == 0 or n > 80 or not all(c in _MN_OK for c in w):
                break
            out.append(w.decode())
            p += 1 + n
        return out
    return []


def _assemble_lines(lines):
    """Assemble each line with llvm-mc; return (printed mnemonic or None, error) per line."""
    p = subprocess.run([find_tool("llvm-mc"), f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=600)
    errs = {}
    for m in re.finditer(r"<stdin>:(\d+):\d+: error: ([^\n]*)", p.stderr):
        errs.setdefault(int(m.group(1)) - 1, m.group(2))
    printed = [(m.group(1), m.group(2)) for m in (_OUT_RE.match(ln) for ln in p.stdout.splitlines())
               if m]
    it = iter(printed)
    out = []
    for i in range(len(lines)):
        if i in errs:
            out.append((None, errs[i], None))
        else:
            text, enc = next(it, ("", ""))
            out.append((text.split(" ")[0] or None, None, enc))
    return out


def cross_check(table):
    """Compare the table with every mnemonic the LLVM 19 assembler accepts for gfx942.

    Returns ``(accepted, aliases, unresolved)``: the accepted base mnemonics, a map
    from accepted spellings that are not records (old MFMA names, ``v_mul_lo_i32``)
    to the record llvm-mc encodes them as, and accepted spellings not resolved.
    """
    names = llvm_asm_mnemonics()
    if not names:
        return [], {}, []
    res = _assemble_lines(names)
    accepted = [n for n, (_, err, _e) in zip(names, res)
                if not (err and ("not supported on this GPU" in err or "invalid instruction" in err))]
    bases = {r["base"] for r in table.values()}
    todo = [n for n in accepted if n not in table and n not in bases]
    aliases, unresolved = {}, []
    for n in todo:
        stem = "_".join(n.split("_")[:2])
        cands = sorted({r["example"].split(" ", 1)[1] for r in table.values()
                        if r["name"].startswith(stem) and " " in r["example"]})
        lines = [f"{n} {ops}" for ops in cands] or [n]
        hit = next(((mn, enc) for mn, err, enc in _assemble_lines(lines) if mn), None)
        if hit and hit[0] not in table:
            # printed under its own name: name the record the same bytes decode to
            words = bytes(int(x, 16) for x in hit[1].split(","))
            words = [int.from_bytes(words[i:i + 4], "little") for i in range(0, len(words), 4)]
            dec = disassemble([words])[0]
            hit = (dec[0].split(" ")[0], hit[1]) if dec else None
        if hit and hit[0] in table:
            aliases[n] = hit[0]
        else:
            unresolved.append(n)
    return accepted, aliases, unresolved


def main(argv=None):
    """``python isa_specs/generate.py [--out PATH]`` (default: isa_specs/gfx942.json)."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "gfx942.json"))
    args = ap.parse_args(argv)
    table = build()
    accepted, aliases, unresolved = cross_check(table)
    out = args.out
    doc = {"target": "gfx942", "generator": "isa_specs/generate.py",
           "llvm": subprocess.run([find_tool("llvm-mc"), "--version"], capture_output=True,
                                  text=True).stdout.split("version")[1].split()[0],
           "llvm_accepted_mnemonics": len(accepted),
           "aliases": dict(sorted(aliases.items())),
           "unresolved_mnemonics": unresolved,
           "records": [table[k] for k in sorted(table)]}
    head = {k: v for k, v in doc.items() if k != "records"}
    with open(out + ".tmp", "w") as f:   # one record per line: small, readable diffs
        f.write(json.dumps(head, sort_keys=True)[:-1] + ', "records": [\n')
        f.write(",\n".join(json.dumps(r, sort_keys=True, separators=(",", ":"))
                           for r in doc["records"]))
        f.write("\n]}\n")
    os.replace(out + ".tmp", out)
    print(f"{len(table)} records -> {out}; llvm-mc accepts {len(accepted)} base mnemonics "
          f"for gfx942, {len(aliases)} resolved as aliases, unresolved: {unresolved}")


if __name__ == "__main__":
    main()
