"""Plots benchmarks/results/handoff.csv (written by HandoffBenchmark) as handoff.png: bandwidth and
message rate per record size, one bar per system at its median, whiskers from min to max."""
import sys
from pathlib import Path

from plots import bar_chart

if __name__ == "__main__":
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
    bar_chart(results / "handoff.csv", results / "handoff.png", ["sluice", "memcpy", "memcpy-dram", "threads", "aeron"],
              [("mb_per_s", "MB/s"), ("mmsg_per_s", "M msg/s")],
              "Handoff: C++ writer process to Java reader process (median, min-max)",
              log_scale=True)
