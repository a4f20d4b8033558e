// How the order of a GEMV's weight reads bounds its bandwidth: every byte of a row-major
// [K, N] fp16 matrix read once with 16-byte non-allocating loads, the matrix cut into a grid
// of (N / NB column tiles) x (KS row slices), one block a tile slice, its region read row by
// row, U loads in flight per thread. NB = N is a row slab (contiguous memory, as
// bench/stream_probe.cu reads); NB = 512, KS = 11 is the direct GEMV path's cut for
// X[1, 4096] x W[4096, 6144]. Hand-written yardstick, not a generated kernel.
// Prints CSV rows (median per-call time of 20 launches captured in a CUDA graph, 50 replays,
// buffers rotated past the L2); data/benchmarks/H100-SXM/read_patterns.csv holds a run.
//   nvcc -O3 -arch=sm_90a bench/pattern_probe.cu -o pattern_probe && ./pattern_probe
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

__device__ __forceinline__ uint4 stream_load(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// The region's 16-byte pieces row by row: piece p is row p >> nb8_log2, piece p & (nb8 - 1)
// of the tile's row (nb8_log2 < 0: the region is contiguous, a slab of whole rows).
// rg > 0 interleaves the slices: slice ks reads the groups of rg rows ks, ks + KS, ...
// (k a multiple of rg x KS), so that the whole grid reads neighbouring rows at once.
template <int U>
__global__ void tile_read(const uint4* w, long n8, int k, int nb8_log2, int ks_count, int rg,
                          unsigned* out) {
  const int ks = blockIdx.y;
  const int r0 = rg ? 0 : (int)((long)ks * k / ks_count), r1 = rg ? k / ks_count : (int)((long)(ks + 1) * k / ks_count);
  const bool slab = nb8_log2 < 0;
  const int nb8 = slab ? (int)n8 : 1 << nb8_log2;
  const int pieces = (r1 - r0) * nb8;
  const uint4* base = w + (long)r0 * n8 + (slab ? 0 : (long)blockIdx.x * nb8);
  auto row = [&](int lr) { return rg ? (lr / rg * ks_count + ks) * rg + lr % rg : lr; };
  auto at = [&](int p) {
    if (slab && !rg) return base + p;
    const int lr = slab ? p / nb8 : p >> nb8_log2, c = slab ? p % nb8 : p & (nb8 - 1);
    return base + (long)row(lr) * n8 + c;
  };
  const int t = blockDim.x;
  unsigned acc = 0;
  int i = threadIdx.x;
  for (; i + (U - 1) * t < pieces; i += U * t) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = stream_load(at(i + u * t));
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < pieces; i += t) acc ^= stream_load(at(i)).x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// bench/stream_probe.cu's kernel, the grid cut into `groups` of blocks, each sweeping its own
// part of the buffer grid-stride (groups = 1: the probe itself): U loads in flight a thread.
// tail16: the tail's loads read all 16 bytes of a piece (stream_load), as the sweep's do;
// without, as bench/stream_probe.cu, 4 bytes (`p[i].x`).
// mode: 0 ld.global.nc.L1::no_allocate, 1 __ldg, 2 __ldcs (evict-first), 3 only the first
// 4 bytes of each piece (a diagnostic: whether a narrow load moves fewer bytes).
template <int mode>
__device__ __forceinline__ uint4 load_mode(const uint4* p) {
  if (mode == 1) return __ldg(p);
  if (mode == 2) return __ldcs(p);
  if (mode == 3) return make_uint4(__ldg(reinterpret_cast<const unsigned*>(p)), 0u, 0u, 0u);
  return stream_load(p);
}

template <int U, bool tail16, int mode = 0>
__global__ void stream_read(const uint4* __restrict__ p, long n, int groups, unsigned* out) {
  const int per = gridDim.x / groups, grp = blockIdx.x / per;
  const long part = n / groups;
  p += grp * part;
  n = part;
  unsigned acc = 0;
  long stride = (long)per * blockDim.x;
  long i = (long)(blockIdx.x % per) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load_mode<mode>(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    if (tail16) {
      const uint4 v = load_mode<mode>(p + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    } else {
      acc ^= p[i].x;
    }
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// A GEMV-shaped sweep: a thread keeps one 16-byte column piece and walks rows. A block's T
// threads are TC pieces across (TC x 16 contiguous bytes a row) by T / TC row phases; blocks
// tile the n8 pieces of a row in n8 / TC column blocks and the rows in the rest. With
// interleave, the grid's row phases take rows rp, rp + RP, ... (the whole grid sweeps the
// matrix as one front); without, each phase a contiguous run of rows (a K slice).
template <int U>
__global__ void gemv_read(const uint4* w, int n8, int k, int tc, int interleave, unsigned* out) {
  const int cb = n8 / tc, tr = blockDim.x / tc;
  if (blockIdx.x >= cb * (gridDim.x / cb)) return;  // blocks past the last whole row of blocks
  const int cp = (blockIdx.x % cb) * tc + threadIdx.x % tc;
  const int rp = (blockIdx.x / cb) * tr + threadIdx.x / tc;
  const int phases = (gridDim.x / cb) * tr;
  const int r0 = interleave ? rp : (int)((long)rp * k / phases);
  const int step = interleave ? phases : 1;
  const int r1 = interleave ? k : (int)((long)(rp + 1) * k / phases);
  unsigned acc = 0;
  int r = r0;
  for (; r + (U - 1) * step < r1; r += U * step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = stream_load(w + (long)(r + u * step) * n8 + cp);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; r < r1; r += step) acc ^= stream_load(w + (long)r * n8 + cp).x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// The copy engine's reads: each block streams chunks blockIdx.x, + gridDim.x, ... of `chunk`
// bytes into a ring of `stages` shared-memory slots with cp.async.bulk (one thread issues,
// an mbarrier counts the bytes), and XORs one word a thread from each landed chunk.
__global__ void bulk_read(const char* p, long bytes, int chunk, int stages, int seq, unsigned* out) {
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long bar[8];
  const long chunks = bytes / chunk;
  if (threadIdx.x == 0)
    for (int st = 0; st < stages; ++st)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar[st])));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  auto issue = [&](long c, int st) {
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    const unsigned dst = (unsigned)__cvta_generic_to_shared(ring + (long)st * chunk);
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(p + c * chunk), "r"(chunk), "r"(b) : "memory");
  };
  // seq: block b reads chunks [b per, (b + 1) per) in order, a contiguous region of its own.
  const long per = (chunks + gridDim.x - 1) / gridDim.x;
  const long step = seq ? 1 : gridDim.x, c0 = seq ? blockIdx.x * per : blockIdx.x;
  const long end = seq ? (c0 + per < chunks ? c0 + per : chunks) : chunks;
  long c = c0;
  if (threadIdx.x == 0)
    for (int st = 0; st < stages && c + (long)st * step < end; ++st) issue(c + (long)st * step, st);
  unsigned acc = 0;
  for (int it = 0; c < end; ++it, c += step) {
    const int st = it % stages;
    const unsigned parity = (it / stages) & 1;
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    asm volatile(
        "{ .reg .pred P; WAIT: mbarrier.try_wait.parity.shared.b64 P, [%0], %1; @!P bra WAIT; }"
        ::"r"(b), "r"(parity) : "memory");
    acc ^= reinterpret_cast<const unsigned*>(ring + (long)st * chunk)[threadIdx.x];
    __syncthreads();  // every thread has read the slot before it is refilled
    const long next = c + (long)stages * step;
    if (threadIdx.x == 0 && next < end) issue(next, st);
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// A GEMV over W^T (PyTorch's [N, K] layout) as the copy engine would read it: block b owns
// `rows` consecutive rows of `row_bytes` (a contiguous region) and sweeps them column strip
// by strip: a stage is `seg` bytes of each of its rows (rows copies of cp.async.bulk, issued
// by warp 0's lanes, one mbarrier), `stages` of them in flight.
__global__ void strip_read(const char* p, long row_bytes, int rows, int seg, int stages, unsigned* out) {
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long bar[8];
  const int steps = (int)(row_bytes / seg), stage_bytes = rows * seg;
  const char* base = p + (long)blockIdx.x * rows * row_bytes;
  if (threadIdx.x == 0)
    for (int st = 0; st < stages; ++st)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar[st])));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  auto issue = [&](int it, int st) {  // warp 0
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    if (threadIdx.x == 0)
      asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(stage_bytes) : "memory");
    __syncwarp();
    for (int r = threadIdx.x; r < rows; r += 32) {
      const unsigned dst = (unsigned)__cvta_generic_to_shared(ring + (long)st * stage_bytes + r * seg);
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(dst), "l"(base + r * row_bytes + (long)it * seg), "r"(seg), "r"(b) : "memory");
    }
  };
  if (threadIdx.x < 32)
    for (int st = 0; st < stages && st < steps; ++st) issue(st, st);
  unsigned acc = 0;
  for (int it = 0; it < steps; ++it) {
    const int st = it % stages;
    const unsigned parity = (it / stages) & 1;
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
    asm volatile(
        "{ .reg .pred P; WAIT: mbarrier.try_wait.parity.shared.b64 P, [%0], %1; @!P bra WAIT; }"
        ::"r"(b), "r"(parity) : "memory");
    acc ^= reinterpret_cast<const unsigned*>(ring + (long)st * stage_bytes)[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32 && it + stages < steps) issue(it + stages, st);
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

struct Cut {
  const char* name;
  int nb, ks, threads, u, rg;  // nb > 1e6: gemv_read, tc = nb - 1e6, ks blocks, rg = interleave
};

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median per-call time (us) of 20 launches captured in a graph, the sets rotated.
static float time_cut(const Cut& c, const std::vector<uint4*>& sets, int k, int n, unsigned* out) {
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  const int calls = 20;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) {
    const uint4* w = sets[i % sets.size()];
    if (c.nb < 0) {  // the stream probe: c.ks blocks in -c.nb groups
      const long pieces = (long)k * n / 8;
      if (c.rg == 2) stream_read<8, true, 1><<<c.ks, c.threads, 0, s>>>(w, pieces, -c.nb, out);
      else if (c.rg == 3) stream_read<8, true, 2><<<c.ks, c.threads, 0, s>>>(w, pieces, -c.nb, out);
      else if (c.rg == 4) stream_read<8, true, 3><<<c.ks, c.threads, 0, s>>>(w, pieces, -c.nb, out);
      else if (c.rg) stream_read<8, true><<<c.ks, c.threads, 0, s>>>(w, pieces, -c.nb, out);
      else stream_read<8, false><<<c.ks, c.threads, 0, s>>>(w, pieces, -c.nb, out);
      continue;
    }
    if (c.nb >= 3000000) {  // strip_read: seg = nb - 3e6 bytes, rows = ks, u stages, 8 KB rows
      const int seg = c.nb - 3000000;
      const long row_bytes = 8192, rows_total = (long)k * n * 2 / row_bytes;
      strip_read<<<(unsigned)(rows_total / c.ks), c.threads, (size_t)seg * c.ks * c.u, s>>>(
          reinterpret_cast<const char*>(w), row_bytes, c.ks, seg, c.u, out);
      continue;
    }
    if (c.nb >= 2000000) {  // bulk_read: chunk = nb - 2e6 bytes, stages = u, ks blocks, rg = seq
      const int chunk = c.nb - 2000000;
      bulk_read<<<c.ks, c.threads, (size_t)chunk * c.u, s>>>(reinterpret_cast<const char*>(w), (long)k * n * 2, chunk, c.u, c.rg, out);
      continue;
    }
    if (c.nb > 1000000) {
      const int tc = c.nb - 1000000;
      if (c.u == 8) gemv_read<8><<<c.ks, c.threads, 0, s>>>(w, n / 8, k, tc, c.rg, out);
      else gemv_read<4><<<c.ks, c.threads, 0, s>>>(w, n / 8, k, tc, c.rg, out);
      continue;
    }
    dim3 grid(n / c.nb, c.ks);
    const int lg = c.nb == n ? -1 : __builtin_ctz(c.nb / 8);
    if (c.u == 4) tile_read<4><<<grid, c.threads, 0, s>>>(w, n / 8, k, lg, c.ks, c.rg, out);
    else if (c.u == 8) tile_read<8><<<grid, c.threads, 0, s>>>(w, n / 8, k, lg, c.ks, c.rg, out);
    else tile_read<2><<<grid, c.threads, 0, s>>>(w, n / 8, k, lg, c.ks, c.rg, out);
  }
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, s));
  std::vector<float> times;
  for (int r = 0; r < 50; ++r) {
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms * 1000.0f / calls);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(s));
  return median(times);
}

