"""Plots benchmarks/results/python.csv (written by PythonReaderBenchmark) as python.png: GB/s and
M records/s per record size (1 MiB summed, 100 B counted), the Python reader beside the Java one
at their medians, whiskers from min to max."""
import sys
from pathlib import Path

from plots import bar_chart

if __name__ == "__main__":
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
    bar_chart(results / "python.csv", results / "python.png", ["python", "java"],
              [("gb_per_s", "GB/s"), ("mrec_per_s", "M records/s")],
              "Python reader beside the Java reader: 1 MiB summed, 100 B counted (median, min-max)",
              log_scale=True)
