; Example kernel for examples/edit_vadd_double.json (see docs/passes.md):
;   asmevo-opt --passes='window-edit<file=examples/edit_vadd_double.json>' \
;       examples/edit_vadd_double.s -o out.s
	.text
	.globl	k
	.p2align	8
	.type	k,@function
k:
	global_load_dword v1, v[4:5], off
	global_load_dword v2, v[6:7], off
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v1, v1, v2
	global_store_dword v[4:5], v1, off
	s_endpgm
