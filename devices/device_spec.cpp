#include "devices/device_spec.h"

namespace yirage::devices {

std::string dtype_name(DType t) {
  switch (t) {
    case DType::kFp64:
      return "fp64";
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
  }
  return "?";
}

double dtype_bytes(DType t) {
  switch (t) {
    case DType::kFp64:
      return 8;
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
  }
  return 0;
}

std::string kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kAccelerator:
      return "accelerator";
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kFpga:
      return "fpga";
  }
  return "?";
}

std::string backend_name(Backend b) {
  switch (b) {
    case Backend::kCuda:
      return "cuda";
    case Backend::kHip:
      return "hip";
    case Backend::kCpu:
      return "cpu";
    case Backend::kNone:
      return "none";
  }
  return "?";
}

std::optional<FlopsPerSec> DeviceSpec::peak_rate(DType t) const {
  auto it = peak.find(t);
  if (it == peak.end())
    return std::nullopt;
  return it->second.value;
}

std::string DeviceSpec::source_text(const std::string& key) const {
  auto it = sources.find(key);
  return it == sources.end() ? key : it->second;
}

}  // namespace yirage::devices
