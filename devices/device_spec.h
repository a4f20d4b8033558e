// The specification of one device type (a GPU, an accelerator, a CPU or an FPGA), as read
// from the registry in data/devices/: peak rates, memory, on-chip hierarchy, links, power
// and price, every number with the document it comes from.
#pragma once

#include "devices/support/diagnostics.h"
#include "devices/support/units.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::devices {

/// A number and the document it comes from (a key of `DeviceSpec::sources`, or for a user's
/// file without sources, the place it was written).
template <class T>
struct Sourced {
  T value{};
  std::string source;

  bool operator==(const Sourced&) const = default;
};

enum class DType { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8 };

inline constexpr std::array kAllDTypes = {DType::kFp64, DType::kFp32, DType::kTf32, DType::kBf16,
                                          DType::kFp16, DType::kFp8,  DType::kInt8};

/// "bf16", ...
std::string dtype_name(DType t);
/// Bytes per element.
double dtype_bytes(DType t);

enum class DeviceKind { kGpu, kAccelerator, kCpu, kFpga };
enum class Backend { kCuda, kHip, kCpu, kNone };

std::string kind_name(DeviceKind k);
std::string backend_name(Backend b);

/// The shape of one matrix-unit instruction or systolic array (m x n x k).
struct MatrixUnit {
  std::string kind;  // tensor-core, matrix-core, systolic, cube, amx, none, ...
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string source;

  bool operator==(const MatrixUnit&) const = default;
};

/// The on-chip hierarchy. Every field is optional: vendors do not publish all of them.
struct OnChip {
  std::optional<Sourced<std::int64_t>> compute_units;
  std::string compute_unit_name;
  std::optional<Sourced<Hertz>> clock;
  std::optional<Sourced<Bytes>> registers_per_unit;
  std::optional<Sourced<Bytes>> scratchpad_per_unit;
  std::optional<Sourced<Bytes>> l2;
  std::optional<Sourced<BytesPerSec>> l2_bandwidth;
  std::optional<Sourced<std::int64_t>> warp_width;
  std::optional<Sourced<std::int64_t>> threads_per_unit;  // resident threads a unit holds
  std::optional<MatrixUnit> matrix_unit;

  bool operator==(const OnChip&) const = default;
};

/// A device-to-device or host link of a device.
struct LinkSpec {
  std::string kind;                // nvlink, xgmi, ici, pcie, ethernet, hccs, ...
  Sourced<BytesPerSec> bandwidth;  // aggregate, per direction
  std::optional<Sourced<Seconds>> latency;
  std::optional<Sourced<std::int64_t>> ports;
  std::optional<Sourced<std::int64_t>> generation;

  bool operator==(const LinkSpec&) const = default;
};

struct DeviceSpec {
  std::string name;
  std::string vendor;
  std::string family;
  DeviceKind kind = DeviceKind::kGpu;
  Backend backend = Backend::kNone;
  std::vector<std::string> aliases;
  std::map<std::string, std::string> sources;  // key -> document
  std::map<DType, Sourced<FlopsPerSec>> peak;  // dense
  std::string memory_kind;
  Sourced<Bytes> memory_capacity;
  Sourced<BytesPerSec> memory_bandwidth;
  OnChip onchip;
  std::vector<LinkSpec> links;
  std::optional<LinkSpec> host_link;
  std::optional<Sourced<Watts>> tdp;
  std::optional<Sourced<Watts>> idle_power;
  std::optional<Sourced<UsdPerHour>> price;
  SourceLoc loc;  // where the device was defined
  // The registry device this one was derived from (`base:` in a cluster's inline device),
  // whose calibration it keeps; empty for a device defined whole.
  std::string base;

  bool operator==(const DeviceSpec&) const = default;

  /// The peak rate for `t`, if the device supports it.
  std::optional<FlopsPerSec> peak_rate(DType t) const;
  /// The document a source key refers to, or the key itself when it is not in `sources`.
  std::string source_text(const std::string& key) const;
};

}  // namespace yirage::devices
