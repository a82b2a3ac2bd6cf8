"""Unknown keys in a harness / manifest entry or one of its arguments are bad input: a
misspelt ``rtoll`` used to be ignored, so the comparison silently became bit-exact.  The
message names the key, the entry (and argument) and the closest valid key, with the key's
line when it occurs once in the file; exit status 2, no traceback.  Every key the shared
corpus's manifests use is still accepted (its README's schema, taken as is)."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from asmevo.cli import main as cli_main
from asmevo.emu import harness as H
from asmevo.errors import AsmevoError

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
BASE = json.loads((EX / "vadd_f32.json").read_text())


def _rename(e, old, new, arg=None):
    t = e if arg is None else e["args"][arg]
    t[new] = t.pop(old)


# (id, mutation, words the one-line message must hold)
CASES = [
    ("rtoll", lambda e: _rename(e, "rtol", "rtoll"),
     "entry 'vadd_f32': unknown key 'rtoll'; closest valid key: 'rtol'; valid keys: name,"),
    ("gird", lambda e: _rename(e, "grid", "gird"),
     "entry 'vadd_f32': unknown key 'gird'; closest valid key: 'grid'"),
    ("refrence", lambda e: _rename(e, "reference", "refrence"),
     "unknown key 'refrence'; closest valid key: 'reference'"),
    ("arg-rolle", lambda e: _rename(e, "role", "rolle", arg=2),
     "entry 'vadd_f32': argument 'c': unknown key 'rolle'; closest valid key: 'role'; valid "
     "keys: name, kind, dtype, count, init, value, role"),
    ("arg-knid", lambda e: _rename(e, "kind", "knid", arg=0),
     "argument 'a': unknown key 'knid'; closest valid key: 'kind'"),
    ("unrelated", lambda e: e.update(comment="x"), "unknown key 'comment'; valid keys:"),
    ("init-on-scalar", lambda e: e["args"][3].update(init="zeros"),
     "scalar n: key 'init' is for buffers only; a scalar takes value"),
    ("value-on-buffer", lambda e: e["args"][0].update(value=1),
     "buffer a: key 'value' is for scalars only; a buffer takes count and init"),
]


@pytest.mark.parametrize("mut,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_unknown_key_is_bad_input(tmp_path, capsys, mut, words):
    (tmp_path / "ref.py").write_text((EX / "ref.py").read_text())
    e = copy.deepcopy(BASE)
    mut(e)
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e, indent=1))
    rc = cli_main(["run", str(EX / "vadd_f32.co"), "--harness", str(h), "--check"])
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert err.startswith(f"asmevo run: {h}") and words in err, err
    assert err.count("\n") == 1 and "Traceback" not in out + err, err


def test_the_key_is_located_when_it_occurs_once(tmp_path):
    e = copy.deepcopy(BASE)
    _rename(e, "rtol", "rtoll")
    text = json.dumps(e, indent=1)
    h = tmp_path / "h.json"
    h.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if '"rtoll"' in ln)
    with pytest.raises(AsmevoError) as ei:
        H.load_harness(str(h))
    assert (ei.value.line, ei.value.column) == (line, 2)


def test_a_manifest_names_the_entry(tmp_path):
    good, bad = copy.deepcopy(BASE), copy.deepcopy(BASE)
    bad["name"] = "other"
    bad["args"][1]["dtpye"] = bad["args"][1].pop("dtype")
    h = tmp_path / "m.json"
    h.write_text(json.dumps([good, bad]))
    H.load_harness(str(h), "vadd_f32")  # only the entry picked is checked
    with pytest.raises(AsmevoError, match="entry 'other': argument 'b': unknown key 'dtpye'; "
                                          "closest valid key: 'dtype'"):
        H.load_harness(str(h), "other")


def test_the_examples_still_load():
    for f in EX.glob("*.json"):
        doc = json.loads(f.read_text())
        if isinstance(doc, dict) and "args" in doc:
            H.load_harness(str(f))


@pytest.mark.corpus
def test_every_corpus_manifest_entry_loads(corpus_dir):
    """The corpus README's manifest schema is accepted as is: every entry of every
    manifest in the shared corpus loads (so every key any of them uses is known)."""
    manifests = sorted(corpus_dir.rglob("manifest.json"))
    assert len(manifests) >= 2, manifests        # manifest.json and triton/manifest.json
    n = 0
    for m in manifests:
        for e in json.loads(m.read_text()):
            h = H.load_harness(str(m), e["name"])
            assert set(e) <= set(H.ENTRY_KEYS), (m, e["name"])
            assert all(set(a) <= set(H.ARG_KEYS) for a in e["args"]), (m, e["name"])
            assert h["name"] == e["name"]
            n += 1
    assert n >= 43
