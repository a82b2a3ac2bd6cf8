"""An agent's MCP session and `asmevo evolve` share one lineage store: `evolve --resume` on
the directory the session wrote continues from the agent's best candidate."""

from __future__ import annotations

import json
import pathlib
import shutil
import sqlite3

import pytest

from asmevo.mcp.session import Session

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


@pytest.fixture
def padded_kernel(tmp_path):
    """vadd_f32 with a needless `s_nop 7` before its v_add_f32 (assembled with llvm-mc)."""
    from asmevo.backend.assemble import assemble
    text = (EX / "vadd_f32.s").read_text().replace("\tv_add_f32_e32", "\ts_nop 7\n\tv_add_f32_e32", 1)
    co = tmp_path / "vadd_pad.co"
    assemble(text, str(co))
    h = json.loads((EX / "vadd_f32.json").read_text())
    h["code_object"] = co.name
    shutil.copy(EX / "ref.py", tmp_path / "ref.py")
    hp = tmp_path / "vadd_pad.json"
    hp.write_text(json.dumps(h))
    return co, hp


def _chain(db, h):
    out = []
    while h:
        out.append(h)
        r = db.execute("SELECT parent FROM candidates WHERE hash=?", (h,)).fetchone()
        h = r[0] if r else None
    return out


def test_evolve_resume_continues_from_agent_best(tmp_path, padded_kernel):
    co, hp = padded_kernel
    s = Session(str(tmp_path / "runs"))
    info = s.load_kernel(str(co), str(hp))
    rows = s.listing(info["kernel_id"])["rows"]
    nop = next(r["index"] for r in rows if r["text"] == "s_nop 7")
    got = s.propose_edit(info["kernel_id"], edit={"edits": [{"from": nop, "to": nop + 1,
                                                             "expect": ["s_nop 7"], "asm": []}]},
                         hypothesis="the nop guards no hazard")
    assert got["accepted"] is True, got
    assert got["speedup_vs_k0"] > 1.0
    agent_hash = got["hash"]
    s.close()
    run_dir = info["lineage_dir"]

    from asmevo.cli import main
    rc = main(["evolve", str(co), "--harness", str(hp), "--out", run_dir, "--resume",
               "--budget", "3", "--seed", "0", "--quiet"])
    assert rc == 0
    rep = json.loads(pathlib.Path(run_dir, "report.json").read_text())
    winner = rep["winner"]["hash"]
    db = sqlite3.connect(str(pathlib.Path(run_dir, "lineage.sqlite")))
    # the winner is the agent's candidate or one of its descendants, never K0's other line
    assert agent_hash in _chain(db, winner)
    # the agent's step is in the store once, with its operator and hypothesis
    (op, hyp), = db.execute("SELECT operator, hypothesis FROM candidates WHERE hash=?",
                            (agent_hash,)).fetchall()
    assert op == "agent" and "hazard" in hyp
