v_mov_b32 v3, 0
global_load_dword v2, v3, s[0:1] offset:16
