"""waitcnt-relax, copy-prop, nop-trim and window-edit on small kernels (exact output)."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.tools.opt import main
from passes_helpers import norm, opt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_waitcnt_relax_weakens_to_the_needed_count():
    out, inst = opt("""
        k:
        global_load_dword v1, v[4:5], off
        global_load_dword v2, v[6:7], off
        s_waitcnt vmcnt(0)
        v_add_f32_e32 v3, v1, v1
        s_waitcnt vmcnt(0)
        v_add_f32_e32 v3, v3, v2
        global_store_dword v[4:5], v3, off
        s_endpgm
    """, "waitcnt-relax")
    # v1 (older load) needs only vmcnt(1); v2 is covered by the second wait
    assert out == norm("""
        global_load_dword v1, v[4:5], off
        global_load_dword v2, v[6:7], off
        s_waitcnt vmcnt(1)
        v_add_f32_e32 v3, v1, v1
        s_waitcnt vmcnt(0)
        v_add_f32_e32 v3, v3, v2
        global_store_dword v[4:5], v3, off
        s_endpgm
    """)
    assert inst.stats["waitcnt-relax"]["waitcnt-changed"] == 1


def test_waitcnt_relax_merges_and_deletes():
    out, _ = opt("""
        k:
        s_load_dword s2, s[0:1], 0x0
        global_load_dword v1, v[4:5], off
        s_waitcnt vmcnt(0)
        s_waitcnt lgkmcnt(0)
        v_add_u32_e32 v1, s2, v1
        s_waitcnt lgkmcnt(0)
        global_store_dword v[4:5], v1, off
        s_endpgm
    """, "waitcnt-relax")
    assert out == norm("""
        s_load_dword s2, s[0:1], 0x0
        global_load_dword v1, v[4:5], off
        s_waitcnt vmcnt(0) lgkmcnt(0)
        v_add_u32_e32 v1, s2, v1
        global_store_dword v[4:5], v1, off
        s_endpgm
    """)


def test_waitcnt_relax_keeps_waits_before_a_barrier():
    src = """
        k:
        ds_write_b32 v0, v1
        s_waitcnt lgkmcnt(0)
        s_barrier
        ds_read_b32 v2, v0
        s_waitcnt lgkmcnt(0)
        global_store_dword v[4:5], v2, off
        s_endpgm
    """
    out, _ = opt(src, "waitcnt-relax")
    assert out == norm(src.replace("k:\n", ""))


def test_copy_prop_forwards_and_removes_moves():
    out, inst = opt("""
        k:
        s_mov_b32 s4, s2
        s_add_u32 s5, s4, 1
        v_mov_b32_e32 v1, v0
        v_add_u32_e32 v2, v1, v1
        global_store_dword v[4:5], v2, off
        global_store_dword v[4:5], v1, off offset:4
        v_mov_b32_e32 v3, v3
        v_mov_b32_e32 v6, s5
        global_store_dword v[4:5], v6, off offset:8
        s_endpgm
    """, "copy-prop")
    assert out.splitlines()[:5] == [
        "s_add_u32 s5, s2, 1",
        "v_add_u32_e32 v2, v0, v0",
        "global_store_dword v[4:5], v2, off",
        "global_store_dword v[4:5], v0, off offset:4",
        "v_mov_b32_e32 v6, s5",
    ]
    assert inst.stats["copy-prop"]["moves-removed"] == 3


def test_copy_prop_respects_exec_changes_and_cross_lane_readers():
    src = """
        k:
        v_mov_b32_e32 v1, v0
        s_mov_b64 exec, s[4:5]
        v_add_u32_e32 v2, v1, v1
        v_mov_b32_e32 v3, v0
        v_readlane_b32 s6, v3, 5
        global_store_dword v[4:5], v2, off
        global_store_dword v[4:5], v1, off
        v_mov_b32_e32 v7, s6
        global_store_dword v[4:5], v7, off
        s_endpgm
    """
    out, _ = opt(src, "copy-prop")
    assert out == norm(src.replace("k:\n", ""))


def test_nop_trim_removes_a_nop_no_hazard_needs():
    pytest.importorskip("asmevo.analysis.hazards")
    out, inst = opt("""
        k:
        s_nop 7
        v_mov_b32_e32 v0, 1
        global_store_dword v[4:5], v0, off
        s_endpgm
    """, "nop-trim")
    assert "s_nop" not in out


KERNEL = """\
\t.text
\t.globl\tk
\t.type\tk,@function
k:
\tglobal_load_dword v1, v[4:5], off
\tglobal_load_dword v2, v[6:7], off
\ts_waitcnt vmcnt(0)
\tv_add_f32_e32 v1, v1, v2
\tglobal_store_dword v[4:5], v1, off
\ts_endpgm
"""


@pytest.fixture
def ksrc(tmp_path):
    p = tmp_path / "k.s"
    p.write_text(KERNEL)
    return p


def test_window_edit_example(tmp_path):
    out = tmp_path / "o.s"
    edit = ROOT / "examples" / "edit_vadd_double.json"
    ksrc = ROOT / "examples" / "edit_vadd_double.s"
    assert main([f"--passes=window-edit<file={edit}>", str(ksrc), "-o", str(out)]) == 0
    assert "\tv_add_f32_e32 v1, v1, v2\n\tv_add_f32_e32 v1, v1, v1\n\tglobal_store" \
        in out.read_text()


@pytest.mark.parametrize("edit,msg", [
    ({"edits": [{"from": 3, "asm": "v_add_f32_e32 v1, v1,, v1"}]},
     "error: edits[0].asm line 1: unexpected ','"),
    ({"edits": [{"from": 3, "asm": "v_frobnicate v1"}]}, "error: edits[0].asm line 1: "),
    ({"edits": [{"from": 3, "expect": ["v_mul_f32_e32 v1, v1, v2"], "asm": "s_nop 0"}]},
     "error: edits[0]: the window does not hold the expected instructions; found: "
     "['v_add_f32_e32 v1, v1, v2']"),
    ({"edits": [{"from": 99, "asm": "s_nop 0"}]},
     "error: edits[0].from = 99 is out of range (kernel k has 6 instructions)"),
    ({"edits": [{"from": ".LBB9", "asm": "s_nop 0"}]}, "error: edits[0].from: no label '.LBB9'"),
    ({"edits": [{"from": 2, "asm": "x:\ns_nop 0"}]},
     "error: edits[0].asm line 1: labels are not allowed in a window (x:)"),
    ({"kernel": "nope", "edits": [{"from": 2, "asm": "s_nop 0"}]}, "error: no kernel 'nope'"),
    ({"edits": []}, 'error: expected an object with a non-empty "edits" list'),
])
def test_window_edit_errors_exit_2_no_output(ksrc, tmp_path, capsys, edit, msg):
    ej = tmp_path / "edit_bad.json"
    ej.write_text(json.dumps(edit))
    out = tmp_path / "o.s"
    assert main([f"--passes=window-edit<file={ej}>", str(ksrc), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"asmevo-opt: {ej}: {msg}"), err
    assert not out.exists()


def test_window_edit_invalid_json_has_line_and_column(ksrc, tmp_path, capsys):
    ej = tmp_path / "edit_bad.json"
    ej.write_text('{"edits": [\n  {"from": 3,\n}')
    assert main([f"--passes=window-edit<file={ej}>", str(ksrc)]) == 2
    assert capsys.readouterr().err.startswith(f"asmevo-opt: {ej}:3:1: error: invalid JSON: ")
