"""Pipeline parser: valid strings print back canonically; invalid ones give exact messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from asmevo.passes import Pass, PipelineError, parse_pipeline, pipeline_text, register_pass
from asmevo.passes.registry import BUILTIN, DEFAULT_PIPELINE, RegistryError, unregister_pass


@pytest.fixture
def opts_pass():
    @dataclass
    class Opts(Pass):
        """A pass with one option of each kind."""
        name: ClassVar[str] = "test-opts"
        window: int = field(default=32, metadata={"doc": "instructions"})
        max_stall: int = 4
        aggressive: bool = False
        mode: str = "a"

        def run(self, kernel, am):
            return None
    register_pass(Opts, origin="test")
    yield Opts
    unregister_pass("test-opts")


@pytest.mark.parametrize("text,canon", [
    ("dce", "kernel(dce<max-iterations=16>)"),
    ("dce<max-iterations=2>", "kernel(dce<max-iterations=2>)"),
    (" kernel( dce , dce ) ", "kernel(dce<max-iterations=16>,dce<max-iterations=16>)"),
    ("module(kernel(dce))", "module(kernel(dce<max-iterations=16>))"),
    ("repeat<2>(dce)", "kernel(repeat<2>(dce<max-iterations=16>))"),
    ("kernel(repeat<3>(dce))", "kernel(repeat<3>(dce<max-iterations=16>))"),
])
def test_valid_pipelines_print_back(text, canon):
    assert pipeline_text(parse_pipeline(text)) == canon
    # the canonical text parses to itself
    assert pipeline_text(parse_pipeline(canon)) == canon


def test_default_expands_to_the_documented_pipeline():
    text = pipeline_text(parse_pipeline("default"))
    assert text == pipeline_text(parse_pipeline(DEFAULT_PIPELINE))
    assert text.startswith("kernel(scratch-promote<max-vgprs=256>,sgpr-spill-promote<max-sgpr=102>,"
                           "scratch-forward<dead-stores=true>,redundant-move,")
    assert "dce<max-iterations=16>" in text and "waitcnt-relax<" in text
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[2] / "docs" / "passes.md").read_text()
    assert f"`default` expands to `{DEFAULT_PIPELINE}`" in doc


def test_options_of_each_type(opts_pass):
    (k,) = parse_pipeline("test-opts<window=0x10;max-stall=7;aggressive;mode=fast>")
    p = k.children[0].instance
    assert (p.window, p.max_stall, p.aggressive, p.mode) == (16, 7, True, "fast")
    (k,) = parse_pipeline('test-opts<no-aggressive;mode="x;y>z">')
    p = k.children[0].instance
    assert (p.window, p.aggressive, p.mode) == (32, False, "x;y>z")
    assert p.pipeline_text() == "test-opts<window=32;max-stall=4;aggressive=false;mode=x;y>z>"


def test_consecutive_kernel_passes_share_one_wrapper(opts_pass):
    nodes = parse_pipeline("dce,test-opts,dce")
    assert len(nodes) == 1 and nodes[0].kind == "kernel" and len(nodes[0].children) == 3


VALID = "{VALID}"  # filled in at test time: every registered pass (plugins loaded by
# other tests in the same session included), sorted


@pytest.mark.parametrize("text,msg", [
    ("dcee", "invalid pipeline 'dcee' (column 1): unknown pass 'dcee'; valid passes: "
             + VALID + "; scopes: module(...), kernel(...), repeat<N>(...), default"),
    ("dce<x=1>", "invalid pipeline 'dce<x=1>' (column 5): pass 'dce' has no parameter 'x'; "
                 "valid parameters: max-iterations=<int> (default 16): fixpoint iteration limit"),
    ("dce<max-iterations=abc>", "invalid pipeline 'dce<max-iterations=abc>' (column 5): "
                                "parameter 'max-iterations' of pass 'dce' expects an integer, "
                                "got 'abc'"),
    ("kernel(dce", "invalid pipeline 'kernel(dce' (column 11): missing ')'"),
    ("dce)", "invalid pipeline 'dce)' (column 4): unbalanced ')'"),
    ("dce,,dce", "invalid pipeline 'dce,,dce' (column 5): expected a pass name, got ','"),
    ("", "invalid pipeline '': empty pipeline; valid passes: " + VALID),
    ("dce(dce)", "invalid pipeline 'dce(dce)' (column 1): pass 'dce' does not take nested passes"),
    ("kernel(default)", "invalid pipeline 'kernel(default)' (column 8): 'default' cannot "
                        "be nested inside kernel(...)"),
    ("kernel(module(dce))", "invalid pipeline 'kernel(module(dce))' (column 8): module(...) "
                            "cannot be nested inside kernel(...)"),
    ("dce<max-iterations=1", "invalid pipeline 'dce<max-iterations=1' (column 5): missing '>' "
                             "to close the parameter list"),
    ("kernel", "invalid pipeline 'kernel' (column 7): expected '(' after 'kernel'"),
    ("repeat<x>(dce)", "invalid pipeline 'repeat<x>(dce)' (column 1): repeat needs a count: "
                       "repeat<N>(...)"),
    ("kernel()", "invalid pipeline 'kernel()' (column 8): empty kernel(...)"),
    ("dce dce", "invalid pipeline 'dce dce' (column 5): expected ',' but found 'd'"),
])
def test_invalid_pipelines_exact_messages(text, msg):
    from asmevo.passes.registry import pass_names
    names = pass_names()
    assert set(BUILTIN) <= set(names)
    msg = msg.replace("{VALID}", ", ".join(names))
    with pytest.raises(PipelineError) as ei:
        parse_pipeline(text)
    assert ei.value.message == msg
    assert str(ei.value) == "error: " + msg


def test_option_errors(opts_pass):
    with pytest.raises(PipelineError) as ei:
        parse_pipeline("test-opts<aggressive=maybe>")
    assert ei.value.detail == ("parameter 'aggressive' of pass 'test-opts' expects true or "
                               "false, got 'maybe'")
    with pytest.raises(PipelineError) as ei:
        parse_pipeline("test-opts<window>")
    assert ei.value.detail == "parameter 'window' of pass 'test-opts' needs a value (window=...)"
    with pytest.raises(PipelineError) as ei:
        parse_pipeline("test-opts<window=1;window=2>")
    assert ei.value.detail == "parameter 'window' of pass 'test-opts' given twice"
    with pytest.raises(PipelineError) as ei:
        parse_pipeline("test-opts<speed=1>")
    assert ei.value.detail == (
        "pass 'test-opts' has no parameter 'speed'; valid parameters: "
        "window=<int> (default 32): instructions;max-stall=<int> (default 4);"
        "aggressive=<bool> (default false);mode=<string> (default a)")


def test_module_pass_inside_kernel_is_an_error():
    @dataclass
    class Mod(Pass):
        """module-scoped."""
        name: ClassVar[str] = "test-module-pass"
        scope: ClassVar[str] = "module"

        def run(self, module, am):
            return None
    register_pass(Mod, origin="test")
    try:
        with pytest.raises(PipelineError) as ei:
            parse_pipeline("kernel(dce,test-module-pass)")
        assert ei.value.detail == ("module pass 'test-module-pass' cannot be nested inside "
                                   "kernel(...)")
        nodes = parse_pipeline("dce,test-module-pass,dce")
        assert [type(n).__name__ for n in nodes] == ["ScopeNode", "PassNode", "ScopeNode"]
    finally:
        unregister_pass("test-module-pass")


def test_registry_rejects_clashes_and_bad_classes():
    @dataclass
    class Clash(Pass):
        """clash."""
        name: ClassVar[str] = "dce"
    with pytest.raises(RegistryError, match="pass name 'dce' is already registered"):
        register_pass(Clash)

    class NoName(Pass):
        pass
    with pytest.raises(RegistryError, match="needs a pass name"):
        register_pass(NoName)
    with pytest.raises(RegistryError, match="not a subclass of asmevo.passes.Pass"):
        register_pass(int)
