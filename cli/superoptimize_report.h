// What `superoptimize` and `bench-superoptimize` share: loading the program and device, and
// printing a search's result as text or JSON.
#pragma once

#include "codegen/program/program_loader.h"
#include "codegen/search/superoptimizer.h"
#include "costmodel/gpu_kernel.h"
#include "devices/registry.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace yirage::cli {

struct SearchSetup {
  codegen::Program program;
  const devices::DeviceSpec* device = nullptr;
  costmodel::GpuEfficiency efficiency;
};

/// The program (resized by `shapes`, NAME=AxB) and the device with its calibrated
/// efficiencies; nullopt after writing the error to `err`. Bad program files throw
/// devices::InputError.
std::optional<SearchSetup> setup_search(const devices::DeviceRegistry& registry,
                                        const std::string& device,
                                        const std::string& program,
                                        const std::vector<std::string>& shapes,
                                        std::ostream& err);

void print_result(std::ostream& out, const SearchSetup& s, const codegen::SuperoptimizeResult& r);
nlohmann::ordered_json result_json(const SearchSetup& s, const codegen::SuperoptimizeResult& r);

}  // namespace yirage::cli
