"""asmevo-opt reports (issue 15): ``--json`` (statistics, pass timing, run log, the
``--verify`` verdict; to stdout or ``--json-output=FILE``; written on failure too),
``--print-changed``, ``--print-on-crash[-path]`` (the IR a failing pass left) and
``--debug-pass-manager`` (which pass ran on which kernel, or was skipped and why)."""

from __future__ import annotations

import json

import pytest

from asmevo.passes.registry import unregister_pass
from asmevo.tools.opt import main

TWO = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
\tglobal_load_dword v1, v[4:5], off
\ts_waitcnt vmcnt(0)
\tv_add_f32_e32 v1, v1, v1
\tglobal_store_dword v[4:5], v1, off
\ts_endpgm
\t.globl\tj
\t.p2align\t8
\t.type\tj,@function
j:
\ts_nop 0
\ts_endpgm
\t.rodata
\t.p2align\t6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_accum_offset 8
\t.end_amdhsa_kernel
\t.p2align\t6
\t.amdhsa_kernel j
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_accum_offset 8
\t.end_amdhsa_kernel
"""

PLUGIN = """\
from dataclasses import dataclass
from asmevo.passes import Pass, register_pass

@register_pass
@dataclass
class DropWaits(Pass):
    name = 'drop-waits-r'
    def run(self, kernel, am):
        for i in list(kernel.instructions()):
            if i.opcode == 's_waitcnt':
                kernel.remove(i)

@register_pass
@dataclass
class HalfBoom(Pass):
    name = 'half-boom'
    def run(self, kernel, am):
        for i in list(kernel.instructions()):
            if i.opcode == 's_waitcnt':
                kernel.remove(i)
        raise ValueError('half done')
