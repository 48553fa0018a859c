"""Plots benchmarks/results/ingest.csv (written by IngestBenchmark) as ingest.png: records/s and
CPU-seconds per GB per record size, sluice-brokerd into a Java reader beside a bare librdkafka
consumer on glibc malloc and on mimalloc (the daemon's)."""
import sys
from pathlib import Path

from plots import bar_chart

if __name__ == "__main__":
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
    bar_chart(results / "ingest.csv", results / "ingest.png", ["sluice", "librdkafka", "librdkafka-mimalloc"],
              [("records_per_s", "records/s"), ("cpu_s_per_gb", "CPU-s per GB")],
              "Ingest: 8 partitions into a Java reader (median, min-max)", log_scale=False)
