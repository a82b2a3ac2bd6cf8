"""Adversarial round 3 against the loop's lineage and the MCP session built on it."""

from __future__ import annotations

import pathlib

import pytest

from asmevo.errors import AsmevoError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_mcp_export_refuses_a_rejected_candidate(tmp_path):
    """``Session.export`` wrote any stored candidate as a code object, a rejected one too
    (``v_add_f32`` -> ``v_sub_f32``, ``rejected-counterexample``), and its answer carried no
    status: a wrong kernel left the session as a deliverable without its receipt.  Now only
    a candidate whose receipt passed (accepted, or verified but slower) is exported, and
    the answer names the status."""
    from asmevo.mcp.session import Session
    s = Session(run_dir=str(tmp_path / "runs"))
    kid = s.load_kernel(str(ROOT / "examples" / "vadd_f32.co"),
                        harness=str(ROOT / "examples" / "vadd_f32.json"))["kernel_id"]
    rows = s.listing(kid)["rows"]
    i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
    p = s.propose_edit(kid, edit={"edits": [{"from": i, "to": i + 1,
                                             "asm": ["v_sub_f32_e32 v2, v6, v7"]}]},
                       hypothesis="subtract")
    assert p["status"] == "rejected-counterexample"
    out = tmp_path / "wrong.co"
    with pytest.raises(AsmevoError, match="did not pass the verifier"):
        s.export(p["candidate_id"], str(out))
    assert not out.exists()
    best = s.best(kid)["best"][0]
    ok = s.export(best["candidate_id"], str(tmp_path / "good.co"))
    assert ok["status"] == "accepted" and (tmp_path / "good.co").is_file()
