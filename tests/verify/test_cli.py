"""The verify/equiv command lines: exit statuses and bad input."""

import json
import pathlib
import subprocess
import sys

from asmevo.cli import main


def test_verify_static_same_file_accepts_or_unknown(corpus_dir, capsys):
    s = str(corpus_dir / "vadd_f32.s")
    rc = main(["verify", s, s, "--level", "static", "--json"])
    rec = json.loads(capsys.readouterr().out)
    assert rc == rec["exit_status"]
    assert rec["status"] in ("accepted", "unknown-unsupported")  # unknown until analyses exist


def test_verify_abi_rejection_exit_1(corpus_dir, tmp_path, capsys):
    s = corpus_dir / "vadd_f32.s"
    cand = tmp_path / "cand.s"
    cand.write_text(s.read_text().replace(".amdhsa_kernarg_size 28", ".amdhsa_kernarg_size 32"))
    rc = main(["verify", str(s), str(cand), "--level", "static", "--json"])
    rec = json.loads(capsys.readouterr().out)
    assert rc == 1 and rec["status"] == "rejected-abi"


def test_verify_candidate_syntax_error_is_build_failed(corpus_dir, tmp_path, capsys):
    s = corpus_dir / "vadd_f32.s"
    cand = tmp_path / "cand.s"
    cand.write_text(s.read_text().replace("v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6,"))
    rc = main(["verify", str(s), str(cand), "--level", "static"])
    assert rc == 1
    assert capsys.readouterr().out.startswith("build-failed")


def test_verify_bad_original_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.s"
    bad.write_text("v_add_f32_e32 v2, v6,\n")
    rc = main(["verify", str(bad), str(bad), "--level", "static"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "bad.s:1" in err and "Traceback" not in err


def test_verify_diff_needs_harness(corpus_dir, capsys):
    s = str(corpus_dir / "vadd_f32.s")
    assert main(["verify", s, s, "--level", "diff"]) == 2


def test_verify_no_traceback_subprocess(tmp_path):
    p = subprocess.run([sys.executable, "-m", "asmevo.cli", "verify", str(tmp_path / "nope.co"),
                        str(tmp_path / "nope.co"), "--level", "static"], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_equiv_bad_live_out(tmp_path):
    a = tmp_path / "a.s"
    a.write_text("v_add_u32_e32 v0, v1, v2\n")
    assert main(["equiv", str(a), str(a), "--live-out", "x9"]) == 2


def test_verify_code_objects_end_to_end(corpus_dir, tmp_path, llvm_mc, capsys):
    """Original .co against candidates rebuilt with llvm-mc + ld.lld from edited text."""
    from asmevo.backend.assemble import assemble
    text = (corpus_dir / "vadd_f32.s").read_text()
    orig = str(corpus_dir / "vadd_f32.co")
    h = str(corpus_dir / "manifest.json")
    cases = {
        "same": (text, 0, "accepted"),
        "swap": (text.replace("v_lshl_add_u64 v[4:5], s[4:5], 0, v[0:1]",
                              "v_lshl_add_u64 v[4:5], v[0:1], 0, s[4:5]"), 0, "accepted"),
        "sub": (text.replace("v_add_f32_e32 v2, v6, v7", "v_sub_f32_e32 v2, v6, v7"), 1,
                "rejected-counterexample"),
    }
    for name, (t, rc, status) in cases.items():
        p = tmp_path / f"{name}.co"
        assemble(t, str(p))
        got = main(["verify", orig, str(p), "--harness", h, "--entry", "vadd_f32", "--trials", "3",
                    "--json"])
        rec = json.loads(capsys.readouterr().out)
        assert (got, rec["status"]) == (rc, status), name
    assert rec["evidence"][0]["data"]["counterexample"]["differs"] == ["v2"]


def test_store_moved_across_barrier_is_unknown_even_if_tests_pass(corpus_dir):
    """Cross-wave ordering is decided neither by z3 nor by one emulated wave schedule."""
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.verify import verify
    text = (corpus_dir / "transpose_lds.s").read_text()
    cand = text.replace("\tds_write_b32 v1, v0\n\ts_waitcnt lgkmcnt(0)\n\ts_barrier\n",
                        "\ts_waitcnt lgkmcnt(0)\n\ts_barrier\n\tds_write_b32 v1, v0\n")
    assert cand != text
    v = verify(parse_asm(text, "o.s"), parse_asm(cand, "c.s"), level="z3", memory_order=False)
    assert v.status.value == "unknown-unsupported"
    assert v.evidence[0].kind == "cross-wave-order"


def test_missing_or_directory_candidate_is_bad_input(tmp_path, capsys):
    """A typo in a path is bad input (exit 2, the path named), not a candidate the verifier
    rejects (build-failed, exit 1: newcomer finding)."""
    from asmevo.cli import main
    ex = pathlib.Path(__file__).resolve().parents[2] / "examples"
    for cand, what in ((tmp_path / "nope.co", "no such file"),
                       (tmp_path, "is a directory, expected a code object or an assembly file")):
        rc = main(["verify", str(ex / "vadd_f32.co"), str(cand)])
        err = capsys.readouterr().err
        assert rc == 2 and err == f"asmevo verify: {cand}: error: {what}\n", err


EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _once(capsys, cand, words):
    rc = main(["verify", str(EX / "vadd_f32.co"), str(cand), "--level", "static"])
    out = capsys.readouterr().out
    assert rc == 1 and out.startswith("build-failed: candidate does not load: "), out
    assert out.count(words) == 1, out   # the error once, not again as the build evidence


def test_verify_prints_a_candidate_parse_error_once(tmp_path, capsys):
    cand = tmp_path / "cand.s"
    cand.write_text((EX / "vadd_f32.s").read_text().replace("v_add_f32_e32 v2, v6, v7",
                                                            "v_bogus_f32 v2, v6, v7", 1))
    _once(capsys, cand, "unknown mnemonic 'v_bogus_f32'")


def test_verify_prints_a_corrupt_candidate_error_once(tmp_path, capsys):
    cand = tmp_path / "cand.co"
    cand.write_bytes((EX / "vadd_f32.co").read_bytes()[:200])
    _once(capsys, cand, str(cand))


def test_verify_json_keeps_the_build_evidence(tmp_path, capsys):
    cand = tmp_path / "cand.s"
    cand.write_text("v_bogus_f32 v2, v6, v7\n")
    assert main(["verify", str(EX / "vadd_f32.co"), str(cand), "--level", "static", "--json"]) == 1
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] == "build-failed" and rec["evidence"][0]["layer"] == "build"
    assert "unknown mnemonic" in rec["evidence"][0]["message"]
