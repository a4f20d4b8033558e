#include "cli/plan_kernels.h"

#include "report/summary.h"

#include "cli/output_file.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "codegen/emit/compound_kernel.h"
#include "codegen/ir/ugraph_json.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

namespace yirage::cli {

using namespace report;

namespace {

using codegen::dims_text;

// A device type's fused operations, once per operation and shape, with the groups using them.
struct DeviceWork {
  const devices::DeviceSpec* device = nullptr;
  std::vector<std::string> groups;
  std::vector<planner::CompoundChoice> fused;
  std::vector<std::vector<std::string>> users;  // per fused op
};

std::vector<DeviceWork> device_work(const devices::ClusterSpec& cluster,
                                    const std::vector<KernelSite>& sites) {
  std::vector<DeviceWork> out;
  for (const KernelSite& s : sites) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const DeviceWork& w) { return w.device->name == s.device; });
    if (it == out.end()) {
      for (const devices::NodeGroup& g : cluster.groups)
        if (g.name == s.group)
          out.push_back({&cluster.device(g), {}, {}, {}});
      it = out.end() - 1;
    }
    it->groups.push_back(s.group);
    for (const planner::CompoundChoice& c : s.compounds) {
      if (!c.fused)
        continue;
      std::size_t i = 0;
      while (i < it->fused.size() && !(it->fused[i].op == c.op && it->fused[i].dims == c.dims))
        ++i;
      if (i == it->fused.size()) {
        it->fused.push_back(c);
        it->users.emplace_back();
      }
      it->users[i].push_back(s.group);
    }
  }
  return out;
}

nlohmann::ordered_json kernel_json(const DeviceWork& w,
                                   std::size_t i,
                                   codegen::Backend b,
                                   const codegen::CompoundKernel& k,
                                   const std::string& file) {
  const planner::CompoundChoice& c = w.fused[i];
  nlohmann::ordered_json j;
  j["operation"] = c.op;
  j["shape"] = c.dims;
  j["device"] = w.device->name;
  j["groups"] = w.users[i];
  j["backend"] = codegen::backend_name(b);
  j["dtype"] = "fp16";
  j["expected_fused_s"] = c.fused_s;
  j["expected_unfused_s"] = c.unfused_s;
  j["searched_shape"] = k.searched;
  j["ugraph_fused"] = k.fused;
  if (!k.slower.empty())
    j["library_kept"] = k.slower;
  if (k.source) {
    j["ugraph_priced_s"] = k.priced_s;
    j["library_priced_s"] = k.library_s;
    j["file"] = file;
    j["ugraph"] = file.substr(0, file.rfind('.')) + ".ugraph.json";
  } else {
    j["why_not"] = k.why;
  }
  return j;
}

}  // namespace

int emit_plan_kernels(Context& cx,
                      const std::string& dir,
                      const std::string& plan,
                      const devices::ClusterSpec& cluster,
                      const costmodel::CalibrationSet& calibrations,
                      const std::vector<KernelSite>& sites) {
  if (dir.empty())
    return kExitOk;
  std::filesystem::path root(dir);
  nlohmann::ordered_json manifest;
  manifest["plan"] = plan;
  manifest["cluster"] = cluster.name;
  manifest["note"] =
      "kernels take fp16 tensors (the code generators' one type) whatever the plan's "
      "precision; expected_* are the planner's times for the operation, *_priced_s the cost "
      "model's for the generated µGraph and for library kernels at the same shape";
  manifest["device_types"] = nlohmann::ordered_json::array();
  manifest["kernels"] = nlohmann::ordered_json::array();
  std::ostream& out = cx.structured() ? cx.err : cx.out;
  out << "kernels of plan " << plan << " in " << root.string() << ":\n";
  for (const DeviceWork& w : device_work(cluster, sites)) {
    const devices::DeviceSpec& d = *w.device;
    std::optional<codegen::Backend> b = codegen::backend_for(d);
    nlohmann::ordered_json dj;
    dj["device"] = d.name;
    dj["groups"] = w.groups;
    dj["backend"] = b ? nlohmann::ordered_json(codegen::backend_name(*b)) : nullptr;
    dj["fused_operations"] = w.fused.size();
    if (!b) {
      dj["note"] = "no code generator for this device type";
      out << "  " << d.name << ": no code generator for " << d.vendor << " " << d.name
          << " (CUDA, HIP and CPU only); its " << w.fused.size()
          << " fused operations run as the vendor's kernels\n";
    } else if (w.fused.empty()) {
      out << "  " << d.name << ": the plan fuses no compound operation here\n";
    }
    manifest["device_types"].push_back(dj);
    if (!b)
      continue;
    codegen::SuperoptimizeOptions o;
    costmodel::GpuEfficiency eff;
    if (const costmodel::GpuEfficiency* e = calibrations.find_gpu(d.name))
      eff = *e;
    for (std::size_t i = 0; i < w.fused.size(); ++i) {
      const planner::CompoundChoice& c = w.fused[i];
      std::mutex m;
      codegen::CompoundKernel k;
      {
        Progress progress(cx.err, "search " + c.op + " on " + d.name, cx.err_is_terminal);
        o.progress = [&](std::size_t done, std::size_t total) {
          std::lock_guard<std::mutex> lock(m);
          progress.step(std::to_string(done) + " of " + std::to_string(total) + " branches");
        };
        k = codegen::compound_kernel(c.op, c.dims, d, eff, *b, o);
      }
      std::string file;
      if (k.source) {
        std::string folder = file_name_part(d.name);
        file = folder + "/" + file_name_part(k.source->file_name);
        std::error_code ec;
        std::filesystem::create_directories(root / folder, ec);
        std::string why = write_output(root / file, k.source->text);
        if (why.empty())
          why = write_output(root / folder / file_name_part(k.graph.name + ".ugraph.json"),
                             codegen::ugraph_to_json(k.graph));
        if (!why.empty()) {
          cx.err << "error: --emit-kernels: " << why << "\n";
          return kExitBadInput;
        }
      }
      manifest["kernels"].push_back(kernel_json(w, i, *b, k, file));
      out << "  " << d.name << " " << c.op << " " << dims_text(c.dims) << ": ";
      if (!k.source) {
        out << "no kernel: " << k.why << "\n";
        continue;
      }
      out << file << " (" << codegen::backend_name(*b) << "; "
          << (k.fused ? "µGraph searched at " + dims_text(k.searched) +
                            (k.searched == c.dims ? "" : ", widened")
              : k.slower.empty() ? "no µGraph beat the library kernels, which it calls"
                                 : "library kernels: the µGraph found on " + dims_text(k.searched) +
                                       " is slower widened")
          << "): " << secs(k.priced_s) << " by the model, library kernels " << secs(k.library_s)
          << "; the plan expects " << secs(c.fused_s) << " fused\n";
    }
  }
  if (std::string why = write_output(root / "manifest.json", manifest.dump(2) + "\n");
      !why.empty()) {
    cx.err << "error: --emit-kernels: " << why << "\n";
    return kExitBadInput;
  }
  out << "  manifest: " << (root / "manifest.json").string() << "\n";
  return kExitOk;
}

}  // namespace yirage::cli
