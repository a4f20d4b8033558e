// The block-body emitter shared by the CPU, CUDA and HIP backends (backend.h): tile loads
// (double-buffered when the plan pipelines them), the ops in schedule order, accumulators in
// registers or shared memory, the epilogue after the loop and the savers.
#include "codegen/backend/backend.h"
#include "codegen/lower/library_matmul.h"

#include <algorithm>
#include <sstream>

namespace yirage::codegen {
namespace {

std::string d4(const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> p(4, 1);
  for (std::size_t i = 0; i < v.size() && i < 4; ++i)
    p[4 - v.size() + i] = v[i];
  std::ostringstream os;
  os << "D4{{" << p[0] << ", " << p[1] << ", " << p[2] << ", " << p[3] << "}}";
  return os.str();
}

std::vector<std::int64_t> row_strides(const Shape& s, bool broadcast) {
  std::vector<std::int64_t> st(s.size());
  std::int64_t n = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = broadcast && s[i] == 1 ? 0 : n;
    n *= s[i];
  }
  return st;
}

// Strides of a padded to 4 dims, as D4 text (padding dims get stride 0).
std::string d4_strides(const Shape& s, bool broadcast) {
  std::vector<std::int64_t> st = row_strides(s, broadcast);
  std::vector<std::int64_t> p(4, 0);
  for (std::size_t i = 0; i < st.size(); ++i)
    p[4 - st.size() + i] = st[i];
  std::ostringstream os;
  os << "D4{{" << p[0] << ", " << p[1] << ", " << p[2] << ", " << p[3] << "}}";
  return os.str();
}

std::string op_enum(OpKind k) {
  std::string n = op_name(k);
  n[0] = static_cast<char>(n[0] - 'a' + 'A');
  return "k" + n;
}

std::string accum_enum(Accum a) {
  switch (a) {
    case Accum::kSum:
      return "kAccSum";
    case Accum::kSumLast:
      return "kAccSumLast";
    case Accum::kRmsLast:
      return "kAccRmsLast";
    case Accum::kMaxLast:
      return "kAccMaxLast";
  }
  return "kAccSum";
}

// Element offset of a tile's origin: grid coordinates times tile extents (and the loop).
std::string origin(const Shape& full,
                   const Shape& tile,
                   const DimMap& map,
                   int fmap,
                   const std::string& loop_var) {
  std::vector<std::int64_t> st = row_strides(full, false);
  static const char* axis[3] = {"bx", "by", "bz"};
  std::ostringstream os;
  os << "0";
  for (std::size_t a = 0; a < 3; ++a)
    if (map[a] != kReplicated) {
      auto d = static_cast<std::size_t>(map[a]);
      os << " + " << axis[a] << " * " << tile[d] * st[d] << "L";
    }
  if (fmap != kReplicated) {
    auto d = static_cast<std::size_t>(fmap);
    os << " + " << loop_var << " * " << tile[d] * st[d] << "L";
  }
  return os.str();
}

std::string tile_ptr(const LoweredBlock& b, int t, const std::string& in_type) {
  std::ostringstream os;
  if (t < static_cast<int>(b.graph.inputs.size()))
    os << "reinterpret_cast<const " << in_type << "*>(smem + (b_" << t << " ? "
       << b.offset2[static_cast<std::size_t>(t)] << " : " << b.offset[static_cast<std::size_t>(t)]
       << "))";
  else
    os << "(smem + " << b.offset[static_cast<std::size_t>(t)] << ")";
  return os.str();
}

struct Ctx {
  CodeWriter& w;
  const BlockProgram& p;
  const LoweredStep& s;
  const LoweredBlock& b;
  Backend backend;
  std::vector<std::string> in_type;  // per block input: the tile's element type
};

void emit_loads(Ctx& c, const std::string& it, const std::string& buffer) {
  const BlockGraph& g = c.b.graph;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const BlockInput& in = g.inputs[i];
    int kt = c.s.op.in[static_cast<std::size_t>(in.input)];
    const Shape& full = c.p.shapes[static_cast<std::size_t>(kt)];
    std::ostringstream os;
    os << "yr_load_tile(reinterpret_cast<" << c.in_type[i] << "*>(smem + (" << buffer << " ? "
       << c.b.offset2[i] << " : " << c.b.offset[i] << ")), k" << kt << ", " << d4(c.b.tiles[i])
       << ", " << d4_strides(full, false) << ", "
       << origin(full, c.b.tiles[i], in.imap, in.fmap, it) << ");";
    c.w.line(os.str());
  }
  c.w.line("yr_load_commit();");
}

std::string operand(Ctx& c, int t) {
  std::size_t ni = c.b.graph.inputs.size();
  return tile_ptr(c.b, t, t < static_cast<int>(ni) ? c.in_type[static_cast<std::size_t>(t)] : "");
}

