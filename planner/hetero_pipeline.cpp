#include "planner/hetero_pipeline.h"

#include "costmodel/schedule.h"
#include "planner/node_groups.h"
#include "planner/train_stage.h"
#include "planner/workload/model_size.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <set>

namespace yirage::planner {
namespace {

using devices::ClusterSpec;
using devices::NodeGroup;

double f(std::int64_t v) {
  return static_cast<double>(v);
}

// One node group as a cluster of its own, with the context the stage model prices it in.
struct GroupModel {
  const NodeGroup* group;
  ClusterSpec cluster;
  LayerCostCache cache;
  TrainContext cx;

  GroupModel(const ClusterSpec& whole,
             const NodeGroup* g,
             const devices::TaskSpec& task,
             const costmodel::CalibrationSet& cal)
      : group(g), cluster(sub_cluster(whole, {g})), cx{cluster, task, cal} {
    cx.layer_cache = &cache;
  }
};

// One group's choice in a candidate: its layout and what balancing needs.
struct Choice {
  GroupModel* model = nullptr;
  Layout layout;
  double layer_time = 0;        // one layer, one micro-batch, on one of its stages
  double head_time = 0;         // the output head (paid when it holds the last stage)
  std::int64_t max_layers = 0;  // over all its stages, as memory allows
  std::int64_t layers = 0;
};

struct Candidate {
  std::int64_t dp, mb, m;
  Recompute recompute;
  int zero;
};

// Layers per stage that fit in memory at position `index` of `stages`: memory is affine in
// the layer count (state and activations per layer; embedding, head and the recomputed layer
// on top).
std::int64_t stage_cap(const TrainContext& cx,
                       const Layout& l,
                       std::int64_t index,
                       std::int64_t stages,
                       std::int64_t m) {
  MemoryUse zero = stage_memory(cx, l, StageSpan{index, stages, 0, 0}, m);
  MemoryUse one = stage_memory(cx, l, StageSpan{index, stages, 0, 1}, m);
  double per_layer = one.total() - zero.total();
  double room = zero.capacity - zero.total();
  if (room < per_layer)
    return 0;
  return static_cast<std::int64_t>(std::floor(room / per_layer));
}

// Splits the layers over the groups in pipeline order: every stage at least one, then each
// further layer to the group whose slowest stage stays fastest with it (ties to the earlier
// group), within memory. False when the layers do not fit.
bool balance(std::vector<Choice>& parts, std::int64_t layers) {
  std::int64_t given = 0;
  for (Choice& c : parts) {
    c.layers = c.layout.pp;
    given += c.layers;
    if (c.layers > c.max_layers)
      return false;
  }
  if (given > layers)
    return false;
  auto time = [&](const Choice& c, std::int64_t n, bool last) {
    return f((n + c.layout.pp - 1) / c.layout.pp) * c.layer_time + (last ? c.head_time : 0);
  };
  for (; given < layers; ++given) {
    std::size_t pick = parts.size();
    double best = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Choice& c = parts[i];
      if (c.layers + 1 > c.max_layers)
        continue;
      double t = time(c, c.layers + 1, i + 1 == parts.size());
      if (pick == parts.size() || t < best) {
        pick = i;
        best = t;
      }
    }
    if (pick == parts.size())
      return false;
    parts[pick].layers++;
  }
  return true;
}

double bound(const std::vector<Choice>& parts, std::int64_t m) {
  double worst = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Choice& c = parts[i];
    worst = std::max(worst, f((c.layers + c.layout.pp - 1) / c.layout.pp) * c.layer_time +
                                (i + 1 == parts.size() ? c.head_time : 0));
  }
  return f(m) * worst;
}

// A pipeline send between the last stage of one group and the first of the next, over the
// network, split over the smaller tensor-parallel group's ranks.
double cross_send(const ClusterSpec& whole,
                  const Choice& from,
                  const Choice& to,
                  const devices::TaskSpec& task,
                  const costmodel::CalibrationSet& cal) {
  ClusterSpec pair = sub_cluster(whole, {from.model->group, to.model->group}, 1);
  TrainContext cx{pair, task, cal};
  Layout l = from.layout;
  l.tp = std::min(from.layout.tp, to.layout.tp);
  return pp_send_time(cx, l, false);
}

