// Kernels whose clang -O3 gfx942 code needs s_nop padding (MFMA of every pass count and
// kind, DGEMM, SMFMAC, DOT, DPP, readlane, setreg, v_div_fmas, wide stores).  Used by
// tests/analysis/test_hazards_llvm.py: LLVM's hazard recognizer pads with the minimum, so the
// analysis must ask for exactly that many wait states before each padded instruction.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef float  float4  __attribute__((ext_vector_type(4)));
typedef float  float16 __attribute__((ext_vector_type(16)));
typedef half   half4   __attribute__((ext_vector_type(4)));
typedef double double4 __attribute__((ext_vector_type(4)));

kernel void xdl_chain(global float16 *out, global half4 *a, global half4 *b) {
  int i = get_local_id(0);
  float16 acc = 0;
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[i], b[i], acc, 0, 0, 0);
  // srcA/B from an MFMA result -> rule 22; VALU read of result -> rule 23
  half4 x = (half4)((half)acc[0], (half)acc[1], (half)acc[2], (half)acc[3]);
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(x, b[i], acc, 0, 0, 0);
  out[i] = acc * 2.0f;
}

kernel void f32_chain(global float16 *out, global float *a, global float *b) {
  int i = get_local_id(0);
  float16 acc = 0;
  acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[i], b[i], acc, 0, 0, 0);
  acc = __builtin_amdgcn_mfma_f32_32x32x2f32(acc[3], b[i], acc, 0, 0, 0);
  out[i] = acc + 1.0f;
}

kernel void small_chain(global float4 *out, global half4 *a, global half4 *b) {
  int i = get_local_id(0);
  float4 acc = 0;
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[i], b[i], acc, 0, 0, 0);
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[i], b[i], acc, 0, 0, 0);
  float4 acc2 = __builtin_amdgcn_mfma_f32_4x4x4f16(a[i], b[i], acc, 0, 0, 0);
  out[i] = acc2 + acc;
}

kernel void dgemm_chain(global double4 *out, global double *a, global double *b) {
  int i = get_local_id(0);
  double4 acc = 0;
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[i], b[i], acc, 0, 0, 0);
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(acc[1], b[i], acc, 0, 0, 0);
  out[i] = acc * 3.0;
  double d = __builtin_amdgcn_mfma_f64_4x4x4f64(a[i], b[i], 0.0, 0, 0, 0);
  out[i+64] = (double4)(d, d, d, d);
}

kernel void valu_misc(global float *out, global float *in, int s) {
  int i = get_local_id(0);
  float r = __builtin_amdgcn_rcpf(in[i]);
  float y = r * in[i+1];
  int l = __builtin_amdgcn_readfirstlane(i * s);
  int dpp = __builtin_amdgcn_update_dpp(0, (int)y + l, 0x4e, 0xf, 0xf, 1);
  out[i] = dpp + __builtin_amdgcn_readlane(dpp, l & 63);
}

typedef half half2 __attribute__((ext_vector_type(2)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef float float2 __attribute__((ext_vector_type(2)));

kernel void div_kernel(global float *out, global float *a, global float *b) {
  int i = get_local_id(0);
  out[i] = a[i] / b[i];
}

kernel void dot_chain(global float *out, global half2 *a, global half2 *b) {
  int i = get_local_id(0);
  float d = __builtin_amdgcn_fdot2(a[i], b[i], 0.0f, false);
  d = __builtin_amdgcn_fdot2(a[i+1], b[i], d, false);
  out[i] = d * d;
}

kernel void smfmac_chain(global float4 *out, global half4 *a, global half8 *b, global int *idx) {
  int i = get_local_id(0);
  float4 acc = 0;
  acc = __builtin_amdgcn_smfmac_f32_16x16x32_f16(a[i], b[i], acc, idx[i], 0, 0);
  acc = __builtin_amdgcn_smfmac_f32_16x16x32_f16(a[i+1], b[i], acc, idx[i], 0, 0);
  out[i] = acc;
}

kernel void xf32_chain(global float4 *out, global float2 *a, global float2 *b) {
  int i = get_local_id(0);
  float4 acc = 0;
  acc = __builtin_amdgcn_mfma_f32_16x16x8_xf32(a[i], b[i], acc, 0, 0, 0);
  float2 x = (float2)(acc[0], acc[1]);
  acc = __builtin_amdgcn_mfma_f32_16x16x8_xf32(x, b[i], acc, 0, 0, 0);
  out[i] = acc;
}

kernel void fp8_chain(global float4 *out, global long *a, global long *b) {
  int i = get_local_id(0);
  float4 acc = 0;
  acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a[i], b[i], acc, 0, 0, 0);
  acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a[i+1], b[i], acc, 0, 0, 0);
  out[i] = acc;
}

kernel void lane_sel(global int *out, global int *in) {
  int i = get_local_id(0);
  int s = __builtin_amdgcn_readfirstlane(in[i]);
  out[i] = __builtin_amdgcn_readlane(in[i+1], s);
}

kernel void mode_set(global float *out, global float *in, int m) {
  int i = get_local_id(0);
  __builtin_amdgcn_s_setreg(0x801, m);
  out[i] = in[i] + __builtin_amdgcn_s_getreg(0x801);
}

kernel void wide_store(global float4 *out, global float4 *in) {
  int i = get_local_id(0);
  float4 v = in[i];
  out[i] = v;
  v.x = v.x * 2.0f;
  out[i+1] = v;
}
