#!/usr/bin/env python3
"""Writes the GEMM-LayerNorm and self-attention problem and mapping files of data/comet/.

They are built by analogy with the released GEMM-Softmax files (comet-model.md section 4.2 and
section 8 #19/#20); the COMET authors did not release them. The fused mappings follow
mapping_rowsum_allreduce.yaml, the unfused baselines mapping_unfused.yaml; all use the symbols
of mapping.yaml, so the constants and the sweep constraints of GEMM-Softmax apply. Generating
the GEMM-Softmax pair with the same code reproduces mapping_rowsum_allreduce.yaml and
mapping_unfused.yaml (same latency at the worked example's constants).

Usage: scripts/comet_compound_gen.py [OUTDIR]   (default data/comet)
"""
import os
import sys

# op: (name, type, ins, out); tensors shapes: 'MN','M','MK','KN','NK'
PROJ = {'MN': [['M'], ['N']], 'M': [['M']], 'MK': [['M'], ['K']], 'KN': [['K'], ['N']], 'NK': [['N'], ['K']]}

def problem(title, comment, ins, outs, ops, shapes):
    L = [f"# {title}", *[f"# {c}" for c in comment], "problem:", "  io:", f"    ins: {','.join(ins)}", f"    outs: {','.join(outs)}",
         "  dimensions: [M,N,K]", "  instance:", "    M: M", "    N: N", "    K: K", "  operations:"]
    for name, typ, oins, out in ops:
        L += [f"  - name: {name}", f"    ins: {','.join(oins)}", f"    out: {out}", "    dimensions: [M,N,K]", "    tensors:"]
        seen = []
        for t in list(oins) + [out]:
            if t in seen:
                continue
            seen.append(t)
            L.append(f"      - name: {t}")
            L.append("        projection:")
            for p in PROJ[shapes[t]]:
                L.append(f"          - [[{p[0]}]]")
            if t == out:
                L.append("        read-write: true")
    return "\n".join(L) + "\n"

def lst(xs):
    return "[" + ",".join(str(x) for x in xs) + "]"

def fac(n, vals):
    return " ".join(f"{d}=" + lst([v] * n) for d, v in vals)

def node(ind, target, typ, tensors, prec, wb, tag, factors, perm, child, subtree=None):
    n = len(tensors)
    p = " " * ind
    L = [f"{p}- node_type:   DataMovement_Tile", f"{p}  target:      {lst(target if isinstance(target, list) else [target]*n)}",
         f"{p}  type:        {typ}", f"{p}  tensors:     {lst(tensors)}", f"{p}  precision:   {lst(prec)}",
         f"{p}  rmw:         {lst(['false']*n)}", f"{p}  wb_output:   {lst(['true' if w else 'false' for w in wb])}",
         f"{p}  tag:         {lst(tag)}", f"{p}  factors:"]
    for f in factors:
        L.append(f"{p}    - {f}")
    L += [f"{p}  permutation: {perm}", f"{p}  child:       {lst(child if isinstance(child, list) else [child]*n)}"]
    if subtree:
        L.append(f"{p}  subtree:")
        L += subtree
    return L

def binding(ind):
    p = " " * ind
    return [f"{p}- node_type: inter_tile_binding", f"{p}  binding:     sequential"]

def coll(ind, tag, op, tensor, prec):
    p = " " * ind
    return [f"{p}- node_type:    CollectiveOperation", f"{p}  tag:          {tag}", f"{p}  target:       GB", f"{p}  type:         allreduce",
            f"{p}  reduction_op: {op}", f"{p}  dimension:    N", f"{p}  src:          [GB]", f"{p}  dest:         [GB]",
            f"{p}  wb_output:    false", f"{p}  in_tensor:    {tensor}", f"{p}  out_tensor:   {tensor}", f"{p}  precision:    {prec}", f"{p}  child:        GB"]

def leaf(ind, typ, name, tensors, gemm):
    p = " " * ind
    L = [f"{p}- node_type:     Operation", f"{p}  type:          {typ}", f"{p}  tensors:       {lst(tensors)}", f"{p}  name:          {name}"]
    prim = "M=M_Compute N=N_Compute K=K_Compute" if gemm else "M=M_SM N=N_SM K=K_SM"
    L.append(f"{p}  TilePrimitive: {prim}")
    L.append(f"{p}  TileSteps:")
    for t in tensors:
        L.append(f"{p}    {t}: {prim}")
    L += [f"{p}  compute_attributes:", f"{p}    reduction_dimensions:", f"{p}      - {'red_dim' if gemm else 'red_dim_simd'}",
          f"{p}    reduction_factors:", f"{p}      - {'red_factor' if gemm else 'red_dim_simd_val'}", f"{p}    rmw: true", f"{p}    specd: true"]
    return L