struct Priced {
  HeteroPipelinePlan plan;
  bool ok = false;
  std::string why;  // when not ok
};

Priced price(const ClusterSpec& whole,
             const devices::TaskSpec& task,
             const costmodel::CalibrationSet& cal,
             const Candidate& k,
             const std::vector<Choice>& parts) {
  Priced out;
  HeteroPipelinePlan& h = out.plan;
  h.dp = k.dp;
  h.micro_batch = k.mb;
  h.recompute = k.recompute;
  h.zero = k.zero;
  h.micro_batches = k.m;
  std::int64_t stages = 0;
  for (const Choice& c : parts)
    stages += c.layout.pp;
  std::vector<costmodel::ScheduleNode> nodes;
  StageTimes slowest;
  double slowest_total = -1;
  double exposed_sync = 0;
  double optimizer = 0;
  std::int64_t index = 0;
  std::int64_t layer = 0;
  double peak = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const Choice& c = parts[p];
    const TrainContext& cx = c.model->cx;
    DeviceContext dcx = device_context(cx, c.layout);
    bool same_node = c.layout.tp * c.layout.pp <= c.model->group->devices_per_node;
    double inner = c.layout.pp > 1 ? pp_send_time(cx, c.layout, same_node) : 0;
    double in = p > 0 ? cross_send(whole, parts[p - 1], c, task, cal) : 0;
    double out_send = p + 1 < parts.size() ? cross_send(whole, c, parts[p + 1], task, cal) : 0;
    PipelinePart part{c.model->group->name,
                      c.model->group->device,
                      c.model->group->devices(),
                      c.layout.tp,
                      c.layout.pp,
                      c.layers,
                      0,
                      {},
                      {}};
    for (std::int64_t j = 0; j < c.layout.pp; ++j, ++index) {
      std::int64_t n = c.layers / c.layout.pp + (j < c.layers % c.layout.pp ? 1 : 0);
      StageSpan span{index, stages, layer, n};
      layer += n;
      MemoryUse mem = stage_memory(cx, c.layout, span, k.m);
      if (mem.total() > mem.capacity) {  // the affine cap rounds; a stage past it stops here
        out.why = "stage " + std::to_string(span.index) + " (group '" + c.model->group->name +
                  "', " + std::to_string(n) + " layers) needs " +
                  devices::format_quantity(mem.total(), devices::Dim::kBytes) +
                  " per device, more than the " +
                  devices::format_quantity(mem.capacity, devices::Dim::kBytes) + " usable";
        return out;
      }
      if (mem.total() > part.memory.total() || part.memory.capacity == 0)
        part.memory = mem;
      StageTimes st = stage_times(cx, c.layout, span, dcx, j == 0 ? in : inner,
                                  j + 1 == c.layout.pp ? out_send : inner);
      Layout whole_pipeline = c.layout;
      whole_pipeline.pp = stages;
      st.pp += 2 * pipeline_sync(cx, whole_pipeline, dcx);  // each forward and backward
      double total = st.compute + st.tp + st.pp;
      part.stage_time = std::max(part.stage_time, total);
      if (total > slowest_total) {
        slowest = st;
        slowest_total = total;
      }
      std::string id = std::to_string(span.index);
      nodes.push_back(costmodel::ScheduleNode::group(
          "stage " + id, costmodel::Binding::kSequential,
          {costmodel::ScheduleNode::task("compute", devices::Seconds{st.compute}, "compute:" + id),
           costmodel::ScheduleNode::task("tp", devices::Seconds{st.tp}, "nvlink:" + id),
           costmodel::ScheduleNode::task("pp", devices::Seconds{st.pp}, "link:" + id)}));
      // Each stage synchronises its own parameters over its dp replicas while its last
      // backward runs; ZeRO 2/3 exchange them around every micro-batch.
      double params = stage_parameters(task.model, span);
      double exposed = task.framework == devices::Framework::kPytorch
                           ? eager_dp_exposed(cx, c.layout, span, k.m, st.backward, dcx)
                           : megatron_dp_exposed(cx, c.layout, span, st.backward, dcx) +
                                 sharded_dp_exposed(cx, c.layout, params, st, k.m);
      exposed_sync = std::max(exposed_sync, exposed);
      optimizer = std::max(optimizer, optimizer_time(cx, c.layout, params, dcx.efficiency));
    }
    Layout typical = c.layout;
    typical.micro_batch = h.micro_batch;
    part.compounds = typical_layer_cost(cx, typical, dcx).compounds;
    h.parts.push_back(part);
    const devices::DeviceSpec& d = whole.device(*c.model->group);
    peak += costmodel::matrix_peak(d, task.precision).value * f(c.model->group->devices());
  }
  costmodel::ScheduleCost pipe = costmodel::cost_schedule(
      costmodel::ScheduleNode::group("1f1b", costmodel::Binding::kPipeline, nodes, k.m));
  StepBreakdown& b = h.step;
  b.compute = f(k.m) * slowest.compute;
  b.tp_comm = f(k.m) * slowest.tp;
  b.pp_comm = f(k.m) * slowest.pp;
  b.bubble = pipe.total.value - f(k.m) * slowest_total;
  b.dp_comm = exposed_sync;
  b.optimizer = optimizer;
  b.total = pipe.total.value + b.dp_comm + b.optimizer;
  double tokens = f(task.global_batch * task.sequence_length);
  h.tokens_per_s = tokens / b.total;
  h.mfu = training_flops_per_token(task.model, task.sequence_length) * tokens / (b.total * peak);
  double watts = 0;
  double usd = 0;
  bool priced = true;
  bool powered = true;
  for (const Choice& c : parts) {
    const devices::DeviceSpec& d = whole.device(*c.model->group);
    double n = f(c.model->group->devices());
    powered = powered && d.tdp.has_value();
    std::optional<double> price = whole.price_per_hour(*c.model->group);
    priced = priced && price.has_value();
    watts += d.tdp ? d.tdp->value.value * n : 0;
    usd += price.value_or(0) * n;
  }
  if (powered)
    h.energy = devices::Joules{watts * b.total};
  if (priced)
    h.usd_per_step = usd * b.total / 3600;
  out.ok = true;
  return out;
}

