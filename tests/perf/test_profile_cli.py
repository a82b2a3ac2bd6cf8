"""``asmevo profile``: text and JSON outputs (schema), estimates labelled, bad input exit 2."""

import json
import pathlib

import pytest

from asmevo.cli import main

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "asmevo" / "perf" / "profile.schema.json"

K = """\t.text
\t.globl\tk
\t.type\tk,@function
k:
\ts_load_dwordx2 s[4:5], s[0:1], 0x0
\ts_waitcnt lgkmcnt(0)
\tglobal_load_dword v1, v[2:3], off
\ts_waitcnt vmcnt(0)
\tv_add_f32_e32 v4, v1, v1
\tglobal_store_dword v[2:3], v4, off
\ts_endpgm
.Le:
\t.size\tk, .Le-k
"""


def validate(doc: dict) -> None:
    """jsonschema when installed; otherwise the schema's required keys and types by hand."""
    schema = json.loads(SCHEMA.read_text())
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        jsonschema.validate(doc, schema)
        return
    for key in schema["required"]:
        assert key in doc, key
    kdef = schema["$defs"]["kernel"]
    for kp in doc["kernels"].values():
        for key in kdef["required"]:
            assert key in kp, key
        assert kp["bottleneck"] in schema["$defs"]["bottleneck"]["enum"]
        for r in kp["instructions"]:
            for key in schema["$defs"]["instruction"]["required"]:
                assert key in r, key
        for w in kp["windows"]:
            for key in schema["$defs"]["window"]["required"]:
                assert key in w, key


@pytest.fixture
def ks(tmp_path):
    p = tmp_path / "k.s"
    p.write_text(K)
    return str(p)


def test_text_output_says_estimate(ks, capsys):
    assert main(["profile", ks, "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "estimate of model asmevo-static" in out
    assert "every figure below is an estimate" in out
    assert "cycles (estimated):" in out and " us at 2100 MHz" in out
    assert "occupancy: 8 waves/SIMD" in out and "bottleneck (estimated):" in out
    assert "hot windows (estimated share" in out
    assert "s_waitcnt vmcnt(0)" not in out  # no listing without --annotate


def test_annotate_lists_every_instruction(ks, capsys):
    assert main(["profile", ks, "--annotate"]) == 0
    out = capsys.readouterr().out
    listing = [ln for ln in out.splitlines() if (" | " in ln or "|" in ln[:12])
               and "share%" not in ln]
    assert len(listing) == 7
    wait = next(ln for ln in listing if "s_waitcnt vmcnt(0)" in ln)
    assert "vmcnt" in wait.split(":")[0]


def test_annotate_has_a_column_header_with_units(ks, capsys):
    """Newcomer finding: the listing's columns were unnamed.  A header row names them above
    the columns, and a legend gives each one's meaning and unit and says the times are
    the model's estimates."""
    assert main(["profile", ks, "--annotate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.startswith("  listing ("))
    head = next(ln for ln in lines[i:] if "|" in ln)
    row = lines[lines.index(head) + 1]
    assert head.split() == ["share%", "|", "hits", "clk", "stall", "cause", "pc", ":",
                            "instruction"], head
    assert head.index("|") == row.index("|"), (head, row)
    assert head.index(": instruction") == row.index(": "), (head, row)
    legend = " ".join(lines[i + 1:lines.index(head)])
    for words in ("share%: its part of the kernel's clk (percent)", "hits: expected executions "
                  "per wave (count)", "clk: clock cycles summed over its hits",
                  "stall: the part of clk spent waiting (clock cycles)",
                  "pc: byte offset from the kernel's first instruction",
                  "are estimates of the timing model asmevo-static"):
        assert words in legend, legend


def test_json_validates(ks, capsys):
    assert main(["profile", ks, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate(doc)
    assert doc["estimated"] is True and doc["model"]["name"] == "asmevo-static"
    kp = doc["kernels"]["k"]
    assert [r["index"] for r in kp["instructions"]] == list(range(7))
    assert kp["windows"][0]["share"] > 0


def test_machine_file(ks, tmp_path, capsys):
    f = tmp_path / "m.toml"
    f.write_text('name = "MI325X-ish"\nclock_mhz = 2400\n')
    assert main(["profile", ks, "--machine", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["machine"] == "MI325X-ish" and doc["clock_mhz"] == 2400
    kp = doc["kernels"]["k"]
    assert kp["microseconds"] == pytest.approx(kp["cycles"] / 2400)


@pytest.mark.parametrize("extra, msg", [
    (["--top", "-1"], "--top"),
    (["--kernel", "nope"], "no kernel 'nope'"),
    (["--entry", "x"], "--entry needs --harness"),
    (["--harness", "/nonexistent.json"], "nonexistent"),
])
def test_bad_input_exit_2(ks, capsys, extra, msg):
    assert main(["profile", ks, *extra]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_bad_files_exit_2(tmp_path, ks, capsys):
    assert main(["profile", str(tmp_path / "missing.co")]) == 2
    bad = tmp_path / "m.toml"
    bad.write_text("latency = [")
    assert main(["profile", ks, "--machine", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "m.toml" in err and "Traceback" not in err


@pytest.mark.corpus
def test_harness_and_static_flag(corpus_dir, capsys):
    co = str(corpus_dir / "vadd_f32.co")
    man = str(corpus_dir / "manifest.json")
    assert main(["profile", co, "--harness", man, "--entry", "vadd_f32", "--json"]) == 0
    dyn = json.loads(capsys.readouterr().out)
    validate(dyn)
    assert dyn["estimated"] is True
    assert main(["profile", co, "--harness", man, "--entry", "vadd_f32", "--static", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    validate(st)
    assert st["source"] == "model-static" and "launch" in st["kernels"]["vadd_f32"]["extra"]["basis"]


def test_att_trace_is_labelled_measured(ks, tmp_path, capsys):
    from asmevo.frontend.loader import load
    from asmevo.perf.windows import kernel_pcs
    k = load(ks).kernels[0]
    rows = ["CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source"]
    for i, (inst, pc) in enumerate(zip(k.instructions(), kernel_pcs(k))):
        lat, stall = (5000, 4800) if inst.text() == "s_waitcnt vmcnt(0)" else (40, 0)
        rows.append(f'1,{hex(pc)},"{inst.text()}",64,{lat},{stall},0,')
    csv = tmp_path / "stats_k.csv"
    csv.write_text("\n".join(rows) + "\n")
    assert main(["profile", ks, "--att", str(csv), "--annotate"]) == 0
    out = capsys.readouterr().out
    assert "measured" in out and "estimate" not in out
    assert "times (clk, stall) are measured on hardware" in out
    assert main(["profile", ks, "--att", str(csv), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate(doc)
    assert doc["estimated"] is False and doc["source"] == "hardware"
    assert doc["kernels"]["k"]["bottleneck"] == "memory-latency"
    assert main(["profile", ks, "--att", str(tmp_path / "none.csv")]) == 2


def test_window_clk_says_what_it_sums(capsys):
    """A window's clk is summed over the waves (trace model) or one wave's (static model),
    not the kernel's elapsed cycles printed above it: the heading says which (newcomer
    finding: a window of 29,440 clk in a kernel of 5,180)."""
    from asmevo.cli import main
    ex = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"
    assert main(["profile", str(ex / "vadd_f32.co"), "--harness", str(ex / "vadd_f32.json"),
                 "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "clk summed over every wave's instructions, not elapsed like the cycles above" in out
    assert main(["profile", str(ex / "vadd_f32.co"), "--top", "1"]) == 0
    assert "clk of one wave's instructions" in capsys.readouterr().out
