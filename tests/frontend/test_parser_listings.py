"""Every distinct instruction line llvm-objdump prints for the corpus code objects
parses, prints back, and llvm-mc encodes the printed text to the listed bytes."""

from __future__ import annotations

import re
import subprocess

import pytest

from asmevo.frontend.asm_parser import parse_asm, parse_instruction
from asmevo.ir import Label, print_instruction
from asmevo.llvm import MCPU, find_tool

from test_parser_mc import assemble_sections
from test_parser_random import encode_each

_LINE = re.compile(r"^\t(\S.*?)\s*// ([0-9A-Fa-f]+): ((?:[0-9A-F]{8} ?)+)")


def _listing_lines(paths) -> dict[str, bytes]:
    objdump = find_tool("llvm-objdump")
    out: dict[str, bytes] = {}
    for p in paths:
        text = subprocess.run([objdump, "-d", f"--mcpu={MCPU}", str(p)], capture_output=True,
                              text=True, check=True, timeout=300).stdout
        for line in text.splitlines():
            m = _LINE.match(line)
            if m:
                out[m.group(1)] = b"".join(int(w, 16).to_bytes(4, "little")
                                           for w in m.group(3).split())
    return out


@pytest.mark.corpus
def test_listing_lines_round_trip(corpus_dir, llvm_mc):
    paths = sorted(corpus_dir.glob("*.co")) + sorted((corpus_dir / "triton").glob("*.hsaco"))
    paths += sorted((corpus_dir / "aiter").rglob("*.co"))
    lines = _listing_lines(paths)
    assert len(lines) > 1000
    cases = []
    for text, want in lines.items():
        inst = parse_instruction(text)
        p = print_instruction(inst).strip()
        assert parse_instruction(p) == inst, (text, p)
        if any(isinstance(o, Label) for o in inst.operands):
            continue  # a symbolic branch target cannot be encoded out of context
        cases.append((text, p, want))
    got = encode_each([p for _, p, _ in cases])
    bad = [(t, p, g, w.hex()) for (t, p, w), g in zip(cases, got) if g != w]
    assert not bad, bad[:10]


@pytest.mark.corpus
def test_largest_listing_as_source(corpus_dir, llvm_mc):
    """The benchmark input (largest AITer kernel as source) reassembles to identical .text."""
    bench = _bench()
    co = bench.default_input()
    listing = subprocess.run([find_tool("llvm-objdump"), "-d", f"--mcpu={MCPU}", str(co)],
                             capture_output=True, text=True, check=True).stdout
    text, n = bench.listing_to_source(listing)
    m = parse_asm(text, str(co))
    assert sum(k.num_instructions() for k in m.kernels) == n > 10000
    from asmevo.ir import print_module
    assert assemble_sections(print_module(m))[".text"] == assemble_sections(text)[".text"]


def _bench():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "parse.py"
    spec = importlib.util.spec_from_file_location("asmevo_bench_parse", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.corpus
def test_aiter_listings_rebuild_original_text(corpus_dir, llvm_mc):
    """Each AITer code object's listing, as source: parse -> print -> llvm-mc gives the
    code object's own .text bytes (from the first function on).  Listings that do not
    assemble as source by themselves (a symbol outside the listing, a symbol named like a
    section) are skipped; at least 20 must be checked."""
    from elftools.elf.elffile import ELFFile

    from asmevo.ir import print_module
    bench = _bench()
    checked = 0
    for co in sorted((corpus_dir / "aiter").rglob("*.co")):
        listing = subprocess.run([find_tool("llvm-objdump"), "-d", f"--mcpu={MCPU}", str(co)],
                                 capture_output=True, text=True, check=True).stdout
        first = re.search(r"^([0-9a-f]+) <", listing, re.M)
        text, _n = bench.listing_to_source(listing)
        try:
            assemble_sections(text)
        except AssertionError:
            continue
        got = assemble_sections(print_module(parse_asm(text, str(co))))[".text"]
        with open(co, "rb") as f:
            sec = ELFFile(f).get_section_by_name(".text")
            orig = sec.data()[int(first.group(1), 16) - sec["sh_addr"]:]
        assert got == orig[:len(got)] and len(got) > 0, co
        checked += 1
    assert checked >= 20
