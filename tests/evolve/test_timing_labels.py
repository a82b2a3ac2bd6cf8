"""Every cycles figure in events.jsonl says where it comes from (``cycles_source``: model or
device; ``timing``: score.timing_label), and the progress bar says "estimated" / "measured"."""

import io
import json

import pytest

from asmevo.evolve.progress import TIMED_FIELDS, EventLog, Progress, timing_fields
from asmevo.evolve.score import timing_label

MODEL = {"name": "asmevo-cu", "version": "1"}
DEVICE = {"name": "hip-events", "device": "hip:0", "samples": 7}


def _events(run_dir):
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]


def test_every_cycles_figure_of_a_run_is_labelled(repeating_agent_run):
    run, _ = repeating_agent_run
    ev = _events(run)
    timed = [e for e in ev if any(k in e for k in TIMED_FIELDS)]
    kinds = {e["event"] for e in timed}
    assert {"start", "candidate", "best"} <= kinds, kinds
    for e in timed:
        assert e["cycles_source"] == "model", e
        assert e["timing"] == "estimated by the timing model asmevo-cu 1", e
    start = next(e for e in ev if e["event"] == "start")
    assert start["k0_cycles"] > 0
    # events without a figure carry no label
    assert all("cycles_source" not in e for e in ev if e["event"] in ("stop", "final", "step"))


@pytest.mark.parametrize("scorer,source,word", [(MODEL, "model", "estimated"),
                                                (DEVICE, "device", "measured")])
def test_event_log_labels(tmp_path, scorer, source, word):
    assert timing_fields(scorer) == {"cycles_source": source, "timing": timing_label(scorer)}
    assert timing_label(scorer).startswith(word)
    log = EventLog(str(tmp_path), timing_fields(scorer))
    log.emit("candidate", hash="ab", cycles=1200.0, status="accepted")
    log.emit("best", hash="ab", cycles=1200.0, speedup=1.1)
    log.emit("stop", reason="budget", evaluated=3)
    log.close()
    c, b, s = _events(tmp_path)
    for e in (c, b):
        assert e["cycles_source"] == source and e["timing"] == timing_label(scorer)
    assert "timing" not in s


@pytest.mark.parametrize("measured,word", [(False, "estimated"), (True, "measured")])
def test_progress_bar_says_estimated_or_measured(monkeypatch, measured, word):
    import sys
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    p = Progress(10, quiet=False, measured=measured)
    p.update(3, 1, 1.0421, 42.0)
    p.close()
    out = buf.getvalue()
    assert f"best 1.042x ({word})" in out, out


def test_events_documented():
    import pathlib
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "evolve.md").read_text()
    sec = doc[doc.index("### `events.jsonl`"):doc.index("### Store schema")]
    for word in ("`cycles_source`", '`"model"`', '`"device"`', "`timing`", "| `candidate` |",
                 "| `step` |", "| `best` |", "| `start` / `resume` |", "`k0_cycles`"):
        assert word in sec, word
