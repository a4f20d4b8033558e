// The L2 read bandwidth of a GPU for bench/l2_probe.py: a buffer small enough to stay in L2
// read `reps` times by one launch with 16-byte loads that skip L1 (ld.global.cg), a grid of
// 2 blocks of 256 threads per SM, 8 loads in flight per thread. Each block writes the sum of
// the words it read, which the script checks, so no read is optimised away. Hand-written: a
// yardstick for the cost model (the devices' l2_bandwidth), not a generated kernel.
#include <cuda_runtime.h>
#include <stdint.h>

__device__ __forceinline__ uint4 l2_load(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__global__ void __launch_bounds__(256) l2_read(const uint4* __restrict__ p, long n, int reps,
                                               unsigned* out) {
  unsigned acc = 0;
  const long stride = (long)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; ++r) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 8 * stride) {
      uint4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u)  // predicated, so the last pass keeps 8 loads in flight too
        v[u] = i + u * stride < n ? l2_load(p + i + u * stride) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
      for (int u = 0; u < 8; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  __shared__ unsigned sum;
  if (threadIdx.x == 0) sum = 0;
  __syncthreads();
  atomicAdd(&sum, acc);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

extern "C" int l2_probe_launch(const void* buf, long bytes, int reps, void* out, int blocks,
                               cudaStream_t s) {
  l2_read<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(buf), bytes / 16, reps,
                                 static_cast<unsigned*>(out));
  return (int)cudaGetLastError();
}
