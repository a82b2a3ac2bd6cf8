"""PC-relative data references (``s_getpc_b64`` + ``s_add_u32``/``s_addc_u32`` literal pairs)
become symbolic ``sym@rel32@lo/hi`` operands in the disassembly, so a rebuild that moves
code or data still reaches the data.  Oracles: clang (the kernel and its ``__constant``
table), ld.lld (the fixups) and llvm-objdump (the resolved literals in the new object)."""

from __future__ import annotations

import re
import subprocess

import pytest

from asmevo.backend.rebuild import write_code_object
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.codeobject import read_code_object
from asmevo.frontend.disasm import disassemble
from asmevo.llvm import find_tool
from corpus_paths import require_tool
from asmevo.tools.roundtrip import roundtrip

_LUT_CL = """
__constant float table[16] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f,
                              9.f, 10.f, 11.f, 12.f, 13.f, 14.f, 15.f, 16.f};
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void lut(__global float *restrict out, __global const int *restrict idx) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  out[i] = table[idx[i] & 15];
}
"""

_LINE = re.compile(r"^\s*(s_\w+)\s+([^/]*?)\s*//\s*([0-9A-Fa-f]+):")


def resolved_targets(path) -> list[int]:
    """For every ``s_getpc_b64 s[N:N+1]; s_add_u32 sN, sN, LO; s_addc_u32 ..., HI`` in the
    llvm-objdump listing of ``path`` (``s_nop`` allowed in between): the address
    ``pc + sext64(HI:LO)`` it computes (pc = the s_getpc_b64's address + 4)."""
    out = subprocess.run([find_tool("llvm-objdump"), "-d", str(path)], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for ln in out.splitlines():
        m = _LINE.match(ln)
        if m:
            rows.append((m.group(1), m.group(2), int(m.group(3), 16)))

    def val(text: str) -> int:
        v = int(text.split(",")[-1].strip(), 0)
        return v & 0xFFFFFFFF

    res = []
    for n, (op, _args, addr) in enumerate(rows):
        if op != "s_getpc_b64":
            continue
        nxt = [r for r in rows[n + 1:n + 6] if r[0] != "s_nop"][:2]  # s_nop in between: no effect
        if [r[0] for r in nxt] == ["s_add_u32", "s_addc_u32"]:
            off = (val(nxt[1][1]) << 32) | val(nxt[0][1])
            if off >= 1 << 63:
                off -= 1 << 64
            res.append(addr + 4 + off)
    return res


@pytest.fixture(scope="module")
def lut_co(tmp_path_factory):
    clang = require_tool("clang")   # skips only when clang is not installed
    d = tmp_path_factory.mktemp("lut")
    src = d / "lut.cl"
    src.write_text(_LUT_CL)
    out = d / "lut.co"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
                    "-nogpulib", "-O3", "-o", str(out), str(src)], check=True)
    return out


def _table(co) -> tuple[int, bytes]:
    sym = co.symbol("table")
    return sym.value, co.read(sym.value, 64)


def test_clang_table_reference_is_symbolic(lut_co):
    co = read_code_object(lut_co)
    addr, data = _table(co)
    assert resolved_targets(lut_co) == [addr]  # the oracle agrees on the original
    m = disassemble(lut_co)
    texts = [i.text() for i in m.kernel("lut").instructions()]
    assert any(re.fullmatch(r"s_add_u32 s(\d+), s\1, table@rel32@lo\+\(\.\+4-\.Lasmevo_pc_\w+\)", t)
               for t in texts), texts
    assert any("table@rel32@hi+" in t for t in texts)
    assert all(c.ok for c in roundtrip(str(lut_co)))


