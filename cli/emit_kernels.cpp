#include "cli/emit_kernels.h"

#include "cli/output_file.h"
#include "cli/run.h"
#include "codegen/backend/backend.h"
#include "codegen/ir/ugraph_json.h"
#include "devices/support/yaml_reader.h"

#include <CLI/CLI.hpp>

namespace yirage::cli {

namespace {

struct CodegenArgs {
  std::string ugraph;
  std::string backend = "cuda";
  std::string out = ".";
};

std::optional<codegen::Backend> backend_from_name(const std::string& n) {
  for (codegen::Backend b :
       {codegen::Backend::kCpu, codegen::Backend::kCuda, codegen::Backend::kHip})
    if (codegen::backend_name(b) == n)
      return b;
  return std::nullopt;
}

int codegen_command(Context& cx, const CodegenArgs& a) {
  std::optional<codegen::Backend> b = backend_from_name(a.backend);
  if (!b) {
    cx.err << "yirage-plan: unknown backend '" << a.backend << "' (cpu, cuda or hip)\n";
    return kExitBadInput;
  }
  // Read as every input is: printable UTF-8 of at most 8 MiB, noted as an input.
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(a.ugraph, diag);
  diag.throw_if_errors();
  codegen::KernelGraph g = codegen::ugraph_from_json(*text, a.ugraph);
  codegen::BlockProgram p = codegen::lower(g);
  codegen::KernelSource k = codegen::emit_kernels(p, *b);
  std::filesystem::path dir(a.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::path file = dir / file_name_part(k.file_name);
  if (std::string why = write_output(file, k.text); !why.empty()) {
    cx.err << "yirage-plan: " << why << "\n";
    return kExitBadInput;
  }
  std::string why_not;
  codegen::match_gemv(p, &why_not);
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["ugraph"] = a.ugraph;
    j["backend"] = a.backend;
    j["written"] = file.string();
    j["path"] = p.gemv ? "gemv" : "generic block";
    j["why_not_gemv"] = p.gemv ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why_not);
    return write_document(cx, "codegen", j);
  }
  cx.out << "wrote " << file.string() << " ("
         << (p.gemv ? "GEMV path" : "generic block path: " + why_not) << ")\n";
  return kExitOk;
}

}  // namespace

void add_codegen_command(CLI::App& app, Context& cx) {
  CLI::App* cmd =
      app.add_subcommand("codegen", "Generate the kernel of a saved µGraph (CPU, CUDA or HIP)");
  auto a = std::make_shared<CodegenArgs>();
  cmd->add_option("UGRAPH", a->ugraph, "A µGraph saved by superoptimize (NAME.ugraph.json)")
      ->required();
  cmd->add_option("--backend", a->backend, "cpu, cuda or hip")->capture_default_str();
  cmd->add_option("--out", a->out, "Directory for the generated file")->type_name("DIR");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return codegen_command(cx, *a);
    };
  });
}

}  // namespace yirage::cli
