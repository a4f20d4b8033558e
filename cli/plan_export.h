// A plan as a job: `--export megatron` prints a training plan as Megatron-LM's arguments,
// `--export torch` as the command line of bench/run_plan.py, which runs the plan file with
// PyTorch's own parallelism on the GPUs of one host.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "planner/plan.h"

#include <string>

namespace yirage::cli {

/// The launch line and the arguments of Megatron-LM's pretrain_gpt.py for `l`: parallel sizes,
/// sequence parallelism, virtual stages, micro and global batch, recomputation, the
/// distributed optimizer or FSDP, and the model's shape (flag names as of Megatron-LM commit
/// 93da800, the last whose arguments.py names every flag; tests/data/megatron_arguments.txt).
/// Data, tokenizer, learning rate and iterations are the user's to add, and the text says so.
std::string megatron_arguments(const devices::ClusterSpec& cluster,
                               const devices::TaskSpec& task,
                               const planner::Layout& l);

/// `torchrun ... bench/run_plan.py CLUSTER TASK PLAN` for the files given.
std::string torch_command(const devices::ClusterSpec& cluster,
                          const std::string& cluster_file,
                          const std::string& task_file,
                          const std::string& plan_file);

}  // namespace yirage::cli