@pytest.mark.parametrize("where", ["before_getpc", "between_getpc_and_add"])
def test_insert_before_getpc_still_reaches_the_table(tmp_path, lut_co, where):
    """Inserting an instruction before the s_getpc_b64 (or between it and the add, where a
    fixed +4/+12 addend would be wrong) and rebuilding: the new object's literals, read back
    with llvm-objdump, still give the table's address, and the table bytes are there."""
    co = read_code_object(lut_co)
    _, data = _table(co)
    m = disassemble(lut_co)
    k = m.kernel("lut")
    insts = list(k.instructions())
    g = next(i for i in insts if i.opcode == "s_getpc_b64")
    if where == "before_getpc":
        k.insert_before(g, parse_instruction("s_nop 0"))
    else:
        k.insert_after(g, parse_instruction("s_nop 1"))
    out = tmp_path / "moved.co"
    assert write_code_object(m, str(out)) == "assembled"
    new = read_code_object(out)
    addr, new_data = _table(new)
    assert new_data == data
    old_pc = g.address + 4
    new_getpc = resolved_targets(out)
    assert new_getpc == [addr]
    listing = subprocess.run([find_tool("llvm-objdump"), "-d", str(out)], capture_output=True, text=True,
                             check=True).stdout
    pcs = [int(m_.group(3), 16) for m_ in map(_LINE.match, listing.splitlines())
           if m_ and m_.group(1) == "s_getpc_b64"]
    assert len(pcs) == 1
    if where == "before_getpc":
        assert pcs[0] + 4 != old_pc or new.text.addr != co.text.addr  # the code did move


def test_stripped_object_gets_a_data_label(tmp_path, lut_co):
    """Without the local ``table`` symbol (llvm-strip), the target gets a generated
    ``.Lasmevo_data_ADDR`` label inside .rodata; the rebuild still reaches the bytes."""
    stripped = tmp_path / "s.co"
    subprocess.run([find_tool("llvm-strip"), "-o", str(stripped), str(lut_co)], check=True)
    co = read_code_object(stripped)
    assert co.symbol("table") is None
    target = resolved_targets(stripped)[0]
    data = co.read(target, 64)
    m = disassemble(stripped)
    label = f".Lasmevo_data_{target:x}"
    assert any(label in i.text() for i in m.kernel("lut").instructions())
    assert all(c.ok for c in roundtrip(str(stripped)))
    k = m.kernel("lut")
    k.insert_before(next(k.instructions()), parse_instruction("s_nop 0"))
    out = tmp_path / "moved.co"
    write_code_object(m, str(out))
    new = read_code_object(out)
    t2 = resolved_targets(out)[0]
    assert new.read(t2, 64) == data


@pytest.fixture(scope="module")
def lut_s(tmp_path_factory):
    clang = require_tool("clang")   # skips only when clang is not installed
    d = tmp_path_factory.mktemp("luts")
    src = d / "lut.cl"
    src.write_text(_LUT_CL)
    out = d / "lut.s"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
                    "-nogpulib", "-O3", "-S", "-o", str(out), str(src)], check=True)
    return out


@pytest.mark.parametrize("where", ["after_getpc", "after_add", "before_getpc"])
def test_clang_text_pair_survives_insertion(tmp_path, lut_s, where):
    """clang's ``table@rel32@lo+4`` / ``@hi+12`` constants assume the pair follows the
    s_getpc_b64; after an insertion between them the rebuild measures the distance instead
    (oracle: llvm-objdump of the new object resolves to the table)."""
    from asmevo.frontend.loader import load
    m = load(lut_s)
    k = m.kernel("lut")
    insts = list(k.instructions())
    n = next(j for j, i in enumerate(insts) if i.opcode == "s_getpc_b64")
    assert "table@rel32@lo+4" in insts[n + 1].text() and "table@rel32@hi+12" in insts[n + 2].text()
    anchor = {"after_getpc": insts[n], "after_add": insts[n + 1], "before_getpc": insts[n - 1]}[where]
    k.insert_after(anchor, parse_instruction("s_nop 0"))
    out = tmp_path / "t.co"
    write_code_object(m, str(out))
    new = read_code_object(out)
    assert resolved_targets(out) == [new.symbol("table").value]
    texts = [i.text() for i in k.instructions()]
    if where == "before_getpc":  # nothing between the three: clang's constants are kept
        assert any(t.endswith("table@rel32@lo+4") for t in texts)
    else:
        assert any(t.endswith("table@rel32@lo+(0+.+4-.Lasmevo_pc_text_0_%d)" % insts[n].line) for t in texts)