int main() {
  struct Shape {
    const char* name;
    int k, n;
  };
  const Shape shapes[] = {{"W[4096x6144]", 4096, 6144}, {"W[8192x14336]", 8192, 14336}};
  const Cut cuts[] = {
      // nb < 0: the stream probe (U = 8), ks blocks in -nb groups, rg: 0 = its 4-byte tail,
      // 1 = every byte (16-byte loads), 2 __ldg, 3 __ldcs, 4 = 4 bytes of each piece only
      {"probe 528x256 U8", -1, 528, 256, 8, 0},
      {"probe 528x256 U8 tail16", -1, 528, 256, 8, 1},
      {"probe 512x256 U8 tail16", -1, 512, 256, 8, 1},
      {"probe 512x256 U8 ldg", -1, 512, 256, 8, 2},
      {"probe 512x256 U8 ldcs", -1, 512, 256, 8, 3},
      {"probe 512x256 U8 4B of 16", -1, 512, 256, 8, 4},
      {"probe 1024x256 U8 tail16", -1, 1024, 256, 8, 1},
      // nb >= 2e6: bulk_read, chunk nb - 2e6 bytes, u stages, ks blocks of 128 threads
      {"bulk 264 blocks 16KBx4", 2016384, 264, 128, 4, 0},
      {"bulk 264 blocks 32KBx3", 2032768, 264, 128, 3, 0},
      {"bulk 132 blocks 32KBx6", 2032768, 132, 128, 6, 0},
      {"bulk 528 blocks 8KBx4", 2008192, 528, 128, 4, 0},
      {"bulk 224 blocks 16KBx4", 2016384, 224, 128, 4, 0},
      // rg = 1: each block a contiguous region of its own (a weight stored tile by tile)
      {"bulk seq 224 blocks 16KBx4", 2016384, 224, 128, 4, 1},
      {"bulk seq 224 blocks 32KBx2", 2032768, 224, 128, 2, 1},
      {"bulk seq 224 blocks 32KBx3", 2032768, 224, 128, 3, 1},
      {"bulk seq 132 blocks 32KBx6", 2032768, 132, 128, 6, 1},
      {"bulk seq 264 blocks 16KBx4", 2016384, 264, 128, 4, 1},
      // nb >= 3e6: strip_read, seg = nb - 3e6 bytes of each of ks 8 KB rows a stage, u stages
      {"strip 128 rows 128B x6", 3000128, 128, 128, 6, 0},
      {"strip 128 rows 256B x3", 3000256, 128, 128, 3, 0},
      {"strip 128 rows 256B x4", 3000256, 128, 128, 4, 0},
      {"strip 128 rows 512B x2", 3000512, 128, 128, 2, 0},
      {"strip 64 rows 512B x4", 3000512, 64, 128, 4, 0},
      {"strip 64 rows 1KB x2", 3001024, 64, 128, 2, 0},
      {"strip 64 rows 1KB x3", 3001024, 64, 128, 3, 0},
      {"strip 32 rows 2KB x3", 3002048, 32, 128, 3, 0},
      // gemv_read: nb = 1e6 + TC, ks = blocks, rg = interleave
      {"gemv TC64 512x256 U8 inter", 1000064, 512, 256, 8, 1},
      {"tile512 KS=11 T=576 U=4", 512, 11, 576, 4, 0},
  };
  unsigned* out;
  CHECK(cudaMalloc(&out, 1 << 20));
  printf("pattern,matrix,blocks,time_s,gbps\n");
  CHECK(cudaFuncSetAttribute(bulk_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
  CHECK(cudaFuncSetAttribute(strip_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
  for (const Shape& sh : shapes) {
    const size_t bytes = (size_t)sh.k * sh.n * 2;
    const size_t count = std::max<size_t>(2, (100u << 20) / bytes + 2);
    std::vector<uint4*> sets(count);
    for (auto& p : sets) {
      CHECK(cudaMalloc(&p, bytes));
      CHECK(cudaMemset(p, 0x3c, bytes));  // non-zero halves; the reads' values are not used
    }
    for (Cut c : cuts) {
      if (c.nb == 0) c.nb = sh.n;
      if (c.nb > 0 && c.nb < 1000000 && sh.n % c.nb) continue;
      if (c.nb > 1000000 && c.nb < 2000000 && (sh.n / 8) % (c.nb - 1000000)) continue;
      const float us = time_cut(c, sets, sh.k, sh.n, out);
      const int blocks = c.nb >= 3000000 ? (int)((long)sh.k * sh.n * 2 / 8192 / c.ks)
                         : c.nb < 0 || c.nb > 1000000 ? c.ks : (sh.n / c.nb) * c.ks;
      printf("%s,%s,%d,%.4e,%.0f\n", c.name, sh.name, blocks, us * 1e-6, bytes / (us * 1e3));
    }
    for (auto p : sets) CHECK(cudaFree(p));
  }
  return 0;
}
