"""A wrong ``--entry`` (newcomer test): ``asmevo verify`` read like a crash ("the original
faults on the harness inputs", or an ``unknown-unsupported`` verdict, exit 3).  It is bad
input: one line naming the entry, the file, and the entries or kernels there are; exit 2;
before any work.  The same for ``asmevo-opt --verify``."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.cli import main
from asmevo.tools.opt import main as opt_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
CO = EX / "vadd_f32.co"


@pytest.fixture
def manifest(tmp_path):
    """A manifest list: vadd_f32 (the example's entry) and 'other', whose kernel the example
    code object does not hold."""
    e = json.loads((EX / "vadd_f32.json").read_text())
    other = dict(e, name="other", kernel="other_kernel")
    p = tmp_path / "manifest.json"
    p.write_text(json.dumps([e, other]))
    return p


def _one_line(err: str, prog: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), err
    assert "Traceback" not in err and "faults" not in err and "internal error" not in err
    return lines[0]


def test_entry_not_in_the_manifest(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "nope"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2
    assert f"{manifest}: error: --entry 'nope'" in line and "vadd_f32, other" in line, line


def test_entry_whose_kernel_the_code_object_lacks(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "other",
               "--level", "static"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2
    assert f"{CO}: error: --entry 'other'" in line and "'other_kernel'" in line
    assert str(manifest) in line and "its kernels: vadd_f32" in line, line


@pytest.mark.parametrize("level", [[], ["--level", "static"]])
def test_entry_without_harness_names_no_kernel(level, capsys):
    rc = main(["verify", str(CO), str(CO), "--entry", "nope", *level])
    out, err = capsys.readouterr()
    line = _one_line(err, "asmevo verify")
    assert rc == 2 and out == ""          # not an unknown-unsupported verdict (exit 3)
    assert f"{CO}: error: --entry 'nope'" in line and "its kernels: vadd_f32" in line, line


def test_a_right_entry_still_verifies(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "vadd_f32",
               "--level", "static"])
    assert rc == 0, capsys.readouterr()
    rc = main(["verify", str(CO), str(CO), "--entry", "vadd_f32", "--level", "static"])
    assert rc == 0, capsys.readouterr()


def test_a_harness_entry_file_that_is_not_json_keeps_its_message(tmp_path, capsys):
    bad = tmp_path / "h.json"
    bad.write_text("[{\"name\": ")
    rc = main(["verify", str(CO), str(CO), "--harness", str(bad), "--entry", "x"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2 and str(bad) in line and "--entry" not in line, line


@pytest.mark.parametrize("extra,where,what", [
    (["--verify=static", "--entry", "nope"], "co", "no kernel of that name"),
    (["--verify=diff", "--harness", "M", "--entry", "nope"], "manifest", "no entry of that name"),
    (["--verify=diff", "--harness", "M", "--entry", "other"], "co", "runs kernel 'other_kernel'"),
])
def test_asmevo_opt_verify_entry(manifest, tmp_path, capsys, extra, where, what):
    out = tmp_path / "o.co"
    extra = [str(manifest) if x == "M" else x for x in extra]
    rc = opt_main(["--passes=dce", str(CO), "-o", str(out), *extra])
    line = _one_line(capsys.readouterr().err, "asmevo-opt")
    assert rc == 2 and not out.exists()
    assert f"{CO if where == 'co' else manifest}: error: --entry" in line and what in line, line


# -- every command taking --entry / --kernel says it the same way (asmevo.emu.harness.checked_entry)

def _cmd(cmd, tmp_path, extra):
    if cmd == "opt":
        return opt_main(["--passes=dce", str(CO), "-o", str(tmp_path / "o.co"), "--verify=diff",
                         *extra]), "asmevo-opt"
    args = {"run": ["run", str(CO)], "verify": ["verify", str(CO), str(CO)],
            "profile": ["profile", str(CO)],
            "evolve": ["evolve", str(CO), "--out", str(tmp_path / "run"), "--budget", "1",
                       "--quiet"]}[cmd]
    return main([*args, *extra]), f"asmevo {cmd}"


@pytest.mark.parametrize("cmd", ["run", "verify", "profile", "evolve", "opt"])
def test_unknown_entry_lists_the_closest_and_every_entry(manifest, tmp_path, capsys, cmd):
    """Newcomer test: ``asmevo run --entry nope`` said only "no entry named 'nope' in the
    harness" where ``asmevo verify`` listed the entries; one message for every command."""
    rc, prog = _cmd(cmd, tmp_path, ["--harness", str(manifest), "--entry", "vadd"])
    line = _one_line(capsys.readouterr().err, prog)
    assert rc == 2 and not (tmp_path / "o.co").exists() and not (tmp_path / "run").exists()
    assert line == (f"{prog}: {manifest}: error: --entry 'vadd': no entry of that name in the "
                    "harness; closest: 'vadd_f32'; its entries: vadd_f32, other"), line


@pytest.mark.parametrize("cmd", ["run", "profile", "evolve"])
def test_unknown_kernel_lists_the_kernels(manifest, tmp_path, capsys, cmd):
    rc, prog = _cmd(cmd, tmp_path, ["--harness", str(manifest), "--entry", "vadd_f32",
                                    "--kernel", "nope"])
    line = _one_line(capsys.readouterr().err, prog)
    assert rc == 2 and not (tmp_path / "run").exists()
    assert line == (f"{prog}: {CO}: error: --kernel 'nope': no kernel 'nope' in this file; its "
                    "kernels: vadd_f32"), line


@pytest.mark.parametrize("cmd", ["run", "profile", "evolve"])
def test_entry_whose_kernel_the_file_lacks_same_as_verify(manifest, tmp_path, capsys, cmd):
    rc, prog = _cmd(cmd, tmp_path, ["--harness", str(manifest), "--entry", "other"])
    line = _one_line(capsys.readouterr().err, prog)
    assert rc == 2
    assert line == (f"{prog}: {CO}: error: --entry 'other': the harness entry ({manifest}) runs "
                    "kernel 'other_kernel', which this file does not hold; its kernels: "
                    "vadd_f32"), line


def test_entry_of_a_one_entry_harness(tmp_path, capsys):
    rc = main(["run", str(CO), "--harness", str(EX / "vadd_f32.json"), "--entry", "vad"])
    line = _one_line(capsys.readouterr().err, "asmevo run")
    assert rc == 2 and line == (f"asmevo run: {EX / 'vadd_f32.json'}: error: --entry 'vad': the "
                                "harness holds one entry, 'vadd_f32'; expected --entry "
                                "'vadd_f32' or no --entry"), line


KERNEL_CMDS = {
    "run": ["run", str(CO), "--harness", str(EX / "vadd_f32.json")],
    "evolve": ["evolve", str(CO), "--harness", str(EX / "vadd_f32.json"), "--budget", "1",
               "--quiet"],
    "profile": ["profile", str(CO)],
    "profile --harness": ["profile", str(CO), "--harness", str(EX / "vadd_f32.json")],
    "opt": ["opt", "--passes=dce", str(CO)],
    "opt --stats": ["opt", "--passes=dce", "--stats", str(CO)],
    "analyze": ["analyze", str(CO)],
}


@pytest.mark.parametrize("cmd", list(KERNEL_CMDS))
def test_unknown_kernel_one_wording(cmd, tmp_path, capsys):
    """Newcomer finding: ``--kernel nope`` said three things -- run/evolve the documented
    ``K.co: error: --kernel 'nope': no kernel 'nope' in this file; its kernels: ...``,
    ``asmevo opt`` ``error: no kernel 'nope' in K.co; kernels: ...`` (no file location),
    ``asmevo profile`` without a harness ``K.co: error: no kernel 'nope'; kernels: ...``.
    Every command now says the documented form (:func:`asmevo.errors.unknown_kernel_error`);
    ``--stats`` prints no statistics table before it (no pass ran)."""
    args = list(KERNEL_CMDS[cmd])
    if args[0] == "evolve":
        args += ["--out", str(tmp_path / "run")]
    if args[0] == "opt":
        args += ["-o", str(tmp_path / "o.co")]
    rc = main([*args, "--kernel", "nope"])
    out, err = capsys.readouterr()
    line = _one_line(err, f"asmevo {args[0]}")
    assert rc == 2 and out == "", (out, err)
    assert line == (f"asmevo {args[0]}: {CO}: error: --kernel 'nope': no kernel 'nope' in this "
                    "file; its kernels: vadd_f32"), line
    assert not (tmp_path / "run").exists() and not (tmp_path / "o.co").exists()


def test_unknown_kernel_asmevo_opt(tmp_path, capsys):
    rc = opt_main(["--passes=dce", str(CO), "-o", str(tmp_path / "o.co"), "--kernel", "nope"])
    line = _one_line(capsys.readouterr().err, "asmevo-opt")
    assert rc == 2 and line == (f"asmevo-opt: {CO}: error: --kernel 'nope': no kernel 'nope' in "
                                "this file; its kernels: vadd_f32"), line