def op_tensors(op):
    name, typ, ins, out = op
    ts = []
    for t in list(ins) + [out]:
        if t not in ts:
            ts.append(t)
    return ts

def precs(ts, gemm):
    return [8 if gemm else 16] * len(ts)

GB_SPATIAL = lambda n: [fac(n, [("M", 1), ("N", "N_GB_spatial_X"), ("K", 1)]), fac(n, [("M", 1), ("N", "N_GB_spatial_Y"), ("K", 1)])]
DRAM_SPATIAL = lambda n: [fac(n, [("M", 1), ("N", "N_DRAM_spatial_X"), ("K", 1)]), fac(n, [("M", 1), ("N", "N_DRAM_spatial_Y"), ("K", 1)])]

def core_gemm(ind, op):
    ts = op_tensors(op)
    return node(ind, ["IB", "WB", "OB"], "temporal", ts, precs(ts, True), [False, False, True], [op[0]] * 3,
                [fac(3, [("M", "M_Core_temporal"), ("N", "N_Core_temporal"), ("K", "K_Core_temporal")])], "MKN", "GEMMEngine",
                leaf(ind + 2, "GEMM", op[0], ts, True))

def core_simd(ind, op):
    ts = op_tensors(op)
    return node(ind, "OB", "temporal", ts, precs(ts, False), [t == op[3] for t in ts], [op[0]] * len(ts),
                [fac(len(ts), [("M", "M_SE"), ("N", "N_SE"), ("K", "K_SE")])], "MKN", "SE", leaf(ind + 2, op[1], op[0], ts, False))

def fused(header, io_tensors, io_tags, io_wb, io_prec, groups):
    """groups: list of ('gemm', op, gb_tensors, gb_wb) | ('simd', [ops], gb_tensors, gb_wb) | ('coll', tag, op, tensor)"""
    gb_t, gb_tags, gb_child, gb_wb = [], [], [], []
    sub = []
    for g in groups:
        if sub:
            sub += binding(7)
        if g[0] == 'gemm':
            op = g[1]
            ts = op_tensors(op)
            gb_t += ts[:2]; gb_tags += [op[0]] * 2; gb_child += ["IB", "WB"]; gb_wb += [False, False]
            for t, w in zip(g[2], g[3]):
                gb_t.append(t); gb_tags.append(op[0]); gb_child.append("OB"); gb_wb.append(w)
            sub += node(7, "GB", "spatial", ts, precs(ts, True), [False, False, ts[2] in g[2] and g[3][g[2].index(ts[2])]],
                        [op[0]] * 3, GB_SPATIAL(3), "KNM", ["IB", "WB", "OB"], core_gemm(11, op))
        elif g[0] == 'simd':
            ops = g[1]
            inner = []
            for op in ops:
                if inner:
                    inner += binding(11)
                inner += core_simd(11, op)
            tags = []
            for t in g[2]:
                # tag: first op reading or writing t in this group
                tags.append(next(o[0] for o in ops if t in op_tensors(o)))
            for t, tg, w in zip(g[2], tags, g[3]):
                gb_t.append(t); gb_tags.append(tg); gb_child.append("OB"); gb_wb.append(w)
            sub += node(7, "GB", "spatial", g[2], [16] * len(g[2]), g[3], tags, GB_SPATIAL(len(g[2])), "MKN", "OB",
                        (binding(11) if len(ops) > 1 else []) + inner)
        else:
            sub += coll(7, g[1], g[2], g[3], 16)
    n = len(gb_t)
    gbt = node(5, "GB", "temporal", gb_t, [8] * len(gb_t),
               [t in io_tensors and w for t, w in zip(gb_t, gb_wb)], gb_tags,
               [" ".join([f"M={lst(['M_A_GB_temporal']*n)}", f"N={lst(['N_A_GB_temporal']*n)}", f"K={lst(['K_A_GB_temporal']*n)}"])],
               "KNM", gb_child, binding(7) + sub)
    k = len(io_tensors)
    dsp = node(3, "DRAM", "spatial", io_tensors, io_prec, io_wb, io_tags, DRAM_SPATIAL(k), "KNM", "GB", gbt)
    root = node(0, "DRAM", "temporal", io_tensors, io_prec, io_wb, io_tags,
                [f"M={lst(['M_A_DRAM_temporal']*k)} N={lst([1]*k)} K={lst([1]*k)}"], "KNM", "GB", dsp)
    root[0] = root[0].replace("- node_type", "  node_type")
    return header + "mapping:\n" + "\n".join(root) + "\n"

