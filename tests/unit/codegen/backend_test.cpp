// The code generators end to end at small shapes: every bundled program is superoptimized,
// its µGraph lowered and emitted; the CPU kernel is compiled with g++ -fopenmp, run on random
// inputs and checked against the program evaluated in double; the CUDA kernel is compiled
// with nvcc for sm_80 and sm_90a and the HIP kernel with hipcc for gfx90a (skipped, saying
// so, where the compiler is absent).
#include "codegen/backend/backend.h"

#include "tests/unit/test_data.h"

#include "codegen/ir/ugraph_json.h"
#include "codegen/lower/block_program.h"
#include "codegen/program/program_loader.h"
#include "codegen/search/superoptimizer.h"
#include "codegen/verify/arith.h"
#include "codegen/verify/evaluator.h"
#include "costmodel/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

namespace yirage::codegen {
namespace {

namespace fs = std::filesystem;

// The same small shapes as superoptimizer_test.cpp.
const std::map<std::string, std::map<std::string, Shape>>& small_shapes() {
  static const std::map<std::string, std::map<std::string, Shape>> s = {
      {"gated_mlp", {{"X", {8, 64}}, {"W1", {64, 128}}, {"W2", {64, 128}}}},
      {"gemm_layernorm", {{"A", {16, 64}}, {"B", {64, 64}}}},
      {"gemm_softmax", {{"A", {16, 32}}, {"B", {32, 64}}}},
      {"gqa_decode", {{"Q", {2, 8, 16}}, {"K", {2, 16, 64}}, {"V", {2, 64, 16}}}},
      {"lora_linear", {{"X", {8, 32}}, {"W", {32, 64}}, {"A", {32, 4}}, {"B", {4, 64}}}},
      {"qknorm_attention", {{"Q", {2, 8, 16}}, {"K", {2, 16, 64}}, {"V", {2, 64, 16}}}},
      {"rmsnorm_linear", {{"X", {4, 64}}, {"W", {64, 32}}}},
  };
  return s;
}

struct Case {
  Program program;
  BlockProgram lowered;
};

// The superoptimizer's choice; with YIRAGE_UGRAPH_CACHE=DIR set (development), µGraphs are
// saved there and read back on later runs instead of searched again.
KernelGraph best_ugraph(const Program& p,
                        const devices::DeviceSpec& device,
                        const costmodel::GpuEfficiency& eff,
                        const SuperoptimizeOptions& o) {
  const char* cache = std::getenv("YIRAGE_UGRAPH_CACHE");
  fs::path file = cache != nullptr ? fs::path(cache) / (p.graph.name + ".ugraph.json") : fs::path();
  if (cache != nullptr && fs::exists(file)) {
    std::ifstream in(file);
    return ugraph_from_json(std::string(std::istreambuf_iterator<char>(in), {}), file.string());
  }
  KernelGraph g = superoptimize(p.graph, device, eff, o).best.graph;
  if (cache != nullptr) {
    fs::create_directories(cache);
    std::ofstream(file) << ugraph_to_json(g);
  }
  return g;
}

// Every bundled program at small shapes, superoptimized for the H100 and lowered.
std::vector<Case> lowered_programs() {
  const devices::DeviceSpec* h100 = testing::bundled_registry().find("H100-SXM");
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  costmodel::GpuEfficiency eff;
  if (const costmodel::GpuEfficiency* e = cal.find_gpu("H100-SXM"))
    eff = *e;
  SuperoptimizeOptions o;
  o.threads = 2;
  o.limits.max_states = 20'000;
  std::vector<Case> cases;
  for (const fs::path& f : bundled_programs()) {
    Program p = load_program(f);
    p = resize_inputs(p, small_shapes().at(p.graph.name));
    cases.push_back(Case{p, lower(best_ugraph(p, *h100, eff, o))});
  }
  return cases;
}

fs::path scratch_dir(const std::string& what) {
  fs::path d = fs::temp_directory_path() / ("yirage_" + what + "_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

fs::path write(const fs::path& dir, const KernelSource& k) {
  fs::path f = dir / k.file_name;
  std::ofstream(f) << k.text;
  return f;
}

// Runs a shell command, returning its exit status; its output goes to `log`.
int shell(const std::string& cmd, const fs::path& log) {
  return std::system((cmd + " > '" + log.string() + "' 2>&1").c_str());
}

std::string read(const fs::path& f) {
  std::ifstream in(f);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using CpuEntry = void (*)(const float* const*, float* const*);

// Runs the compiled CPU kernel on random inputs and returns the largest error relative to
// the largest magnitude of each output, against the reference program in double.
double cpu_error(const Case& c, CpuEntry fn) {
  RealArith<double> real;
  SplitMix64 rng(20250707);
  std::vector<Tensor<double>> in;
  std::vector<std::vector<float>> in_f;
  for (const KernelInput& k : c.program.graph.inputs) {
    Tensor<double> t{k.shape, {}};
    for (std::int64_t i = 0; i < elements(k.shape); ++i)
      t.data.push_back(real.random(rng));
    in_f.emplace_back(t.data.begin(), t.data.end());
    in.push_back(std::move(t));
  }
  std::vector<Tensor<double>> ref = Evaluator<RealArith<double>>(real).graph(c.program.graph, in);
  std::vector<std::vector<float>> out;
  std::vector<const float*> ip;
  std::vector<float*> op;
  for (auto& v : in_f)
    ip.push_back(v.data());
  for (int o : c.program.graph.outputs)
    out.emplace_back(ref[static_cast<std::size_t>(o)].data.size(), NAN);
  for (auto& v : out)
    op.push_back(v.data());
  fn(ip.data(), op.data());
  double worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::vector<double>& r = ref[static_cast<std::size_t>(c.program.graph.outputs[i])].data;
    double scale = 1e-30;
    for (double v : r)
      scale = std::max(scale, std::abs(v));
    for (std::size_t e = 0; e < r.size(); ++e) {
      double err = std::abs(static_cast<double>(out[i][e]) - r[e]) / scale;
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
  }
  return worst;
}

// The shared-memory plan: every tile inside the plan, and live tiles apart (checked by
// the CPU run, which uses the plan's offsets); space is reused when tiles die.
void check_plan(const Case& c) {
  for (const LoweredStep& s : c.lowered.steps) {
    if (!s.block)
      continue;
    const LoweredBlock& b = *s.block;
    std::int64_t total = 0;
    for (std::size_t t = 0; t < b.tiles.size(); ++t) {
      std::int64_t n = (elements(b.tiles[t]) + 3) / 4 * 4;
      total += n * (t < b.graph.inputs.size() ? b.pipeline_depth : 1);
      ASSERT_GE(b.offset[t], 0);
      EXPECT_LE(b.offset[t] + elements(b.tiles[t]), b.shared_elems);
    }
    EXPECT_LE(b.shared_elems, total);
  }
}

TEST(CpuBackend, EveryBundledProgramCompilesRunsAndMatchesTheReference) {
  fs::path dir = scratch_dir("cpu");
  for (const Case& c : lowered_programs()) {
    SCOPED_TRACE(c.program.graph.name);
    check_plan(c);
    KernelSource k = emit_kernels(c.lowered, Backend::kCpu);
    EXPECT_NE(k.text.find("Schedule:"), std::string::npos);
    fs::path src = write(dir, k);
    fs::path lib = dir / (k.entry + ".so");
    std::string cmd = "g++ -std=c++17 -O1 -fopenmp -shared -fPIC -Wall -Werror -o '" +
                      lib.string() + "' '" + src.string() + "'";
    ASSERT_EQ(shell(cmd, dir / "log.txt"), 0) << read(dir / "log.txt");
    // Never closed: unloading libgomp under its idle worker threads would crash them.
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    ASSERT_NE(h, nullptr) << dlerror();
    auto fn = reinterpret_cast<CpuEntry>(dlsym(h, k.entry.c_str()));
    ASSERT_NE(fn, nullptr);
    EXPECT_LT(cpu_error(c, fn), 1e-4);
  }
  fs::remove_all(dir);
}

// The generated kernel of one hand-built wrong µGraph must fail the check: the test can fail.
TEST(CpuBackend, AWrongMuGraphIsCaught) {
  Program p = load_program(devices::data_dir() / "programs" / "rmsnorm_linear.yaml");
  p = resize_inputs(p, small_shapes().at("rmsnorm_linear"));
  KernelGraph wrong = p.graph;
  wrong.ops[1].kind = OpKind::kMul;  // X * rms(X) in place of X / rms(X)
  Case c{p, lower(wrong)};
  fs::path dir = scratch_dir("cpu_wrong");
  KernelSource k = emit_kernels(c.lowered, Backend::kCpu);
  fs::path src = write(dir, k);
  fs::path lib = dir / "wrong.so";
  ASSERT_EQ(shell("g++ -std=c++17 -O1 -fopenmp -shared -fPIC -o '" + lib.string() + "' '" +
                      src.string() + "'",
                  dir / "log.txt"),
            0)
      << read(dir / "log.txt");
  // Never closed: unloading libgomp under its idle worker threads would crash them.
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<CpuEntry>(dlsym(h, k.entry.c_str()));
  EXPECT_GT(cpu_error(c, fn), 1e-2);

  fs::remove_all(dir);
}

// Row chains (codegen/lower/row_chain.h) are one launch each and compute what the ops did:
// max / sub (the reduction on the right), square / mean / sub with the reduction on the left;
// a reduction read by two ops stays a launch of its own, as do the ops after it.
TEST(CpuBackend, RowChainsAreOneLaunchAndMatchTheReference) {
  Program p = parse_program(R"(name: chains
dtype: fp16
inputs:
  - {name: A, shape: [6, 40]}
  - {name: B, shape: [6, 40]}
ops:
  - {name: M, op: max, in: [A]}
  - {name: S, op: sub, in: [A, M]}
  - {name: Q, op: square, in: [S]}
  - {name: R, op: mean, in: [Q]}
  - {name: C, op: sub, in: [R, Q]}
  - {name: N, op: sum, in: [B]}
  - {name: W, op: mul, in: [B, N]}
  - {name: V, op: add, in: [W, N]}
outputs: [C, V]
)",
                            "chains.yaml");
  Case c{p, lower(p.graph)};
  ASSERT_EQ(c.lowered.steps.size(), 5u);
  ASSERT_TRUE(c.lowered.steps[0].row);
  EXPECT_EQ(c.lowered.steps[0].row->ops, 2);
  EXPECT_EQ(c.lowered.steps[0].row->reduce, OpKind::kMax);
  EXPECT_TRUE(c.lowered.steps[0].row->row_left);
  ASSERT_TRUE(c.lowered.steps[1].row);
  EXPECT_EQ(c.lowered.steps[1].row->ops, 3);
  EXPECT_EQ(c.lowered.steps[1].row->map, OpKind::kSquare);
  EXPECT_FALSE(c.lowered.steps[1].row->row_left);
  EXPECT_EQ(c.lowered.steps[1].row->rows, 6);
  EXPECT_EQ(c.lowered.steps[1].row->len, 40);
  for (std::size_t i = 2; i < 5; ++i)
    EXPECT_FALSE(c.lowered.steps[i].row) << i;
  EXPECT_EQ(describe(c.lowered)[1],
            "launch 1: library row square/mean/sub -> [6, 40] (6 rows of 40)");
  fs::path dir = scratch_dir("cpu_chains");
  KernelSource k = emit_kernels(c.lowered, Backend::kCpu);
  fs::path src = write(dir, k);
  fs::path lib = dir / "chains.so";
  ASSERT_EQ(shell("g++ -std=c++17 -O1 -fopenmp -shared -fPIC -Wall -Werror -o '" + lib.string() +
                      "' '" + src.string() + "'",
                  dir / "log.txt"),
            0)
      << read(dir / "log.txt");
  // Never closed: unloading libgomp under its idle worker threads would crash them.
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<CpuEntry>(dlsym(h, k.entry.c_str()));
  ASSERT_NE(fn, nullptr);
  EXPECT_LT(cpu_error(c, fn), 1e-5);
  // Short rows run a warp a row on a GPU; the chain's helper compiles for both targets.
  std::string cuda = emit_kernels(c.lowered, Backend::kCuda).text;
  EXPECT_NE(cuda.find("yr_row_chain_grid(kSquare, kMean, kSub, false, k6, k3, 6L, 40L, false);"),
            std::string::npos);
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (fs::exists(nvcc)) {
    fs::path cu = dir / "chains.cu";
    std::ofstream(cu) << cuda;
    EXPECT_EQ(shell(std::string(nvcc) +
                        " -std=c++17 -O2 -Werror all-warnings -gencode arch=compute_80,code=sm_80 "
                        "-c -o '" +
                        (dir / "chains.o").string() + "' '" + cu.string() + "'",
                    dir / "log.txt"),
              0)
        << read(dir / "log.txt");
  }
  fs::remove_all(dir);
}

// Compiles every program's kernel for `b` with `compiler` and its flags.
void compile_all(Backend b, const std::string& compiler, const std::string& flags) {
  fs::path dir = scratch_dir(backend_name(b));
  int gemv = 0;
  for (const Case& c : lowered_programs()) {
    SCOPED_TRACE(c.program.graph.name);
    KernelSource k = emit_kernels(c.lowered, b);
    gemv += c.lowered.gemv ? 1 : 0;
    fs::path src = write(dir, k);
    std::string cmd = compiler + " " + flags + " -c -o '" + (dir / (k.entry + ".o")).string() +
                      "' '" + src.string() + "'";
    EXPECT_EQ(shell(cmd, dir / "log.txt"), 0) << k.file_name << "\n" << read(dir / "log.txt");
  }
  EXPECT_GE(gemv, 1) << "no program took the GEMV path";
  fs::remove_all(dir);
}

TEST(CudaBackend, EveryBundledProgramCompilesForSm80AndSm90a) {
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (!fs::exists(nvcc))
    GTEST_SKIP() << "SKIP: " << nvcc << " is absent; the CUDA kernels were not compiled";
  compile_all(Backend::kCuda, nvcc,
              "-std=c++17 -O2 -Werror all-warnings -gencode arch=compute_80,code=sm_80 "
              "-gencode arch=compute_90a,code=sm_90a");
}

// The kernels measured on the H100 (bench/generated/, remade by
// scripts/generate_bench_kernels.sh) are what the backend emits today from their µGraphs, and
// their GEMV tiling is the one measured best there: one weight read straight into tensor-core
// fragments, at M <= 8 in 96 tiles of 64 columns without a K split, at M = 16 in 192-column
// tiles and 4 K slices (128 blocks on 132 SMs); two weights through the shared-memory ring.
// Each compiles for sm_80 and sm_90a where nvcc is present.
TEST(CudaBackend, TheBenchKernelsAreWhatTheBackendEmits) {
  const fs::path root = devices::data_dir().parent_path() / "bench" / "generated";

  struct Want {
    std::string dir, program;
    std::vector<std::string> lines;
  };

  // The tilings measured best on H100 (kernel_tuning_direct.csv, runs 21, 22 and 38).
  const std::vector<std::string> whole = {"#define YR_CG 8 ", "#define YR_CW 1 ",
                                          "#define YR_KSPLIT 1 ", "#define YR_WARPS 24 ",
                                          "__byte_perm"};
  const std::vector<Want> wants = {
      {"rmsnorm_linear_m1", "rmsnorm_linear", whole},
      {"rmsnorm_linear_m8", "rmsnorm_linear", whole},
      {"rmsnorm_linear_m16",
       "rmsnorm_linear",
       {"#define YR_CG 8 ", "#define YR_CW 3 ", "#define YR_KSPLIT 4 ", "#define YR_WARPS 18 ",
        "__byte_perm"}},
      {"gated_mlp_m8",
       "gated_mlp",
       {"#define YR_STAGES 2 ", "constexpr int NB = 128, NT = 4 * NB;", "ldmatrix"}},
  };
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  fs::path dir = scratch_dir("bench_kernels");
  for (const Want& w : wants) {
    SCOPED_TRACE(w.dir);
    fs::path json = root / w.dir / (w.program + ".ugraph.json");
    KernelSource k =
        emit_kernels(lower(ugraph_from_json(read(json), json.string())), Backend::kCuda);
    EXPECT_EQ(k.text, read(root / w.dir / (w.program + ".cu")))
        << "bench/generated/" << w.dir << " is stale: run scripts/generate_bench_kernels.sh";
    for (const std::string& line : w.lines)
      EXPECT_NE(k.text.find(line), std::string::npos) << line;
    if (!fs::exists(nvcc))
      continue;
    fs::path src = write(dir, k);
    std::string cmd = std::string(nvcc) +
                      " -std=c++17 -O2 -Werror all-warnings -gencode arch=compute_80,code=sm_80 "
                      "-gencode arch=compute_90a,code=sm_90a -c -o '" +
                      (dir / (w.dir + ".o")).string() + "' '" + src.string() + "'";
    EXPECT_EQ(shell(cmd, dir / "log.txt"), 0) << read(dir / "log.txt");
  }
  fs::remove_all(dir);
  if (!fs::exists(nvcc))
    GTEST_SKIP() << "SKIP: " << nvcc << " is absent; the bench kernels were not compiled";
}

// The value of `#define NAME v` in generated code, or -1.
long define_value(const std::string& text, const std::string& name) {
  std::size_t at = text.find("#define " + name + " ");
  return at == std::string::npos ? -1 : std::stol(text.substr(at + name.size() + 9));
}

// The GEMV grid is sized for the target's SMs. On the H100's 132 the M = 8 kernel reads 96
// tiles of 64 columns without a K split: 96 SMs whose lanes all read keep the memory nearly as
// busy as 132, and a split's finish costs more (kernel_tuning_direct.csv, run 38). On an A100's
// 108, and on a small GPU of 20 where the grid takes several waves, most SMs stay busy.
TEST(CudaBackend, TheGemvGridFollowsTheTargetsSmCount) {
  const fs::path json = devices::data_dir().parent_path() /
                        "bench/generated/rmsnorm_linear_m8/rmsnorm_linear.ugraph.json";
  BlockProgram p = lower(ugraph_from_json(read(json), json.string()));
  ASSERT_TRUE(p.gemv);
  for (std::int64_t sms : {132, 108, 20}) {
    SCOPED_TRACE(sms);
    p.gemv->compute_units = sms;
    std::string text = emit_kernels(p, Backend::kCuda).text;
    long cg = define_value(text, "YR_CG"), cw = define_value(text, "YR_CW");
    long ks = define_value(text, "YR_KSPLIT");
    ASSERT_GT(cg * cw * ks, 0) << text.substr(0, 200);
    long blocks = p.gemv->n / (8 * cg * cw) * ks;
    long waves = (blocks + sms - 1) / sms;
    if (sms == 132) {
      EXPECT_EQ(cg * cw, 8) << "64-column tiles";
      EXPECT_EQ(ks, 1) << "no K split";
      continue;
    }
    EXPECT_GE(static_cast<double>(blocks) / static_cast<double>(waves * sms), 0.85)
        << blocks << " blocks in " << waves << " waves";
  }
}

// The direct GEMV path is launched as a programmatic dependent launch on sm_90: its first
// weight loads (a step to shared memory, the next to registers) are issued before it waits
// for the kernel before it, and X (that kernel's output, in a model) is read only after the
// wait; YR_PDL=0 gives a plain launch.
TEST(CudaBackend, TheDirectGemvPrefetchesWeightsBeforeWaitingForTheKernelBefore) {
  for (std::string m : {"1", "16"}) {
    const fs::path json = devices::data_dir().parent_path() /
                          ("bench/generated/rmsnorm_linear_m" + m) / "rmsnorm_linear.ugraph.json";
    BlockProgram p = lower(ugraph_from_json(read(json), json.string()));
    ASSERT_TRUE(p.gemv);
    std::string text = emit_kernels(p, Backend::kCuda).text;
    // The first step to shared memory, the next to registers, then the wait, then X.
    std::size_t copy = text.find("yr_copy16(slot_of(d, i, r), wp[i] + (k + r) * N);");
    std::size_t regs = text.find("load_w(wb[d], PREFETCH + d);", copy);
    std::size_t wait = text.find("yr_grid_wait();", regs);
    std::size_t x = text.find("load_x(xf[d], d);", wait);
    ASSERT_NE(copy, std::string::npos) << m;
    ASSERT_NE(regs, std::string::npos) << m;
    ASSERT_NE(wait, std::string::npos) << m;
    ASSERT_NE(x, std::string::npos) << m;
    EXPECT_NE(text.find("yr_copy_wait();", x), std::string::npos) << m;
    EXPECT_NE(text.find("#define YR_PREFETCH 1 "), std::string::npos) << m;
    // Interleaved K slices at M <= 8 only (tuning runs 28-29).
    EXPECT_NE(text.find("#define YR_INTERLEAVE " + std::string(m == "1" ? "1 " : "0 ")),
              std::string::npos)
        << m;
    EXPECT_NE(text.find("griddepcontrol.wait;"), std::string::npos);
    EXPECT_NE(text.find("cudaLaunchAttributeProgrammaticStreamSerialization"), std::string::npos);
    EXPECT_NE(text.find("cfg.numAttrs = yr_device_major() >= 9 ? 1 : 0;"), std::string::npos);
    EXPECT_NE(text.find("#else\n  rmsnorm_linear_gemv<<<"), std::string::npos);  // YR_PDL=0
    std::string hip = emit_kernels(p, Backend::kHip).text;
    EXPECT_EQ(hip.find("griddepcontrol"), std::string::npos);
    EXPECT_EQ(hip.find("cudaLaunchKernelEx"), std::string::npos);
  }
}

// On sm_90 the direct GEMV streams through a TMA ring: the launcher tries it first, its
// producer copies the first stages' weights before the wait for the kernel before and X only
// after it, and the ring holds as many 256-row stages as sm_90's shared memory allows, at most
// six. HIP has no such path.
TEST(CudaBackend, TheDirectGemvStreamsThroughATmaRingOnSm90) {
  for (std::string m : {"1", "16"}) {
    const fs::path json = devices::data_dir().parent_path() /
                          ("bench/generated/rmsnorm_linear_m" + m) / "rmsnorm_linear.ugraph.json";
    BlockProgram p = lower(ugraph_from_json(read(json), json.string()));
    ASSERT_TRUE(p.gemv);
    EXPECT_TRUE(gemv_uses_tma(*p.gemv, Backend::kCuda));
    EXPECT_FALSE(gemv_uses_tma(*p.gemv, Backend::kHip));
    std::string text = emit_kernels(p, Backend::kCuda).text;
    // At M = 16 a stage is 40 KB (8 KB of X): five fit.
    EXPECT_NE(text.find(std::string("constexpr int TR = 256, TS = ") + (m == "1" ? "6" : "5")),
              std::string::npos)
        << m;
    std::size_t weights = text.find(
        "yr_tma_copy(&wmap, ring + (long)slot * T_STAGE, tile * 64, s * TR, &full[slot]);");
    std::size_t wait = text.find("yr_grid_wait();", weights);
    std::size_t x = text.find("for (int p = 0; p < FIRST; ++p) copy_x(p);", wait);
    ASSERT_NE(weights, std::string::npos) << m;
    ASSERT_NE(wait, std::string::npos) << m;
    EXPECT_NE(x, std::string::npos) << m;
    std::size_t launch = text.find("extern \"C\" int rmsnorm_linear_launch(");
    std::size_t tma =
        text.find("rmsnorm_linear_launch_tma(inputs[0], inputs[1], outputs[0], stream)", launch);
    ASSERT_NE(tma, std::string::npos) << m;
    EXPECT_LT(tma, text.find("rmsnorm_linear_gemv<<<", launch)) << m;  // before the register path
    // Declined where the device would run the kernel from older PTX (an empty body there);
    // checked, and the kernel's shared memory set, once a device, not once a process.
    EXPECT_NE(text.find("fa.ptxVersion >= 90"), std::string::npos) << m;
    EXPECT_NE(text.find("static std::atomic<int> ready[64];"), std::string::npos) << m;
    EXPECT_NE(text.find("static std::atomic<int> majors[64];"), std::string::npos) << m;
    EXPECT_EQ(emit_kernels(p, Backend::kHip).text.find("CUtensorMap"), std::string::npos);
  }
  // 64-column blocks cannot tile N = 6152: the register path alone.
  GemvForm f;
  f.m = 1, f.k = 4096, f.n = 6152, f.weight_inputs = {1};
  EXPECT_LT(gemv_tma_seconds(f), 0.0);
  EXPECT_FALSE(gemv_uses_tma(f, Backend::kCuda));
  // 1024 columns are 16 blocks of 64 on 132 SMs, while the register path splits K across
  // most of them: the model keeps the register path.
  f.n = 1024;
  EXPECT_GT(gemv_tma_seconds(f), gemv_direct_seconds(f));
  EXPECT_FALSE(gemv_uses_tma(f, Backend::kCuda));
}

// The shared-memory ring path (two weights) is a dependent launch too: its first chunks'
// weights are issued before the wait, X after it, and the next kernel may start only after
// the chunk loop (an early trigger let the next launch's blocks crowd these: 94.8 against
// 78.8 us on H100).
TEST(CudaBackend, TheRingGemvLetsTheNextKernelStartOnlyAfterItsChunkLoop) {
  const fs::path json =
      devices::data_dir().parent_path() / "bench/generated/gated_mlp_m8/gated_mlp.ugraph.json";
  BlockProgram p = lower(ugraph_from_json(read(json), json.string()));
  ASSERT_TRUE(p.gemv);
  std::string text = emit_kernels(p, Backend::kCuda).text;
  ASSERT_NE(text.find("ldmatrix"), std::string::npos);  // the ring path
  std::size_t weights = text.find("for (int c = 0; c < STAGES - 1; ++c) load_w(c);");
  std::size_t wait = text.find("yr_grid_wait();", weights);
  std::size_t x = text.find("for (int c = 0; c < STAGES - 1; ++c) load_x(c);", wait);
  std::size_t loop = text.find("for (int c = 0; c < CHUNKS; ++c)", x);
  std::size_t trigger = text.find("yr_launch_dependents();", loop);
  std::size_t finish = text.find("acc[i][j] += acc2[i][j];", trigger);
  ASSERT_NE(weights, std::string::npos);
  ASSERT_NE(wait, std::string::npos);
  ASSERT_NE(x, std::string::npos);
  ASSERT_NE(loop, std::string::npos);
  ASSERT_NE(trigger, std::string::npos);
  EXPECT_NE(finish, std::string::npos);
  EXPECT_EQ(text.find("yr_launch_dependents();"), trigger);  // no earlier trigger
  EXPECT_NE(text.find("cudaLaunchAttributeProgrammaticStreamSerialization"), std::string::npos);
  EXPECT_NE(text.find("#else\n  gated_mlp_gemv<<<"), std::string::npos);  // YR_PDL=0
}

// The ring path's tiles follow how the memory is shared among the SMs: each reading SM gets
// an equal share, so the gated MLP's 224 tiles of 64 columns on 132 SMs (40 with one tile, 92
// with two) finish on the 92 alone, where 112 tiles of 128 columns keep every busy SM reading
// to the end (77.4 against 78.0 us on H100, run 58). Where 64-column tiles give every SM one
// (224 SMs), or 128 would leave most SMs idle (N = 6144), the tiles stay at 64 columns.
TEST(CudaBackend, TheRingGemvWidensItsTilesWhereThatEvensTheSmsBytes) {
  const fs::path json =
      devices::data_dir().parent_path() / "bench/generated/gated_mlp_m8/gated_mlp.ugraph.json";
  BlockProgram p = lower(ugraph_from_json(read(json), json.string()));
  ASSERT_TRUE(p.gemv);
  auto columns = [&] {
    std::string text = emit_kernels(p, Backend::kCuda).text;
    EXPECT_NE(text.find("ldmatrix"), std::string::npos);  // the ring path
    std::size_t at = text.find("constexpr int NB = ");
    return at == std::string::npos ? -1L : std::stol(text.substr(at + 19));
  };
  EXPECT_EQ(columns(), 128);
  p.gemv->compute_units = 224;
  EXPECT_EQ(columns(), 64);
  p.gemv->compute_units = 132;
  p.gemv->n = 6144;
  EXPECT_EQ(columns(), 64);
}

TEST(HipBackend, EveryBundledProgramCompilesForGfx90a) {
  if (shell("command -v hipcc", "/dev/null") != 0)
    GTEST_SKIP() << "SKIP: hipcc is absent; the HIP kernels were not compiled";
  compile_all(Backend::kHip, "hipcc", "-std=c++20 -O2 --offload-arch=gfx90a");
}

// On a GPU, library ops run over the whole grid (one output element a thread; one warp a row
// for a reduction over the last dim), and CUDA's library matmuls call cuBLAS; HIP keeps the
// generated matmul.
TEST(GpuBackend, LibraryOpsRunOverTheGridAndCudaMatmulsCallCublas) {
  Program p = load_program(devices::data_dir() / "programs" / "gemm_layernorm.yaml");
  BlockProgram lowered = lower(p.graph);  // every op a library op: A[64, 1024] B[1024, 1024]
  std::string cuda = emit_kernels(lowered, Backend::kCuda).text;
  EXPECT_NE(cuda.find("#include <cublas_v2.h>"), std::string::npos);
  EXPECT_NE(cuda.find("yr_gemm(k0, CUDA_R_16F, 0L, k1, CUDA_R_16F, 0L, k2, CUDA_R_32F, 1L, 64L, "
                      "1024L, 1024L, stream)"),
            std::string::npos);
  // mean / sub and rms / div are row chains: one launch each, a block a row of 1024.
  EXPECT_NE(cuda.find("yr_row_chain_grid(-1, kMean, kSub, true, k4, k2, 64L, 1024L, true);"),
            std::string::npos);
  EXPECT_NE(cuda.find("yr_row_chain_grid(-1, kRms, kDiv, true, k6, k4, 64L, 1024L, true);"),
            std::string::npos);
  EXPECT_NE(cuda.find("gemm_layernorm_launch2<<<dim3(64), 256"), std::string::npos);
  // A long row is read four pieces a lane at a time (checked on H100 by check_programs.py).
  EXPECT_NE(cuda.find("#define YR_ROW_LOADS 4\n"), std::string::npos);
  EXPECT_EQ(cuda.find("gemm_layernorm_launch3"), std::string::npos);
  EXPECT_EQ(cuda.find("<<<dim3(1), "), std::string::npos);
  // The workspace holds Y and the first chain's output, not the chains' inner tensors.
  EXPECT_NE(cuda.find("_workspace_bytes() { return 524288L; }"), std::string::npos);
  std::string hip = emit_kernels(lowered, Backend::kHip).text;
  EXPECT_EQ(hip.find("cublas"), std::string::npos);
  EXPECT_NE(hip.find("yr_matmul(k2, k0, k1, 1L, 64L, 1024L, 1024L, YR_GTID, YR_GNT);"),
            std::string::npos);
}

// cuBLAS multiplies operands of one type and gives fp32 products only in fp32: QK-norm
// attention's last matmul (fp32 probabilities x fp16 V into the fp16 output) widens V first;
// its K = 4096 over 8 output tiles is split into 16 slices whose fp32 parts are summed into the
// fp16 output.
TEST(GpuBackend, MixedTypeMatmulsAreWidenedForCublasAndNarrowedAfter) {
  Program p = load_program(devices::data_dir() / "programs" / "qknorm_attention.yaml");
  std::string cuda = emit_kernels(lower(p.graph), Backend::kCuda).text;
  EXPECT_NE(cuda.find("yr_convert<<<dim3(2048), 256, 0, stream>>>(k2, w5, 524288L);"),
            std::string::npos);
  EXPECT_NE(cuda.find("yr_gemm_slices(k10, CUDA_R_32F, 1048576L, w5, CUDA_R_32F, 262144L, p5, "
                      "2L, 256L, 4096L, 64L, 16L, stream)"),
            std::string::npos);
  EXPECT_NE(cuda.find("yr_sum_slices<<<dim3(128), 256, 0, stream>>>(p5, k11, 32768L, 16384L, "
                      "16L);"),
            std::string::npos);
  EXPECT_EQ(cuda.find("yr_matmul(k"), std::string::npos);  // no generated matmul is left
  // The workspace holds the fp32 intermediates that a step writes (the softmax's exp and sum
  // are fused away), V in fp32 (2 MiB) and 16 slices' parts (2 MiB).
  EXPECT_NE(cuda.find("_workspace_bytes() { return 23232512L; }"), std::string::npos);
  // Its first matmul (K = 64) and fp16 ones are not split.
  EXPECT_NE(cuda.find("yr_gemm(k4, CUDA_R_32F, 16384L, k6, CUDA_R_32F, 262144L, k7, CUDA_R_32F, "
                      "2L, 256L, 64L, 4096L, stream)"),
            std::string::npos);
  std::string gemm_ln =
      emit_kernels(
          lower(load_program(devices::data_dir() / "programs" / "gemm_layernorm.yaml").graph),
          Backend::kCuda)
          .text;
  EXPECT_EQ(gemm_ln.find("yr_gemm_slices(k"), std::string::npos);
}

// An fp32 product of a short K bound for an fp16 tensor is narrowed after (LoRA at 64 rows:
// X[64, 256] widened, times W + A B in fp32).
TEST(GpuBackend, AnFp32ProductForAnFp16OutputIsNarrowed) {
  fs::path f =
      devices::data_dir() / "benchmarks" / "H100-SXM" / "ugraphs" / "lora_m64_serial.ugraph.json";
  std::string cuda =
      emit_kernels(lower(ugraph_from_json(read(f), f.string())), Backend::kCuda).text;
  EXPECT_NE(cuda.find("yr_gemm(w1, CUDA_R_32F, 0L, k4, CUDA_R_32F, 0L, r1, CUDA_R_32F, 1L, 64L, "
                      "256L, 4096L, stream)"),
            std::string::npos);
  EXPECT_NE(cuda.find("yr_convert<<<dim3(1024), 256, 0, stream>>>(r1, k5, 262144L);"),
            std::string::npos);
}

}  // namespace
}  // namespace yirage::codegen