"""


@pytest.fixture
def plug(tmp_path):
    p = tmp_path / "plugin_r.py"
    p.write_text(PLUGIN)
    yield p
    unregister_pass("drop-waits-r")
    unregister_pass("half-boom")


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "two.s"
    p.write_text(TWO)
    return p


def test_json_to_stdout(src, tmp_path, capsys, plug):
    out = tmp_path / "o.s"
    rc = main([f"--load-pass-plugin={plug}", "--passes=dce,drop-waits-r", "--json",
               str(src), "-o", str(out)])
    o, err = capsys.readouterr()
    assert rc == 0, err
    rec = json.loads(o)
    assert rec["exit_status"] == 0 and rec["error"] is None
    assert [p["name"] for p in rec["passes"]] == ["dce", "drop-waits-r"]
    dw = rec["passes"][1]
    assert dw["runs"] == 2 and dw["stats"]["waitcnt-removed"] == 1 and dw["seconds"] >= 0
    assert {(r["pass"], r["unit"], r["changed"]) for r in rec["runs"]} >= {
        ("drop-waits-r", "k", True), ("drop-waits-r", "j", False)}
    assert rec["output_written"] == "assembly" and rec.get("verify") is None


def test_json_has_the_verdict(src, tmp_path, capsys, plug):
    out = tmp_path / "o.s"
    rep = tmp_path / "r.json"
    rc = main([f"--load-pass-plugin={plug}", "--passes=drop-waits-r", "--verify=static",
               f"--json-output={rep}", str(src), "-o", str(out)])
    assert rc == 1
    rec = json.loads(rep.read_text())
    assert rec["exit_status"] == 1 and rec["verify"]["status"].startswith("rejected")
    assert not out.exists()


def test_json_written_on_failure(src, tmp_path, capsys, plug):
    rep = tmp_path / "r.json"
    rc = main([f"--load-pass-plugin={plug}", "--passes=half-boom", f"--json-output={rep}",
               str(src), "-o", str(tmp_path / "o.s")])
    assert rc == 2
    rec = json.loads(rep.read_text())
    assert rec["exit_status"] == 2 and "half done" in rec["error"]


def test_json_and_assembly_both_on_stdout_is_refused(src, capsys):
    assert main(["--passes=dce", "--json", str(src)]) == 2
    assert "--json writes to stdout" in capsys.readouterr().err


def test_print_changed(src, tmp_path, capsys, plug):
    rc = main([f"--load-pass-plugin={plug}", "--passes=dce,drop-waits-r", "--print-changed",
               str(src), "-o", str(tmp_path / "o.s")])
    err = capsys.readouterr().err
    assert rc == 0
    assert "; *** IR Dump At Start (kernel k) ***" in err
    assert "; *** IR Dump After drop-waits-r (kernel k) ***" in err
    assert "After drop-waits-r (kernel j)" not in err and "After dce" not in err
    after = err.split("; *** IR Dump After drop-waits-r (kernel k) ***")[1]
    assert "s_waitcnt" not in after and "v_add_f32" in after


def test_print_on_crash_after_a_raising_pass(src, tmp_path, capsys, plug):
    rc = main([f"--load-pass-plugin={plug}", "--passes=half-boom", "--print-on-crash",
               str(src), "-o", str(tmp_path / "o.s")])
    err = capsys.readouterr().err
    assert rc == 2
    dump = err.split("; *** IR Dump After half-boom Failed (kernel k) ***")[1]
    assert "v_add_f32" in dump and "s_waitcnt" not in dump  # as the pass left it
    assert err.rstrip().endswith("ValueError: half done")


def test_print_on_crash_after_verify_each_to_a_file(src, tmp_path, capsys, plug):
    ir = tmp_path / "crash.s"
    rc = main([f"--load-pass-plugin={plug}", "--passes=drop-waits-r", "--verify-each",
               f"--print-on-crash-path={ir}", str(src), "-o", str(tmp_path / "o.s")])
    err = capsys.readouterr().err
    assert rc == 2 and "introduced 1 static violation" in err and str(ir) in err
    text = ir.read_text()
    assert text.startswith("; *** IR Dump After drop-waits-r Failed (kernel k) ***")
    assert "s_waitcnt" not in text


def test_no_crash_dump_without_the_option(src, tmp_path, capsys, plug):
    main([f"--load-pass-plugin={plug}", "--passes=half-boom", str(src), "-o", str(tmp_path / "o.s")])
    assert "IR Dump" not in capsys.readouterr().err


def test_debug_pass_manager(src, tmp_path, capsys, plug):
    rc = main([f"--load-pass-plugin={plug}", "--passes=drop-waits-r", "--verify-each",
               "--debug-pass-manager", "--kernel", "j", str(src), "-o", str(tmp_path / "o.s")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Skipping kernel k: not selected by --kernel" in err
    assert "Running pass: drop-waits-r on kernel j" in err
    assert "Running pass: drop-waits-r on kernel k" not in err
    assert "drop-waits-r made no change on kernel j" in err
    assert "--verify-each skipped after drop-waits-r: no change" in err


# -- what --stats says about the written code object (newcomer test) -------------------------

def test_stats_says_nothing_changed_and_still_writes_the_output(tmp_path, capsys):
    """A pipeline that changes nothing is not reported as "patched in place": --stats says
    nothing changed, and the code object is written all the same (as read)."""
    import pathlib
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    out = tmp_path / "o.co"
    assert main(["--passes=loop-pipeline", "--stats", str(co), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"asmevo-opt: {out}: nothing changed" in err, err
    assert "patched in place" not in err and "rebuilt" not in err
    assert out.read_bytes() == co.read_bytes()


def test_json_says_unchanged_when_nothing_changed(tmp_path):
    """--json agrees with --stats (newcomer test: it said "patched" for an unchanged code
    object)."""
    import json
    import pathlib
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    out, rec = tmp_path / "o.co", tmp_path / "r.json"
    assert main(["--passes=loop-pipeline", f"--json-output={rec}", str(co), "-o", str(out)]) == 0
    assert json.loads(rec.read_text())["output_written"] == "unchanged"
    assert out.read_bytes() == co.read_bytes()


def test_stats_says_how_a_changed_code_object_was_written(tmp_path, capsys, plug):
    import pathlib
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    out = tmp_path / "o.co"
    assert main([f"--load-pass-plugin={plug}", "--passes=drop-waits-r", "--stats", str(co),
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert (f"asmevo-opt: {out}: code object rebuilt" in err    # a removal does not fit
            or f"asmevo-opt: {out}: code object patched in place" in err), err
    assert "nothing changed" not in err
