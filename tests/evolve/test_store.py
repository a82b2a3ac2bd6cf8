"""The lineage store: content-hash keys, no candidate twice, label-independent hashes."""

from asmevo.evolve.candidate import canonical_lines, content_hash
from asmevo.evolve.store import open_store
from asmevo.ir.module import BasicBlock, Kernel
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.ir.operands import Label


def _kernel(label):
    br = parse_instruction("s_cbranch_execz .LBB0_2")
    br = br.evolve(operands=[Label(label, 0)])
    return Kernel("k", [BasicBlock(None, [parse_instruction("s_nop 0"), br]),
                        BasicBlock(label, [parse_instruction("s_endpgm")])])


def test_hash_ignores_label_names():
    a, b = _kernel(".LBB0_2"), _kernel(".Lasmevo_1c")
    assert content_hash(a) == content_hash(b)
    assert canonical_lines(a)[2].endswith("bb1")


def test_store_never_holds_a_candidate_twice(tmp_path):
    st = open_store(str(tmp_path))
    rec = {"hash": "h1", "parent": None, "step": 0, "operator": "mutate", "params": {"x": 1},
           "accepted": 1, "cycles": 10.0}
    assert st.add_candidate(rec)
    assert not st.add_candidate(dict(rec, step=5, cycles=1.0))
    assert st.count() == 1
    assert st.candidate("h1")["cycles"] == 10.0
    assert st.candidate("h1")["params"] == {"x": 1}
    st.close()
    st = open_store(str(tmp_path))       # reopened (as --resume does)
    assert st.has("h1") and not st.add_candidate(rec)
    assert st.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_tested_never_covers_what_testing_cannot_see():
    from asmevo.evolve.gate import passes_gate
    from asmevo.verify.verdict import Evidence, Status, Verdict
    ok = Verdict(Status.UNKNOWN_UNPROVED, "not proved: 1 window(s) undecided by z3",
                 [Evidence("z3", "unknown", "solver timeout in block #1")])
    cache = Verdict(Status.UNKNOWN_UNPROVED, "not proved",
                    [Evidence("z3", "unsupported", "cache-policy bits differ (caches are not modelled)")])
    assert passes_gate(ok, "tested") and not passes_gate(ok, "proved")
    assert not passes_gate(cache, "tested")
    assert not passes_gate(Verdict(Status.UNKNOWN_UNSUPPORTED, "x"), "tested")
    assert passes_gate(Verdict(Status.ACCEPTED, "x"), "proved")
