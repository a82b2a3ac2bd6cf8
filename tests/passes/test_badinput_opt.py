"""asmevo-opt bad pipelines, plugins and outputs: one message, exit 2, no output file;
an unexpected exception is "internal error ... (please report)", exit 1, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import asmevo.tools.opt as opt
from asmevo.passes.pipeline import MAX_REPEAT, PipelineError, parse_pipeline, pipeline_text
from asmevo.passes.registry import unregister_pass

pytestmark = pytest.mark.corpus


def _opt(capsys, *argv):
    rc = opt.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, err


@pytest.mark.parametrize("text,msg", [
    ("dce<max-iterations=-5>", "must be >= 0, got -5"),
    ("sched<window=-1>", "must be >= 0, got -1"),
    (f"repeat<{MAX_REPEAT + 1}>(dce)", f"limited to {MAX_REPEAT}"),
    ("repeat<1000000000>(dce)", f"limited to {MAX_REPEAT}"),
    ("repeat<100>(repeat<100>(dce))", "multiply to 10000"),
])
def test_bad_parameters(text, msg, corpus_dir, tmp_path, capsys):
    with pytest.raises(PipelineError) as ei:
        parse_pipeline(text)
    assert msg in str(ei.value) and "(column " in str(ei.value)
    out = tmp_path / "o.s"
    rc, err = _opt(capsys, f"--passes={text}", corpus_dir / "vadd_f32.co", "-o", out)
    assert rc == 2 and msg in err and not out.exists()


def test_bounds_ok():
    assert pipeline_text(parse_pipeline("dce<max-iterations=0>,repeat<0>(dce)")).startswith("kernel(")
    parse_pipeline(f"repeat<{MAX_REPEAT}>(dce)")


def test_module_wraps_kernel_pass():
    """Documented in docs/passes.md: module(dce) runs as module(kernel(dce))."""
    assert pipeline_text(parse_pipeline("module(dce)")) == "module(kernel(dce<max-iterations=16>))"


@pytest.fixture
def plugin(tmp_path):
    """Writes a plugin whose pass returns ``ret``; unregisters it afterwards."""
    names = []

    def make(ret):
        p, name = _plugin(tmp_path, ret)
        names.append(name)
        return p, name
    yield make
    for n in names:
        unregister_pass(n)


def _plugin(tmp_path, ret):
    p = tmp_path / f"plug_{abs(hash(ret))}.py"
    p.write_text(f'''
from dataclasses import dataclass
from typing import ClassVar
from asmevo.passes import Pass, register_pass

@register_pass
@dataclass
class P(Pass):
    name: ClassVar[str] = "ret-test-{abs(hash(ret))}"
    def run(self, kernel, am):
        return {ret}
''')
    return p, f"ret-test-{abs(hash(ret))}"


def test_plugin_returning_none_is_no_change(corpus_dir, tmp_path, capsys, plugin):
    plug, name = plugin("None")
    out = tmp_path / "o.s"
    rc, err = _opt(capsys, f"--load-pass-plugin={plug}", f"--passes={name}",
                   corpus_dir / "vadd_f32.co", "-o", out, "--stats")
    assert rc == 0 and out.exists()


def test_plugin_returning_garbage_is_an_error(corpus_dir, tmp_path, capsys, plugin):
    plug, name = plugin("'done'")
    out = tmp_path / "o.s"
    rc, err = _opt(capsys, f"--load-pass-plugin={plug}", f"--passes={name}",
                   corpus_dir / "vadd_f32.co", "-o", out)
    assert rc == 2 and f"pass '{name}' returned str" in err and not out.exists()


def test_output_directory_refused_before_work(corpus_dir, tmp_path, capsys, monkeypatch):
    def no_load(path):
        raise AssertionError("loaded the input before checking -o")
    monkeypatch.setattr(opt, "_load", no_load)
    rc, err = _opt(capsys, "--passes=dce", corpus_dir / "vadd_f32.co", "-o", tmp_path)
    assert rc == 2 and f"{tmp_path}: error: is a directory" in err
    rc, err = _opt(capsys, "--passes=dce", corpus_dir / "vadd_f32.co", "-o", tmp_path / "no" / "o.s")
    assert rc == 2 and "does not exist" in err


def test_internal_error_safety_net(corpus_dir, monkeypatch, capsys):
    def boom(args):
        raise KeyError("surprise")
    monkeypatch.setattr(opt, "run", boom)
    monkeypatch.delenv("ASMEVO_DEBUG", raising=False)
    rc, err = _opt(capsys, "--passes=dce", corpus_dir / "vadd_f32.co")
    assert rc == 1
    assert err.startswith("asmevo-opt: internal error: KeyError: 'surprise' (please report")
    monkeypatch.setenv("ASMEVO_DEBUG", "1")
    with pytest.raises(KeyError):
        opt.main(["--passes=dce", str(corpus_dir / "vadd_f32.co")])


_FLOOD = """
import sys, asmevo.tools.opt as o
def run(args):
    for _ in range(200000):
        print("x" * 100)   # 20 MB: far more than a pipe buffer
o.run = run
sys.exit(o.main(["--passes=dce", "whatever.s"]))
"""


def test_broken_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-c", _FLOOD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env={**os.environ, "ASMEVO_DEBUG": ""})
    assert p.stdout.readline() == b"x" * 100 + b"\n"
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 0 and err == "", err
