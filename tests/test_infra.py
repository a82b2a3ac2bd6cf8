"""Tests of the small shared infrastructure: errors, tool lookup, safe output, IR basics."""

import os
import subprocess
import sys

import pytest

from asmevo.errors import AsmevoError, ToolNotFoundError
from asmevo.fileio import write_output
from asmevo.ir import Imm, Instruction, Reg, Special, Src, reg_units
from asmevo import llvm


def test_error_location_format():
    e = AsmevoError("unknown mnemonic 'v_foo'", file="k.s", line=3, column=5)
    assert str(e) == "k.s:3:5: error: unknown mnemonic 'v_foo'"
    e = AsmevoError("truncated ELF header", file="k.co", offset=0x40)
    assert str(e) == "k.co: byte offset 0x40: error: truncated ELF header"


def test_write_output_refuses_input(tmp_path):
    p = tmp_path / "in.s"
    p.write_text("x")
    with pytest.raises(AsmevoError):
        write_output(str(p), "y", inputs=(str(p),))
    assert p.read_text() == "x"
    out = tmp_path / "out.s"
    write_output(str(out), "hello", inputs=(str(p),))
    assert out.read_text() == "hello"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


def test_find_tool_env_override_missing(monkeypatch, tmp_path):
    llvm.find_tool.cache_clear()
    monkeypatch.setenv("ASMEVO_LLVM_BIN", str(tmp_path))
    monkeypatch.setattr(llvm, "_VERSIONS", ())
    monkeypatch.setattr(llvm, "_candidate_dirs", lambda: [str(tmp_path)])
    with pytest.raises(ToolNotFoundError) as ei:
        llvm.find_tool("llvm-nonexistent-tool")
    assert "apt-get install llvm-19 lld-19" in str(ei.value)
    llvm.find_tool.cache_clear()


def test_reg_units_split_ranges_and_specials():
    assert reg_units(Reg("v", 4, 3)) == (("v", 4), ("v", 5), ("v", 6))
    assert reg_units(Special("vcc")) == (("vcc_lo",), ("vcc_hi",))
    assert reg_units(Src(Reg("s", 2), neg=True)) == (("s", 2),)
    assert reg_units(Imm(5)) == ()
    assert reg_units(Special("off")) == ()


def test_instruction_text_and_evolve():
    i = Instruction("v_add_f32_e64", [Reg("v", 0), Src(Reg("v", 1), neg=True, abs=True), Imm(0.5, "0.5")],
                    [("clamp", True)], encoding=b"\0" * 8, address=0x100)
    assert i.text() == "v_add_f32_e64 v0, -|v1|, 0.5 clamp"
    j = i.evolve(operands=[Reg("v", 2)] + i.operands[1:])
    assert j.encoding is None and j.address is None
    assert j.text().startswith("v_add_f32_e64 v2,")
    assert i == i.copy() and i != j


def test_cli_without_command_exits_2():
    r = subprocess.run([sys.executable, "-m", "asmevo.cli"], capture_output=True, text=True)
    assert r.returncode == 2


# -- the test tiers themselves: under CI=true nothing a test needs may silently be missing --

def _bare_clone(tmp_path):
    """A checkout with the test infrastructure and no ../shared/corpus beside it."""
    import pathlib
    import shutil
    here = pathlib.Path(__file__).resolve().parent
    repo = tmp_path / "clone"
    (repo / "tests" / "sub").mkdir(parents=True)
    for f in ("conftest.py", "corpus_paths.py"):
        shutil.copy(here / f, repo / "tests" / f)
    (repo / "tests" / "sub" / "test_uses_corpus.py").write_text(
        "def test_needs_corpus(corpus_dir):\n    assert (corpus_dir / 'manifest.json').is_file()\n\n"
        "def test_plain():\n    assert True\n")
    (repo / "tests" / "sub" / "test_uses_tool.py").write_text(
        "from corpus_paths import require_tool\n\n"
        "def test_tool():\n    require_tool('llvm-no-such-tool-asmevo')\n")
    return repo


def _pytest(repo, env_extra, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ASMEVO_CORPUS")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-rs", *(args or ("tests",))],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_bare_clone_without_ci_passes_with_skips(tmp_path):
    repo = _bare_clone(tmp_path)
    r = _pytest(repo, {}, "tests/sub/test_uses_corpus.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 1 skipped" in r.stdout, r.stdout
    assert str(repo.parent / "shared" / "corpus") in r.stdout     # the skip says where


@pytest.mark.parametrize("ci", ["true", "1"])
def test_bare_clone_under_ci_fails_and_says_where_it_looked(tmp_path, ci):
    repo = _bare_clone(tmp_path)
    missing = tmp_path / "nowhere"
    r = _pytest(repo, {"CI": ci, "ASMEVO_CORPUS": str(missing)}, "tests/sub/test_uses_corpus.py")
    assert r.returncode != 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "shared corpus was not found" in out, out
    assert str(missing) in out and str(repo.parent / "shared" / "corpus") in out, out
    assert "passed" not in r.stdout


def test_missing_tool_skips_only_outside_ci(tmp_path):
    repo = _bare_clone(tmp_path)
    (tmp_path / "shared" / "corpus").mkdir(parents=True)
    (tmp_path / "shared" / "corpus" / "manifest.json").write_text("[]")
    r = _pytest(repo, {}, "tests/sub/test_uses_tool.py")
    assert r.returncode == 0 and "1 skipped" in r.stdout, r.stdout + r.stderr
    r = _pytest(repo, {"CI": "true"}, "tests/sub/test_uses_tool.py")
    assert r.returncode != 0 and "1 failed" in r.stdout, r.stdout + r.stderr
    assert "CI=true: llvm-no-such-tool-asmevo is required" in r.stdout


def test_tool_lookup_errors_other_than_not_found_are_not_skips(monkeypatch):
    from corpus_paths import require_tool

    def broken(name):
        raise RuntimeError("lookup is broken")
    monkeypatch.setattr(llvm, "find_tool", broken)
    with pytest.raises(RuntimeError, match="lookup is broken"):
        require_tool("llvm-mc")


def test_no_test_turns_any_exception_during_tool_lookup_into_a_skip():
    """A guard on the suite itself: ``find_tool`` inside ``try`` with a bare ``except
    Exception`` / ``except:`` hides a broken lookup (or a failed compile) as a skip."""
    import ast
    import pathlib
    bad = []
    for p in sorted(pathlib.Path(__file__).resolve().parent.rglob("test_*.py")):
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            calls = {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
                     for b in node.body for n in ast.walk(b) if isinstance(n, ast.Call)}
            if "find_tool" not in calls:
                continue
            for h in node.handlers:
                if h.type is None or (isinstance(h.type, ast.Name) and h.type.id in ("Exception", "BaseException")):
                    bad.append(f"{p.name}:{h.lineno}")
    assert bad == [], "catch ToolNotFoundError only (or use corpus_paths.require_tool): " + ", ".join(bad)
