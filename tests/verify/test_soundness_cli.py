"""Rebuilt code objects are not falsely rejected (.relro_padding), ``asmevo verify | head``
is quiet, and ``asmevo-opt --verify`` writes unknown results only as unproved."""

import os
import sys

from asmevo.verify import Status, verify
from asmevo.verify.abi import compare_abi


def test_rebuilt_code_object_keeps_the_abi(corpus_dir, tmp_path):
    from asmevo.tools.opt import main
    out = tmp_path / "o.co"
    assert main(["--passes=default", str(corpus_dir / "vadd_f32_O0.co"), "-o", str(out)]) == 0
    v = verify(str(corpus_dir / "vadd_f32_O0.co"), str(out), level="static")
    assert v.accepted, v.text()
    from asmevo.frontend.disasm import disassemble
    a = compare_abi(disassemble(str(corpus_dir / "vadd_f32_O0.co")), disassemble(str(out)))
    assert a.accepted, a.text()


def test_abi_still_compares_rodata(corpus_dir, tmp_path):
    from asmevo.frontend.disasm import disassemble
    from asmevo.verify.abi import _data_bytes
    m = disassemble(str(corpus_dir / "vadd_f32.co"))
    d = _data_bytes(m)
    assert ".relro_padding" not in d
    assert ".rodata" in d  # descriptors masked, section still compared


def test_verify_into_a_closed_pipe_is_quiet(corpus_dir, capfd):
    from asmevo.cli import main
    r, w = os.pipe()
    os.close(r)
    old = sys.stdout
    sys.stdout = os.fdopen(w, "w")
    try:
        rc = main(["verify", str(corpus_dir / "vadd_f32.co"), str(corpus_dir / "vadd_f32.co"),
                   "--level", "static"])
    finally:
        try:
            sys.stdout.close()
        except OSError:
            pass
        sys.stdout = old
    assert rc == 0
    assert "Traceback" not in capfd.readouterr().err


def test_opt_verify_all_writes_unknown_results_as_unproved(corpus_dir, tmp_path, capsys):
    from asmevo.tools.opt import main
    out = tmp_path / "o.co"
    rc = main(["--passes=default", "--verify=all", "--harness", str(corpus_dir / "manifest.json"),
               "--entry", "vadd_f32_O0", str(corpus_dir / "vadd_f32_O0.co"), "-o", str(out)])
    err = capsys.readouterr().err
    assert out.exists(), err
    if rc == 3:
        assert "UNPROVED" in err and "unknown-" in err
    else:
        # only an accepted run is re-verified: the z3 layer of the written code object (about
        # a CPU minute) is what the rc == 0 claim rests on, and an unproved run needs none
        assert rc == 0, err
        v = verify(str(corpus_dir / "vadd_f32_O0.co"), str(out), level="z3")
        assert v.status is Status.ACCEPTED, err
