"""asmevo-opt command line: outputs, reports, and errors (message, exit 2, no output file)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from asmevo.passes.registry import unregister_pass
from asmevo.tools.opt import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugin_strip_nops.py"

KERNEL = """\
\t.text
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
\tv_mov_b32_e32 v1, 7
\ts_nop 3
\tv_mov_b32_e32 v2, 3
\tglobal_store_dword v[4:5], v2, off
\ts_nop 0
\ts_endpgm
"""


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "k.s"
    p.write_text(KERNEL)
    return p


@pytest.fixture(autouse=True)
def _cleanup_plugins():
    yield
    unregister_pass("strip-nops")
    unregister_pass("boom-pass")


def test_dce_to_assembly_file(src, tmp_path, capsys):
    out = tmp_path / "k.opt.s"
    assert main(["--passes=dce", str(src), "-o", str(out), "--stats"]) == 0
    text = out.read_text()
    assert "v_mov_b32_e32 v1, 7" not in text and "v_mov_b32_e32 v2, 3" in text
    assert text.startswith("\t.text\n")
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if ln.startswith("dce "))
    assert line.split()[1:3] == ["1", "0"]  # removed 1, added 0


def test_stdout_when_no_output(src, capsys):
    assert main(["-p", "dce", str(src)]) == 0
    assert "global_store_dword v[4:5], v2, off" in capsys.readouterr().out


def test_print_passes_lists_every_builtin(capsys):
    assert main(["--print-passes"]) == 0
    out = capsys.readouterr().out
    assert "  dce " in out and "<max-iterations=<int> (default 16)" in out
    assert "default = kernel(" in out


def test_print_after_and_before(src, capsys):
    assert main(["--passes=dce", "--print-before=dce", "--print-after-all", str(src),
                 "-o", "-"]) == 0
    err = capsys.readouterr().err
    assert "; *** IR Dump Before dce (kernel k) ***\nk:\n\tv_mov_b32_e32 v1, 7" in err
    after = err.split("; *** IR Dump After dce (kernel k) ***\n")[1]
    assert after.startswith("k:\n\ts_nop 3\n")


def test_time_passes(src, capsys):
    assert main(["--passes=dce", "--time-passes", str(src)]) == 0
    err = capsys.readouterr().err
    assert "pass execution timing report" in err and err.rstrip().endswith("dce")


@pytest.mark.parametrize("args,msg", [
    (["--passes=dcee"], "asmevo-opt: error: invalid pipeline 'dcee' (column 1): unknown pass "
                        "'dcee'; valid passes: "),
    (["--passes=dce<speed=2>"], "asmevo-opt: error: invalid pipeline 'dce<speed=2>' (column 5): "
                                "pass 'dce' has no parameter 'speed'; valid parameters: "
                                "max-iterations=<int>"),
    (["--passes=dce", "--kernel", "nope"], "asmevo-opt: {src}: error: --kernel 'nope': no kernel "
                                           "'nope' in this file; its kernels: "),
])
def test_errors_exit_2_without_output(src, tmp_path, capsys, args, msg):
    out = tmp_path / "out.s"
    assert main(args + [str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg.format(src=src)), err
    assert "Traceback" not in err
    assert not out.exists()


def test_missing_input_and_bad_assembly(tmp_path, capsys):
    out = tmp_path / "o.s"
    assert main(["--passes=dce", str(tmp_path / "none.s"), "-o", str(out)]) == 2
    assert "none.s: error: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.s"
    bad.write_text("k:\n\tv_mov_b32_e32 v1,, 7\n")
    assert main(["--passes=dce", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.s:2:" in err and "Traceback" not in err
    assert not out.exists()


def test_refuses_to_overwrite_input(src, capsys):
    assert main(["--passes=dce", str(src), "-o", str(src)]) == 2
    assert "refusing to overwrite the input file" in capsys.readouterr().err
    assert src.read_text() == KERNEL


def test_plugin_registers_and_runs(src, tmp_path, capsys):
    out = tmp_path / "o.s"
    assert main([f"--load-pass-plugin={PLUGIN}", "--passes=strip-nops<keep=1>", "--stats",
                 str(src), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("s_nop") == 1 and "s_nop 3" in text
    assert "strip-nops.kept = 1" in capsys.readouterr().err


def test_plugin_listed_in_print_passes(capsys):
    assert main([f"--load-pass-plugin={PLUGIN}", "--print-passes"]) == 0
    out = capsys.readouterr().out
    assert "strip-nops" in out and "[plugin " in out and "<keep=<int> (default 0)" in out


def test_raising_plugin_is_a_clear_error(src, tmp_path, capsys):
    plug = tmp_path / "plugin_boom.py"
    plug.write_text("import asmevo.passes\n\nraise RuntimeError('no GPU here')\n")
    out = tmp_path / "o.s"
    assert main([f"--load-pass-plugin={plug}", "--passes=dce", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"asmevo-opt: {plug}:3: error: pass plugin raised RuntimeError: no GPU here\n"
    assert not out.exists()


def test_plugin_syntax_error_and_missing_file(src, tmp_path, capsys):
    plug = tmp_path / "plugin_bad.py"
    plug.write_text("def f(:\n")
    assert main([f"--load-pass-plugin={plug}", "--passes=dce", str(src)]) == 2
    assert f"{plug}:1:7: error: syntax error in pass plugin" in capsys.readouterr().err
    assert main(["--load-pass-plugin=/nonexistent/p.py", "--passes=dce", str(src)]) == 2
    assert "/nonexistent/p.py: error: pass plugin not found" in capsys.readouterr().err


def test_pass_that_raises_at_run_time(src, tmp_path, capsys):
    plug = tmp_path / "plugin_runboom.py"
    plug.write_text(
        "from dataclasses import dataclass\n"
        "from asmevo.passes import Pass, register_pass\n"
        "@register_pass\n@dataclass\nclass Boom(Pass):\n"
        "    name = 'boom-pass'\n"
        "    def run(self, kernel, am):\n        raise ValueError('bad state')\n")
    out = tmp_path / "o.s"
    assert main([f"--load-pass-plugin={plug}", "--passes=boom-pass", str(src),
                 "-o", str(out)]) == 2
    assert capsys.readouterr().err == ("asmevo-opt: error: pass 'boom-pass' failed on kernel k: "
                                       "ValueError: bad state\n")
    assert not out.exists()


def test_console_script_module_runs(src):
    r = subprocess.run([sys.executable, "-m", "asmevo.tools.opt", "--passes=dcee", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown pass 'dcee'" in r.stderr and "Traceback" not in r.stderr


DROP_WAITS = (
    "from dataclasses import dataclass\n"
    "from asmevo.passes import Pass, register_pass\n"
    "@register_pass\n@dataclass\nclass DropWaits(Pass):\n"
    "    '''Delete every s_waitcnt (wrong on purpose).'''\n"
    "    name = 'drop-waits'\n"
    "    def run(self, kernel, am):\n"
    "        for b in kernel.blocks:\n"
    "            b.instructions = [i for i in b.instructions if i.opcode != 's_waitcnt']\n")

WAITING = """\
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
\t.rodata
\t.p2align\t6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_accum_offset 8
\t.end_amdhsa_kernel
"""


@pytest.fixture
def drop_waits(tmp_path):
    p = tmp_path / "plugin_drop.py"
    p.write_text(DROP_WAITS)
    yield p
    unregister_pass("drop-waits")


def test_verify_each_rejects_a_pass_that_breaks_waits(tmp_path, capsys, drop_waits):
    src = tmp_path / "w.s"
    src.write_text(WAITING)
    out = tmp_path / "o.s"
    assert main([f"--load-pass-plugin={drop_waits}", "--passes=drop-waits", "--verify-each",
                 str(src), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        "asmevo-opt: error: --verify-each: pass 'drop-waits' introduced 1 static violation(s) "
        "in kernel k: waitcnt: v_add_f32_e32 v1, v1, v1 reads v1 before vmcnt(0)\n")
    assert not out.exists()
    # without --verify-each the (wrong) result is written
    assert main([f"--load-pass-plugin={drop_waits}", "--passes=drop-waits", str(src),
                 "-o", str(out)]) == 0
    assert "s_waitcnt" not in out.read_text()


def test_verify_static_refuses_to_write_a_rejected_result(tmp_path, capsys, drop_waits):
    src = tmp_path / "w.s"
    src.write_text(WAITING)
    out = tmp_path / "o.s"
    assert main([f"--load-pass-plugin={drop_waits}", "--passes=drop-waits", "--verify=static",
                 str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("asmevo-opt: error: --verify=static did not accept the result "
                          "(rejected-waitcnt); no output written\n")
    assert not out.exists()


def test_verify_diff_needs_a_harness(src, tmp_path, capsys):
    out = tmp_path / "o.s"
    assert main(["--passes=dce", "--verify=diff", str(src), "-o", str(out)]) == 2
    assert capsys.readouterr().err == "asmevo-opt: error: --verify=diff needs --harness H.json\n"
    assert not out.exists()


TWO = """\
\t.text
\t.globl\ta
\t.type\ta,@function
a:
\tv_mov_b32_e32 v9, 1
\ts_endpgm
\t.globl\tb
\t.type\tb,@function
b:
\tv_mov_b32_e32 v9, 1
\ts_endpgm
"""


def test_kernel_selection_only_touches_the_named_kernel(tmp_path):
    src = tmp_path / "two.s"
    src.write_text(TWO)
    out = tmp_path / "o.s"
    assert main(["--passes=dce", "--kernel", "b", str(src), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("v_mov_b32_e32 v9, 1") == 1
    assert text.index("v_mov_b32_e32 v9, 1") < text.index("b:")


def test_print_pipeline_passes(capsys):
    assert main(["--passes=dce,kernel(nop-trim)", "--print-pipeline-passes"]) == 0
    assert capsys.readouterr().out == ("kernel(dce<max-iterations=16>),"
                                       "kernel(nop-trim<max-checks=4000>)\n")


def test_no_pipeline_is_an_error(src, capsys):
    assert main([str(src)]) == 2
    assert "no pipeline given; use --passes=PIPELINE" in capsys.readouterr().err


def test_print_after_unknown_pass(src, capsys):
    assert main(["--passes=dce", "--print-after=dcx", str(src)]) == 2
    assert capsys.readouterr().err.startswith(
        "asmevo-opt: error: --print-after=dcx: unknown pass; valid passes: copy-prop, dce, ")


@pytest.mark.parametrize("flag", ["--harness", "--entry"])
def test_harness_without_verify_is_an_error(src, tmp_path, capsys, flag):
    """--harness/--entry only serve --verify: alone they were silently ignored (the result was
    written unverified, exit 0); now one message, exit 2, no output, before any pass runs."""
    out = tmp_path / "o.s"
    value = str(ROOT / "examples" / "vadd_f32.json") if flag == "--harness" else "vadd_f32"
    assert main(["--passes=dce", flag, value, str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"asmevo-opt: error: {flag} needs --verify (static, diff or all)"), err
    assert err.count("\n") == 1
    assert not out.exists()


def test_harness_help_says_it_needs_verify(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "only with --verify" in text
