"""Property test: random instruction words that LLVM decodes as gfx942 instructions.

For a batch of random 64-bit chunks (the top bits drawn from the gfx942 encoding
prefixes), ``llvm-mc --disassemble -show-encoding`` gives instruction text and
the bytes it used.  Words whose LLVM text re-encodes to the same bytes
(canonical encodings) must survive asmevo: parse the text, print it, and
llvm-mc must encode the printed text to the original bytes; the printed text
must also parse back to the same Instruction, and the type checker must accept
it.  One llvm-mc call per step per batch keeps it fast.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.ir import print_instruction
from asmevo.llvm import MCPU, TRIPLE

#: Hypothesis phases without shrinking: every example costs llvm-mc runs, and a failure
#: already prints its whole batch.
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]

# (prefix value, prefix bit count, mask of the remaining dword-0 bits left random) of gfx9
# encodings (CDNA3 ISA guide, "Microcode formats").  The memory formats keep their
# high reserved/acc bits clear, else almost every random word is an invalid encoding;
# an optional 4th element forces bits (src0 = 0xFA/0xF9 selects the DPP/SDWA forms).
# SDWA dword 1: keep the dst/src0/src1 select fields at BYTE_0..WORD_1-range values (<= 3)
# and omod clear, else the word is invalid.
_SDWA1 = ~((1 << 10) | (1 << 18) | (1 << 26) | (3 << 14))

PREFIXES = [
    (0b10, 2, ~0),              # SOP2
    (0b1011, 4, ~0),            # SOPK
    (0b101111101, 9, ~0),       # SOP1
    (0b101111110, 9, ~0),       # SOPC
    (0b101111111, 9, ~0),       # SOPP
    (0b110000, 6, 0x03FFFFFF),  # SMEM
    (0b0, 1, ~0),               # VOP2
    (0b0111111, 7, ~0),         # VOP1
    (0b0111110, 7, ~0),         # VOPC
    (0b110100, 6, ~0),          # VOP3 / VOP3P / MAI
    (0b110110, 6, 0x01FEFFFF),  # DS
    (0b110111, 6, 0x01FFFFFF),  # FLAT / GLOBAL / SCRATCH
    (0b111000, 6, 0x01FFFFFF),  # MUBUF
    (0b111010, 6, 0x01FFFFFF),  # MTBUF
    (0b0, 1, ~0x1FF, 0xFA),           # VOP2 DPP (src0 = 250)
    (0b0, 1, ~0x1FF, 0xF9, _SDWA1),           # VOP2 SDWA (src0 = 249)
    (0b0111111, 7, ~0x1FF, 0xFA),             # VOP1 DPP
    (0b0111111, 7, ~0x1FF, 0xF9, _SDWA1),     # VOP1 SDWA
    (0b0111110, 7, ~0x1FF, 0xF9, _SDWA1),     # VOPC SDWA
]

_ENC = re.compile(r"^\s*(.*?)\s*; encoding: \[([^\]]*)\]")
_ERRLINE = re.compile(r"^<stdin>:(\d+):\d+: error:", re.M)


def _mc(args: list[str], text: str) -> subprocess.CompletedProcess:
    from asmevo.llvm import find_tool
    return subprocess.run([find_tool("llvm-mc"), f"-triple={TRIPLE}", f"-mcpu={MCPU}",
                           "-show-encoding", *args], input=text.encode(), capture_output=True,
                          timeout=120)


def _bytes(field: str) -> bytes:
    return bytes(int(x, 16) for x in field.split(",") if x.strip())


def encode_each(lines: list[str]) -> list[bytes | None]:
    """Encoding of each line by llvm-mc, ``None`` for lines it rejects."""
    r = _mc([], "\n".join(lines) + "\n")
    bad = {int(n) for n in _ERRLINE.findall(r.stderr.decode())}
    encs = [m.group(2) for m in map(_ENC.match, r.stdout.decode().splitlines()) if m]
    out: list[bytes | None] = []
    it = iter(encs)
    for i in range(1, len(lines) + 1):
        out.append(None if i in bad else _bytes(next(it)))
    assert next(it, None) is None, "llvm-mc output does not line up with its input"
    return out


def decode(chunks: list[int]) -> list[tuple[str, bytes]]:
    """Decode each 8-byte chunk (one line each); return (text, bytes) per instruction."""
    src = "\n".join(" ".join(f"{b:#04x}" for b in c.to_bytes(8, "little")) for c in chunks)
    r = _mc(["--disassemble"], src + "\n")
    out = []
    for line in r.stdout.decode().splitlines():
        m = _ENC.match(line)
        if m:
            out.append((m.group(1), _bytes(m.group(2))))
    return out


def _chunk(prefix: tuple, low: int, hi: int) -> int:
    val, bits, mask = prefix[:3]
    fixed = prefix[3] if len(prefix) > 3 else 0
    hi_mask = prefix[4] if len(prefix) > 4 else ~0
    w0 = (val << (32 - bits)) | (low & mask & ((1 << (32 - bits)) - 1)) | fixed
    return w0 | ((hi & hi_mask & 0xFFFFFFFF) << 32)


chunk = st.builds(_chunk, st.sampled_from(PREFIXES), st.integers(0, 2**32 - 1),
                  st.integers(0, 2**32 - 1))


@pytest.mark.usefixtures("llvm_mc")
@settings(phases=NO_SHRINK, max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(chunk, min_size=200, max_size=200))
def test_random_words_round_trip(chunks):
    decoded = decode(chunks)
    assert decoded, "llvm-mc decoded nothing from 200 chunks"
    canon = encode_each([t for t, _ in decoded])
    cases = [(t, b) for (t, b), e in zip(decoded, canon) if e == b]
    assert len(cases) >= len(decoded) // 4, "too few canonical encodings to test"
    printed = []
    for text, _ in cases:
        inst = parse_instruction(text)
        p = print_instruction(inst).strip()
        assert parse_instruction(p) == inst, (text, p)
        printed.append(p)
    ours = encode_each(printed)
    for (text, want), p, got in zip(cases, printed, ours):
        assert got == want, f"{text!r} printed as {p!r} encodes to {got!r}, want {want.hex()}"
    # every canonical decoded instruction is valid, so the type checker must accept it
    try:
        import asmevo.isa  # noqa: F401
    except ImportError:
        return
    from asmevo.errors import AsmSyntaxError
    from asmevo.frontend.typecheck import check_instruction
    false_errors = []
    for text, _ in cases:
        try:
            check_instruction(parse_instruction(text))
        except AsmSyntaxError as e:
            false_errors.append(e.message)
    assert not false_errors, false_errors[:5]
