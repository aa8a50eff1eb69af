#!/usr/bin/python3
"""PBNG MPI scaling benchmark (not a test: it prints figures, writes a CSV and a plot).

Runs `mpiexec -n R pbng -scene box_stretch_twist -res N -frames 1 -iters I -rtol 0 -material M -threads T`
for ranks x threads configurations (default 1x1, 1x2, 2x1, 4x1), several times, interleaved
(repeat loop outermost) so that slow drifts in machine load hit every configuration alike.
Each run's JSON summary gives the solver time per iteration, element visits per second, the
partition (owned/ghost nodes per rank, neighbours), the halo volume and the time spent in halo
exchanges, and peak memory.  For each configuration we report medians over the repeats and the
parallel efficiency against 1x1 from the medians of the same sweep:

    efficiency = t(1x1) / (p * t(config)),   p = ranks x threads

Configurations with more processes/threads than cores (4x1 on a 2-core machine) are run for the
communication pattern only and flagged "oversubscribed": their times and efficiency say nothing
about scaling.

Results: bench/results/scaling-<hostname>-<YYYYMMDD-HHMM>.csv and scaling-latest.csv (same
content, machine header block as in throughput.py) and bench/results/scaling-latest.png (needs
matplotlib: apt-get install python3-matplotlib; without it the CSV is still written).

Reuses the helpers of bench/throughput.py.  Run with /usr/bin/python3.  See bench/README.md.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no bench/__pycache__ from importing throughput.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import throughput as tp  # noqa: E402  (running pbng, the sweep, machine info, CSV, formatting)

BENCH_DIR = tp.BENCH_DIR
REPO = tp.REPO
SCENE = tp.SCENE
DEFAULT_CONFIGS = [(1, 1), (1, 2), (2, 1), (4, 1)]
# Target: 2 ranks x 1 thread >= 90 % parallel efficiency against 1 rank x 1 thread, at Res-64.
TARGET_RES = 64
TARGET_CONFIG = (2, 1)
TARGET_EFFICIENCY = 0.90
OVERSUB_NOTE = "oversubscribed: communication pattern only"


# ----------------------------------------------------------------------------- options

def config_list(text):
    """'1x1,1x2,2x1' -> [(1, 1), (1, 2), (2, 1)] as (ranks, threads)."""
    out = []
    for item in (v.strip().lower() for v in text.split(",")):
        if not item:
            continue
        m = re.fullmatch(r"(\d+)x(\d+)", item)
        if not m or int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
            raise argparse.ArgumentTypeError("expected RANKSxTHREADS items like 1x1,2x1; got %r" % item)
        cfg = (int(m.group(1)), int(m.group(2)))
        if cfg not in out:
            out.append(cfg)
    if not out:
        raise argparse.ArgumentTypeError("no configuration in %r" % text)
    return out


def cfg_name(ranks, threads):
    return "%dx%d" % (ranks, threads)


# ----------------------------------------------------------------------------- MPI launcher

def mpi_launcher(mpiexec):
    """(path, flavour, extra args) of the MPI launcher, or raises BenchError."""
    path = shutil.which(mpiexec) if os.path.sep not in mpiexec else (mpiexec if os.access(mpiexec, os.X_OK) else None)
    if not path:
        raise tp.BenchError("MPI launcher %r not found. Install Open MPI (apt-get install openmpi-bin, as in "
                            ".ci/install-deps) or point --mpiexec at one." % mpiexec)
    try:
        p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        version = (p.stdout + p.stderr).strip()
    except (OSError, subprocess.SubprocessError) as e:
        raise tp.BenchError("could not run %s --version: %s" % (path, e))
    first = version.splitlines()[0] if version else "unknown version"
    if "Open MPI" in version or "OpenRTE" in version:
        # ranks may exceed cores (4x1 on 2 cores); no binding, so OpenMP threads are free to spread
        return path, first, ["--oversubscribe", "--bind-to", "none"]
    if "HYDRA" in version or "MPICH" in version:
        return path, first, ["-bind-to", "none"]
    return path, first, []


def mpi_env():
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # Open MPI refuses root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


# ----------------------------------------------------------------------------- running

NEED = ("seconds_per_iteration", "solver_seconds", "iterations", "element_visits_per_second", "elements",
        "nodes", "colors", "ranks", "threads", "peak_rss_bytes_max_rank", "peak_rss_bytes_total",
        "bytes_per_element", "owned_nodes_min", "owned_nodes_max", "ghost_nodes_min", "ghost_nodes_max",
        "halo_neighbors_max", "halo_bytes_per_iteration", "halo_seconds")


def run_once(launcher, pbng, scratch, res, material, ranks, threads, iters, rep):
    path, _, extra = launcher
    return tp.run_pbng(pbng, scratch, "r%d-%s-%dx%d-rep%d" % (res, material, ranks, threads, rep), res, material,
                       threads, iters, NEED, prefix=[path, "-n", str(ranks)] + extra, env=mpi_env(), ranks=ranks,
                       missing_hint=" (pbng too old for the scaling benchmark?)")


# ----------------------------------------------------------------------------- report

def aggregate(runs, keys, nproc):
    rows = []
    for key in keys:
        res, material, ranks, threads = key
        rs = runs[key]
        share = [r["halo_seconds"] / r["solver_seconds"] if r["solver_seconds"] > 0 else 0.0 for r in rs]
        halo_ms = [1e3 * r["halo_seconds"] / max(1, int(r["iterations"])) for r in rs]
        first = rs[0]
        part = [(r["owned_nodes_min"], r["owned_nodes_max"], r["ghost_nodes_min"], r["ghost_nodes_max"],
                 r["halo_neighbors_max"], r["halo_bytes_per_iteration"]) for r in rs]
        p = ranks * threads
        row = tp.run_stats(rs)
        row.update({
            "res": res, "material": material, "ranks": ranks, "threads": threads, "p": p,
            "name": cfg_name(ranks, threads), "oversubscribed": bool(nproc and p > nproc),
            "halo_mb": first["halo_bytes_per_iteration"] / 1e6,
            "halo_share_med": statistics.median(share), "halo_ms_med": statistics.median(halo_ms),
            "owned_min": first["owned_nodes_min"], "owned_max": first["owned_nodes_max"],
            "ghost_min": first["ghost_nodes_min"], "ghost_max": first["ghost_nodes_max"],
            "neighbors_max": first["halo_neighbors_max"],
            "imbalance": first["owned_nodes_max"] * ranks / float(first["nodes"]),
            "partition_varies": len(set(part)) > 1,
            "rss_rank_mib_max": max(r["peak_rss_bytes_max_rank"] for r in rs) / 1048576.0,
        })
        rows.append(row)
    # parallel efficiency against 1x1 of the same resolution and material, from medians
    base = {(r["res"], r["material"]): r["ms_med"] for r in rows if r["ranks"] == 1 and r["threads"] == 1}
    for r in rows:
        t1 = base.get((r["res"], r["material"]))
        r["speedup"] = t1 / r["ms_med"] if t1 else None
        r["efficiency"] = t1 / (r["p"] * r["ms_med"]) if t1 else None
        notes = []
        if r["oversubscribed"]:
            notes.append("%s (%d processes/threads on %d cores)" % (OVERSUB_NOTE, r["p"], nproc))
        if r["partition_varies"]:
            notes.append("partition differed between repeats")
        if (r["ranks"], r["threads"]) == TARGET_CONFIG and r["res"] == TARGET_RES and r["efficiency"] is not None:
            notes.append(">=%.0f%% efficiency %s" % (100 * TARGET_EFFICIENCY,
                                                     "MET" if r["efficiency"] >= TARGET_EFFICIENCY else "NOT MET"))
        r["note"] = "; ".join(notes)
    return rows


def pct(x):
    return "-" if x is None else "%.0f%%" % (100 * x)


def print_table(rows):
    head = ("%-4s %-11s %-5s %9s %3s  %-26s %7s %6s %7s %7s  %-13s %-11s %3s %6s %8s %5s  %s"
            % ("Res", "material", "RxT", "tets", "col", "ms/iteration med [min-max]", "Mvis/s", "speedup",
               "effic.", "haloMB", "owned min-max", "ghost", "nbr", "imbal", "rank MiB", "B/tet", "note"))
    print(head)
    print("-" * len(head))
    for r in rows:
        ms = "%8s [%s-%s]" % (tp.g4(r["ms_med"]), tp.g4(r["ms_min"]), tp.g4(r["ms_max"]))
        sp = "-" if r["speedup"] is None else "%.2fx" % r["speedup"]
        eff = pct(r["efficiency"]) + ("*" if r["oversubscribed"] and r["efficiency"] is not None else "")
        halo = "-" if r["ranks"] == 1 else "%.3f" % r["halo_mb"]
        print("%-4d %-11s %-5s %9d %3d  %-26s %7.2f %7s %7s %7s  %-13s %-11s %3d %6.3f %8.1f %5.0f  %s"
              % (r["res"], r["material"][:11], r["name"], r["elements"], r["colors"], ms, r["mv_med"], sp, eff, halo,
                 "%d-%d" % (r["owned_min"], r["owned_max"]), "%d-%d" % (r["ghost_min"], r["ghost_max"]),
                 r["neighbors_max"], r["imbalance"], r["rss_rank_mib_max"], r["bpt_max"], r["note"]))
    print()
    print("Halo time share of the solver time (median; halo_seconds and the solver time are the slowest rank's):")
    for r in rows:
        if r["ranks"] > 1:
            print("  Res-%-3d %-17s %-4s halo %6.1f%% of solver time, %s ms/iteration in exchanges, %s MB/iteration"
                  " (%d colors x %d neighbours x 2 messages per rank per iteration)%s"
                  % (r["res"], r["material"], r["name"], 100 * r["halo_share_med"], tp.g4(r["halo_ms_med"]),
                     "%.3f" % r["halo_mb"], r["colors"], r["neighbors_max"],
                     "  [%s]" % OVERSUB_NOTE if r["oversubscribed"] else ""))


def print_target(rows):
    print()
    print("Target: %s (2 ranks x 1 thread) >= %.0f%% parallel efficiency against 1x1 at Res-%d:"
          % (cfg_name(*TARGET_CONFIG), 100 * TARGET_EFFICIENCY, TARGET_RES))
    hits = [r for r in rows if (r["ranks"], r["threads"]) == TARGET_CONFIG and r["res"] == TARGET_RES]
    if not hits:
        print("  not measured (needs --res %d and configurations 1x1,%s)" % (TARGET_RES, cfg_name(*TARGET_CONFIG)))
    for r in hits:
        if r["efficiency"] is None:
            print("  %s: no 1x1 run to compare with" % r["material"])
        else:
            print("  %-17s %.1f%% (1x1 %s ms, 2x1 %s ms/iteration)  %s"
                  % (r["material"], 100 * r["efficiency"], tp.g4(r["ms_med"] * r["speedup"]), tp.g4(r["ms_med"]),
                     "MET" if r["efficiency"] >= TARGET_EFFICIENCY else "NOT MET"))
    other = sorted({r["res"] for r in rows} - {TARGET_RES})
    if other:
        print("  (Res-%s: efficiency shown for information; the target is judged at Res-%d only — small meshes are"
              " dominated by per-color latency)" % (",".join(map(str, other)), TARGET_RES))
    if any(r["oversubscribed"] for r in rows):
        print("  * oversubscribed configurations (more processes/threads than cores): times show the communication"
              " pattern only; their efficiency is not a scaling figure.")


CSV_COLUMNS = tp.columns(
    "res material ranks threads cores_used oversubscribed nodes tets colors iterations repeats"
    " ms_per_iter_median ms_per_iter_min ms_per_iter_max mvisits_per_s_median mvisits_per_s_min mvisits_per_s_max"
    " speedup_vs_1x1 efficiency_vs_1x1 halo_mb_per_iter halo_ms_per_iter_median halo_share_median"
    " owned_nodes_min owned_nodes_max ghost_nodes_min ghost_nodes_max halo_neighbors_max owned_imbalance"
    " peak_rss_mib_max_rank bytes_per_tet_max wall_seconds_median note ms_per_iter_runs",
    cores_used=lambda r: r["p"],
    oversubscribed=lambda r: "yes" if r["oversubscribed"] else "no",
    speedup_vs_1x1=lambda r: "" if r["speedup"] is None else "%.3f" % r["speedup"],
    efficiency_vs_1x1=lambda r: "" if r["efficiency"] is None else "%.3f" % r["efficiency"],
    halo_mb_per_iter=lambda r: "%.6f" % r["halo_mb"],
    halo_ms_per_iter_median=lambda r: "%.4f" % r["halo_ms_med"],
    halo_share_median=lambda r: "%.4f" % r["halo_share_med"],
    owned_nodes_min=lambda r: r["owned_min"], owned_nodes_max=lambda r: r["owned_max"],
    ghost_nodes_min=lambda r: r["ghost_min"], ghost_nodes_max=lambda r: r["ghost_max"],
    halo_neighbors_max=lambda r: r["neighbors_max"],
    owned_imbalance=lambda r: "%.4f" % r["imbalance"],
    peak_rss_mib_max_rank=lambda r: "%.1f" % r["rss_rank_mib_max"],
    note=lambda r: r["note"])


def write_plot(path, rows, title):
    """ms/iteration and efficiency per configuration; returns False (with a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: apt-get install python3-matplotlib  (no plot written; the CSV is)")
        return False
    groups = []  # one line per (res, material)
    for r in rows:
        if (r["res"], r["material"]) not in groups:
            groups.append((r["res"], r["material"]))
    names = []
    for r in rows:
        if r["name"] not in names:
            names.append(r["name"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / max(1, len(groups))
    for gi, (res, material) in enumerate(groups):
        sel = {r["name"]: r for r in rows if (r["res"], r["material"]) == (res, material)}
        xs = [i + (gi - (len(groups) - 1) / 2) * width for i, n in enumerate(names) if n in sel]
        rs = [sel[n] for n in names if n in sel]
        label = "Res-%d %s" % (res, material)
        bars = ax1.bar(xs, [r["ms_med"] for r in rs], width, label=label,
                       yerr=[[r["ms_med"] - r["ms_min"] for r in rs], [r["ms_max"] - r["ms_med"] for r in rs]],
                       capsize=3)
        for b, r in zip(bars, rs):
            if r["oversubscribed"]:
                b.set_hatch("//")
        ex = [(x, r["efficiency"]) for x, r in zip(xs, rs) if r["efficiency"] is not None]
        if ex:
            line, = ax2.plot([x for x, _ in ex], [100 * e for _, e in ex], "o-", label=label)
            for x, r in zip(xs, rs):
                if r["oversubscribed"] and r["efficiency"] is not None:
                    ax2.plot([x], [100 * r["efficiency"]], "o", mfc="white", mec=line.get_color(), ms=9)
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(["%s%s" % (n, "\n(oversub.)" if any(r["name"] == n and r["oversubscribed"] for r in rows)
                                      else "") for n in names])
        ax.set_xlabel("ranks x threads")
        ax.grid(axis="y", alpha=0.3)
    ax1.set_ylabel("ms / iteration (median, min-max)")
    ax1.set_yscale("log")
    ax1.set_title("time per PBNG iteration")
    ax2.axhline(100 * TARGET_EFFICIENCY, color="grey", ls="--", lw=1)
    ax2.text(-0.4, 100 * TARGET_EFFICIENCY + 1.5, "target %.0f%% (2x1, Res-%d)"
             % (100 * TARGET_EFFICIENCY, TARGET_RES), ha="left", fontsize=8, color="grey")
    ax2.set_ylim(0, 115)
    ax2.set_ylabel("parallel efficiency vs 1x1 (%)")
    ax2.set_title("efficiency = t(1x1) / (p t)   (hatched/open: oversubscribed)", fontsize=9)
    ax1.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return True


# ----------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description="PBNG MPI scaling benchmark: ranks x threads configurations, interleaved repeats, medians, "
                    "parallel efficiency vs 1x1; writes bench/results/scaling-<host>-<date>.csv, scaling-latest.csv "
                    "and scaling-latest.png.")
    ap.add_argument("--res", type=tp.int_list, default=[64], help="Res-N list (default 64; e.g. 64,128)")
    ap.add_argument("--materials", type=tp.material_list, default=["neohookean"],
                    help="comma-separated subset of %s (default neohookean)" % ",".join(tp.ALL_MATERIALS))
    ap.add_argument("--configs", type=config_list, default=DEFAULT_CONFIGS,
                    help="RANKSxTHREADS list (default %s)" % ",".join(cfg_name(*c) for c in DEFAULT_CONFIGS))
    ap.add_argument("--repeats", type=int, default=3, help="repeats per configuration (default 3)")
    tp.add_run_options(ap)
    ap.add_argument("--mpiexec", default="mpiexec", help="MPI launcher (default mpiexec from PATH)")
    tp.add_out_option(ap)
    ap.add_argument("--results", default=tp.RESULTS_DIR,
                    help="where the CSV and PNG go (default <repo>/bench/results)")
    args = ap.parse_args()
    if args.repeats <= 0:
        ap.error("--repeats must be positive")
    if args.iters <= 0:
        ap.error("--iters must be positive")

    pbng = tp.find_pbng(args.pbng)
    if pbng is None:
        return 2
    try:
        launcher = mpi_launcher(args.mpiexec)
    except tp.BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    sweep = tp.Sweep(pbng)
    nproc = sweep.nproc

    keys = [(res, m, rk, th) for res in args.res for m in args.materials for (rk, th) in args.configs]
    schedule = [(rep, k) for rep in range(args.repeats) for k in keys]

    print("PBNG scaling: scene %s, %d iterations/run, %d configurations, %d runs (interleaved, repeat loop outermost)"
          % (SCENE, args.iters, len(keys), len(schedule)))
    print("  res %s | materials %s | ranks x threads %s | repeats %d"
          % (",".join(map(str, args.res)), ",".join(args.materials),
             ",".join(cfg_name(*c) for c in args.configs), args.repeats))
    sweep.print_setup("  %s (%s)" % (launcher[0], launcher[1]))
    over = [cfg_name(*c) for c in args.configs if nproc and c[0] * c[1] > nproc]
    if over:
        print("  note: %s use more processes/threads than the %d cores: %s" % (", ".join(over), nproc, OVERSUB_NOTE))
    if (1, 1) not in args.configs:
        print("  note: no 1x1 configuration, so no efficiency figures")
    sys.stdout.flush()

    def run_one(scratch, rep, key):
        res, material, ranks, threads = key
        return run_once(launcher, pbng, scratch, res, material, ranks, threads, args.iters, rep + 1)

    def describe(rep, key, s):
        res, material, ranks, threads = key
        share = s["halo_seconds"] / s["solver_seconds"] if s["solver_seconds"] > 0 else 0.0
        return ("Res-%-3d %-11s %4s rep %d/%d: %9s ms/iteration %8.2f M visits/s  halo %5.1f%%"
                % (res, material[:11], cfg_name(ranks, threads), rep + 1, args.repeats,
                   tp.g4(1e3 * s["seconds_per_iteration"]), s["element_visits_per_second"] / 1e6, 100 * share))

    status = sweep.run(schedule, run_one, describe, args.out, "pbng-scaling-", failed_note="no results written")
    if status:
        return status
    rows = aggregate(sweep.runs, keys, nproc)

    print()
    print("Medians over repeats. efficiency = t(1x1) / (ranks x threads x t); speed-up = t(1x1) / t; haloMB = bytes"
          " sent by all ranks per iteration / 1e6; imbal = largest owned / mean owned; rank MiB = largest rank's peak"
          " RSS; B/tet = peak RSS summed over ranks / tets.")
    print_table(rows)
    print_target(rows)
    sweep.print_end()

    header = sweep.csv_header(
        "PBNG MPI scaling benchmark (bench/scaling.py); one row per configuration, statistics over repeats",
        ["mpi: %s (%s)" % (launcher[0], launcher[1])],
        "%s -n R %s " % (launcher[0], " ".join(launcher[2])), "N", args.iters,
        "interleaved, repeat loop outermost; repeats: %d" % args.repeats,
        ["units: ms_per_iter = solver seconds per PBNG iteration (slowest rank; setup, residual evaluation, output excluded;"
         " halo exchanges included); mvisits_per_s = 4 x tets x iterations / solver seconds / 1e6;"
         " efficiency_vs_1x1 = median t(1x1) / (ranks x threads x median t);"
         " halo_mb_per_iter = bytes sent by all ranks in one sweep / 1e6 (24 bytes per node per color exchange);"
         " halo_share = halo seconds (slowest rank) / solver seconds; owned_imbalance = owned max x ranks / nodes;"
         " peak_rss_mib_max_rank = largest rank's peak RSS; bytes_per_tet = peak RSS summed over ranks / tets",
         "oversubscribed = ranks x threads > nproc: %s" % OVERSUB_NOTE,
         "target: 2x1 >= %.0f%% parallel efficiency vs 1x1 at Res-%d" % (100 * TARGET_EFFICIENCY, TARGET_RES)])
    results = os.path.abspath(args.results)
    sweep.write_results(results, "scaling", header, rows, CSV_COLUMNS, os.getcwd())
    png = os.path.join(results, "scaling-latest.png")
    title = "PBNG %s, %d iterations, %s, %s cores, commit %s, %s" % (
        SCENE, args.iters, sweep.info["cpu_model"], sweep.info["nproc"], sweep.commit, sweep.start.strftime("%Y-%m-%d %H:%M"))
    try:
        if write_plot(png, rows, title):
            print("      %s" % os.path.relpath(png, os.getcwd()))
    except Exception as e:  # a plotting problem must not lose the sweep: the CSV is already written
        print("warning: plot not written (%s: %s); the CSV is" % (type(e).__name__, e), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
