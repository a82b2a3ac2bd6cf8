"""What the verifier reads must be what the loader maps (second tester round).

* bytes that no path from the kernel entry reaches (data after ``s_endpgm``) changed: unknown;
* ``.text`` section header pointing at other bytes than its PT_LOAD segment maps: rejected-abi;
* ``.dynsym`` and ``.symtab`` disagreeing on a kernel descriptor symbol: rejected-abi.
"""

import io
import pathlib
import struct

import pytest
from elftools.elf.elffile import ELFFile

from asmevo.verify import verify
from asmevo.verify.elflayout import layout_problems

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _shdr(data: bytes, name: str) -> tuple[int, dict]:
    elf = ELFFile(io.BytesIO(data))
    for i, s in enumerate(elf.iter_sections()):
        if s.name == name:
            return elf["e_shoff"] + i * elf["e_shentsize"], s.header
    raise KeyError(name)


def test_changed_data_after_endpgm_is_not_accepted(tmp_path, llvm_mc):
    src = (EX / "vadd_f32.s").read_text()
    assert "\ts_endpgm\n" in src
    a = src.replace("\ts_endpgm\n", "\ts_endpgm\n\t.long 0xbe800081\n", 1)
    b = src.replace("\ts_endpgm\n", "\ts_endpgm\n\t.long 0xbe800082\n", 1)
    (tmp_path / "a.s").write_text(a)
    (tmp_path / "b.s").write_text(b)
    v = verify(str(tmp_path / "a.s"), str(tmp_path / "b.s"), level="z3")
    assert v.outcome != "accepted", v.text()


def test_section_header_not_matching_segment_is_rejected(tmp_path):
    data = bytearray((EX / "vadd_f32.co").read_bytes())
    assert layout_problems(bytes(data)) == []
    off, h = _shdr(bytes(data), ".text")
    text = bytes(data[h["sh_offset"]:h["sh_offset"] + h["sh_size"]])
    # patch the mapped bytes (v_add_f32 -> v_sub_f32), keep a pristine copy for the header
    i = h["sh_offset"] + text.index(struct.pack("<I", 0x02040F06))
    data[i:i + 4] = struct.pack("<I", 0x04040F06)
    new_off = len(data)
    data += text
    struct.pack_into("<Q", data, off + 24, new_off)  # Elf64_Shdr.sh_offset
    cand = tmp_path / "cand.co"
    cand.write_bytes(bytes(data))
    assert any("segment maps other bytes" in p for p in layout_problems(bytes(data)))
    v = verify(str(EX / "vadd_f32.co"), str(cand), level="z3")
    assert v.status.value == "rejected-abi", v.text()


def test_dynsym_disagreeing_with_symtab_is_a_layout_problem():
    data = bytearray((EX / "vadd_f32.co").read_bytes())
    elf = ELFFile(io.BytesIO(bytes(data)))
    dyn = elf.get_section_by_name(".dynsym")
    for n, sym in enumerate(dyn.iter_symbols()):
        if sym.name == "vadd_f32.kd":
            at = dyn["sh_offset"] + n * dyn["sh_entsize"] + 8  # Elf64_Sym.st_value
            struct.pack_into("<Q", data, at, sym["st_value"] + 0x1000)
            break
    else:
        pytest.fail("no vadd_f32.kd in .dynsym")
    probs = layout_problems(bytes(data))
    assert any(p.startswith("symbol vadd_f32.kd: .dynsym") for p in probs)
