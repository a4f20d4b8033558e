#include "cli/plan_export.h"

#include <sstream>
#include <vector>

namespace yirage::cli {
namespace {

// The text of a shell command, one argument a line: quoted where it holds anything but
// letters, digits and "._-/=:+,".
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string("._-/=:+,").find(c) != std::string::npos;
    plain = plain && ok;
  }
  if (plain)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

using Args = std::vector<std::pair<std::string, std::string>>;  // flag, value ("" for a switch)

std::string lines(const std::string& head, const Args& args) {
  std::ostringstream out;
  out << head;
  for (const auto& [flag, value] : args)
    out << " \\\n  " << flag << (value.empty() ? "" : " " + shell_word(value));
  out << "\n";
  return out.str();
}

std::string n(std::int64_t v) {
  return std::to_string(v);
}

}  // namespace

std::string megatron_arguments(const devices::ClusterSpec& cluster,
                               const devices::TaskSpec& task,
                               const planner::Layout& l) {
  const devices::ModelSpec& m = task.model;
  const devices::NodeGroup& g = cluster.groups.front();
  Args a = {{"--tensor-model-parallel-size", n(l.tp)}, {"--pipeline-model-parallel-size", n(l.pp)}};
  if (l.vpp > 1)
    a.emplace_back("--num-layers-per-virtual-pipeline-stage", n(m.layers / (l.pp * l.vpp)));
  if (l.cp > 1)
    a.emplace_back("--context-parallel-size", n(l.cp));
  if (l.ep > 1)
    a.emplace_back("--expert-model-parallel-size", n(l.ep));
  if (l.tp > 1 && l.sp)
    a.emplace_back("--sequence-parallel", "");
  a.emplace_back("--micro-batch-size", n(l.micro_batch));
  a.emplace_back("--global-batch-size", n(task.global_batch));
  if (l.recompute == planner::Recompute::kSelective) {
    a.emplace_back("--recompute-granularity", "selective");
  } else if (l.recompute == planner::Recompute::kFull) {
    a.emplace_back("--recompute-granularity", "full");
    a.emplace_back("--recompute-method", "uniform");
    a.emplace_back("--recompute-num-layers", "1");
  }
  // ZeRO 1 and 2: Megatron's distributed optimizer shards the optimizer state and reduce-
  // scatters the gradients; ZeRO 3 shards the weights too, which is FSDP.
  if (l.zero == 1 || l.zero == 2) {
    a.emplace_back("--use-distributed-optimizer", "");
    a.emplace_back("--overlap-param-gather", "");
  } else if (l.zero == 3) {
    a.emplace_back("--use-torch-fsdp2", "");
  }
  if (l.dp > 1 && l.dp_overlap)
    a.emplace_back("--overlap-grad-reduce", "");  // the plan prices DP overlapped with backward
  if (!l.grad_fusion)
    a.emplace_back("--no-gradient-accumulation-fusion", "");
  if (!l.te)
    a.emplace_back("--transformer-impl", "local");
  if (l.tp_overlap)
    a.emplace_back("--tp-comm-overlap", "");  // Transformer Engine's userbuffers
  if (l.offload)
    a.emplace_back("--optimizer-cpu-offload", "");
  a.emplace_back("--num-layers", n(m.layers));
  a.emplace_back("--hidden-size", n(m.hidden));
  a.emplace_back("--ffn-hidden-size", n(m.ffn > 0 ? m.ffn : m.moe ? m.moe->expert_ffn : 0));
  a.emplace_back("--num-attention-heads", n(m.heads));
  if (m.kv_heads != m.heads) {
    a.emplace_back("--group-query-attention", "");
    a.emplace_back("--num-query-groups", n(m.kv_heads));
  }
  if (m.head_dim * m.heads != m.hidden)
    a.emplace_back("--kv-channels", n(m.head_dim));
  if (m.moe) {
    a.emplace_back("--num-experts", n(m.moe->experts));
    a.emplace_back("--moe-router-topk", n(m.moe->top_k));
    a.emplace_back("--moe-ffn-hidden-size", n(m.moe->expert_ffn));
  }
  a.emplace_back("--seq-length", n(task.sequence_length));
  a.emplace_back("--max-position-embeddings", n(std::max(m.max_positions, task.sequence_length)));
  a.emplace_back("--vocab-size", n(m.vocab));
  if (m.ffn_kind == devices::FfnKind::kGated)
    a.emplace_back("--swiglu", "");
  a.emplace_back("--normalization",
                 m.norm == devices::NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  a.emplace_back("--position-embedding-type",
                 m.position == devices::PositionKind::kRope ? "rope" : "learned_absolute");
  if (!m.tied_embeddings)
    a.emplace_back("--untie-embeddings-and-output-weights", "");
  if (m.bias == devices::BiasKind::kNone)
    a.emplace_back("--disable-bias-linear", "");
  if (m.bias == devices::BiasKind::kQkv) {
    a.emplace_back("--disable-bias-linear", "");
    a.emplace_back("--add-qkv-bias", "");
  }
  a.emplace_back("--attention-backend",
                 task.attention == devices::AttentionKernel::kUnfused ? "unfused" : "flash");
  switch (task.precision) {
    case devices::DType::kFp16:
      a.emplace_back("--fp16", "");
      break;
    case devices::DType::kFp8:
      a.emplace_back("--bf16", "");
      a.emplace_back("--fp8-format", "hybrid");
      break;
    default:
      a.emplace_back("--bf16", "");
      break;
  }
  std::ostringstream head;
  head << "# " << task.name << " on " << cluster.name << ", plan " << l.str()
       << ": Megatron-LM's pretrain_gpt.py (flag names of Megatron-LM's arguments.py).\n"
       << "# Add the data, tokenizer, learning rate and iterations; --vocab-size stands for the "
          "tokenizer's.\n"
       << "torchrun --nnodes " << g.nodes << " --nproc-per-node " << g.devices_per_node
       << " pretrain_gpt.py";
  return lines(head.str(), a);
}

std::string torch_command(const devices::ClusterSpec& cluster,
                          const std::string& cluster_file,
                          const std::string& task_file,
                          const std::string& plan_file) {
  std::ostringstream head;
  head << "# the plan run with PyTorch's own parallelism on one host (bench/run_plan.py)\n";
  if (cluster.total_nodes() > 1) {
    head << "# bench/run_plan.py runs on the GPUs of one host; this cluster has "
         << cluster.total_nodes() << " nodes\n";
  }
  head << "torchrun --nproc-per-node " << cluster.total_devices() << " bench/run_plan.py";
  return lines(
      head.str(),
      {{shell_word(cluster_file), ""}, {shell_word(task_file), ""}, {shell_word(plan_file), ""}});
}

}  // namespace yirage::cli
