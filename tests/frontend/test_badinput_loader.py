"""Assembly text read by any tool is type-checked (asmevo.frontend.loader.load): an unknown
mnemonic, an out-of-range register, a wrong operand width, an unknown ``.amdhsa_kernel``
directive or an undefined branch label give one ``FILE:line:col: error:`` message and exit
status 2 from every tool, with no output file written.  llvm-mc 19 rejects each of these
mutations too (checked in ``test_llvm_mc_rejects_each_mutation``)."""

from __future__ import annotations

import json
import subprocess

import pytest

from asmevo.cli import main as cli_main
from asmevo.errors import AsmSyntaxError
from asmevo.frontend.loader import load
from asmevo.tools.opt import main as opt_main

pytestmark = pytest.mark.corpus

#: (name, line number in corpus vadd_f32.s, old text, new text, message part, column)
MUTATIONS = [
    ("unk", 28, "v_add_f32_e32 v2, v6, v7", "v_foo_f32 v2, v6, v7", "unknown mnemonic 'v_foo_f32'", 2),
    ("range", 28, "v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6, v300", "out of range: v300", 24),
    ("srange", 28, "v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6, s107", "out of range: s107", 24),
    ("width", 28, "v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v[2:3], v6, v7", "2 dwords wide", 16),
    ("width2", 24, "v[4:5]", "v[4:6]", "3 dwords wide", 24),
    ("nargs", 28, "v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6", "wrong number of operands", 2),
    ("badmod", 28, "v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6, v7 glc", "modifier 'glc'", 27),
    ("label", 15, ".LBB0_2", ".Lnowhere", "undefined label '.Lnowhere'", 18),
    ("baddir", 53, ".amdhsa_next_free_vgpr 8", ".amdhsa_bogus 1\n\t\t.amdhsa_next_free_vgpr 8",
     "unknown .amdhsa_kernel directive .amdhsa_bogus", 3),
]


def _mutant(corpus_dir, tmp_path, name, lineno, old, new):
    lines = (corpus_dir / "vadd_f32.s").read_text().split("\n")
    assert old in lines[lineno - 1], (name, lines[lineno - 1])
    lines[lineno - 1] = lines[lineno - 1].replace(old, new)
    p = tmp_path / f"{name}.s"
    p.write_text("\n".join(lines))
    return p


@pytest.mark.parametrize("name,lineno,old,new,msg,col", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_load_rejects_with_location(corpus_dir, tmp_path, name, lineno, old, new, msg, col):
    p = _mutant(corpus_dir, tmp_path, name, lineno, old, new)
    with pytest.raises(AsmSyntaxError) as ei:
        load(p)
    assert str(ei.value).startswith(f"{p}:{lineno}:{col}: error: "), str(ei.value)
    assert msg in str(ei.value)


@pytest.mark.parametrize("name,lineno,old,new,msg,col", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_llvm_mc_rejects_each_mutation(corpus_dir, tmp_path, llvm_mc, name, lineno, old, new, msg, col):
    """The oracle: llvm-mc 19 refuses every mutant, so none of these is a false error."""
    p = _mutant(corpus_dir, tmp_path, name, lineno, old, new)
    r = subprocess.run([llvm_mc, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj",
                        "-o", str(tmp_path / "x.o"), str(p)], capture_output=True, text=True)
    assert r.returncode != 0 and "error" in r.stderr
    assert f":{lineno}:" in r.stderr


@pytest.mark.parametrize("name", ["unk", "range", "width", "label", "baddir"])
def test_tools_exit_2_and_write_nothing(corpus_dir, tmp_path, capsys, name):
    m = next(m for m in MUTATIONS if m[0] == name)
    p = _mutant(corpus_dir, tmp_path, *m[:4])
    loc = f"{p}:{m[1]}:{m[5]}: error: "
    out = tmp_path / "o.s"
    assert opt_main(["--passes=dce", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert loc in err and "Traceback" not in err
    assert not out.exists()
    entry = next(e for e in json.loads((corpus_dir / "manifest.json").read_text())
                 if e["name"] == "vadd_f32")
    harness = tmp_path / "h.json"
    harness.write_text(json.dumps(entry))
    for argv in (["analyze", str(p)], ["run", str(p), "--harness", str(harness)],
                 ["asm", str(p), "-o", str(tmp_path / "o.co")]):
        rc = cli_main(argv)
        o, err = capsys.readouterr()
        assert rc == 2, (argv, o, err)
        # asm hands the text to llvm-mc, whose column may differ; the line must match
        assert (f"{p}:{m[1]}:" if argv[0] == "asm" else loc) in err, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "o.co").exists()


def test_every_corpus_text_file_loads(corpus_dir):
    """No false errors: every clang .s and Triton .amdgcn of the corpus passes the checks."""
    files = sorted(corpus_dir.glob("**/*.s")) + sorted(corpus_dir.glob("**/*.amdgcn"))
    assert files
    for f in files:
        load(f)


def test_equiv_windows_are_type_checked(tmp_path, capsys, corpus_dir):
    ok = tmp_path / "ok.s"
    ok.write_text("v_add_f32 v1, v2, v3\n")
    rng = tmp_path / "rng.s"
    rng.write_text("v_add_f32 v1, v2, v300\n")
    unk = tmp_path / "unk.s"
    unk.write_text("v_foo_f32 v1, v2, v3\n")
    for bad, loc, msg in ((rng, f"{rng}:1:19:", "v300"), (unk, f"{unk}:1:1:", "unknown mnemonic")):
        assert cli_main(["equiv", str(ok), str(bad)]) == 2
        err = capsys.readouterr().err
        assert loc in err and msg in err and "Traceback" not in err
    assert cli_main(["equiv", str(ok), str(corpus_dir / "vadd_f32.co")]) == 2
    err = capsys.readouterr().err
    assert "this is a code object" in err and "utf-8" not in err
    bin_ = tmp_path / "bin.s"
    bin_.write_bytes(b"v_nop\n\xff\xfe")
    assert cli_main(["equiv", str(ok), str(bin_)]) == 2
    err = capsys.readouterr().err
    assert "byte offset 0x6" in err
