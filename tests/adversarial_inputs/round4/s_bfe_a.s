s_bfe_i32 s1, s0, 0x140014
