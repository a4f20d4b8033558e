#!/usr/bin/env python3
"""How far one timing moves between runs: reads a measured-CSV file whose shapes were timed
several times (bench/ops.py --only rows_repeat), prints per op the mean distance of one
timing from the median of all of that shape's timings and the widest spread, and with
--medians writes one row per shape at that median, in the same format (its '#' lines say so),
for `yirage-plan validate` to price against.

    python3 bench/repeat_spread.py data/benchmarks/H200/ops_rows_repeat.csv \\
        --medians data/benchmarks/H200/ops_rows_median.csv
"""
import argparse
import collections
import statistics


def main():
    p = argparse.ArgumentParser()
    p.add_argument("repeats")
    p.add_argument("--medians", help="write the medians here")
    a = p.parse_args()
    comments, header, times = [], None, collections.OrderedDict()
    with open(a.repeats) as f:
        for line in f:
            if line.startswith("#"):
                comments.append(line)
            elif header is None:
                header = line
            else:
                kind, op, device, shape, dtype, t, _ = line.strip().split(",")
                times.setdefault((kind, op, device, shape, dtype), []).append(float(t))
    by_op = collections.defaultdict(list)
    widest = collections.defaultdict(lambda: (0.0, None))
    for key, ts in times.items():
        m = statistics.median(ts)
        by_op[key[1]].extend(abs(t - m) / m for t in ts)
        spread = (max(ts) - min(ts)) / m
        if spread > widest[key[1]][0]:
            widest[key[1]] = (spread, key[3])
    print("%-12s %6s %22s %s" % ("op", "shapes", "one run from median", "widest spread"))
    for op, d in by_op.items():
        n = sum(1 for k in times if k[1] == op)
        print("%-12s %6d %21.2f%% %5.1f%% (%s)" % (op, n, 100 * statistics.mean(d),
                                                 100 * widest[op][0], widest[op][1]))
    if a.medians:
        with open(a.medians, "w") as f:
            f.writelines(comments)
            f.write("# derived: bench/repeat_spread.py %s --medians: the median of every "
                    "shape's %d timings\n" % (a.repeats, len(next(iter(times.values())))))
            f.write(header)
            for (kind, op, device, shape, dtype), ts in times.items():
                f.write("%s,%s,%s,%s,%s,%.6g,median\n"
                        % (kind, op, device, shape, dtype, statistics.median(ts)))


if __name__ == "__main__":
    main()
