"""Shared, torch-free helpers of bench/run_plan.py, bench/run_infer.py and
bench/steps_campaign.py: a small YAML reader (the subset yirage's own files use; PyYAML is
not assumed on the GPU machine), cluster/task/plan loading, the layout string of
planner/plan.cpp, yirage's FLOP formulas, and CSV writing with provenance lines.
"""
import datetime
import fcntl
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---------------------------------------------------------------------------------------
# YAML subset: block mappings and sequences, flow {..} and [..], scalars, '#' comments.

def _strip_comment(line):
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _split_top(text, sep):
    """Splits at `sep` outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += c
    parts.append(cur)
    return parts


def _key_value(text):
    """('key', 'rest') for 'key: rest' or 'key:', else None."""
    m = re.match(r"""^("[^"]*"|'[^']*'|[^\s'"{\[][^:]*?)\s*:(\s+(.*))?$""", text)
    if not m:
        return None
    key = m.group(1)
    if key[0] in "'\"":
        key = key[1:-1]
    return key, (m.group(3) or "").strip()


def scalar(text):
    text = text.strip()
    if text == "":
        return None
    if text[0] == "{" and text[-1] == "}":
        out = {}
        for part in _split_top(text[1:-1], ","):
            if part.strip():
                k, v = _key_value(part.strip())
                out[k] = scalar(v)
        return out
    if text[0] == "[" and text[-1] == "]":
        return [scalar(p) for p in _split_top(text[1:-1], ",") if p.strip()]
    if text[0] in "'\"" and text[-1] == text[0] and len(text) >= 2:
        return text[1:-1]
    if text in ("~", "null"):
        return None
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_yaml(text):
    lines = []
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if line.strip() and line.strip() != "---":
            lines.append([len(line) - len(line.lstrip(" ")), line.strip()])
    pos = [0]

    def is_item(i):
        return lines[i][1] == "-" or lines[i][1].startswith("- ")

    def block(indent):
        text = lines[pos[0]][1]
        if text[0] in "[{":  # a flow collection on a line of its own ("fusions:\n  []")
            pos[0] += 1
            return scalar(text)
        return sequence(indent) if is_item(pos[0]) else mapping(indent)

    def mapping(indent):
        out = {}
        while pos[0] < len(lines) and lines[pos[0]][0] == indent and not is_item(pos[0]):
            kv = _key_value(lines[pos[0]][1])
            if kv is None:
                raise ValueError("cannot read YAML line: " + lines[pos[0]][1])
            key, rest = kv
            pos[0] += 1
            if rest:
                out[key] = scalar(rest)
            elif pos[0] < len(lines) and (lines[pos[0]][0] > indent or
                                           (lines[pos[0]][0] == indent and is_item(pos[0]))):
                out[key] = block(lines[pos[0]][0])
            else:
                out[key] = None
        return out

    def sequence(indent):
        out = []
        while pos[0] < len(lines) and lines[pos[0]][0] == indent and is_item(pos[0]):
            item = lines[pos[0]][1][1:].strip()
            if not item:
                pos[0] += 1
                out.append(block(lines[pos[0]][0]))
            elif item[0] not in "{[\"'" and _key_value(item) is not None:
                lines[pos[0]] = [indent + len(lines[pos[0]][1]) - len(item), item]
                out.append(mapping(lines[pos[0]][0]))
            else:
                pos[0] += 1
                out.append(scalar(item))
        return out

    return block(lines[0][0]) if lines else {}


def read_yaml(path):
    with open(path) as f:
        return parse_yaml(f.read())


# ---------------------------------------------------------------------------------------
# Specs.

def load_model(model):
    """The model mapping of a task: a preset of data/models/ or the inline mapping."""
    if isinstance(model, str):
        model = read_yaml(os.path.join(ROOT, "data", "models", model + ".yaml"))
    m = dict(model)
    m.setdefault("kv_heads", m["heads"])
    m.setdefault("head_dim", m["hidden"] // m["heads"])
    m.setdefault("ffn_kind", "gated")
    m.setdefault("tied_embeddings", False)
    m.setdefault("norm", "rmsnorm")
    m.setdefault("bias", "none")
    m.setdefault("position", "rope")
    m.setdefault("rope_theta", 500000.0)
    return m


def load_task(path):
    t = read_yaml(path)
    t["model"] = load_model(t["model"])
    t.setdefault("precision", "bf16")
    t.setdefault("mode", "train")
    t.setdefault("attention", "flash")
    return t


def load_cluster(path):
    c = read_yaml(path)
    groups = c.get("node_groups") or []
    if len(groups) != 1:
        raise ValueError(f"{path}: one node group expected, found {len(groups)}")
    g = groups[0]
    c["device"] = g["device"]
    c["nodes"] = int(g.get("nodes", 1))
    c["devices_per_node"] = int(g.get("devices_per_node", 1))
    c["gpus"] = c["nodes"] * c["devices_per_node"]
    return c


def load_plan(path):
    p = read_yaml(path)
    for key in ("version", "cluster", "task", "mode", "layout"):
        if key not in p:
            raise ValueError(f"{path}: the plan file has no '{key}'")
    if p["version"] != 1:
        raise ValueError(f"{path}: plan file version {p['version']} is not known")
    return p


LAYOUT_DEFAULTS = {"tp": 1, "pp": 1, "dp": 1, "mb": 1, "recompute": "none", "zero": 0,
                   "vpp": 1, "cp": 1, "ep": 1, "sp": "on", "offload": "off", "dp_overlap": "on",
                   "grad_fusion": "on", "te": "on"}
SWITCHES = ("recompute", "sp", "offload", "dp_overlap", "grad_fusion", "te")


def parse_layout(text):
    """planner/plan.cpp Layout::str(): tp=..,pp=..,dp=..,mb=..,recompute=..,zero=..[,...]"""
    out = dict(LAYOUT_DEFAULTS)
    for item in text.split(","):
        if "=" not in item:
            raise ValueError(f"'{item}' is not key=value")
        k, v = item.split("=", 1)
        if k not in out:
            raise ValueError(f"unknown layout key '{k}'")
        out[k] = v if k in SWITCHES else int(v)
    if out["recompute"] not in ("none", "selective", "full"):
        raise ValueError(f"recompute={out['recompute']} is not none|selective|full")
    return out


def layout_str(tp, pp, dp, mb, recompute, zero, vpp=1, sp=True):
    """The inverse of parse_layout, in Layout::str()'s order."""
    s = f"tp={tp},pp={pp},dp={dp},mb={mb},recompute={recompute},zero={zero}"
    if vpp > 1:
        s += f",vpp={vpp}"
    if tp > 1 and not sp:
        s += ",sp=off"
    return s


