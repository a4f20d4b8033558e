// The generic block path's serial latency: block_latency counts what the emitter writes, the
// emitter puts a barrier between an accumulator and an op that reuses its input's slot, and
// the committed calibration is the fit of the committed measured kernels.
#include "codegen/cost/block_latency.h"

#include "tests/unit/test_data.h"

#include "codegen/backend/backend.h"
#include "codegen/cost/program_validation.h"
#include "codegen/ir/ugraph_json.h"
#include "codegen/lower/block_program.h"
#include "costmodel/measured.h"
#include "devices/support/diagnostics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace yirage::codegen {
namespace {

namespace fs = std::filesystem;

const fs::path kMeasured = devices::data_dir() / "benchmarks" / "H100-SXM";

KernelGraph measured_ugraph(const std::string& name) {
  fs::path f = kMeasured / "ugraphs" / (name + ".ugraph.json");
  std::ifstream in(f);
  return ugraph_from_json(std::string(std::istreambuf_iterator<char>(in), {}), f.string());
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The barriers of launch 0 of the emitted CUDA kernel: in its for-loop body, and outside it.
std::pair<std::size_t, std::size_t> emitted_barriers(const KernelGraph& g) {
  std::string cuda = emit_kernels(lower(g), Backend::kCuda).text;
  std::size_t begin = cuda.find(g.name + "_launch0(");
  std::size_t end = cuda.find("\n}\n", begin);
  std::string kernel = cuda.substr(begin, end - begin);
  std::size_t loop = kernel.find("for (long it = 0;");
  std::size_t loop_end = kernel.find("\n  }\n", loop);  // the loop's brace; nested ones sit deeper
  std::string body = kernel.substr(loop, loop_end - loop);
  std::size_t in_loop = count(body, "YR_SYNC();");
  return {in_loop, count(kernel, "YR_SYNC();") - in_loop};
}

TEST(BlockLatency, CountsTheBarriersTheEmitterWrites) {
  for (const char* name : {"gqa_decode", "lora_linear", "lora_m64_serial", "gemm_softmax_serial"}) {
    SCOPED_TRACE(name);
    KernelGraph g = measured_ugraph(name);
    BlockProgram p = lower(g);
    ASSERT_TRUE(p.steps[0].block);
    const LoweredBlock& b = *p.steps[0].block;
    BlockLatency l = block_latency(b.graph, b.tiles, true);
    auto [in_loop, outside] = emitted_barriers(g);
    EXPECT_EQ(l.barriers,
              static_cast<double>(in_loop * static_cast<std::size_t>(b.graph.forloop) + outside));
  }
}

TEST(BlockLatency, CountsTheDependentStepsOfGqaDecode) {
  // Grid [2, 128] x 64 iterations of 64 keys, 2 query rows a block, 256 threads: S = Q K^T
  // (64 multiply-adds a thread), exp (1), O += P V (64), the row sum of P (64), O's sum (1);
  // after the loop O / sum (1) and the saver (1). No matmul has whole m16 tiles.
  BlockProgram p = lower(measured_ugraph("gqa_decode"));
  const LoweredBlock& b = *p.steps[0].block;
  BlockLatency l = block_latency(b.graph, b.tiles, true);
  EXPECT_EQ(l.steps, 64 * (64 + 1 + 64 + 64 + 1) + 2);
  EXPECT_EQ(l.mma_steps, 0);
}

// lora_m64's µGraph as the search chose it: W' = W + A B, its loop summing the W tile into an
// accumulator and then multiplying A B into the slot where the W tile was. Without a barrier
// between them the matmul overwrote tiles still being read (an H100 measured err 8.6e+04).
TEST(GpuBackend, AnOpAfterAnAccumulatorWaitsForIt) {
  std::string cuda = emit_kernels(lower(measured_ugraph("lora_m64_serial")), Backend::kCuda).text;
  std::size_t accum = cuda.find("yr_accum_add(kAccSum");
  std::size_t matmul = cuda.find("yr_matmul_mma(", accum);
  ASSERT_NE(accum, std::string::npos);
  ASSERT_NE(matmul, std::string::npos);
  EXPECT_NE(cuda.substr(accum, matmul - accum).find("YR_SYNC();"), std::string::npos);
}

TEST(GpuBackend, Fp32CublasMatmulsRunInTf32) {
  std::string cuda = emit_kernels(lower(measured_ugraph("gqa_library")), Backend::kCuda).text;
  EXPECT_NE(cuda.find("t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F"),
            std::string::npos);
}

TEST(ProgramValidation, PricesEveryMeasuredKernelWithItsMuGraph) {
  costmodel::MeasuredFile file = costmodel::load_measured(kMeasured / "generated_kernels.csv");
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  costmodel::Validation v = validate_programs(file, testing::bundled_registry(), &cal);
  ASSERT_EQ(v.points.size(), file.rows.size());
  for (const costmodel::ValidationPoint& p : v.points)
    EXPECT_GT(p.estimate_s, 0) << p.row.shape;
  // GQA decode's fused kernel is bound by its serial latency, within 10% of the measurement.
  const costmodel::ValidationPoint& gqa = v.points[3];
  ASSERT_EQ(gqa.row.shape, "ugraphs/gqa_decode.ugraph.json");
  EXPECT_NE(gqa.choice.find("serial latency"), std::string::npos);
  EXPECT_LT(std::abs(gqa.error), 0.10);
}

// The committed calibration holds the fit of the committed measurements: refitting gives the
// same cycles and launch, and the held-out rows fit better with them than without.
TEST(ProgramValidation, TheCommittedBlockCyclesAreTheFitOfTheMeasuredKernels) {
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  const costmodel::GpuEfficiency* committed = cal.find_gpu("H100-SXM");
  ASSERT_NE(committed, nullptr);
  std::vector<costmodel::GpuCalibrationFit> fits(1);
  fits[0].device = "H100-SXM";
  fits[0].efficiency = *committed;
  fit_block_latency({costmodel::load_measured(kMeasured / "generated_kernels.csv"),
                     costmodel::load_measured(kMeasured / "programs_graph.csv")},
                    testing::bundled_registry(), fits);
  ASSERT_TRUE(fits[0].block);
  // The file holds three significant digits: within half a unit of the third (0.5%).
  auto near = [](double fit, double held) {
    EXPECT_NEAR(fit, held, 0.005 * held);
  };
  near(fits[0].block->step_cycles, committed->block_step_cycles);
  near(fits[0].block->mma_step_cycles, committed->block_mma_step_cycles);
  near(fits[0].block->barrier_cycles, committed->block_barrier_cycles);
  EXPECT_NEAR(fits[0].block->launch.value, committed->program_launch.value, 1e-9);
  EXPECT_GT(committed->program_launch.value, 0);
  EXPECT_LT(fits[0].block->held_out_mape, fits[0].block->unpriced_mape / 2);
}

TEST(ProgramValidation, AMissingMuGraphNamesTheRow) {
  costmodel::MeasuredFile file = costmodel::parse_measured(
      "/tmp/k.csv",
      "# provenance\nkind,op,device,shape,time_s\nprogram,p,H100-SXM,no/such.json,1e-05\n");
  try {
    validate_programs(file, testing::bundled_registry(), nullptr);
    FAIL() << "no error";
  } catch (const devices::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/tmp/k.csv:3:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no µGraph file /tmp/no/such.json"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace yirage::codegen
