"""Plots benchmarks/results/handoff.csv (written by HandoffBenchmark) as handoff.png: bandwidth and
message rate per record size, one bar per system at its median, whiskers from min to max."""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt

SYSTEMS = ["sluice", "memcpy", "aeron"]
METRICS = [("mb_per_s", "MB/s"), ("mmsg_per_s", "M msg/s")]


def size_name(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    return f"{size >> 10} KiB" if size >= 1 << 10 else f"{size} B"


def main(results):
    values = defaultdict(list)
    for row in csv.DictReader(open(results / "handoff.csv")):
        for metric, _ in METRICS:
            values[(row["system"], int(row["size"]), metric)].append(float(row[metric]))
    sizes = sorted({size for _, size, _ in values})
    figure, axes = plt.subplots(1, len(METRICS), figsize=(12, 4.5))
    width = 0.8 / len(SYSTEMS)
    for axis, (metric, label) in zip(axes, METRICS):
        for k, system in enumerate(SYSTEMS):
            runs = [values[(system, size, metric)] for size in sizes]
            medians = [statistics.median(r) for r in runs]
            whiskers = [[m - min(r) for m, r in zip(medians, runs)],
                        [max(r) - m for m, r in zip(medians, runs)]]
            positions = [i + (k - 1) * width for i in range(len(sizes))]
            axis.bar(positions, medians, width, yerr=whiskers, capsize=3, label=system)
        axis.set_xticks(range(len(sizes)), [size_name(s) for s in sizes])
        axis.set_xlabel("record size")
        axis.set_ylabel(label)
        axis.set_yscale("log")
        axis.grid(axis="y", which="both", alpha=0.3)
    axes[0].legend()
    figure.suptitle("Handoff: C++ writer process to Java reader process (median, min-max)")
    figure.tight_layout()
    figure.savefig(results / "handoff.png", dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results"))
