// Kernel emission from the command line: `yirage-plan codegen UGRAPH.json --backend B --out DIR`
// writes the generated kernel of a saved µGraph (codegen/backend/backend.h).
#pragma once

#include "cli/context.h"

namespace CLI {
class App;
}

namespace yirage::cli {

void add_codegen_command(CLI::App& app, Context& cx);

}  // namespace yirage::cli
