"""Writing published training runs in yirage's measured-steps format
(data/benchmarks/README.md, "Training and inference steps"): shared by the converters of
published tables (convert_published_megatron.py, convert_published_nemo_h100.py)."""
import csv

HEADER = ["cluster", "task", "layout", "gpus", "gpus_per_node", "device", "framework", "status",
          "step_s", "peak_allocated_bytes", "peak_reserved_bytes", "note"]


def write_steps(path, comment, rows):
    """Writes `rows` (in HEADER's order) to `path` under the '#' lines of `comment`, and says
    so; published runs state no memory."""
    with open(path, "w", newline="") as f:
        for line in comment:
            f.write("# %s\n" % line)
        f.write("# Not measured by this project; peak memory is not published for these runs.\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    print("wrote %s (%d rows)" % (path, len(rows)))
