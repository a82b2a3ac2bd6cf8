"""copy-prop across blocks (scalar copies), 64-bit pair forwarding and pair merging."""

from __future__ import annotations

from passes_helpers import norm, opt


def test_scalar_copy_forwarded_across_a_join_when_every_path_keeps_it():
    out, inst = opt("""
        k:
        s_mov_b32 s6, s4
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 .LBB0_2
        s_add_u32 s2, s2, 1
        .LBB0_2:
        s_add_u32 s8, s6, s2
        v_mov_b32_e32 v1, s8
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """, "copy-prop")
    assert out == norm("""
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 .LBB0_2
        s_add_u32 s2, s2, 1
        .LBB0_2:
        s_add_u32 s8, s4, s2
        v_mov_b32_e32 v1, s8
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """)
    assert inst.stats["copy-prop"]["operands-replaced"] == 1


def test_copy_not_forwarded_when_one_path_overwrites_the_source():
    src = """
        k:
        s_mov_b32 s6, s4
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 .LBB0_2
        s_mov_b32 s4, 0
        .LBB0_2:
        s_add_u32 s8, s6, s2
        v_mov_b32_e32 v1, s8
        global_store_dword v2, v1, s[0:1]
        v_mov_b32_e32 v1, s4
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """
    out, _ = opt(src, "copy-prop")
    assert out == norm(src.replace("k:\n", "", 1))


def test_copy_not_forwarded_around_a_loop_that_changes_the_source():
    out, _ = opt("""
        k:
        s_mov_b32 s6, s4
        .LBB0_1:
        s_add_u32 s8, s6, 1
        s_mov_b32 s4, s8
        s_cmp_lt_u32 s8, 10
        s_cbranch_scc1 .LBB0_1
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """, "copy-prop")
    # s6 still reads the entry value of s4; only the dead s_mov s4 goes
    assert out == norm("""
        s_mov_b32 s6, s4
        .LBB0_1:
        s_add_u32 s8, s6, 1
        s_cmp_lt_u32 s8, 10
        s_cbranch_scc1 .LBB0_1
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """)


def test_pair_halves_forwarded_as_one_64_bit_operand_and_exec():
    out, _ = opt("""
        k:
        s_mov_b64 s[10:11], exec
        s_mov_b32 s12, s20
        s_mov_b32 s13, s21
        s_and_b64 s[14:15], s[10:11], s[12:13]
        v_mov_b32_e32 v1, s0
        s_mov_b64 exec, s[14:15]
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """, "copy-prop")
    assert out == norm("""
        s_and_b64 s[14:15], exec, s[20:21]
        v_mov_b32_e32 v1, s0
        s_mov_b64 exec, s[14:15]
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """)


def test_unaligned_halves_are_not_a_pair():
    src = """
        k:
        s_mov_b32 s12, s21
        s_mov_b32 s13, s22
        s_add_u32 s21, s21, 1
        s_mov_b64 exec, s[12:13]
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """
    out, _ = opt(src, "copy-prop")
    assert out == norm(src.replace("k:\n", "", 1))


def test_two_half_moves_merge_into_s_mov_b64():
    out, inst = opt("""
        k:
        s_mov_b32 s16, s14
        v_mov_b32_e32 v1, s0
        s_mov_b32 s17, s15
        s_add_u32 s14, s14, 1
        s_mov_b64 exec, s[16:17]
        global_store_dword v2, v1, s[14:15]
        s_endpgm
    """, "copy-prop")
    assert out == norm("""
        v_mov_b32_e32 v1, s0
        s_mov_b64 s[16:17], s[14:15]
        s_add_u32 s14, s14, 1
        s_mov_b64 exec, s[16:17]
        global_store_dword v2, v1, s[14:15]
        s_endpgm
    """)
    assert inst.stats["copy-prop"]["moves-merged"] == 1


def test_half_moves_not_merged_when_the_early_destination_is_read_between():
    src = """
        k:
        s_mov_b32 s16, s14
        v_add_u32_e64 v1, s16, s16
        s_mov_b32 s17, s15
        s_add_u32 s14, s14, 1
        s_mov_b64 exec, s[16:17]
        global_store_dword v2, v1, s[14:15]
        s_endpgm
    """
    out, _ = opt(src, "copy-prop")
    # the reader cannot take s14 (one SGPR on the constant bus, gfx9), so it keeps
    # reading s16 between the two moves, which therefore stay apart
    assert "s_mov_b64 s[16:17]" not in out
    assert "s_mov_b32 s16, s14" in out and "s_mov_b32 s17, s15" in out


def test_constants_not_forwarded_where_an_inline_constant_means_something_else():
    """``s0 = 1.0`` is 0x3F800000; as an inline constant of an f16 instruction 1.0 would
    be 0x3C00, and a packed (VOP3P) instruction applies a constant to both halves, so
    ``v_pk_add_f16 v0, 1, v1`` adds (1, 1) where ``s0 = 1`` gives (1, 0)."""
    for src in ("""
        k:
        s_mov_b32 s0, 1.0
        v_add_f16_e64 v0, s0, v1
        global_store_dword v[2:3], v0, off
        s_endpgm
    """, """
        k:
        s_mov_b32 s0, 1
        v_pk_add_f16 v0, s0, v1
        global_store_dword v[2:3], v0, off
        s_endpgm
    """):
        out, _ = opt(src, "copy-prop")
        assert out == norm(src.replace("k:\n", "", 1))


def test_integer_constants_forwarded_into_32_bit_and_scalar_64_bit_operands():
    out, _ = opt("""
        k:
        s_mov_b32 s0, 2
        s_mov_b64 s[4:5], -1
        v_add_u32_e32 v0, s0, v1
        v_lshlrev_b64 v[6:7], s0, v[8:9]
        s_and_b64 s[6:7], s[4:5], exec
        s_mov_b64 exec, s[6:7]
        global_store_dword v[2:3], v0, off
        s_endpgm
    """, "copy-prop")
    assert out == norm("""
        v_add_u32_e32 v0, 2, v1
        v_lshlrev_b64 v[6:7], 2, v[8:9]
        s_and_b64 s[6:7], -1, exec
        s_mov_b64 exec, s[6:7]
        global_store_dword v[2:3], v0, off
        s_endpgm
    """)


def test_literal_constants_only_into_encodings_that_take_a_literal():
    """gfx9 VOP3 (``_e64``) has no literal dword; VOP2 ``_e32`` src0 does."""
    out, _ = opt("""
        k:
        s_mov_b32 s4, 0x12345
        v_add_u32_e64 v0, s4, v1
        v_add_u32_e32 v5, s4, v1
        global_store_dword v[2:3], v0, off
        global_store_dword v[2:3], v5, off
        s_endpgm
    """, "copy-prop")
    assert out == norm("""
        s_mov_b32 s4, 0x12345
        v_add_u32_e64 v0, s4, v1
        v_add_u32_e32 v5, 0x12345, v1
        global_store_dword v[2:3], v0, off
        global_store_dword v[2:3], v5, off
        s_endpgm
    """)
