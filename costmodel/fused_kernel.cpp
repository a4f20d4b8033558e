#include "costmodel/fused_kernel.h"

#include "devices/support/check.h"

#include <algorithm>
#include <cmath>

namespace yirage::costmodel {
namespace {

double vector_rate(const devices::DeviceSpec& d, const GpuEfficiency& eff) {
  auto r = d.peak_rate(devices::DType::kFp32);
  return (r ? r->value : matrix_peak(d, devices::DType::kFp32).value) * eff.vector;
}

// The share of the matrix unit a block's matmuls use: rows / m when rows < m.
double row_fill(const devices::DeviceSpec& d, std::int64_t rows) {
  if (!d.onchip.matrix_unit || d.onchip.matrix_unit->m <= 0 || rows <= 0)
    return 1;
  std::int64_t m = d.onchip.matrix_unit->m;
  std::int64_t padded = (rows + m - 1) / m * m;
  return static_cast<double>(rows) / static_cast<double>(padded);
}

}  // namespace

KernelEstimate fused_kernel(const devices::DeviceSpec& d,
                            devices::DType dtype,
                            const GpuEfficiency& eff,
                            const FusedProgram& p) {
  CHECK(p.blocks > 0 && p.iterations > 0) << "empty fused kernel";
  KernelEstimate e;
  e.name = p.name;
  std::int64_t units =
      d.onchip.compute_units ? std::max<std::int64_t>(1, d.onchip.compute_units->value) : 1;
  double smem = d.onchip.scratchpad_per_unit ? d.onchip.scratchpad_per_unit->value.value : 0;
  std::int64_t per_unit =
      p.shared_bytes > 0 && smem > 0
          ? std::clamp<std::int64_t>(static_cast<std::int64_t>(smem / p.shared_bytes), 1, 2)
          : 1;
  std::int64_t slots = units * per_unit;
  e.tiles = p.blocks;
  e.waves = (p.blocks + slots - 1) / slots;
  e.wave_efficiency = static_cast<double>(p.blocks) / static_cast<double>(e.waves * slots);
  double iters = static_cast<double>(p.iterations);
  double l2 = d.onchip.l2 ? d.onchip.l2->value.value : 0;
  double loaded = 0;
  for (const FusedInput& in : p.inputs) {
    double all = in.tile_bytes * iters * static_cast<double>(p.blocks);
    loaded += all;
    e.hbm_bytes += in.replicated && in.tensor_bytes <= l2 / 2 ? in.tensor_bytes : all;
  }
  e.hbm_bytes += p.output_bytes * static_cast<double>(p.blocks);
  double hbm = d.memory_bandwidth.value.value * eff.memory;
  e.memory = devices::Seconds{e.hbm_bytes / hbm};
  devices::Seconds l2_time{d.onchip.l2_bandwidth ? loaded / d.onchip.l2_bandwidth->value.value
                                                 : 0.0};
  // Each wave runs whole blocks: a unit's share of the peak, per_unit blocks sharing it.
  double unit_matrix = matrix_peak(d, dtype).value * eff.matrix * row_fill(d, p.matrix_rows) /
                       static_cast<double>(units);
  double unit_vector = vector_rate(d, eff) / static_cast<double>(units);
  double per_block = p.matrix_flops * iters / unit_matrix +
                     (p.vector_flops * iters + p.epilogue_flops) / unit_vector;
  e.compute = devices::Seconds{static_cast<double>(e.waves * per_unit) * per_block};
  e.flops = (p.matrix_flops * iters + p.vector_flops * iters + p.epilogue_flops) *
            static_cast<double>(p.blocks);
  double clock = d.onchip.clock ? d.onchip.clock->value.value : 0;
  if (clock > 0) {
    double cycles = p.serial_steps * eff.block_step_cycles +
                    p.mma_steps * eff.block_mma_step_cycles + p.barriers * eff.block_barrier_cycles;
    e.serial = devices::Seconds{static_cast<double>(e.waves) * cycles / clock};
  }
  e.steady = std::max({e.compute, e.memory, l2_time, e.serial});
  double first = 0;
  for (const FusedInput& in : p.inputs)
    first += in.tile_bytes;
  double concurrent = static_cast<double>(std::min(p.blocks, slots));
  e.ramp_up = devices::Seconds{concurrent * first / hbm};
  e.ramp_down = devices::Seconds{concurrent * p.output_bytes / hbm};
  e.launch = kernel_launch(eff);
  e.host = eff.in_graph ? devices::Seconds{} : eff.host;
  e.tile = "fused " + std::to_string(p.blocks) + " blocks x " + std::to_string(p.iterations) +
           " iterations";
  return e;
}

}  // namespace yirage::costmodel
