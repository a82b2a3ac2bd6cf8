"""report.md says each accepted edit in words from its structured record (operator, what
moved or changed, which window): a ``mutate`` edit's hypothesis was printed as raw Python
dict text, a pipeline's as one generic sentence."""

from __future__ import annotations

import json
import re

from evolve_helpers import EXAMPLES, evolve_cli

from asmevo.evolve.describe import edit_sentence, move_sentence, pipeline_passes


def test_mutate_edits_of_a_real_run_read_as_sentences(tmp_path):
    run = tmp_path / "run"
    p = evolve_cli(EXAMPLES / "vadd_f32_O0.co", "--harness", EXAMPLES / "vadd_f32_O0.json",
                   "--out", run, "--budget", 4, "--seed", 0, "--operators", "mutate", "--quiet")
    assert p.returncode == 0, p.stderr
    rep = json.loads((run / "report.json").read_text())
    md = (run / "report.md").read_text()
    edits = rep["edits"]
    assert edits and all(e["operator"] == "mutate" for e in edits), edits
    assert "{'" not in md and "': " not in md, md          # no Python dict text
    changes = re.findall(r"^   Change: (.*)$", md, re.M)
    assert len(changes) == len(edits), md
    for e, line in zip(edits, changes):
        desc = e["edit"]["moves"][0]
        win = ", ".join(f"{w['block']}[{w['start']}:{w['end']}]" for w in e["windows"])
        assert line.startswith(f"mutate in window{'s' if len(e['windows']) > 1 else ''} {win}, "
                               f"move {desc['move']}: "), line
        # the instructions the move touched, as code
        texts = [desc[k] for k in ("inst", "a", "b", "old", "new") if isinstance(desc.get(k), str)
                 and desc["move"] != "rename"]
        assert all(f"`{t}`" in line for t in texts), (line, desc)
        assert e["summary"] == line
        assert e["hypothesis"] == move_sentence(desc)      # what the lineage records too
    assert "Hypothesis:" not in md                           # (generated: the Change line)


def test_pipeline_sentence_lists_the_passes_and_what_they_do():
    s = edit_sentence("passes", {"kind": "pipeline",
                                 "pipeline": "kernel(dce,sched<window=8;max-stall=2>)"},
                      [{"block": "bb0", "start": 4, "end": 30}, {"block": "bb2", "start": 5,
                                                                  "end": 5}])
    assert s == ("passes in windows bb0[4:30], bb2[5:5]: ran `dce` (remove instructions with "
                 "dead results and no side effects), then `sched<window=8;max-stall=2>` "
                 "(list-schedule each basic block: loads as early as their operands allow, "
                 "`s_waitcnt` as late as its dependants allow)."), s
    s = edit_sentence("passes", {"kind": "pipeline", "pipeline": "kernel(loop-pipeline),default"},
                      [])
    assert s.startswith("passes: ran `loop-pipeline` (depth-2 software pipelining of a uniform "
                        "self-loop), then the default pipeline (scratch-promote, "), s
    assert pipeline_passes('repeat<2>(kernel(dce)),window-edit<file="a,b(c).json">') == \
        ["dce", 'window-edit<file="a,b(c).json">']


def test_unknown_records_are_still_words():
    s = edit_sentence("mutate", {"kind": "moves", "moves": [{"move": "zap", "index": 3,
                                                             "reg": "v7"}]}, [])
    assert s == "mutate, move zap: reg v7 (instruction 3 of the kernel)."
    assert "{" not in edit_sentence("crossover", {"kind": "crossover", "other": "ab" * 20,
                                                   "blocks": ["bb1", "bb3"]}, [])
