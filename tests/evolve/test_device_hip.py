"""``asmevo evolve --device hip`` without a GPU: the hip-python binding is replaced by a
recording stand-in (tests/device/fake_hip.py) whose event timer reports a launch time that
depends on the loaded code object (its size: the -O0 build shrinks a lot under the passes),
so the loop's paired timing, the acceptance rule, the receipts and the report are exercised
end to end.  Nothing here runs on a GPU."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sqlite3
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
sys.path.insert(0, str(ROOT / "tests" / "device"))
from fake_hip import OK, FakeHip  # noqa: E402


class TimedFakeHip(FakeHip):
    """FakeHip whose modules are told apart: a launch of a function of module M takes
    ``len(image of M) / 1e6`` ms, times a deterministic jitter of relative size ``noise``."""

    def __init__(self, noise=0.002, **kw):
        super().__init__(**kw)
        self.noise = noise
        self.images = {}
        self.n = 0

    def hipModuleLoadData(self, image):
        self.image = bytes(image)
        h = ("module", len(self.images))
        self.images[h] = self.image
        return (self._rec("hipModuleLoadData"), h)

    def hipModuleGetFunction(self, mod, name):
        return (self._rec("hipModuleGetFunction"), (mod, name))

    def hipEventElapsedTime(self, a, b):
        mod = self.launches[-1]["f"][0]
        self.n += 1
        jitter = (-1.0, 0.5, 1.0, -0.5, 0.0, 0.25, -0.25)[self.n % 7] * self.noise
        return (self._rec("hipEventElapsedTime"), len(self.images[mod]) / 1e6 * (1 + jitter))


def _use_fake(monkeypatch, fake):
    import asmevo.device.hip as hip
    monkeypatch.setattr(hip, "load_binding", lambda: fake)


def _evolve(out, *extra, config=None):
    from asmevo.cli import main
    args = ["evolve", str(EX / "vadd_f32_O0.co"), "--harness", str(EX / "vadd_f32_O0.json"),
            "--out", str(out), "--jobs", "1", "--quiet", "--operators", "passes",
            "--trials", "2", "--final-trials", "4"]
    if config:
        args += ["--config", str(config)]
    return main(args + list(extra))


@pytest.fixture(scope="module")
def z3cfg(tmp_path_factory):
    p = tmp_path_factory.mktemp("cfg") / "evolve.toml"
    p.write_text("z3_timeout_ms = 300\ntiming_samples = 7\n")
    return p


@pytest.fixture(scope="module")
def hip_run(tmp_path_factory, z3cfg):
    mp = pytest.MonkeyPatch()
    fake = TimedFakeHip()
    _use_fake(mp, fake)
    out = tmp_path_factory.mktemp("run") / "hip"
    try:
        rc = _evolve(out, "--device", "hip", "--budget", "3", config=z3cfg)
    finally:
        mp.undo()
    return rc, out, fake


def _rows(out):
    db = sqlite3.connect(out / "lineage.sqlite")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM candidates ORDER BY step")]
    meta = {r["key"]: r["value"] for r in db.execute("SELECT key, value FROM meta")}
    db.close()
    for r in rows:
        r["verdict"] = json.loads(r["verdict"]) if r["verdict"] else None
    return rows, meta


def test_candidates_accepted_by_the_timing_rule(hip_run, capsys):
    rc, out, fake = hip_run
    assert rc == 0
    rows, meta = _rows(out)
    assert json.loads(meta["scorer"]) == {"name": "hip-events", "device": "hip:0", "samples": 7}
    assert meta["device"] == "hip:0"
    k0 = rows[0]
    assert k0["step"] == -1 and k0["verdict"]["measured"] is True
    assert k0["verdict"]["timing"]["k0"]["n"] == 7
    accepted = [r for r in rows if r["step"] >= 0 and r["accepted"]]
    assert accepted, [(r["step"], r["status"]) for r in rows]
    for r in accepted:
        t = r["verdict"]["timing"]
        assert r["verdict"]["measured"] is True and t["measured"] is True
        assert t["accepted"] is True and t["s_candidate"] >= t["required"]
        for side in ("k0", "parent", "candidate"):
            assert t[side]["n"] == 7 and len(t[side]["samples_us"]) == 7
            assert t[side]["cv"] < 0.03
        # cycles are the candidate's median microseconds at the machine clock
        assert r["cycles"] == pytest.approx(t["candidate"]["median_us"] * t["clock_mhz"])
    # timing ran through HIP events, differential testing through the device's launches
    assert fake.calls.count("hipEventElapsedTime") > 0
    assert fake.calls.count("hipDeviceSynchronize") > 0
    # a timed-but-refused candidate (e.g. patched in place, same size) is rejected-slower
    for r in rows:
        if r["status"] == "rejected-slower":
            assert r["verdict"]["timing"]["accepted"] is False
            assert "beyond the noise" in r["verdict"]["timing"]["message"]


def test_report_says_measured(hip_run):
    rc, out, _ = hip_run
    rep = json.loads((out / "report.json").read_text())
    label = "measured on hip:0 (HIP events; median of 7 paired samples)"
    assert rep["measured"] is True and rep["estimated"] is False
    assert rep["timing"]["label"] == label
    assert "speedup_estimated" not in rep and rep["speedup_measured"] == rep["speedup"]
    assert rep["speedup"] > 1.0 and not rep["winner"]["is_k0"]
    assert rep["final_check"]["device"]["verdict"]["status"] == "accepted"
    md = (out / "report.md").read_text()
    assert label in md and "Measured speed-up" in md
    assert "estimate" not in md.lower()
    # every cycles figure of events.jsonl says it was measured
    ev = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    timed = [e for e in ev if "cycles" in e or "speedup" in e or "k0_cycles" in e]
    assert timed and all(e["cycles_source"] == "device" and e["timing"] == label
                         for e in timed), timed


def test_noisy_device_refuses_every_faster_candidate(monkeypatch, tmp_path, z3cfg):
    fake = TimedFakeHip(noise=0.08)      # cv about 0.05 > 0.03
    _use_fake(monkeypatch, fake)
    out = tmp_path / "noisy"
    assert _evolve(out, "--device", "hip", "--budget", "2", config=z3cfg) == 0
    rows, _ = _rows(out)
    timed = [r for r in rows if r["step"] >= 0 and (r["verdict"] or {}).get("timing")]
    assert timed, [(r["step"], r["status"]) for r in rows]
    for r in timed:
        assert r["accepted"] == 0 and r["status"] == "rejected-slower"
        assert "too noisy" in r["verdict"]["timing"]["reason"]
    rep = json.loads((out / "report.json").read_text())
    assert rep["winner"]["is_k0"] and rep["speedup"] == 1.0


def test_resume_with_another_device_is_refused(hip_run, capsys, z3cfg):
    _, out, _ = hip_run
    capsys.readouterr()
    rc = _evolve(out, "--device", "emu", "--budget", "4", "--resume", config=z3cfg)
    err = capsys.readouterr().err
    assert rc == 2 and "measured on hip:0" in err and "--device emu" in err
    assert "Traceback" not in err


def test_device_hip_without_gpu_exits_2(tmp_path, capsys):
    if importlib.util.find_spec("rocm") is not None or importlib.util.find_spec("hip") is not None:
        try:
            from asmevo.device import get_device
            get_device("hip").close()
            pytest.skip("a HIP runtime and device are present on this machine")
        except Exception:
            pass
    out = tmp_path / "nogpu"
    from asmevo.cli import main
    rc = main(["evolve", str(EX / "vadd_f32_O0.co"), "--harness", str(EX / "vadd_f32_O0.json"),
               "--out", str(out), "--device", "hip", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "asmevo[hip]" in err and "Traceback" not in err
    assert not out.exists()          # refused before any work


def test_config_device_and_samples(tmp_path):
    from asmevo.errors import AsmevoError
    from asmevo.evolve.config import load_config
    p = tmp_path / "c.toml"
    p.write_text('device = "HIP"\ntiming_samples = 12\n')
    cfg = load_config(str(p), {"kernel_file": "k.co"})
    assert cfg.device == "hip:0" and cfg.timing_samples == 12
    assert load_config(None, {"device": "hip:3"}).device == "hip:3"
    assert load_config(None, {}).device == "emu"
    for bad in ({"device": "cuda"}, {"device": "hip:x"}, {"timing_samples": 2},
                {"timing_samples": True}):
        with pytest.raises(AsmevoError):
            load_config(None, bad)


def test_paired_interleaved_session_with_a_parent(monkeypatch, tmp_path):
    """GateContext.measure times K0, a (cached) parent and the candidate in rounds
    K0, parent, candidate, ... after 3 warm-up rounds, and applies the rule."""
    from asmevo.evolve.candidate import kernel_blocks
    from asmevo.evolve.gate import GateContext
    from asmevo.frontend.loader import load
    fake = TimedFakeHip()
    _use_fake(monkeypatch, fake)
    spec = {"k0": str(EX / "vadd_f32_O0.co"), "harness": str(EX / "vadd_f32_O0.json"),
            "kernel": "vadd_f32", "device": "hip", "timing_samples": 5,
            "device_lock": str(tmp_path / "lock")}
    ctx = GateContext(spec)
    try:
        blocks = kernel_blocks(ctx.k0.kernel("vadd_f32"))
        cand = load(str(EX / "vadd_f32.co"))            # the -O3 build: a smaller image
        image = (EX / "vadd_f32.co").read_bytes()
        task = {"hash": "c", "parent": "p", "k0_hash": "k", "parent_blocks": blocks}
        r1 = ctx.measure(task, cand, image)
        launches_first = len(fake.launches)
        r2 = ctx.measure(dict(task, hash="c2"), cand, image)
    finally:
        ctx.close()
    assert launches_first == 3 * (3 + 5)
    mods = [l["f"][0] for l in fake.launches[:launches_first]]
    assert mods[:3] == mods[3:6] and len(set(mods[:3])) == 3    # K0, parent, candidate, ...
    assert all(mods[i] == mods[i % 3] for i in range(len(mods)))
    # the parent (and K0) were loaded once, the candidate once per session
    assert fake.calls.count("hipModuleLoadData") == 4
    for r in (r1, r2):
        t = r["timing"]
        assert r["measured"] is True and t["accepted"] is True
        assert {t[k]["n"] for k in ("k0", "parent", "candidate")} == {5}
        assert t["candidate"]["median_us"] < t["parent"]["median_us"]
