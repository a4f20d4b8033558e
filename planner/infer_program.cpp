#include "planner/infer_program.h"

#include <string>

namespace yirage::planner {
namespace {

using costmodel::Collective;
using devices::Seconds;

}  // namespace

StepProgramResult inference_step_program(const InferContext& cx, const InferLayout& l) {
  if (cx.cluster.groups.size() != 1)
    return {std::nullopt, "inference on mixed clusters is not planned"};
  const devices::ModelSpec& m = cx.task.model;
  ForwardPass pass = step_pass(cx, l);
  StepProgram out;
  costmodel::SimProgram& p = out.program;
  // Ranks as the estimate places them: tp fastest, then the stages, then the replicas.
  auto rank = [&](std::int64_t t, std::int64_t s, std::int64_t r) {
    return t + l.tp * (s + l.pp * r);
  };
  for (std::int64_t r = 0; r < l.replicas; ++r) {
    std::vector<std::size_t> last(static_cast<std::size_t>(l.tp));  // per tp rank
    bool started = false;
    std::int64_t layer = 0;
    for (std::int64_t s = 0; s < l.pp; ++s) {
      std::int64_t layers = m.layers / l.pp + (s < m.layers % l.pp ? 1 : 0);
      std::vector<std::int64_t> group;
      for (std::int64_t t = 0; t < l.tp; ++t)
        group.push_back(rank(t, s, r));
      if (s > 0) {
        // The previous stage's output, split over the tensor-parallel ranks.
        for (std::int64_t t = 0; t < l.tp; ++t) {
          auto k = static_cast<std::size_t>(t);
          last[k] =
              p.send(rank(t, s - 1, r), rank(t, s, r), pass.send_bytes / static_cast<double>(l.tp),
                     "act stage" + std::to_string(s - 1), {last[k]},
                     "pp " + std::to_string(s - 1) + ">" + std::to_string(s));
        }
      }
      for (std::int64_t i = 0; i < layers; ++i, ++layer) {
        const LayerCost& c = layer < pass.dense_layers ? pass.dense : pass.moe;
        std::string name = "layer " + std::to_string(layer);
        // Attention, its all-reduce, then the MLP and its all-reduce (Megatron-LM).
        for (const char* half : {" attn", " mlp"}) {
          std::vector<std::size_t> done;
          for (std::int64_t t = 0; t < l.tp; ++t) {
            auto k = static_cast<std::size_t>(t);
            std::vector<std::size_t> after;
            if (started)
              after.push_back(last[k]);
            done.push_back(p.compute(group[k], name + half, Seconds{c.forward / 2}, after));
          }
          started = true;
          if (pass.tp_bytes > 0) {
            std::size_t id = p.collective(group, Collective::kAllReduce, pass.tp_bytes,
                                          "tp " + name + half, "compute", done);
            p.tasks[id].algorithm = pass.tp_algorithm;
            p.tasks[id].protocol = pass.tp_protocol;
            done.assign(done.size(), id);
          }
          last = done;
        }
      }
      if (s == l.pp - 1) {
        for (std::int64_t t = 0; t < l.tp; ++t) {
          auto k = static_cast<std::size_t>(t);
          last[k] = p.compute(group[k], "head", Seconds{pass.head}, {last[k]});
        }
      }
    }
    for (std::int64_t s = 0; s < l.pp; ++s) {
      for (std::int64_t t = 0; t < l.tp; ++t) {
        std::vector<std::size_t> after;
        if (s == l.pp - 1)
          after.push_back(last[static_cast<std::size_t>(t)]);
        out.ends.push_back(p.compute(rank(t, s, r), "step end", Seconds{0}, after));
      }
    }
  }
  if (m.moe) {
    out.notes.push_back(
        "expert layers are replayed as their analytical time on the device (no all-to-all)");
  }
  if (!pass.tp_calibration.empty()) {
    out.notes.push_back("the estimate's all-reduces are calibrated (" + pass.tp_calibration +
                        "); the replay's run at NCCL's uncalibrated rates and latencies");
  }
  if (cx.task.mode == devices::Mode::kServe) {
    out.notes.push_back(
        "one decode step of every replica at the mean context (the prefills that continuous "
        "batching runs between decode steps, and their queueing, are the estimate's)");
  }
  return {out, ""};
}

}  // namespace yirage::planner
