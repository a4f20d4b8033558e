// Loop-nest analysis of a COMET mapping: for every tensor entry of every tile node, the tile
// that one iteration moves (elements), how many distinct tiles the spatial children receive,
// and which iterations reuse the previous tile. Also the tile sizes of explicit collectives.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.2.
#pragma once

#include "costmodel/comet/mapping.h"
#include "costmodel/comet/problem.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

/// What one iteration of a node moves for one tensor entry.
struct Movement {
  std::int64_t unique = 1;    // u: distinct projected tiles (0: reuses the previous tile)
  std::int64_t children = 1;  // n: spatial children fed
};

/// One tensor entry of a tile node, analysed.
struct EntryNest {
  Factors extent;               // per dimension, extent of one child's tile in one iteration
  std::int64_t tile = 0;        // S: elements of that tile, projected on the tensor
  std::vector<Movement> moves;  // one per iteration of the node
  std::int64_t actual = 0;      // iterations that move data
  std::int64_t reuse = 1;       // iterations / actual
  bool read_write = false;      // the op `tag` writes the tensor (drain)
  bool dependent = false;       // produced inside the compound op (not global io)
  std::int64_t spatial = 1;     // spatial instances of this node (1 for temporal)
  std::int64_t count = 0;       // iterations the node runs for this entry (the moves, except
                                // in the reference's reading of an unmatched entry)

  std::int64_t iterations() const { return static_cast<std::int64_t>(moves.size()); }
};

struct CollectiveNest {
  std::int64_t in_tile = 0;   // elements per instance
  std::int64_t out_tile = 0;  // after gather (x P) or scatter (/ P) along `dimension`
  std::int64_t repeats = 1;   // executions: iterations of the enclosing temporal node
};

struct NestAnalysis {
  std::vector<std::vector<EntryNest>> entries;  // [node][entry]; empty for non-tile nodes
  std::vector<CollectiveNest> collectives;      // [node]
};

/// `reference`: reproduce the reference's reading of a spatial entry that its parent lacks.
NestAnalysis analyze_nest(const ArchSpec& arch,
                          const ProblemSpec& problem,
                          const Mapping& m,
                          bool reference = false);

/// Elements of the projection of a hyper-rectangle with per-dimension `extent` on `use`.
std::int64_t projected_volume(const TensorUse& use, const Factors& extent);

}  // namespace yirage::costmodel::comet