def unfused(header, ops, colls, gemm_ops):
    """Each op its own subtree under the DRAM loop; colls: {op_name: (tag, reduction_op, tensor)}"""
    all_t, all_tags, all_wb, all_prec = [], [], [], []
    sub = []
    for op in ops:
        gemm = op[0] in gemm_ops
        ts = op_tensors(op)
        pr = precs(ts, gemm)
        wb = [t == op[3] for t in ts]
        for t, w, p_ in zip(ts, wb, pr):
            all_t.append(t); all_tags.append(op[0]); all_wb.append(w); all_prec.append(p_)
        child = ["IB", "WB", "OB"] if gemm else "OB"
        core = core_gemm(11, op) if gemm else core_simd(11, op)
        gbs = node(7, "GB", "spatial", ts, pr, wb, [op[0]] * len(ts), GB_SPATIAL(len(ts)), "KNM", child, core)
        n = len(ts)
        gbt_sub = gbs
        if op[0] in colls:
            tag, rop, t = colls[op[0]]
            gbt_sub = binding(7) + gbs + binding(7) + coll(7, tag, rop, t, 16)
        gbt = node(5, "GB", "temporal", ts, pr, wb, [op[0]] * n,
                   [" ".join([f"M={lst(['M_A_GB_temporal']*n)}", f"N={lst(['N_A_GB_temporal']*n)}", f"K={lst(['K_A_GB_temporal']*n)}"])],
                   "KNM", child, gbt_sub)
        sub += binding(3) + node(3, "DRAM", "spatial", ts, pr, wb, [op[0]] * n, DRAM_SPATIAL(n), "KNM", "GB", gbt)
    k = len(all_t)
    root = node(0, "DRAM", "temporal", all_t, all_prec, all_wb, all_tags,
                [f"M={lst(['M_A_DRAM_temporal']*k)} N={lst([1]*k)} K={lst([1]*k)}"], "KNM", "GB", sub)
    root[0] = root[0].replace("- node_type", "  node_type")
    return header + "mapping:\n" + "\n".join(root) + "\n"


out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "data", "comet")
SM = [("GEMM", "GEMM", ["A", "B"], "C"), ("ROWMAX", "rowmax", ["C"], "D"), ("SUB", "add", ["C", "D"], "E"),
      ("EXP1", "exp", ["E"], "F"), ("ROWSUM", "rowsum", ["F"], "G"), ("DIV", "div", ["F", "G"], "H")]
smsh = dict(A='MK', B='KN', C='MN', D='M', E='MN', F='MN', G='M', H='MN')
hdr = "# GEMM-Softmax, generated as a check of this script\n"
if os.environ.get("COMET_GEN_SOFTMAX"):
    open(f"{out}/sm_fused.yaml", "w").write(fused(hdr, ["A", "B", "H"], ["GEMM", "GEMM", "DIV"], [False, False, True], [8, 8, 8], [
    ('gemm', SM[0], [], []), ('simd', [SM[1]], ["D"], [True]), ('coll', 'colop1', 'max', 'D'),
    ('simd', SM[2:5], ["D", "G"], [False, True]), ('coll', 'colop2', 'add', 'G'), ('simd', [SM[5]], ["G", "H"], [False, True])]))
    open(f"{out}/sm_unfused.yaml", "w").write(unfused(hdr, SM, {"ROWMAX": ("colop1", "max", "D"), "ROWSUM": ("colop2", "add", "G")}, ["GEMM"]))
