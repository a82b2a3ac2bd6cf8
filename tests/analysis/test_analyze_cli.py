"""``asmevo analyze``: text and JSON reports with the same content, exit codes 0/1/2."""

import json

from asmevo.cli import main

BAD = """
\t.text
\t.globl\tk
\t.type\tk,@function
k:
\tglobal_load_dword v1, v[2:3], off
\tv_add_f32_e32 v4, v1, v1
\tv_cmp_eq_u32_e64 s[4:5], v0, v4
\tv_cndmask_b32_e64 v5, 0, 1, s[4:5]
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
"""


def test_clean_kernel_exit_0(corpus_dir, capsys):
    assert main(["analyze", str(corpus_dir / "sgemm_tiled.s")]) == 0
    out = capsys.readouterr().out
    assert "kernel sgemm_tiled: 88 instructions, 6 blocks, 0 violation(s)" in out
    assert "occupancy 8 waves/SIMD" in out and "cfg: 8 edges, 1 loop(s)" in out
    assert "loop header" not in out  # per-block listings only when asked for
    assert main(["analyze", str(corpus_dir / "sgemm_tiled.s"), "--cfg", "--liveness"]) == 0
    out = capsys.readouterr().out
    assert "loop header .LBB0_2: .LBB0_2 (latches .LBB0_2)" in out
    assert ".LBB0_4: in [s[4:6] s8 v[2:3] v5 exec_hi exec_lo] out []" in out
    assert "waitcnt" not in out


def test_violations_exit_1_text_and_json_agree(tmp_path, capsys):
    src = tmp_path / "bad.s"
    src.write_text(BAD)
    assert main(["analyze", str(src), "--waitcnt", "--hazards"]) == 1
    text = capsys.readouterr().out
    assert "v_add_f32_e32 v4, v1, v1: v1 needs vmcnt(0)" in text
    assert "rule 13 s4 needs 2 wait state(s), has 0" in text
    assert main(["analyze", str(src), "--waitcnt", "--hazards", "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)["kernels"][0]
    assert rep["violations"] == 2
    assert [(v["register"], v["counter"], v["needed"]) for v in rep["waitcnt"]["violations"]] == \
        [("v1", "vmcnt", 0)]
    assert [(v["rule"], v["required"], v["available"]) for v in rep["hazards"]["violations"]] == \
        [(13, 2, 0)]
    assert "cfg" not in rep and "liveness" not in rep


def test_cfg_dot_to_file(corpus_dir, tmp_path):
    out = tmp_path / "g.dot"
    assert main(["analyze", str(corpus_dir / "sgemm_tiled.co"), "--cfg", "dot", "-o", str(out)]) == 0
    dot = out.read_text()
    assert dot.startswith('digraph "sgemm_tiled"') and dot.rstrip().endswith("}")
    assert dot.count(" -> ") == 8


def test_bad_input_exit_2(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "missing.co")]) == 2
    assert "error" in capsys.readouterr().err
    src = tmp_path / "bad.s"
    src.write_text(BAD)
    assert main(["analyze", str(src), "--kernel", "nope"]) == 2
    assert (f"{src}: error: --kernel 'nope': no kernel 'nope' in this file; its kernels: k"
            in capsys.readouterr().err)
    junk = tmp_path / "junk.co"
    junk.write_bytes(b"\x7fELF\x02\x01")
    assert main(["analyze", str(junk)]) == 2
