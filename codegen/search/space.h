// The space of a graph-defined op's schedule (Mirage §4.1, "grid dims, imaps, fmaps and
// for-loop ranges"), driven by the target device: the maps of every input, and for given
// maps the grids and for-loop ranges whose splits divide evenly, whose block count fits the
// device (at most 8 blocks per compute unit) and whose tiles fit its shared memory.
#pragma once

#include "codegen/ir/ugraph.h"
#include "devices/device_spec.h"

#include <vector>

namespace yirage::codegen {

/// Maps for every input of a custom op, and how many grid axes they use.
struct MapChoice {
  std::vector<BlockInput> inputs;
  int axes = 1;
};

/// Every legal assignment of imap (per used grid axis) and fmap to `inputs`: a grid axis is
/// split along some input's dim; an input's dims are split at most once. With rank >= 3
/// inputs, also 2-D grids whose x axis splits every input's batch dim 0.
std::vector<MapChoice> map_choices(const std::vector<Shape>& inputs);

struct Schedule {
  Grid grid = {1, 1, 1};
  std::int64_t forloop = 1;
};

/// The grids and for-loop ranges for `maps`: per used axis a power of two (>= 2) dividing
/// every dim mapped to it, or the whole dim; for-loop ranges powers of two from 2 dividing
/// every fmap'd tile (1 when nothing is fmap'd); at most 8 x compute units blocks. Sorted
/// by block count, then for-loop range: the first is the smallest, used to search.
std::vector<Schedule> schedules(const std::vector<Shape>& inputs,
                                const MapChoice& maps,
                                const devices::DeviceSpec& device);

}  // namespace yirage::codegen
