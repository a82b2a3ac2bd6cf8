"""``--stats`` counts waits and wait states added apart from those removed (newcomer test:
``waitcnt-removed -2`` when a pass added two ``s_waitcnt``)."""

from __future__ import annotations

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.passes.manager import Instrumentation, diff_stats


def _i(text):
    return parse_instruction(text)


def test_added_waits_are_added_not_negative_removed():
    a, b = _i("v_add_f32_e32 v1, v1, v1"), _i("s_endpgm")
    w1, w2 = _i("s_waitcnt vmcnt(0)"), _i("s_waitcnt lgkmcnt(0)")
    c = diff_stats([a, b], [w1, a, w2, b])
    assert c["waitcnt-added"] == 2 and c["waitcnt-removed"] == 0, c
    assert min(c.values()) >= 0, c


def test_waits_removed_in_one_place_and_added_in_another_are_both_counted():
    a, b, d = _i("v_add_f32_e32 v1, v1, v1"), _i("v_mul_f32_e32 v2, v2, v2"), _i("s_endpgm")
    w_old, w_new = _i("s_waitcnt vmcnt(0)"), _i("s_waitcnt vmcnt(1)")
    w_moved = _i("s_waitcnt lgkmcnt(0)")
    c = diff_stats([w_old, a, b, d], [a, w_moved, b, d])
    assert (c["waitcnt-removed"], c["waitcnt-added"]) == (1, 1), c
    c = diff_stats([w_old, a, d], [w_new, a, d])   # rewritten with other counts
    assert (c["waitcnt-removed"], c["waitcnt-added"], c["waitcnt-changed"]) == (0, 0, 1), c


def test_nop_wait_states_added_are_added_not_negative_removed():
    a, d = _i("v_add_f32_e32 v1, v1, v1"), _i("s_endpgm")
    c = diff_stats([a, d], [_i("s_nop 2"), a, d])
    assert (c["nop-wait-states-removed"], c["nop-wait-states-added"]) == (0, 3), c
    c = diff_stats([_i("s_nop 4"), a, d], [_i("s_nop 1"), a, d])
    assert (c["nop-wait-states-removed"], c["nop-wait-states-added"]) == (3, 0), c


def test_stats_table_has_no_negative_column():
    inst = Instrumentation()
    a, b = _i("v_add_f32_e32 v1, v1, v1"), _i("s_endpgm")
    inst.record("p", diff_stats([a, b], [_i("s_waitcnt vmcnt(0)"), a, _i("s_nop 1"), b]), 0.0)
    text = inst.stats_report()
    head, row = text.splitlines()[1], text.splitlines()[2]
    assert "waitcnt-added" in head and "nop-ws-added" in head, text
    cells = dict(zip(head.split()[1:], row.split()[1:]))
    assert cells["waitcnt-added"] == "1" and cells["waitcnt-removed"] == "0", text
    assert cells["nop-ws-added"] == "2" and "-" not in row.split(None, 1)[1], text
    js = inst.to_json()["passes"][0]["stats"]
    assert js["waitcnt-added"] == 1 and js["waitcnt-removed"] == 0
