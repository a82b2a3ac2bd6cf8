s_mov_b32 s1, 0
s_cmp_eq_u32 s0, s0
s_cselect_b32 s2, 0, 0
s_cmp_lg_u32 s2, 0