void emit_op(Ctx& c, int o) {
  const BlockOp& op = c.b.graph.ops[static_cast<std::size_t>(o)];
  std::size_t id = c.b.graph.inputs.size() + static_cast<std::size_t>(o);
  const Shape& out = c.b.tiles[id];
  std::string dst = "(smem + " + std::to_string(c.b.offset[id]) + ")";
  std::ostringstream os;
  if (is_unary(op.kind)) {
    os << "yr_unary(" << op_enum(op.kind) << ", " << dst << ", " << operand(c, op.in[0]) << ", "
       << elements(out) << "L);";
  } else if (is_binary(op.kind)) {
    const Shape& a = c.b.tiles[static_cast<std::size_t>(op.in[0])];
    const Shape& bb = c.b.tiles[static_cast<std::size_t>(op.in[1])];
    os << "yr_binary(" << op_enum(op.kind) << ", " << dst << ", " << operand(c, op.in[0]) << ", "
       << operand(c, op.in[1]) << ", " << d4(out) << ", " << d4_strides(a, true) << ", "
       << d4_strides(bb, true) << ");";
  } else if (is_reduction(op.kind)) {
    const Shape& x = c.b.tiles[static_cast<std::size_t>(op.in[0])];
    auto d = static_cast<std::size_t>(op.dim);
    std::int64_t inner = 1;
    for (std::size_t i = d + 1; i < x.size(); ++i)
      inner *= x[i];
    os << "yr_reduce(" << op_enum(op.kind) << ", " << dst << ", " << operand(c, op.in[0]) << ", "
       << elements(x) / (x[d] * inner) << "L, " << x[d] << "L, " << inner << "L, " << x[d] << "L);";
  } else {
    const Shape& a = c.b.tiles[static_cast<std::size_t>(op.in[0])];
    const Shape& bb = c.b.tiles[static_cast<std::size_t>(op.in[1])];
    std::int64_t m = a[a.size() - 2], k = a.back(), n = bb.back();
    bool mma = c.backend == Backend::kCuda && m % 16 == 0 && n % 8 == 0 && k % 16 == 0 &&
               op.in[0] < static_cast<int>(c.b.graph.inputs.size()) &&
               op.in[1] < static_cast<int>(c.b.graph.inputs.size());
    os << (mma ? "yr_matmul_mma(" : "yr_matmul(") << dst << ", " << operand(c, op.in[0]) << ", "
       << operand(c, op.in[1]) << ", " << elements(out) / (m * n) << "L, " << m << "L, " << k
       << "L, " << n << "L);";
  }
  c.w.line(os.str() + "  // t" + std::to_string(id) + " " + shape_text(out));
  c.w.line("YR_SYNC();");
}

std::int64_t regs_per_thread(const Ctx& c, std::size_t id) {
  std::int64_t threads = c.backend == Backend::kCpu ? 1 : kBlockThreads;
  return (elements(c.b.tiles[id]) + threads - 1) / threads;
}

void emit_accum(Ctx& c, int o) {
  const BlockOp& op = c.b.graph.ops[static_cast<std::size_t>(o)];
  std::size_t id = c.b.graph.inputs.size() + static_cast<std::size_t>(o);
  const Shape& x = c.b.tiles[static_cast<std::size_t>(op.in[0])];
  std::int64_t len = op.accum == Accum::kSum ? 1 : x.back();
  std::string step = "yr_accum_step(" + accum_enum(op.accum) + ", " + operand(c, op.in[0]) +
                     ", e, " + std::to_string(len) + "L)";
  std::string kind = accum_enum(op.accum);
  std::string n = std::to_string(elements(c.b.tiles[id])) + "L";
  if (c.b.storage[id] == Storage::kRegisters) {
    std::string r = "acc" + std::to_string(id);
    c.w.open("for (long j = 0; j < " + std::to_string(regs_per_thread(c, id)) + "; ++j)");
    c.w.line("long e = YR_TID + j * YR_NT;");
    c.w.line("if (e < " + n + ") " + r + "[j] = yr_accum_add(" + kind + ", " + r + "[j], " + step +
             ");");
    c.w.close();
  } else {
    std::string t = "(smem + " + std::to_string(c.b.offset[id]) + ")";
    c.w.line("for (long e = YR_TID; e < " + n + "; e += YR_NT) " + t + "[e] = yr_accum_add(" +
             kind + ", " + t + "[e], " + step + ");");
  }
}