# ---------------------------------------------------------------------------------------
# yirage's FLOP count (planner/workload/model_size.cpp, reimplemented for dense GQA models).

def parameter_counts(m):
    h = m["hidden"]
    q = m["heads"] * m["head_dim"]
    kv = m["kv_heads"] * m["head_dim"]
    attention = h * q + 2 * h * kv + q * h
    if m["bias"] != "none":
        attention += q + 2 * kv
    if m["bias"] == "all":
        attention += h
    mats = 3 if m["ffn_kind"] == "gated" else 2
    ffn = mats * h * m["ffn"] + ((mats - 1) * m["ffn"] + h if m["bias"] == "all" else 0)
    norm = 2 * h if m["norm"] == "layernorm" else h
    embedding = m["vocab"] * h
    head = 0 if m["tied_embeddings"] else m["vocab"] * h
    layers = m["layers"]
    return {"embedding": embedding, "head": head, "attention": layers * attention,
            "ffn": layers * ffn, "norms": layers * 2 * norm + norm,
            "total": embedding + head + layers * (attention + ffn) + layers * 2 * norm + norm}


def forward_flops_per_token(m, seq):
    """model_size.cpp forward_flops_per_token: 2 x matmul parameters (the LM head counted
    even when tied) + causal attention 2 * layers * seq/2 * heads * (2 * head_dim)."""
    c = parameter_counts(m)
    matmul = c["attention"] + c["ffn"] + m["vocab"] * m["hidden"]
    attention = 2.0 * m["layers"] * seq / 2 * m["heads"] * 2.0 * m["head_dim"]
    return 2.0 * matmul + attention


def training_flops_per_token(m, seq):
    """model_size.cpp training_flops_per_token: 3 x forward (no recomputation counted)."""
    return 3.0 * forward_flops_per_token(m, seq)


def device_spec(name):
    """The registry file of a device name or alias (data/devices/*.yaml)."""
    want = name.lower()
    folder = os.path.join(ROOT, "data", "devices")
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".yaml"):
            continue
        d = read_yaml(os.path.join(folder, f))
        names = [str(d.get("name", "")).lower()] + [str(a).lower() for a in d.get("aliases") or []]
        if want in names:
            return d
    raise ValueError(f"device '{name}' is not in data/devices/")


