#include "codegen/search/space.h"

#include <algorithm>
#include <set>

namespace yirage::codegen {
namespace {

// Per input: every (imap, fmap) with distinct split dims, each split dim of size > 1.
std::vector<BlockInput> input_maps(const Shape& s, int axes, bool batch_x) {
  std::vector<BlockInput> out;
  int r = static_cast<int>(s.size());
  std::vector<int> choices = {kReplicated};
  for (int d = 0; d < r; ++d) {
    if (s[static_cast<std::size_t>(d)] > 1)
      choices.push_back(d);
  }
  for (int x : batch_x ? std::vector<int>{0} : choices) {
    for (int y : axes > 1 ? choices : std::vector<int>{kReplicated}) {
      for (int f : choices) {
        std::set<int> used;
        bool ok = true;
        for (int d : {x, y, f})
          ok = ok && (d == kReplicated || used.insert(d).second);
        if (ok)
          out.push_back({0, {x, y, kReplicated}, f});
      }
    }
  }
  return out;
}

bool covers_axes(const MapChoice& m) {
  for (int a = 0; a < m.axes; ++a) {
    bool any = std::any_of(m.inputs.begin(), m.inputs.end(), [a](const BlockInput& i) {
      return i.imap[static_cast<std::size_t>(a)] != kReplicated;
    });
    if (!any)
      return false;
  }
  return true;
}

void product(const std::vector<std::vector<BlockInput>>& per,
             std::size_t i,
             MapChoice& cur,
             std::vector<MapChoice>& out) {
  if (i == per.size()) {
    if (covers_axes(cur))
      out.push_back(cur);
    return;
  }
  for (BlockInput b : per[i]) {
    b.input = static_cast<int>(i);
    cur.inputs.push_back(b);
    product(per, i + 1, cur, out);
    cur.inputs.pop_back();
  }
}

// The sizes grid axis `a` may take: those dividing every dim mapped to it.
std::vector<std::int64_t> axis_sizes(const std::vector<Shape>& in, const MapChoice& m, int a) {
  std::vector<std::int64_t> dims;
  for (const BlockInput& b : m.inputs) {
    int d = b.imap[static_cast<std::size_t>(a)];
    if (d != kReplicated)
      dims.push_back(in[static_cast<std::size_t>(b.input)][static_cast<std::size_t>(d)]);
  }
  std::int64_t g = dims.front();
  std::vector<std::int64_t> sizes;
  auto divides = [&](std::int64_t v) {
    return std::all_of(dims.begin(), dims.end(), [v](std::int64_t d) { return d % v == 0; });
  };
  for (std::int64_t v = 2; v <= g; v *= 2) {
    if (divides(v))
      sizes.push_back(v);
  }
  if (divides(g) && std::find(sizes.begin(), sizes.end(), g) == sizes.end())
    sizes.push_back(g);
  return sizes;
}

std::vector<std::int64_t> loop_sizes(const std::vector<Shape>& in,
                                     const MapChoice& m,
                                     const Grid& grid) {
  std::vector<std::int64_t> tiles;
  for (const BlockInput& b : m.inputs) {
    if (b.fmap == kReplicated)
      continue;
    Shape t =
        tile_shape(in[static_cast<std::size_t>(b.input)], {b.input, b.imap, kReplicated}, grid, 1);
    if (t.empty())
      return {};
    tiles.push_back(t[static_cast<std::size_t>(b.fmap)]);
  }
  if (tiles.empty())
    return {1};
  std::vector<std::int64_t> sizes;
  for (std::int64_t f = 2; f <= 1024; f *= 2) {
    if (std::all_of(tiles.begin(), tiles.end(), [f](std::int64_t t) { return t % f == 0; }))
      sizes.push_back(f);
  }
  return sizes;
}

}  // namespace

std::vector<MapChoice> map_choices(const std::vector<Shape>& inputs) {
  std::vector<MapChoice> out;
  bool batched = std::all_of(inputs.begin(), inputs.end(),
                             [](const Shape& s) { return s.size() >= 3 && s[0] > 1; });
  for (int axes = 1; axes <= (batched ? 2 : 1); ++axes) {
    std::vector<std::vector<BlockInput>> per;
    for (const Shape& s : inputs)
      per.push_back(input_maps(s, axes, axes == 2));
    MapChoice cur;
    cur.axes = axes;
    product(per, 0, cur, out);
  }
  return out;
}

std::vector<Schedule> schedules(const std::vector<Shape>& inputs,
                                const MapChoice& maps,
                                const devices::DeviceSpec& device) {
  std::int64_t units = device.onchip.compute_units ? device.onchip.compute_units->value : 1;
  std::vector<Schedule> out;
  std::vector<std::int64_t> xs = axis_sizes(inputs, maps, 0);
  std::vector<std::int64_t> ys =
      maps.axes > 1 ? axis_sizes(inputs, maps, 1) : std::vector<std::int64_t>{1};
  for (std::int64_t x : xs) {
    for (std::int64_t y : ys) {
      Grid g = {x, y, 1};
      if (x * y > 8 * units)
        continue;
      for (std::int64_t f : loop_sizes(inputs, maps, g))
        out.push_back({g, f});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Schedule& a, const Schedule& b) {
    std::int64_t ba = a.grid[0] * a.grid[1];
    std::int64_t bb = b.grid[0] * b.grid[1];
    return ba != bb ? ba < bb : a.forloop < b.forloop;
  });
  return out;
}

}  // namespace yirage::codegen