// Accumulators start at 0 (-inf for max); after the loop, rms takes sqrt(sum / count) and
// register accumulators move to their shared slot for the epilogue and savers.
void emit_accum_init(Ctx& c, bool finish) {
  const BlockGraph& g = c.b.graph;
  std::size_t ni = g.inputs.size();
  for (std::size_t o = 0; o < g.ops.size(); ++o) {
    if (g.ops[o].kind != OpKind::kAccum)
      continue;
    std::size_t id = ni + o;
    std::string init = g.ops[o].accum == Accum::kMaxLast ? "-INFINITY" : "0.0f";
    std::string n = std::to_string(elements(c.b.tiles[id])) + "L";
    std::string t = "(smem + " + std::to_string(c.b.offset[id]) + ")";
    std::string r = "acc" + std::to_string(id);
    bool reg = c.b.storage[id] == Storage::kRegisters;
    std::string count =
        std::to_string(c.b.tiles[static_cast<std::size_t>(g.ops[o].in[0])].back() * g.forloop);
    std::string v = reg ? r + "[j]" : t + "[e]";
    std::string fin = g.ops[o].accum == Accum::kRmsLast ? "sqrtf(" + v + " / " + count + ".0f)" : v;
    if (!finish && reg) {
      c.w.line("float " + r + "[" + std::to_string(regs_per_thread(c, id)) + "];  // t" +
               std::to_string(id) + " in registers");
      c.w.line("for (long j = 0; j < " + std::to_string(regs_per_thread(c, id)) + "; ++j) " + r +
               "[j] = " + init + ";");
    } else if (!finish) {
      c.w.line("for (long e = YR_TID; e < " + n + "; e += YR_NT) " + t + "[e] = " + init + ";");
    } else if (reg) {
      c.w.open("for (long j = 0; j < " + std::to_string(regs_per_thread(c, id)) + "; ++j)");
      c.w.line("long e = YR_TID + j * YR_NT;");
      c.w.line("if (e < " + n + ") " + t + "[e] = " + fin + ";");
      c.w.close();
    } else if (g.ops[o].accum == Accum::kRmsLast) {
      c.w.line("for (long e = YR_TID; e < " + n + "; e += YR_NT) " + v + " = " + fin + ";");
    }
  }
  c.w.line("YR_SYNC();");
}

void emit_saves(Ctx& c) {
  const BlockGraph& g = c.b.graph;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const BlockOutput& o = g.outputs[i];
    const Shape& tile = c.b.tiles[static_cast<std::size_t>(o.tensor)];
    int kt = c.s.out[i];
    std::ostringstream os;
    os << "yr_save_tile(k" << kt << ", " << operand(c, o.tensor) << ", " << d4(tile) << ", "
       << d4_strides(c.p.shapes[static_cast<std::size_t>(kt)], false) << ", "
       << origin(c.p.shapes[static_cast<std::size_t>(kt)], tile, o.omap, kReplicated, "") << ");";
    c.w.line(os.str());
  }
}

}  // namespace

std::string tensor_type(const BlockProgram& p, int t) {
  if (!program_tensor(p.graph, t))
    return "float";  // the rule the cost model prices by (library_matmul.h)
  return t < static_cast<int>(p.graph.inputs.size()) ? "yr_in_t" : "yr_out_t";
}

bool is_intermediate(const BlockProgram& p, int t) {
  if (tensor_type(p, t) != "float")
    return false;
  return std::any_of(p.steps.begin(), p.steps.end(), [t](const LoweredStep& s) {
    return std::find(s.out.begin(), s.out.end(), t) != s.out.end();
  });
}

void emit_block_body(CodeWriter& w, const BlockProgram& p, const LoweredStep& s, Backend b) {
  const LoweredBlock& lb = *s.block;
  Ctx c{w, p, s, lb, b, {}};
  for (const BlockInput& in : lb.graph.inputs)
    c.in_type.push_back(tensor_type(p, s.op.in[static_cast<std::size_t>(in.input)]));
  bool pipelined = lb.pipeline_depth > 1;
  emit_accum_init(c, false);
  emit_loads(c, "0L", "0");
  w.open("for (long it = 0; it < " + std::to_string(lb.graph.forloop) + "L; ++it)");
  for (std::size_t i = 0; i < lb.graph.inputs.size(); ++i)
    w.line("const int b_" + std::to_string(i) + " = " + (pipelined ? "int(it & 1)" : "0") +
           ";  // the buffer holding this iteration's tile");
  if (pipelined) {
    w.open("if (it + 1 < " + std::to_string(lb.graph.forloop) + "L)");
    emit_loads(c, "(it + 1)", "!b_0");
    w.close();
  }
  w.line(pipelined ? "yr_load_wait(it + 1 < " + std::to_string(lb.graph.forloop) + "L ? 1 : 0);"
                   : "yr_load_wait(0);");
  w.line("YR_SYNC();");
  for (std::size_t i = 0; i < lb.in_loop.size(); ++i) {
    int o = lb.in_loop[i];
    if (lb.graph.ops[static_cast<std::size_t>(o)].kind != OpKind::kAccum) {
      emit_op(c, o);  // ends at a barrier
      continue;
    }
    emit_accum(c, o);
    // An op after it may write where the accumulator's input was (the plan shares slots of
    // tiles whose lifetimes do not overlap): the block waits until every thread has read it.
    bool op_follows =
        i + 1 < lb.in_loop.size() &&
        lb.graph.ops[static_cast<std::size_t>(lb.in_loop[i + 1])].kind != OpKind::kAccum;
    if (op_follows)
      w.line("YR_SYNC();");
  }
  w.line("YR_SYNC();");
  w.close();
  emit_accum_init(c, true);
  for (int o : lb.after)
    emit_op(c, o);
  emit_saves(c);
}

