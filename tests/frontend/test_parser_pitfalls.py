"""Cases from ../shared/research/PITFALLS.md (parser/encoder rows), llvm-mc as oracle."""

from __future__ import annotations

import pytest

from asmevo.errors import AsmSyntaxError
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.typecheck import check_instruction
from asmevo.ir import Reg, print_instruction

from test_parser_random import decode, encode_each


@pytest.mark.parametrize("pitfall, words, text", [
    ("BR-01", "0a 00 cd d3 02 09 1a 0c", "v_mfma_f32_16x16x16_f16 v[10:13], a[2:3], v[4:5], v[6:9]"),
    ("BR-02", "fc 00 e6 d3 02 09 0e 04", "v_smfmac_f32_16x16x32_bf16 v[252:255], v[2:3], v[4:7], v3"),
    ("BR-03", "0a 40 b2 d3 02 e1 01 18", "v_pk_add_f32 v[10:11], v[2:3], 0.5"),
    ("BR-06", "fa 30 14 7e 02 51 01 ff",
     "v_ceil_f64_dpp v[10:11], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf"),
])
def test_pitfall_encodings(pitfall, words, text, llvm_mc):
    want = bytes(int(b, 16) for b in words.split())
    chunk = int.from_bytes(want, "little")
    (decoded, got_bytes), = decode([chunk])
    assert got_bytes == want
    inst = parse_instruction(decoded)
    assert inst == parse_instruction(text), (pitfall, decoded)
    assert encode_each([print_instruction(inst).strip()]) == [want]
    if pitfall == "BR-01":
        assert inst.operands[0] == Reg("v", 10, 4) and inst.operands[1] == Reg("a", 2, 2)
    pytest.importorskip("asmevo.isa")
    check_instruction(inst)


def test_br09_cache_policy_bits(llvm_mc):
    inst = parse_instruction("global_store_dword v[0:1], v2, off sc0 sc1 nt")
    assert inst.modifiers == [("sc0", True), ("sc1", True), ("nt", True)]
    assert encode_each([print_instruction(inst).strip()])[0] is not None


@pytest.mark.parametrize("text", [
    "v_mac_f32 v5, v1, v2",
    "v_mac_f32_dpp v5, v1, v2 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
])
def test_br05_v_mac_f32_absent_on_gfx942(text, llvm_mc):
    """Rejected as an unsupported mnemonic, not as an operand error (llvm-mc rejects too)."""
    pytest.importorskip("asmevo.isa")
    assert encode_each([text]) == [None]
    with pytest.raises(AsmSyntaxError) as ei:
        check_instruction(parse_instruction(text))
    assert "unknown mnemonic" in ei.value.message and ei.value.column == 2