// Tensor-parallel degrees a group can run with `dp` replicas: powers of two within a node
// that divide its share of devices and the model's heads.
std::vector<std::int64_t> tp_options(const NodeGroup& g,
                                     const devices::ModelSpec& m,
                                     std::int64_t dp) {
  std::vector<std::int64_t> out;
  std::int64_t share = g.devices() / dp;
  for (std::int64_t tp = 1; tp <= g.devices_per_node; tp *= 2) {
    if (g.devices_per_node % tp != 0 || share % tp != 0 || m.heads % tp != 0)
      continue;
    if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
      continue;
    out.push_back(tp);
  }
  return out;
}

}  // namespace

std::string HeteroPipelinePlan::str() const {
  std::string s = "dp=" + std::to_string(dp) + ",mb=" + std::to_string(micro_batch) +
                  ",recompute=" + recompute_name(recompute) + ",zero=" + std::to_string(zero);
  for (const PipelinePart& p : parts) {
    s += " | " + p.group + ": tp=" + std::to_string(p.tp) + ",pp=" + std::to_string(p.stages) +
         ",layers=" + std::to_string(p.layers);
  }
  return s;
}

HeteroPipelineResult search_hetero_pipeline(const ClusterSpec& cluster,
                                            const devices::TaskSpec& task,
                                            const costmodel::CalibrationSet& cal) {
  std::vector<const NodeGroup*> groups = canonical_groups(cluster);
  std::deque<GroupModel> models;
  for (const NodeGroup* g : groups)
    models.emplace_back(cluster, g, task, cal);
  const devices::ModelSpec& model = task.model;
  std::int64_t common = 0;
  for (const NodeGroup* g : groups)
    common = std::gcd(common, g->devices());
  // Pipeline orders: every permutation of up to five groups, else the canonical one.
  std::vector<std::vector<std::size_t>> orders;
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  do {
    orders.push_back(order);
  } while (groups.size() <= 5 && std::next_permutation(order.begin(), order.end()));

  HeteroPipelineResult result;
  std::int64_t most_layers = -1;  // the most layers any candidate's memory held
  std::size_t tried = 0;
  for (std::int64_t dp = 1; dp <= common; ++dp) {
    if (common % dp != 0)
      continue;
    for (std::int64_t mb : {1, 2, 4, 8}) {
      if (task.global_batch % (dp * mb) != 0)
        continue;
      std::int64_t m = task.global_batch / (dp * mb);
      for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
          Candidate k{dp, mb, m, r, zero};
          for (const std::vector<std::size_t>& ord : orders) {
            // Every combination of the groups' tensor-parallel degrees, in odometer order.
            std::vector<std::vector<std::int64_t>> options;
            for (std::size_t i : ord)
              options.push_back(tp_options(*groups[i], model, dp));
            if (std::any_of(options.begin(), options.end(), [](auto& o) { return o.empty(); }))
              continue;
            std::vector<std::size_t> pick(ord.size(), 0);
            while (true) {
              ++tried;
              std::vector<Choice> parts;
              std::int64_t stages = 0;
              for (std::size_t p = 0; p < ord.size(); ++p) {
                GroupModel& gm = models[ord[p]];
                std::int64_t tp = options[p][pick[p]];
                Layout l{dp, tp, gm.group->devices() / (dp * tp), mb, r, zero};
                parts.push_back(Choice{&gm, l, 0, 0, 0, 0});
                stages += l.pp;
              }
              if (stages <= model.layers) {
                std::int64_t index = 0;
                for (std::size_t p = 0; p < parts.size(); ++p) {
                  Choice& c = parts[p];
                  const TrainContext& cx = c.model->cx;
                  DeviceContext dcx = device_context(cx, c.layout);
                  // A layer from the model's end (an MoE layer when the model has them).
                  StageTimes one =
                      stage_times(cx, c.layout, StageSpan{1, 3, model.layers - 1, 1}, dcx, 0, 0);
                  c.layer_time = one.compute + one.tp;
                  StageTimes head = stage_times(cx, c.layout, StageSpan{1, 2, 0, 0}, dcx, 0, 0);
                  c.head_time = head.compute;
                  std::int64_t cap = stage_cap(cx, c.layout, index, stages, m);
                  if (p + 1 == parts.size())
                    cap = std::min(cap, stage_cap(cx, c.layout, stages - 1, stages, m));
                  c.max_layers = cap * c.layout.pp;
                  index += c.layout.pp;
                }
                std::int64_t room = 0;
                for (const Choice& c : parts)
                  room += c.max_layers;
                most_layers = std::max(most_layers, std::min(room, model.layers));
                if (balance(parts, model.layers) &&
                    (!result.plan || bound(parts, m) < result.plan->step.total)) {
                  Priced p = price(cluster, task, cal, k, parts);
                  if (p.ok && (!result.plan || p.plan.step.total < result.plan->step.total))
                    result.plan = p.plan;
                }
              }
              std::size_t d = 0;
              while (d < pick.size() && ++pick[d] == options[d].size())
                pick[d++] = 0;
              if (d == pick.size())
                break;
            }
          }
        }
      }
    }
  }
  if (result.plan) {
    result.plan->candidates = tried;
  } else if (most_layers >= 0) {
    result.why = "no pipeline across the node groups holds the model: at most " +
                 std::to_string(most_layers) + " of its " + std::to_string(model.layers) +
                 " layers fit in the stages' memory";
  } else {
    result.why = "no pipeline across the node groups: too many stages for the model's layers";
  }
  return result;
}

