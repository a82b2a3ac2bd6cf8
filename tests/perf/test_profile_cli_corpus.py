"""Slow tier: ``asmevo profile`` on every shared corpus kernel with its harness (the
trace-driven model when installed) and on every AITer code object (static), with no
traceback, exit 0 and JSON that validates against asmevo/perf/profile.schema.json."""

import json

import pytest

from asmevo.cli import main
from test_profile_cli import validate

pytestmark = [pytest.mark.slow, pytest.mark.corpus]


def _entries(corpus_dir):
    out = []
    for man in (corpus_dir / "manifest.json", corpus_dir / "triton" / "manifest.json"):
        for e in json.loads(man.read_text()):
            out.append((man, e))
    return out


def test_every_corpus_kernel_with_its_harness(corpus_dir, capsys):
    failures = []
    for man, e in _entries(corpus_dir):
        rc = main(["profile", str(man.parent / e["code_object"]), "--harness", str(man),
                   "--entry", e["name"], "--json", "--top", "5"])
        cap = capsys.readouterr()
        if rc != 0 or "Traceback" in cap.err or "internal error" in cap.err:
            failures.append((e["name"], rc, cap.err[-500:]))
            continue
        doc = json.loads(cap.out)
        validate(doc)
        kp = doc["kernels"][e["kernel"]]
        assert kp["cycles"] > 0 and doc["estimated"] is True, e["name"]
    assert not failures, failures


def test_every_aiter_object_static(corpus_dir, capsys):
    files = sorted((corpus_dir / "aiter").rglob("*.co"))
    assert files
    failures = []
    for f in files:
        rc = main(["profile", str(f), "--json", "--top", "5"])
        cap = capsys.readouterr()
        if rc != 0 or "Traceback" in cap.err or "internal error" in cap.err:
            failures.append((f.name, rc, cap.err[-500:]))
            continue
        doc = json.loads(cap.out)
        validate(doc)
        assert doc["source"] == "model-static"
        for kp in doc["kernels"].values():
            assert kp["cycles"] > 0, f.name
    assert not failures, failures


def test_text_output_on_aiter_and_annotate(corpus_dir, capsys):
    f = sorted((corpus_dir / "aiter").rglob("topksoftmax*.co"))[0]
    assert main(["profile", str(f), "--annotate", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "estimate of model asmevo-static" in out and "listing (estimated share" in out
