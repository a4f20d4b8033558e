// The operation half of `yirage-plan estimate`: one operation or compound operation on one
// device of the registry.
#pragma once

#include "cli/context.h"
#include "devices/device_spec.h"

#include <optional>
#include <string>

namespace yirage::cli {

struct OpArgs {
  std::string device;
  std::string op;
  std::string shape;
  std::string dtype = "bf16";
  bool causal = false;
  bool unfused = false;
  bool uncalibrated = false;
};

void add_op_options(CLI::App& cmd, OpArgs& a);
/// The element type named `s` ("bf16", ...), or nullopt.
std::optional<devices::DType> parse_dtype(const std::string& s);
/// The help text listing every operation and its shape format.
std::string op_help();
int estimate_op(Context& cx, const OpArgs& a);

}  // namespace yirage::cli
