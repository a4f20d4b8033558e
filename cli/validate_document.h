// What `yirage-plan validate` concludes, computed once: the statistics of every file's rows
// by model part, each priced row, and the bars each statistic is held to. The text report
// prints from it, and --json, --yaml and --csv print it whole (kind "validation",
// docs/json.md).
#pragma once

#include "costmodel/validation.h"
#include "planner/infer_step_validation.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace yirage::cli {

struct ValidateBars {
  double max_mape = 15;
  double max_small_mape = -1;  // collectives below min_bytes; negative: not gated
  double min_bytes = 0;        // collectives: the size the two bars divide at
  std::string min_size;        // min_bytes as the user wrote it
  bool per_kind = false;       // collectives: the bars hold for every (collective, ranks, launch)
};

/// One statistic of a file's rows: `model` is "collectives", "ops", "layers", "programs",
/// "ttft" or "tpot"; `group` the size band, op, (collective, ranks, launch) or GPU count.
struct ValidationStat {
  std::string file;
  std::string model;
  std::string group;
  costmodel::BandStats stats;
  std::optional<double> bar;  // the MAPE it is held to, if gated
  bool pass = true;
};

class ValidationDocument {
 public:
  explicit ValidationDocument(ValidateBars bars) : bars_(std::move(bars)) {}

  /// Adds a file's collective rows: the size bands (not gated), all rows of min_bytes and
  /// more and those below (gated), and with `per_kind` both again per (collective, ranks,
  /// launch). Returns the statistics added.
  std::vector<ValidationStat> add_collectives(const std::string& file,
                                              const costmodel::Validation& v);
  /// Adds the rows of ops, layers or programs: per category, then all (gated).
  std::vector<ValidationStat> add_categories(const std::string& file,
                                             const std::string& model,
                                             const costmodel::Validation& v);
  /// Adds prefill and decode steps: TTFT and TPOT per group (gated on "all" and GPU counts).
  std::vector<ValidationStat> add_infer_steps(const std::string& file,
                                              const std::vector<planner::InferStepPoint>& points);
  /// A file where no row could be priced: a failure.
  void add_nothing_priced(const std::string& file);

  bool pass() const { return missed_.empty(); }

  /// The document: bars, `rows` (the statistics), `points` (every priced row), `skipped`
  /// and the gate.
  nlohmann::ordered_json json(bool calibrated, bool held_out) const;

 private:
  ValidationStat stat(const std::string& file,
                      const std::string& model,
                      const std::string& group,
                      const costmodel::BandStats& s,
                      std::optional<double> bar);
  void add_points(const std::string& file,
                  const std::string& model,
                  const costmodel::Validation& v);

  ValidateBars bars_;
  std::vector<ValidationStat> stats_;
  nlohmann::ordered_json points_ = nlohmann::ordered_json::array();
  std::vector<std::string> skipped_;
  std::vector<std::string> missed_;
};

}  // namespace yirage::cli
