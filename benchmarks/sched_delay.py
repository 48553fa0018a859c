"""How long threads waited for a core once woken, per thread: follows a harness's output (its
progress lines, saved to a file) and records the kernel's scheduler events with `perf sched record`
from the first line matching START to the COUNT-th line after it matching END (1 by default), as
the harness prints a line after each run, then prints, for the threads of the
generation runtime's processes (the harness JVM with Flink, the Kafka broker, sluice-brokerd, the
output nodes), the distribution of their scheduling delay: from the wake-up to running on a core
(benchmarks/README.md, "The lateness tail").

    python3 benchmarks/sched_delay.py OUTPUT START END [COUNT]

A paced reader that parks until its chunk is due is late by at least this delay, whatever the JVM
does. Threads are summed by process and name with digits dropped, as thread_cpu.py does; needs
perf (Debian's linux-perf) and the kernel's tracefs, which it mounts when missing."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

from thread_cpu import descends, part

TRACEFS = "/sys/kernel/tracing"
# perf sched timehist: time, [cpu], name[tid/pid], wait time, sch delay, run time (ms). A name may
# hold spaces ("Source: generat").
EVENT = re.compile(r"^\s*[\d.]+\s+\[\d+\]\s+(.*?)\[(\d+)(?:/(\d+))?\]\s+[\d.]+\s+([\d.]+)\s+[\d.]+")


def parts():
    """The generation runtime's processes now, by pid."""
    found = {pid: part(pid) for pid in filter(str.isdigit, os.listdir("/proc"))}
    harness = {pid for pid, name in found.items() if name == "harness"}
    return {pid: name for pid, name in found.items() if name and descends(pid, harness)}


def follow(output, pattern):
    """Waits until a line of OUTPUT, from where it was read to, matches."""
    while True:
        at = output.tell()
        line = output.readline().decode(errors="replace")
        if not line.endswith("\n"):  # the rest of the line is not written yet
            output.seek(at)
            time.sleep(0.05)
        elif pattern.search(line):
            return


def quantile(values, q):
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    output, start, end = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if not os.path.exists(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True)
    data = os.path.join(tempfile.mkdtemp(prefix="sched-delay-"), "sched.data")
    with open(output, "rb") as lines:
        follow(lines, start)
        processes = parts()
        recording = subprocess.Popen(["perf", "sched", "record", "-q", "-o", data],
                                     stdout=subprocess.DEVNULL)
        for _ in range(count):
            follow(lines, end)
        recording.send_signal(signal.SIGINT)
        recording.wait()
    timehist = subprocess.run(["perf", "sched", "timehist", "-i", data], check=True,
                              capture_output=True, text=True).stdout
    delays = defaultdict(list)
    for event in map(EVENT.match, timehist.splitlines()):
        if not event:
            continue
        name = processes.get(event[3] or event[2])
        if name:
            delays[(name, re.sub(r"\d+", "#", event[1].strip()))].append(float(event[4]))
    print(f"{'wake-ups':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'> 1 ms':>7}  thread")
    for (name, comm), values in sorted(delays.items(), key=lambda kv: -len(kv[1]))[:20]:
        values.sort()
        late = sum(v > 1 for v in values) / len(values)
        print(f"{len(values):8d} {quantile(values, 0.5):7.3f} {quantile(values, 0.9):7.3f} "
              f"{quantile(values, 0.99):7.3f} {values[-1]:7.3f} {100 * late:6.1f}%  "
              f"{name:8s} {comm}")


if __name__ == "__main__":
    main()
