#include "cli/validate_document.h"

#include "devices/support/units.h"

#include <map>

namespace yirage::cli {

namespace {

using Json = nlohmann::ordered_json;

std::string pct(double v) {
  return devices::format_number(v, 3) + "%";
}

// "all_gather x4 eager": the group of a collective row for per-kind bars.
std::string kind_group(const costmodel::MeasuredRow& r) {
  return r.op + " x" + std::to_string(r.ranks) + " " + r.launch;
}

// Statistics of the rows of one kind of inference time, from infer_step_stats' figures.
costmodel::BandStats infer_band(const std::string& group,
                                std::size_t rows,
                                double mape,
                                double bias) {
  costmodel::BandStats b;
  b.band = group;
  b.rows = rows;
  b.mape = mape;
  b.bias = bias;
  return b;
}

}  // namespace

ValidationStat ValidationDocument::stat(const std::string& file,
                                        const std::string& model,
                                        const std::string& group,
                                        const costmodel::BandStats& s,
                                        std::optional<double> bar) {
  ValidationStat v{file, model, group, s, bar, !bar || s.mape <= *bar};
  if (!v.pass) {
    missed_.push_back(file + ": " + model + ", " + group + ": MAPE " + pct(s.mape) + " over " +
                      std::to_string(s.rows) + " rows, above " + pct(*bar));
  }
  stats_.push_back(v);
  return v;
}

void ValidationDocument::add_points(const std::string& file,
                                    const std::string& model,
                                    const costmodel::Validation& v) {
  for (const costmodel::ValidationPoint& p : v.points) {
    bool collective = p.row.kind == "collective";
    points_.push_back({{"file", file},
                       {"line", p.row.loc.line},
                       {"model", model},
                       {"op", p.row.op},
                       {"shape", collective ? Json(nullptr) : Json(p.row.shape)},
                       {"ranks", p.row.ranks},
                       {"launch", collective ? Json(p.row.launch) : Json(nullptr)},
                       {"bytes", collective ? Json(p.row.bytes) : Json(nullptr)},
                       {"measured_s", p.row.time_s},
                       {"estimate_s", p.estimate_s},
                       {"error_percent", 100 * p.error},
                       {"choice", p.choice}});
  }
  for (const std::string& s : v.skipped)
    skipped_.push_back(s);
}

std::vector<ValidationStat> ValidationDocument::add_collectives(const std::string& file,
                                                                const costmodel::Validation& v) {
  std::vector<ValidationStat> out;
  for (const costmodel::BandStats& b : costmodel::band_stats(v.points)) {
    if (b.rows > 0)
      out.push_back(stat(file, "collectives", b.band, b, std::nullopt));
  }
  std::string big = bars_.min_size + " and more";
  std::string small = "below " + bars_.min_size;
  costmodel::BandStats all = costmodel::overall(v.points, bars_.min_bytes);
  if (all.rows == 0) {
    missed_.push_back(file + ": collectives: no row of " + big);
  } else {
    out.push_back(stat(file, "collectives", big, all, bars_.max_mape));
  }
  costmodel::BandStats below = costmodel::overall_below(v.points, bars_.min_bytes);
  if (below.rows > 0) {
    std::optional<double> bar;
    if (bars_.max_small_mape >= 0)
      bar = bars_.max_small_mape;
    out.push_back(stat(file, "collectives", small, below, bar));
  }
  if (bars_.per_kind) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<costmodel::ValidationPoint>> by;
    for (const costmodel::ValidationPoint& p : v.points) {
      std::string g = kind_group(p.row);
      if (by.count(g) == 0)
        order.push_back(g);
      by[g].push_back(p);
    }
    for (const std::string& g : order) {
      std::string at_least = g;
      at_least += ", ";
      std::string below_it = at_least;
      at_least += big;
      below_it += small;
      costmodel::BandStats b = costmodel::overall(by[g], bars_.min_bytes);
      if (b.rows > 0)
        out.push_back(stat(file, "collectives", at_least, b, bars_.max_mape));
      costmodel::BandStats s = costmodel::overall_below(by[g], bars_.min_bytes);
      if (s.rows > 0) {
        std::optional<double> bar;
        if (bars_.max_small_mape >= 0)
          bar = bars_.max_small_mape;
        out.push_back(stat(file, "collectives", below_it, s, bar));
      }
    }
  }
  add_points(file, "collectives", v);
  return out;
}

