"""An agent's MCP session gates its edits like the loop: a child of a candidate that was
proved equivalent to K0 is proved against that parent (a chain of proofs, evidence
``chain``), testing still against K0; a child of K0 is proved against K0 directly."""

from __future__ import annotations

import pathlib

from asmevo.mcp.session import Session

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_a_session_edit_on_a_proved_candidate_is_proved_through_it(tmp_path):
    s = Session(str(tmp_path / "run"))
    try:
        kid = s.load_kernel(str(EX / "vadd_f32.co"), str(EX / "vadd_f32.json"))["kernel_id"]
        rows = [r["text"] for r in s.listing(kid)["rows"]]
        assert rows[11:13] == ["v_lshl_add_u64 v[4:5], s[4:5], 0, v[0:1]",
                               "v_lshl_add_u64 v[2:3], s[6:7], 0, v[0:1]"]
        assert rows[6:8] == ["s_load_dwordx4 s[4:7], s[0:1], 0x0",
                             "s_load_dwordx2 s[2:3], s[0:1], 0x10"]
        # two independent address computations swapped: proved against K0 directly
        a = s.propose_edit(kid, hypothesis="swap", edit={"edits": [{"from": 11, "to": 13, "asm": [
            rows[12], rows[11]]}]})
        assert a["accepted"] and a["status"] == "accepted", a
        assert "chain" not in [e["kind"] for e in a["evidence"]]
        # its child: two independent scalar loads swapped, proved through the parent
        b = s.propose_edit(kid, hypothesis="swap loads", parent=a["candidate_id"],
                           edit={"edits": [{"from": 6, "to": 8, "asm": [rows[7], rows[6]]}]})
        assert b["accepted"] and b["status"] == "accepted", b
        chain = [e for e in b["evidence"] if e["kind"] == "chain"]
        assert chain and chain[0]["data"]["parent"] == a["hash"]
        assert "trials" in [e["kind"] for e in b["evidence"]]
        # a wrong child of the proved candidate is still rejected
        c = s.propose_edit(kid, hypothesis="subtract", parent=a["candidate_id"],
                           edit={"edits": [{"from": 17, "to": 18,
                                            "asm": ["v_sub_f32_e32 v2, v6, v7"]}]})
        assert not c["accepted"] and c["outcome"] == "rejected", c
    finally:
        s.close()
