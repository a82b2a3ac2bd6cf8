"""ELF layout consistency of a code object: what the verifier reads is what the loader maps.

The frontend reads code and kernel descriptors through the section headers and
``.symtab``; a GPU loader maps ``PT_LOAD`` segments and resolves kernels through
``.dynsym``.  A code object in which the two views disagree can run code the
verifier never saw, so the verifier rejects a candidate that has such a
disagreement the original does not have:

* every allocated section with file contents lies inside one ``PT_LOAD`` segment
  with ``sh_offset - p_offset == sh_addr - p_vaddr`` (the bytes read through the
  section are the bytes mapped at its address);
* every ``PT_LOAD`` segment with file contents holds at least one allocated section,
  and every byte of an executable segment lies inside an executable section;
* a symbol present in both ``.symtab`` and ``.dynsym`` has the same value and size there.

Rules from the ELF specification (program headers vs section headers) and LLVM
AMDGPUUsage ("Code Object" / "Kernel Descriptor": the runtime finds ``NAME.kd``
through the dynamic symbol table).
"""

from __future__ import annotations

import io

from elftools.common.exceptions import ELFError
from elftools.elf.constants import P_FLAGS, SH_FLAGS
from elftools.elf.elffile import ELFFile


def layout_problems(data: bytes) -> list[str]:
    """Disagreements between the section/symbol view and the loader's view of ``data``.

    Returns a list of one-line problem descriptions (empty when consistent).  An ELF
    that pyelftools cannot read gives one problem naming the error.
    """
    try:
        elf = ELFFile(io.BytesIO(data))
        segs = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        secs = [s for s in elf.iter_sections()
                if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_type"] != "SHT_NOBITS" and s["sh_size"]]
        out: list[str] = []
        for s in secs:
            a, o, n = s["sh_addr"], s["sh_offset"], s["sh_size"]
            home = [p for p in segs if p["p_vaddr"] <= a and a + n <= p["p_vaddr"] + p["p_filesz"]]
            if not home:
                out.append(f"section {s.name} ({a:#x}, {n} bytes) lies in no PT_LOAD segment")
            elif not any(o - p["p_offset"] == a - p["p_vaddr"] for p in home):
                out.append(f"section {s.name} is read from file offset {o:#x} but its segment maps "
                           f"other bytes at {a:#x}")
        for p in segs:
            lo, hi = p["p_vaddr"], p["p_vaddr"] + p["p_filesz"]
            if hi == lo:
                continue
            inside = [s for s in secs if lo <= s["sh_addr"] < hi]
            if not inside:
                out.append(f"PT_LOAD segment at {lo:#x} ({p['p_filesz']} bytes) holds no section")
                continue
            if p["p_flags"] & P_FLAGS.PF_X:
                cov = sorted((s["sh_addr"], s["sh_addr"] + s["sh_size"]) for s in inside
                             if s["sh_flags"] & SH_FLAGS.SHF_EXECINSTR)
                pos = lo
                for a, b in cov:
                    if a > pos:
                        break
                    pos = max(pos, b)
                if pos < hi:
                    out.append(f"executable PT_LOAD segment at {lo:#x} maps bytes at {pos:#x} that no "
                               "executable section covers")
        syms: dict[str, dict[str, tuple[int, int]]] = {}
        for tab in (".symtab", ".dynsym"):
            sec = elf.get_section_by_name(tab)
            if sec is None:
                continue
            syms[tab] = {sym.name: (sym["st_value"], sym["st_size"]) for sym in sec.iter_symbols()
                         if sym.name}
        if len(syms) == 2:
            for name, v in syms[".dynsym"].items():
                w = syms[".symtab"].get(name)
                if w is not None and w != v:
                    out.append(f"symbol {name}: .dynsym says value {v[0]:#x} size {v[1]}, .symtab "
                               f"says value {w[0]:#x} size {w[1]}")
        return out
    except (ELFError, ValueError, KeyError, OSError) as e:
        return [f"unreadable ELF layout: {e}"]
