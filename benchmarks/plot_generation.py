"""Plots benchmarks/results/generation.csv (written by GenerationBenchmark) as generation.png, the
figures of benchmarks/README.md, Generation: MB/s per topology and job with compute disabled
(Fig. 4) and enabled (Fig. 5) beside the bare producers' ceiling and Kafka in and out (those producers and a bare consumer), and
the rate achieved at constant speed (Fig. 6) as a share of the rate requested, the printer room:
each paced printer's achieved share and the greedy job's rate beside the printers as a share of
its rate alone, per repetition, the faults: achieved / requested per speed with a producer killed
or slowed, speculation off and on, and the transports: Kafka's MB/s and the local way's per topology,
compute mode and job, each with its target (compute disabled: half of single-thread memcpy;
enabled: the raster processor alone on one thread, 1.7 times that with two producers) (median,
whiskers min to max). Rows of a CSV written before the transports had their columns are Kafka's."""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from plots import plt

TOPOLOGIES = ["one-to-one", "one-to-many", "many-to-one", "many-to-many"]


def whiskers(runs):
    medians = [statistics.median(r) if r else 0 for r in runs]
    return medians, [[m - min(r, default=m) for m, r in zip(medians, runs)],
                     [max(r, default=m) - m for m, r in zip(medians, runs)]]


