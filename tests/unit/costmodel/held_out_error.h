// The summed relative error of the op model on a file's held-out rows (those `fit_split`
// leaves out) of the chosen ops, for tests that compare two calibrations on the same rows.
#pragma once

#include "tests/unit/test_data.h"

#include "costmodel/gpu_calibration.h"
#include "costmodel/measured.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace yirage::costmodel {

inline double held_out_error(const MeasuredFile& file,
                             const GpuEfficiency& eff,
                             const std::set<std::string>& ops) {
  std::vector<bool> split = fit_split(file, 0);
  double sum = 0;
  std::string why;
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    const MeasuredRow& r = file.rows[i];
    if (split[i] || ops.count(r.op) == 0)
      continue;
    auto est = estimate_op_row(r, testing::bundled_registry(), eff, &why);
    sum += est ? std::fabs(est->time.value - r.time_s) / r.time_s : 1;
  }
  return sum;
}

}  // namespace yirage::costmodel
