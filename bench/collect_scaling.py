#!/usr/bin/python3
"""Collects a scaling study's runs (jobs/strong_scaling.sbatch, jobs/weak_scaling.sbatch) into a table,
a CSV and a PNG.

Each job directory holds one JSON summary per run, named n<nodes>-r<ranks>-t<threads>-res<R>-rep<k>.json,
and study.txt (the study's kind and parameters). Per configuration (nodes, ranks, threads, res) the
medians over the repeats of: seconds per iteration, halo seconds / solver seconds (the halo fraction;
halo time is the slowest rank's). Against the configuration with the fewest cores (ranks x threads):
  strong: speed-up = t_base / t, parallel efficiency = speed-up / (cores / cores_base);
  weak:   parallel efficiency = t_base / t (each rank keeps about as many elements).

  /usr/bin/python3 bench/collect_scaling.py runs/pbng-strong-123 [more job dirs of the same study]
      [--csv OUT.csv] [--png OUT.png]      (default: <first dir>/scaling.csv and .png)
Exit status 1 when a directory holds no runs or a run's summary is unreadable.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"n(\d+)-r(\d+)-t(\d+)-res(\d+)-rep(\d+)\.json$")


def study_kind(dirs):
    for d in dirs:
        try:
            return open(os.path.join(d, "study.txt")).read().split()[0]
        except (OSError, IndexError):
            pass
    return "strong"


def load_runs(dirs):
    runs = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            m = NAME.search(os.path.basename(path))
            if not m:
                continue
            try:
                s = json.load(open(path))
            except (OSError, ValueError) as e:
                raise SystemExit("error: cannot read %s: %s" % (path, e))
            nodes, ranks, threads, res, rep = (int(g) for g in m.groups())
            runs.append({"nodes": nodes, "ranks": ranks, "threads": threads, "res": res, "rep": rep, "elements": s["elements"],
                         "seconds_per_iteration": s["seconds_per_iteration"],
                         "halo_fraction": s["halo_seconds"] / s["solver_seconds"] if s["solver_seconds"] > 0 else 0.0})
    return runs


def aggregate(runs, kind):
    groups = {}
    for r in runs:
        groups.setdefault((r["nodes"], r["ranks"], r["threads"], r["res"]), []).append(r)
    rows = []
    for (nodes, ranks, threads, res), rs in sorted(groups.items(), key=lambda kv: (kv[0][1] * kv[0][2], kv[0])):
        rows.append({"nodes": nodes, "ranks": ranks, "threads": threads, "cores": ranks * threads, "res": res, "elements": rs[0]["elements"],
                     "repeats": len(rs), "ms_per_iteration": 1e3 * statistics.median(r["seconds_per_iteration"] for r in rs),
                     "ms_min": 1e3 * min(r["seconds_per_iteration"] for r in rs), "ms_max": 1e3 * max(r["seconds_per_iteration"] for r in rs),
                     "halo_fraction": statistics.median(r["halo_fraction"] for r in rs)})
    base = rows[0]
    for r in rows:
        if kind == "weak":
            r["speedup"] = ""
            r["efficiency"] = base["ms_per_iteration"] / r["ms_per_iteration"]
        else:
            r["speedup"] = base["ms_per_iteration"] / r["ms_per_iteration"]
            r["efficiency"] = r["speedup"] / (r["cores"] / base["cores"])
    return rows


COLUMNS = ("nodes", "ranks", "threads", "cores", "res", "elements", "repeats", "ms_per_iteration", "ms_min", "ms_max", "speedup",
           "efficiency", "halo_fraction")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--csv")
    ap.add_argument("--png")
    args = ap.parse_args()
    runs = load_runs(args.dirs)
    if not runs:
        raise SystemExit("error: no runs (n<N>-r<R>-t<T>-res<R>-rep<k>.json) in %s" % " ".join(args.dirs))
    kind = study_kind(args.dirs)
    rows = aggregate(runs, kind)
    csv = args.csv or os.path.join(args.dirs[0], "scaling.csv")
    png = args.png or os.path.join(args.dirs[0], "scaling.png")
    print("%s scaling, %d runs" % (kind, len(runs)))
    print("%5s %5s %7s %5s %5s %10s %11s %8s %10s %6s" % ("nodes", "ranks", "threads", "cores", "res", "tets", "ms/iter", "speedup", "efficiency",
                                                           "halo"))
    for r in rows:
        print("%5d %5d %7d %5d %5d %10d %11.3f %8s %9.1f%% %5.1f%%" % (r["nodes"], r["ranks"], r["threads"], r["cores"], r["res"], r["elements"],
                                                                     r["ms_per_iteration"], "%.2f" % r["speedup"] if r["speedup"] != "" else "-",
                                                                     100 * r["efficiency"], 100 * r["halo_fraction"]))
    with open(csv + ".tmp", "w") as f:
        f.write("# %s scaling from %s (medians over repeats; efficiency against the fewest cores)\n" % (kind, " ".join(args.dirs)))
        f.write(",".join(COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in COLUMNS) + "\n")
    os.replace(csv + ".tmp", csv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(13, 4))
    cores = [r["cores"] for r in rows]
    ax[0].plot(cores, [r["ms_per_iteration"] for r in rows], "o-")
    ax[0].set_ylabel("ms per iteration (median)")
    ax[1].plot(cores, [100 * r["efficiency"] for r in rows], "o-")
    ax[1].axhline(100, color="k", lw=0.5)
    ax[1].set_ylabel("parallel efficiency (%)")
    ax[2].plot(cores, [100 * r["halo_fraction"] for r in rows], "o-")
    ax[2].set_ylabel("halo exchange (% of solver time)")
    for a in ax:
        a.set_xlabel("cores (ranks x threads)")
        a.set_xscale("log", base=2)
    fig.suptitle("%s scaling: %s" % (kind, ", ".join("r%dt%d" % (r["ranks"], r["threads"]) for r in rows)))
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print("wrote %s\n      %s" % (csv, png))


if __name__ == "__main__":
    sys.exit(main())