namespace {

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(' ');
  std::size_t b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// One "group: tp=2,pp=1,layers=9" part; an error message or empty.
std::string parse_part(const std::string& text,
                       std::string* group,
                       std::int64_t* tp,
                       std::int64_t* pp,
                       std::int64_t* layers) {
  std::size_t colon = text.find(':');
  if (colon == std::string::npos)
    return "'" + text + "' is not 'group: tp=..,pp=..,layers=..'";
  *group = trim(text.substr(0, colon));
  std::vector<std::pair<std::string, std::string>> items;
  if (std::string err = layout_items(trim(text.substr(colon + 1)), &items); !err.empty())
    return err;
  *layers = 0;
  for (const auto& [key, value] : items) {
    std::int64_t* to = key == "tp" ? tp : key == "pp" ? pp : key == "layers" ? layers : nullptr;
    if (to == nullptr)
      return "unknown key '" + key + "' for group '" + *group + "' (keys: tp, pp, layers)";
    if (std::string err = layout_number(key, value, 1, to); !err.empty())
      return err;
  }
  if (*layers == 0)
    return "group '" + *group + "' needs layers=N";
  return {};
}

}  // namespace

HeteroPipelineResult evaluate_hetero_pipeline(const ClusterSpec& cluster,
                                              const devices::TaskSpec& task,
                                              const costmodel::CalibrationSet& cal,
                                              const std::string& layout) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= layout.size();) {
    std::size_t bar = layout.find('|', start);
    parts.push_back(trim(layout.substr(start, bar == std::string::npos ? bar : bar - start)));
    start = bar == std::string::npos ? layout.size() + 1 : bar + 1;
  }
  HeteroPipelineResult result;
  result.malformed = true;  // until the layout has been read
  Layout common;
  if (std::string err = parse_layout(parts.front(), &common); !err.empty()) {
    result.why = err;
    return result;
  }
  if (common.tp != 1 || common.pp != 1 || common.vpp != 1 || common.ep != 1 || common.cp != 1 ||
      common.offload) {
    result.why =
        "the first part of a pipeline across groups takes dp, mb, recompute and zero "
        "only; tp and pp go with each group";
    return result;
  }
  if (parts.size() != cluster.groups.size() + 1) {
    result.why =
        "on a mixed cluster a layout is one pipeline across the node groups, each of "
        "the " +
        std::to_string(cluster.groups.size()) +
        " named once in pipeline order: 'dp=..,mb=..,recompute=..,zero=.. | group: "
        "tp=..,pp=..,layers=.. | ...'";
    return result;
  }
  std::deque<GroupModel> models;
  std::vector<Choice> choices;
  std::set<std::string> named;
  std::int64_t layers = 0;
  std::int64_t stages = 0;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    std::string name;
    std::int64_t tp = 1;
    std::int64_t pp = 1;
    std::int64_t n = 0;
    if (std::string err = parse_part(parts[i], &name, &tp, &pp, &n); !err.empty()) {
      result.why = err;
      return result;
    }
    const NodeGroup* g = nullptr;
    for (const NodeGroup& x : cluster.groups)
      g = x.name == name ? &x : g;
    if (!named.insert(name).second) {
      result.why = "node group '" + name + "' appears twice";
      return result;
    }
    if (g == nullptr) {
      result.why = "no node group '" + name + "' in cluster '" + cluster.name + "'";
      return result;
    }
    if (common.dp * tp * pp != g->devices()) {
      result.why = "group '" + name + "': dp x tp x pp = " + std::to_string(common.dp * tp * pp) +
                   ", but it has " + std::to_string(g->devices()) + " devices";
      return result;
    }
    if (n < pp) {
      result.why = "group '" + name + "': fewer layers than stages";
      return result;
    }
    models.emplace_back(cluster, g, task, cal);
    Layout l = common;
    l.tp = tp;
    l.pp = pp;
    choices.push_back(Choice{&models.back(), l, 0, 0, n, n});
    layers += n;
    stages += pp;
  }
  if (layers != task.model.layers) {
    result.why = "the groups hold " + std::to_string(layers) + " layers; the model has " +
                 std::to_string(task.model.layers);
    return result;
  }
  if (task.global_batch % (common.dp * common.micro_batch) != 0) {
    result.why =
        "global batch " + std::to_string(task.global_batch) + " is not a multiple of dp x mb";
    return result;
  }
  std::int64_t m = task.global_batch / (common.dp * common.micro_batch);
  Candidate k{common.dp, common.micro_batch, m, common.recompute, common.zero};
  result.malformed = false;
  Priced p = price(cluster, task, cal, k, choices);
  if (!p.ok) {
    result.why = p.why;
    return result;
  }
  p.plan.candidates = 1;
  result.plan = p.plan;
  return result;
}

}  // namespace yirage::planner
