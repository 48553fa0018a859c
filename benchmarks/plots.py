"""What the benchmarks' plots share: one panel per metric, one bar per system and size at its
median, whiskers from min to max over the repetitions of a results CSV."""
import csv
import statistics
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt


def size_name(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    return f"{size >> 10} KiB" if size >= 1 << 10 else f"{size} B"


def bar_chart(csv_path, png_path, systems, metrics, title, log_scale):
    """metrics: (CSV column, axis label) pairs; log_scale: whether the value axis is logarithmic."""
    values = defaultdict(list)
    for row in csv.DictReader(open(csv_path)):
        for metric, _ in metrics:
            values[(row["system"], int(row["size"]), metric)].append(float(row[metric]))
    sizes = sorted({size for _, size, _ in values})
    # A trial run of a subset of the systems (--systems) plots the ones it ran.
    systems = [s for s in systems if all((s, size, metrics[0][0]) in values for size in sizes)]
    figure, axes = plt.subplots(1, len(metrics), figsize=(6 * len(metrics), 4.5))
    width = 0.8 / len(systems)
    for axis, (metric, label) in zip(axes, metrics):
        for k, system in enumerate(systems):
            runs = [values[(system, size, metric)] for size in sizes]
            medians = [statistics.median(r) for r in runs]
            whiskers = [[m - min(r) for m, r in zip(medians, runs)],
                        [max(r) - m for m, r in zip(medians, runs)]]
            positions = [i + (k - (len(systems) - 1) / 2) * width for i in range(len(sizes))]
            axis.bar(positions, medians, width, yerr=whiskers, capsize=3, label=system)
        axis.set_xticks(range(len(sizes)), [size_name(s) for s in sizes])
        axis.set_xlabel("record size")
        axis.set_ylabel(label)
        if log_scale:
            axis.set_yscale("log")
        axis.grid(axis="y", which="both", alpha=0.3)
    axes[0].legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(png_path, dpi=110)
