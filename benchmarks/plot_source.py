"""Plots benchmarks/results/source.csv (written by SourceBenchmark) as source.png: records/s of
count, filter and word count per record size, without and with a concurrent producer, for SluiceSource PUSH,
SluiceSource PULL and Flink's KafkaSource (median, whiskers min to max), and as a line over each
group the job's rate with its values from memory, the most any source could give it."""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from plots import plt, size_name

SYSTEMS = ["push", "pull", "kafka-source"]
BOUND = "memory"
JOBS = ["count", "filter", "wordcount", "windowed-wordcount"]

if __name__ == "__main__":
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
    rates = defaultdict(list)
    for row in csv.DictReader(open(results / "source.csv")):
        key = (row["producer"], row["job"], int(row["size"]), row["system"])
        rates[key].append(float(row["records_per_s"]) / 1e6)
    sizes = sorted({size for _, _, size, _ in rates})
    producers = [p for p in ("off", "on") if any(k[0] == p for k in rates)]
    groups = [(job, size) for job in JOBS for size in sizes
              if any(k[1] == job and k[2] == size for k in rates)]
    figure, axes = plt.subplots(1, len(producers), figsize=(max(7, 1.1 * len(groups)) * len(producers), 4.5),
                                squeeze=False)
    width = 0.8 / len(SYSTEMS)
    for axis, producer in zip(axes[0], producers):
        for k, system in enumerate(SYSTEMS):
            runs = [rates.get((producer, job, size, system), [0]) for job, size in groups]
            medians = [statistics.median(r) for r in runs]
            whiskers = [[m - min(r) for m, r in zip(medians, runs)],
                        [max(r) - m for m, r in zip(medians, runs)]]
            positions = [i + (k - (len(SYSTEMS) - 1) / 2) * width for i in range(len(groups))]
            axis.bar(positions, medians, width, yerr=whiskers, capsize=3, label=system)
        bounds = [(i, statistics.median(rates[(producer, job, size, BOUND)]))
                  for i, (job, size) in enumerate(groups) if (producer, job, size, BOUND) in rates]
        if bounds:
            axis.hlines([b for _, b in bounds], [i - 0.45 for i, _ in bounds],
                        [i + 0.45 for i, _ in bounds], colors="black", linestyles="dashed",
                        label="from memory (bound)")
            axis.set_yscale("log")
        axis.set_xticks(range(len(groups)), [f"{job}\n{size_name(size)}" for job, size in groups])
        axis.set_ylabel("M records/s")
        axis.set_title(f"concurrent producer {producer}")
        axis.legend()
    figure.suptitle("Source jobs on Flink: 8 partitions, 2 source + 2 map subtasks")
    figure.tight_layout()
    figure.savefig(results / "source.png", dpi=120)
