"""llvm-mc helpers shared by the parser tests (no tests here): assemble text, read sections."""

from __future__ import annotations

import io
import subprocess

from elftools.elf.elffile import ELFFile

from asmevo.llvm import MCPU, TRIPLE, find_tool


def fix_target(text: str) -> str:
    """Triton's bundled LLVM writes a target id llvm-mc 19 rejects (corpus README)."""
    return text.replace('"amdgpu9.42-amd-amdhsa-unknown-gfx942"', '"amdgcn-amd-amdhsa--gfx942"')


def assemble_sections(text: str, sections=(".text",)) -> dict[str, bytes]:
    """Assemble with llvm-mc into an object and return the named sections' bytes."""
    mc = find_tool("llvm-mc")
    r = subprocess.run([mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-filetype=obj", "-o", "-"],
                       input=text.encode(), capture_output=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("llvm-mc failed:\n" + r.stderr.decode()[:4000])
    elf = ELFFile(io.BytesIO(r.stdout))
    out = {}
    for name in sections:
        sec = elf.get_section_by_name(name)
        out[name] = sec.data() if sec is not None else None
    return out


def encode_lines(lines: list[str]) -> subprocess.CompletedProcess:
    """llvm-mc -show-encoding over instruction lines (text output)."""
    mc = find_tool("llvm-mc")
    return subprocess.run([mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-show-encoding"],
                          input="\n".join(lines).encode(), capture_output=True, timeout=300)