bool library_row_blocks(const LoweredStep& s) {
  return s.row && s.row->len >= kRowChainBlockLen;
}

bool library_reduces_rows(const BlockProgram& p, const LoweredStep& s) {
  if (s.block || !is_reduction(s.op.kind))
    return false;
  const Shape& in = p.shapes[static_cast<std::size_t>(s.op.in[0])];
  return s.op.dim + 1 == static_cast<int>(in.size());
}

void emit_library_op(CodeWriter& w, const BlockProgram& p, const LoweredStep& s, bool grid) {
  const std::string span = grid ? ", YR_GTID, YR_GNT" : "";
  const KernelOp& op = s.op;
  std::vector<Shape> in;
  for (int u : op.in)
    in.push_back(p.shapes[static_cast<std::size_t>(u)]);
  int out = s.out[0];
  const Shape& os_ = p.shapes[static_cast<std::size_t>(out)];
  std::ostringstream os;
  std::string k = "k" + std::to_string(out);
  if (s.row) {
    const RowChain& c = *s.row;
    os << (grid ? "yr_row_chain_grid(" : "yr_row_chain(")
       << (c.ops == 3 ? op_enum(c.map) : std::string("-1")) << ", " << op_enum(c.reduce) << ", "
       << op_enum(c.combine) << ", " << (c.row_left ? "true" : "false") << ", " << k << ", k" << c.x
       << ", " << c.rows << "L, " << c.len << "L";
    if (grid)
      os << ", " << (library_row_blocks(s) ? "true" : "false");
    w.line(os.str() + ");  // row " + row_chain_name(c) + " -> " + shape_text(os_));
    return;
  }
  if (is_unary(op.kind)) {
    os << "yr_unary(" << op_enum(op.kind) << ", " << k << ", k" << op.in[0] << ", " << elements(os_)
       << "L" << span << ");";
  } else if (is_binary(op.kind)) {
    os << "yr_binary(" << op_enum(op.kind) << ", " << k << ", k" << op.in[0] << ", k" << op.in[1]
       << ", " << d4(os_) << ", " << d4_strides(in[0], true) << ", " << d4_strides(in[1], true)
       << span << ");";
  } else if (is_reduction(op.kind)) {
    auto d = static_cast<std::size_t>(op.dim);
    std::int64_t inner = 1;
    for (std::size_t i = d + 1; i < in[0].size(); ++i)
      inner *= in[0][i];
    if (grid && library_reduces_rows(p, s))
      os << "yr_reduce_rows(" << op_enum(op.kind) << ", " << k << ", k" << op.in[0] << ", "
         << elements(in[0]) / in[0][d] << "L, " << in[0][d] << "L, " << in[0][d] << "L);";
    else
      os << "yr_reduce(" << op_enum(op.kind) << ", " << k << ", k" << op.in[0] << ", "
         << elements(in[0]) / (in[0][d] * inner) << "L, " << in[0][d] << "L, " << inner << "L, "
         << in[0][d] << "L" << span << ");";
  } else {
    std::int64_t m = in[0][in[0].size() - 2], kk = in[0].back(), n = in[1].back();
    os << "yr_matmul(" << k << ", k" << op.in[0] << ", k" << op.in[1] << ", "
       << elements(os_) / (m * n) << "L, " << m << "L, " << kk << "L, " << n << "L" << span << ");";
  }
  w.line(os.str() + "  // " + op_name(op.kind) + " -> " + shape_text(os_));
}

void emit_schedule_comment(CodeWriter& w, const BlockProgram& p, const std::string& extra) {
  w.line("// Generated by yirage from the µGraph '" + p.name + "'. Schedule:");
  for (const std::string& l : describe(p))
    w.line("//   " + l);
  if (!extra.empty())
    w.line("// " + extra);
}

}  // namespace yirage::codegen