if __name__ == "__main__":
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
    rows = list(csv.DictReader(open(results / "generation.csv")))
    jobs = sorted({r["job"] for r in rows if r["figure"] in ("4", "5")})
    rates, anchors, shares = defaultdict(list), defaultdict(list), defaultdict(list)
    room, greedy = defaultdict(list), defaultdict(dict)
    transports = defaultdict(list)
    faults = defaultdict(list)
    for r in rows:
        if r["figure"] == "transport":
            transports[(r["topology"], r["compute"] == "true", r["job"], r["transport"])].append(
                float(r["mb_per_s"]))
        elif r["figure"] == "0" and r["topology"] in ("memcpy", "rip one thread"):
            anchors[(r["topology"], r["job"])].append(float(r["mb_per_s"]))
        elif r["figure"] == "0":
            anchors[(r["topology"], int(r["producers"]), r["job"])].append(float(r["mb_per_s"]))
        elif r["figure"] in ("4", "5"):
            rates[(r["figure"], r["topology"], r["job"])].append(float(r["mb_per_s"]))
        elif r["figure"] == "faults":
            faults[(r["topology"], r["fault"], r["speculation"] == "true", float(r["speed"]))].append(
                100 * float(r["achieved_mb_per_s_avg"]) / float(r["requested_mb_per_s"]))
        elif r["figure"] == "6" and r.get("transport", "kafka") == "kafka":
            requested = float(r["requested_mb_per_s"])
            shares[(r["topology"], float(r["speed"]))].append(
                100 * float(r["achieved_mb_per_s_avg"]) / requested)
        elif r["figure"] == "room" and r["topology"].startswith("printer-"):
            room[r["topology"]].append(
                100 * float(r["achieved_mb_per_s_avg"]) / float(r["requested_mb_per_s"]))
        elif r["figure"] == "room":
            greedy[r["topology"]][r["rep"]] = float(r["mb_per_s"])
    # One panel per figure the run has (--figures), in the README's order.
    panels = [p for p, present in (("4", any(k[0] == "4" for k in rates)),
                                   ("5", any(k[0] == "5" for k in rates)),
                                   ("6", bool(shares)), ("faults", bool(faults)),
                                   ("room", bool(room)),
                                   ("transport", bool(transports))) if present]
    figure, axes = plt.subplots(1, len(panels), figsize=(max(10.0, 6.2 * len(panels)), 4.8),
                                squeeze=False)
    axis_of = dict(zip(panels, axes[0]))
    for fig in ("4", "5"):
        if fig not in axis_of:
            continue
        axis = axis_of[fig]
        width = 0.8 / (3 * len(jobs))
        for j, job in enumerate(jobs):
            bars = [(f"Sluice, job {job}", [rates[(fig, t, job)] for t in TOPOLOGIES])]
            for kind, label in (("ceiling", "bare producers"),
                                ("kafka in and out", "Kafka in and out")):
                bars.append((f"{label}, job {job}",
                             [anchors[(kind, 2 if t.startswith("many-") else 1, job)]
                              for t in TOPOLOGIES]))
            for k, (label, runs) in enumerate(bars):
                offset = (3 * j + k - (3 * len(jobs) - 1) / 2) * width
                medians, errors = whiskers(runs)
                axis.bar([i + offset for i in range(len(TOPOLOGIES))], medians, width,
                         yerr=errors, capsize=3, label=label, hatch=(None, "//", "..")[k])
        axis.set_xticks(range(len(TOPOLOGIES)), TOPOLOGIES)
        axis.set_ylabel("MB/s")
        axis.set_title(f"Fig. {fig}: compute {'disabled' if fig == '4' else 'enabled'}")
        axis.legend(fontsize=8)
    if "6" in axis_of:
        axis = axis_of["6"]
        speeds = sorted({s for _, s in shares})
        width = 0.8 / len(speeds)
        for k, speed in enumerate(speeds):
            medians, errors = whiskers([shares.get((t, speed), []) for t in TOPOLOGIES])
            axis.bar([i + (k - (len(speeds) - 1) / 2) * width for i in range(len(TOPOLOGIES))],
                     medians, width, yerr=errors, capsize=3, label=f"{speed:.0%} of max")
        axis.axhline(100, color="grey", linewidth=0.8)
        axis.set_ylim(80, 105)
        axis.set_xticks(range(len(TOPOLOGIES)), TOPOLOGIES)
        axis.set_ylabel("achieved / requested, %")
        axis.set_title("Fig. 6: readers at constant speed (Kafka)")
        axis.legend(fontsize=8)
    if "faults" in axis_of:
        axis = axis_of["faults"]
        groups = sorted({(t, f, s) for t, f, _, s in faults},
                        key=lambda g: (TOPOLOGIES.index(g[0]), g[1], g[2]))
        for k, on in enumerate((False, True)):
            medians, errors = whiskers([faults.get((t, f, on, s), []) for t, f, s in groups])
            axis.bar([i + (k - 0.5) * 0.4 for i in range(len(groups))], medians, 0.4,
                     yerr=errors, capsize=3, label=f"speculation {'on' if on else 'off'}")
        axis.axhline(100, color="grey", linewidth=0.8)
        axis.set_xticks(range(len(groups)), [f"{t}\n{f} {s:.0%}" for t, f, s in groups],
                        fontsize=7)
        axis.set_ylabel("achieved / requested, %")
        axis.set_title("Faults: a producer killed or slowed 4x")
        axis.legend(fontsize=8)
    if "room" in axis_of:
        axis = axis_of["room"]
        printers = sorted(room)
        beside = [100 * mb / greedy["greedy alone"][rep] for rep, mb in greedy["greedy"].items()
                  if rep in greedy["greedy alone"]]
        medians, errors = whiskers([room[p] for p in printers] + [beside])
        axis.bar(range(len(printers) + 1), medians, 0.6, yerr=errors, capsize=3,
                 color=["C0"] * len(printers) + ["C3"])
        axis.axhline(100, color="grey", linewidth=0.8)
        axis.set_xticks(range(len(printers) + 1),
                        [f"{p}\nachieved / requested" for p in printers]
                        + ["greedy job\nbeside / alone"], fontsize=8)
        axis.set_ylabel("%")
        axis.set_title("Printer room: four paced jobs beside a greedy one")
    if "transport" in axis_of:
        axis = axis_of["transport"]
        groups = sorted({key[:3] for key in transports},
                        key=lambda k: (TOPOLOGIES.index(k[0]), k[1], k[2]))
        for k, way in enumerate(("kafka", "local")):
            medians, errors = whiskers([transports[g + (way,)] for g in groups])
            axis.bar([i + (k - 0.5) * 0.4 for i in range(len(groups))], medians, 0.4,
                     yerr=errors, capsize=3, label=way)
        targets = []
        for topology, compute, job in groups:
            if compute:
                rip = anchors[("rip one thread", job)]
                share = 1.7 if topology.startswith("many-") else 1.0
                targets.append(share * statistics.median(rip) if rip else float("nan"))
            else:
                memcpy = anchors[("memcpy", "")]
                targets.append(0.5 * statistics.median(memcpy) if memcpy else float("nan"))
        axis.scatter(range(len(groups)), targets, marker="_", s=400, color="black",
                     label="target", zorder=3)
        axis.set_yscale("log")
        axis.set_xticks(range(len(groups)),
                        [f"{t}\ncompute {'on' if c else 'off'}\n{j}" for t, c, j in groups],
                        fontsize=7)
        axis.set_ylabel("MB/s")
        axis.set_title("Transports: Kafka and the local way")
        axis.legend(fontsize=8)
    figure.suptitle("Generation on one host: print jobs through GenerationSource, SluiceSink, "
                    "Kafka, sluice-brokerd and StreamReaders")
    figure.tight_layout()
    figure.savefig(results / "generation.png", dpi=110)
