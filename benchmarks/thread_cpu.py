"""Where a run's CPU goes, per thread: follows a harness's output (its progress lines on stderr,
saved to a file) and, each time a line matching START appears, then one matching END, takes the
CPU time of every thread of the processes of the generation runtime from /proc (the harness JVM
with Flink, the Kafka broker, sluice-brokerd, the output nodes) and prints the threads that used
the most between the two, summed over every START..END window (benchmarks/README.md, Transport).

    python3 benchmarks/thread_cpu.py OUTPUT START END [WINDOWS]

Threads are summed by process and name with digits dropped ("kafka-network-thread-1-..." and
"-2-..." count together). A window is the time from one line to the next as the harness prints
them, so START should be the line printed just before the measured run starts."""
import os
import re
import sys
import time
from collections import defaultdict

TICKS = os.sysconf("SC_CLK_TCK")


def part(pid):
    try:
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        comm = open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return None
    if comm == "sluice-brokerd":
        return "daemon"
    if comm != "java":
        return None
    if "GenerationBenchmark" in cmdline:
        return "harness"
    if "GenerationReader" in cmdline:
        return "reader"
    if "kafka.Kafka" in cmdline:
        return "broker"
    return None


def parent(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return "0"
    return stat[stat.rindex(")") + 2:].split()[1]


def descends(pid, ancestors):
    while pid not in ("0", "1"):
        if pid in ancestors:
            return True
        pid = parent(pid)
    return False


def snapshot():
    threads = {}
    parts = {pid: part(pid) for pid in filter(str.isdigit, os.listdir("/proc"))}
    harness = {pid for pid, name in parts.items() if name == "harness"}
    for pid, name in parts.items():
        # Only the harness's own parts: other brokers and daemons (tests) may run beside it.
        if name is None or not descends(pid, harness):
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            threads[(pid, tid)] = (name, re.sub(r"\d+", "#", comm),
                                   (int(fields[11]) + int(fields[12])) / TICKS)
    return threads


def main():
    output, start, end = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
    windows = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    used, before, done = defaultdict(float), None, 0
    with open(output, "rb") as lines:
        while done < windows:
            at = lines.tell()
            line = lines.readline().decode(errors="replace")
            if not line.endswith("\n"):  # the rest of the line is not written yet
                lines.seek(at)
                time.sleep(0.05)
                continue
            if before is None and start.search(line):
                before = snapshot()
            elif before is not None and end.search(line):
                after = snapshot()
                for key, (name, comm, cpu) in after.items():
                    used[(name, comm)] += cpu - before.get(key, (name, comm, 0))[2]
                before, done = None, done + 1
    total = sum(used.values())
    print(f"{total:.2f} CPU-s in {windows} window(s)")
    for (name, comm), cpu in sorted(used.items(), key=lambda kv: -kv[1])[:25]:
        print(f"{cpu:7.2f}  {100 * cpu / total:5.1f} %  {name:8s} {comm}")


if __name__ == "__main__":
    main()