def peak_flops(device, precision="bf16"):
    text = str(device_spec(device)["peak"][precision])
    number, unit = text.split()
    scale = {"TFLOPS": 1e12, "PFLOPS": 1e15, "GFLOPS": 1e9, "TOPS": 1e12}[unit]
    return float(number) * scale


def registry_device(cuda_name):
    """The registry name of a CUDA device name, for the cluster variant and the folder."""
    n = cuda_name.upper()
    if "H200" in n:
        return "H200"
    if "H100" in n:
        return "H100-PCIe" if "PCIE" in n else "H100-SXM"
    if "A100" in n:
        return "A100-80GB" if "80" in n else "A100-40GB"
    return cuda_name.replace(" ", "-")


# ---------------------------------------------------------------------------------------
# GPU kernels by kind (the profiled step's breakdown).

# (category, substrings of a kernel's name), first match wins: NCCL, matrix products
# (cuBLAS/cuBLASLt/CUTLASS), attention (flash, cuDNN SDPA), the optimizer and the gradient
# norm (foreach multi-tensor kernels), norms, the loss, the embedding, copies and casts,
# reductions, then other elementwise kernels.
KERNEL_KINDS = [
    ("nccl", ("nccl",)),
    ("gemm", ("gemm", "nvjet", "xmma", "cutlass", "gemv", "splitkreduce", "cublas")),
    ("attention", ("flash", "fmha", "sdpa", "attention")),
    ("optimizer", ("multi_tensor_apply", "adam", "lpnorm", "foreach")),
    ("norm", ("rms_norm", "rmsnorm", "layer_norm", "layernorm", "rowwisemoments",
              "gammabeta")),
    ("loss", ("softmax", "nll_loss", "cross_entropy", "crossentropy")),
    ("embedding", ("embedding", "index_select", "indexselect", "indexing_backward",
                   "index_put", "scatter", "gather")),
    ("copy", ("copy", "catarray", "cat_", "memcpy")),
    ("reduce", ("reduce_kernel", "reduce")),
    ("elementwise", ("elementwise", "fill", "memset")),
]
KERNEL_CATEGORIES = [k for k, _ in KERNEL_KINDS] + ["other"]


def kernel_category(name):
    """The kind of a GPU kernel from its name (one of KERNEL_CATEGORIES)."""
    n = name.lower()
    for kind, parts in KERNEL_KINDS:
        if any(p in n for p in parts):
            return kind
    return "other"


def kernel_breakdown(kernels):
    """Seconds per category, the GPU's busy time (the union of the kernels' intervals) and
    the span from the first kernel's start to the last one's end, from (name, start, end)
    triples in microseconds."""
    out = {k: 0.0 for k in KERNEL_CATEGORIES}
    spans = []
    for name, start, end in kernels:
        out[kernel_category(name)] += (end - start) / 1e6
        spans.append((start, end))
    busy, last = 0.0, None
    for s, e in sorted(spans):
        if last is None or s > last:
            busy += e - s
            last = e
        elif e > last:
            busy += e - last
            last = e
    span = (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e6 if spans else 0.0
    return out, busy / 1e6, span


# ---------------------------------------------------------------------------------------
# CSV with provenance.

def append_rows(path, header, rows, provenance):
    """Appends rows (dicts) under an exclusive lock; a new file gets `#` lines and the header."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            for line in provenance:
                f.write("# " + line + "\n")
            f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(_cell(r.get(k)) for k in header) + "\n")
        f.flush()
        fcntl.flock(f, fcntl.LOCK_UN)


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if ("," in s or '"' in s) else s


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def time_events(fn, reps, inner=1):
    """Median over `reps` of the time of `inner` back-to-back calls, divided by `inner`."""
    import torch
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(inner):
            fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3 / inner)
    return statistics.median(out)


def graphed(fn, warmup=3):
    """fn captured in a CUDA graph (after `warmup` calls on a side stream, which settle the
    allocator and any lazy initialisation): its replay, which runs the kernels without the
    host's dispatch between them. Imports torch here, as init_distributed does."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def init_distributed():
    """The process group of a torchrun worker (or of a lone process: world 1), on this rank's
    GPU, with NVLink multicast off (the lent hosts are shared; the device tool's KINDS.md).
    Returns (local GPU index, rank, world size). Imports torch here, so that the CPU checks
    of this module need none."""
    import torch
    import torch.distributed as dist
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    if "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(29500 + os.getpid() % 1000))
    dist.init_process_group("nccl", device_id=torch.device("cuda", local),
                            timeout=datetime.timedelta(seconds=180))
    return local, dist.get_rank(), dist.get_world_size()
