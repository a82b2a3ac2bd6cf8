global_load_lds_dword v2, s[0:1] offset:16
