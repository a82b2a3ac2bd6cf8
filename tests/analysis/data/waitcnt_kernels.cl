// Kernels whose clang -O3 gfx942 code mixes FLAT, SMEM, LDS and calls (get_local_id is an
// external function without device libraries): tests/analysis/test_waitcnt_llvm.py checks the
// waitcnt analysis against the waits LLVM inserted.
kernel void flat_mix(global float *out, global float *g, int s, local float *l, int sel) {
  int i = get_local_id(0);
  float *p = sel ? (float *)g : (float *)l;
  float a = p[i];
  l[i] = a * 2.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  float b = p[i + s];
  out[i] = a + b + l[i ^ 3];
}

kernel void smem_mix(global float *out, constant float *c, local float *l, int n) {
  int i = get_local_id(0);
  l[i] = c[n] * c[n + 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i] = l[(i + 1) & 63] + c[n + 2];
}
