	.amdgcn_target	"amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version	5
	.text
	.p2align	8
	.globl	vadd_f32
	.type	vadd_f32,@function
	.protected	vadd_f32
vadd_f32:
	s_load_dword s3, s[0:1], 0x18
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshl_or_b32 v8, s2, 8, v0
	s_waitcnt lgkmcnt(0)
	v_cmp_gt_i32_e32 vcc, s3, v8
	s_and_saveexec_b64 s[2:3], vcc
	s_cbranch_execz .LEND
	v_accvgpr_write_b32 a0, v8
	s_nop 1
	v_accvgpr_read_b32 v7, a0
	v_lshlrev_b32_e32 v12, 2, v7
	global_load_dword v5, v12, s[4:5]
	s_waitcnt vmcnt(0)
	global_store_dword v12, v5, s[8:9]
.LEND:
	s_endpgm
.Lasmevo_end_vadd_f32:
	.size	vadd_f32, .Lasmevo_end_vadd_f32-vadd_f32
	.fill	257, 4, 0xbf800000
	.section	.rodata,"a",@progbits
	.p2align	6
	.amdhsa_kernel vadd_f32
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 28
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 24
		.amdhsa_accum_offset 12
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.type	__oclc_ABI_version,@object
	.hidden	__oclc_ABI_version
__oclc_ABI_version:
	.byte	0xf4, 0x01, 0x00, 0x00
	.size	__oclc_ABI_version, 4
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count: 4
    .args:
      - .actual_access: 'read_only'
        .address_space: 'global'
        .is_const: true
        .is_restrict: true
        .offset: 0
        .size: 8
        .type_name: 'float*'
        .value_kind: 'global_buffer'
      - .actual_access: 'read_only'
        .address_space: 'global'
        .is_const: true
        .is_restrict: true
        .offset: 8
        .size: 8
        .type_name: 'float*'
        .value_kind: 'global_buffer'
      - .actual_access: 'write_only'
        .address_space: 'global'
        .is_restrict: true
        .offset: 16
        .size: 8
        .type_name: 'float*'
        .value_kind: 'global_buffer'
      - .offset: 24
        .size: 4
        .type_name: 'int'
        .value_kind: 'by_value'
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 28
    .language: 'OpenCL C'
    .language_version:
      - 2
      - 0
    .max_flat_workgroup_size: 256
    .name: 'vadd_f32'
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count: 30
    .sgpr_spill_count: 0
    .symbol: 'vadd_f32.kd'
    .uses_dynamic_stack: false
    .vgpr_count: 16
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target: 'amdgcn-amd-amdhsa--gfx942'
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