std::vector<ValidationStat> ValidationDocument::add_categories(const std::string& file,
                                                               const std::string& model,
                                                               const costmodel::Validation& v) {
  std::vector<ValidationStat> out;
  std::optional<double> each;
  if (bars_.per_kind)
    each = bars_.max_mape;
  for (const costmodel::BandStats& b : costmodel::op_stats(v.points))
    out.push_back(stat(file, model, b.band, b, each));
  out.push_back(stat(file, model, "all", costmodel::overall(v.points, 0), bars_.max_mape));
  add_points(file, model, v);
  return out;
}

std::vector<ValidationStat> ValidationDocument::add_infer_steps(
    const std::string& file, const std::vector<planner::InferStepPoint>& points) {
  std::vector<ValidationStat> out;
  if (points.empty()) {
    add_nothing_priced(file);
    return out;
  }
  for (const planner::InferStepStats& s : planner::infer_step_stats(points)) {
    std::optional<double> bar;
    if (s.group == "all" || s.group.find("GPU") != std::string::npos)
      bar = bars_.max_mape;
    out.push_back(stat(file, "ttft", s.group,
                       infer_band(s.group, s.ttft_rows, s.ttft_mape, s.ttft_bias), bar));
    out.push_back(stat(file, "tpot", s.group,
                       infer_band(s.group, s.tpot_rows, s.tpot_mape, s.tpot_bias), bar));
  }
  for (const planner::InferStepPoint& p : points) {
    std::string layout = "tp=" + std::to_string(p.row.tp) +
                         ",batch=" + std::to_string(p.row.batch) +
                         ",context=" + std::to_string(p.row.context);
    auto add = [&](const char* model, std::optional<double> measured, std::optional<double> est) {
      if (!measured || !est)
        return;
      points_.push_back({{"file", file},
                         {"line", p.row.line},
                         {"model", model},
                         {"op", p.row.task},
                         {"shape", layout},
                         {"ranks", p.row.gpus},
                         {"launch", nullptr},
                         {"bytes", nullptr},
                         {"measured_s", *measured},
                         {"estimate_s", *est},
                         {"error_percent", 100 * (*est - *measured) / *measured},
                         {"choice", ""}});
    };
    add("ttft", p.row.ttft_s, p.ttft_s);
    add("tpot", p.row.tpot_s, p.tpot_s);
  }
  return out;
}

void ValidationDocument::add_nothing_priced(const std::string& file) {
  missed_.push_back(file + ": nothing priced");
}

nlohmann::ordered_json ValidationDocument::json(bool calibrated, bool held_out) const {
  Json j;
  j["calibrated"] = calibrated;
  j["held_out"] = held_out;
  j["rows"] = Json::array();
  for (const ValidationStat& s : stats_) {
    bool timed = s.model == "ttft" || s.model == "tpot";  // no largest error kept
    bool any = s.stats.rows > 0;
    j["rows"].push_back({{"file", s.file},
                         {"model", s.model},
                         {"group", s.group},
                         {"rows", s.stats.rows},
                         {"mape_percent", any ? Json(s.stats.mape) : Json(nullptr)},
                         {"bias_percent", any ? Json(s.stats.bias) : Json(nullptr)},
                         {"max_abs_percent", any && !timed ? Json(s.stats.max_abs) : Json(nullptr)},
                         {"max_mape_percent", s.bar ? Json(*s.bar) : Json(nullptr)},
                         {"pass", s.pass}});
  }
  j["points"] = points_;
  j["skipped"] = skipped_;
  j["gate"] = {{"bars",
                {{"max_mape_percent", bars_.max_mape},
                 {"max_small_mape_percent",
                  bars_.max_small_mape >= 0 ? Json(bars_.max_small_mape) : Json(nullptr)},
                 {"min_size_bytes", bars_.min_bytes},
                 {"per_kind", bars_.per_kind}}},
               {"missed", missed_},
               {"pass", pass()}};
  return j;
}

}  // namespace yirage::cli