HDR_LN_F = """# Built by analogy (comet-model.md section 4.2, section 8 #20), NOT released by the COMET authors:
# fused GEMM-LayerNorm mapping in the style of mapping_rowsum_allreduce.yaml (symbols of
# mapping.yaml, so the same constants and constraints apply). C stays in the cores' OB; the
# row sums S and Q drain to GB and are all-reduced (add) across the clusters that split N.
# Generated by scripts/comet_compound_gen.py.
"""
HDR_LN_U = """# Built by analogy (comet-model.md section 4.2, section 8 #19/#20), NOT released by the COMET
# authors: unfused GEMM-LayerNorm baseline, each op its own subtree under the DRAM loop with its
# inputs and output through DRAM (as mapping_unfused.yaml); the row sums S and Q are
# all-reduced across the clusters before they are written back.
# Generated by scripts/comet_compound_gen.py.
"""
HDR_AT_F = """# Built by analogy (comet-model.md section 4.2, section 8 #20), NOT released by the COMET authors:
# fused self-attention mapping (FlashAttention-like: S, P stay on chip; not an online softmax),
# in the style of mapping_rowsum_allreduce.yaml (symbols of mapping.yaml). N (keys) is split
# across clusters and cores: the row max D and row sum G are all-reduced (max, add), P = H goes
# from the OB to GB and into the IB for O = P V, and the partial O (sums over the local keys)
# is all-reduced (add) across the clusters.
# Generated by scripts/comet_compound_gen.py.
"""
HDR_AT_U = """# Built by analogy (comet-model.md section 4.2, section 8 #19/#20), NOT released by the COMET
# authors: unfused self-attention baseline, each op (GEMM, the softmax chain, GEMM2) its own
# subtree under the DRAM loop with inputs and output through DRAM (as mapping_unfused.yaml);
# D, G and the partial O are all-reduced across the clusters before they are written back.
# Generated by scripts/comet_compound_gen.py.
"""
LN = [("GEMM", "GEMM", ["A", "B"], "C"), ("ROWSUM1", "rowsum", ["C"], "S"), ("MEAN", "mult", ["S"], "MU"),
      ("SUB", "add", ["C", "MU"], "E"), ("SQUARE", "mult", ["E"], "E2"), ("ROWSUM2", "rowsum", ["E2"], "Q"),
      ("VAR", "mult", ["Q"], "V"), ("ADDEPS", "add", ["V"], "VE"), ("SQRT", "sqrt", ["VE"], "SD"),
      ("DIV", "div", ["E", "SD"], "H")]
lnsh = dict(A='MK', B='KN', C='MN', S='M', MU='M', E='MN', E2='MN', Q='M', V='M', VE='M', SD='M', H='MN')
open(f"{out}/problem_layernorm.yaml", "w").write(problem(
    "GEMM-LayerNorm, built by analogy (comet-model.md 4.2, 8 #20), not released by the COMET authors",
    ["C = A B; S = rowsum(C); MU = S * (1/N); E = C - MU; E2 = E * E; Q = rowsum(E2); V = Q * (1/N);",
     "VE = V + eps; SD = sqrt(VE); H = E / SD (affine gamma, beta omitted). Scalar operands (1/N, eps)",
     "are immediates, not tensors. Generated by scripts/comet_compound_gen.py."],
    ["A", "B"], ["H"], LN, lnsh))
open(f"{out}/mapping_layernorm.yaml", "w").write(fused(HDR_LN_F, ["A", "B", "H"], ["GEMM", "GEMM", "DIV"], [False, False, True], [8, 8, 8], [
    ('gemm', LN[0], [], []), ('simd', [LN[1]], ["S"], [True]), ('coll', 'colop1', 'add', 'S'),
    ('simd', LN[2:6], ["S", "Q"], [False, True]), ('coll', 'colop2', 'add', 'Q'), ('simd', LN[6:10], ["Q", "H"], [False, True])]))
open(f"{out}/mapping_layernorm_unfused.yaml", "w").write(unfused(HDR_LN_U, LN, {"ROWSUM1": ("colop1", "add", "S"), "ROWSUM2": ("colop2", "add", "Q")}, ["GEMM"]))

AT = SM + [("GEMM2", "GEMM", ["H", "V"], "O")]
atsh = dict(smsh, V='NK', O='MK')
open(f"{out}/problem_attention.yaml", "w").write(problem(
    "Self-attention, built by analogy (comet-model.md 4.2, 8 #20), not released by the COMET authors",
    ["A = Q (M x K), B = K^T (K x N), V (N x K): C = A B; softmax(C) as in problem.yaml (D row max,",
     "E = C - D, F = exp(E), G row sum, H = F / G); O = H V (M x K, a sum over N). One head, head",
     "dimension K for keys and values. Generated by scripts/comet_compound_gen.py."],
    ["A", "B", "V"], ["O"], AT, atsh))
open(f"{out}/mapping_attention.yaml", "w").write(fused(HDR_AT_F, ["A", "B", "V", "O"], ["GEMM", "GEMM", "GEMM2", "GEMM2"], [False, False, False, True], [8, 8, 8, 8], [
    ('gemm', AT[0], [], []), ('simd', [AT[1]], ["D"], [True]), ('coll', 'colop1', 'max', 'D'),
    ('simd', AT[2:5], ["D", "G"], [False, True]), ('coll', 'colop2', 'add', 'G'), ('simd', [AT[5]], ["G", "H"], [False, True]),
    ('gemm', AT[6], ["O"], [True]), ('coll', 'colop3', 'add', 'O')]))
open(f"{out}/mapping_attention_unfused.yaml", "w").write(unfused(HDR_AT_U, AT, {"ROWMAX": ("colop1", "max", "D"), "ROWSUM": ("colop2", "add", "G"), "GEMM2": ("colop3", "add", "O")}, ["GEMM", "GEMM2"]))
