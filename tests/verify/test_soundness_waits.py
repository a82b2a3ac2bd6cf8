"""Soundness: a removed ``s_waitcnt`` before ``s_barrier`` is never accepted, even when the
block structure differs (tester repro r6, transpose_lds)."""

from asmevo.frontend.asm_parser import parse_asm
from asmevo.frontend.disasm import disassemble
from asmevo.frontend.loader import fill_text_abi
from asmevo.ir.printer import print_module
from asmevo.verify import Status
from asmevo.verify.static import check_static


def _text_module(text: str):
    m = parse_asm(text, "t.s")
    fill_text_abi(m)
    return m


def _variants(corpus_dir):
    lines = print_module(disassemble(str(corpus_dir / "transpose_lds.co"))).splitlines()
    b = next(i for i, l in enumerate(lines) if l.strip() == "s_barrier")
    assert lines[b - 1].strip() == "s_waitcnt lgkmcnt(0)"
    # a label splits the block: the windows cannot be aligned any more
    kept = lines[:b] + [".Lextra:"] + lines[b:]
    removed = lines[:b - 1] + [".Lextra:"] + lines[b:]
    return "\n".join(lines) + "\n", "\n".join(kept) + "\n", "\n".join(removed) + "\n"


def test_removed_wait_before_barrier_with_other_blocks_is_not_accepted(corpus_dir):
    orig, kept, removed = (_text_module(t) for t in _variants(corpus_dir))
    v = check_static(orig, removed)
    # Without a window alignment the removal was only "unknown"; the memory-order-point check
    # (issue 14) aligns the instructions and sees the ds_write in flight at the barrier.
    assert v.status is Status.REJECTED_WAITCNT, v.text()
    assert "s_barrier" in v.message and "ds_write" in v.message
    ok = check_static(orig, kept)
    assert ok.accepted, ok.text()


def test_removed_wait_before_barrier_end_to_end(corpus_dir, tmp_path):
    from asmevo.verify import verify
    from asmevo.verify.diff import load_harness
    _, _, removed = _variants(corpus_dir)
    p = tmp_path / "r6.s"
    p.write_text(removed)
    h = load_harness(str(corpus_dir / "manifest.json"), "transpose_lds")
    v = verify(str(corpus_dir / "transpose_lds.co"), str(p), harness=h, level="all", trials=2)
    assert v.outcome == "rejected", v.text()  # assembled: the label vanishes, blocks align
    assert v.status is Status.REJECTED_WAITCNT
