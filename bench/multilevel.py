#!/usr/bin/python3
"""Multilevel PBNG against single-level PBNG and Newton: relative residual against wall time (issue 15).

Not a test: it prints tables and writes CSV files and PNG plots.

Cases (--cases, frame 1 from rest of each, quasistatic):
  box32, box64, box128   the paper's box stretch-and-twist at Res-32/64/128 (box128 on --ranks-128 ranks,
                         every level from a file partitioned by pbng-partition, as a cluster run would);
  bar                    the slender bar under gravity: length 8, res 9 (8 cells across, 64 along);
  tube                   the issue's hollow tube (bench/data/tube.geo: length 6, radii 0.5 / 0.4, 2,547
                         nodes, TetGen), clamped at x = 0, gravity -9.8 y, E = 1e5: coarse levels made
                         by pbng from it (-multilevel), and Gmsh remeshes of the geometry (-mesh_levels).
Configurations: PBNG plain / SOR / Chebyshev (the paper's parameters), multilevel PBNG (the default cycle
with the case's level count, the coarsest level near Res-8; and with Chebyshev inside each smoothing step),
Newton with PBNG as nonlinear preconditioner (right and left), and Newton with the bjacobi_icc and hypre
presets. box128 runs a subset (single-level plain and SOR for the memory comparison, the multilevel cycles,
Newton with PBNG NPC and the bjacobi_icc preset, docs/newton.md's best there); there the multilevel runs stop at 1e-6,
the others at 1e-4 (Newton takes minutes per decade). Each run uses -monitor (iteration
wall time only, residual evaluations excluded, the same for every method) and stops at relative residual
1e-6 or its time budget. Medians over --repeats runs, configurations interleaved (repeat loop outermost).

Targets (issue 15), printed with the verdict:
  - multilevel cycles to 1e-6 grow at most 1.5x from Res-32 to Res-128;
  - Res-32 and Res-64: multilevel 1e-3 at least 6x sooner than the best Newton, 1e-6 sooner than it;
  - Res-128: 1e-3 at least 6x sooner than the best Newton; peak memory (largest rank) at most 1.5x
    single-level PBNG's;
  - bar: multilevel 1e-6 sooner than Newton.

Results in bench/results/: multilevel-<host>-<stamp>.csv (table), multilevel-curves-...csv (the first
repeat's monitored iterates, ~200 log-spaced per curve) and multilevel-<case>-<host>-<stamp>.png. Standard library + matplotlib; run with /usr/bin/python3.
"""

import argparse
import datetime
import json
import math
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
import residual_time as rt  # noqa: E402  (monitor parsing, time_to, plotting helpers)
import throughput as tp  # noqa: E402  (machine info, binary lookup, CSV writing)

TOLERANCES = (1e-1, 1e-2, 1e-3, 1e-6)
HERE = os.path.dirname(os.path.abspath(__file__))

BOX = ["-scene", "box_stretch_twist"]
CASES = {
    "box32": {"scene": BOX + ["-res", "32"], "levels": 3},
    "box64": {"scene": BOX + ["-res", "64"], "levels": 4},
    "box128": {"scene": BOX + ["-res", "128"], "levels": 5, "partitioned": [128, 64, 32, 16, 8], "rtol": 1e-4,  # for the others; multilevel to 1e-6
               "configs": ["pbng_none", "pbng_sor", "multilevel", "multilevel_cheb", "newton_npc_right", "newton_bjacobi_icc"]},
    "bar": {"scene": ["-scene", "bar_gravity", "-bar_length", "8", "-res", "9"], "levels": 3},
    "tube": {"scene": ["-fix_box", "0,-1,-1,0,1,1", "-gravity", "0,-9.8,0", "-youngs", "1e5"], "levels": 2, "tube": True},
}

PBNG_CONFIGS = {"pbng_none": ["-accel", "none"], "pbng_sor": ["-accel", "sor"], "pbng_chebyshev": ["-accel", "chebyshev"]}
NEWTON_CONFIGS = {
    "newton_npc_right": ["-solver", "newton", "-newton_npc", "pbng"],
    "newton_npc_left": ["-solver", "newton", "-newton_npc", "pbng", "-newton_snes_npc_side", "left"],
    "newton_bjacobi_icc": ["-solver", "newton", "-newton_preconditioner", "bjacobi_icc"],
    "newton_hypre": ["-solver", "newton", "-newton_preconditioner", "hypre"],
}
PLAIN_NEWTON = ("newton_bjacobi_icc", "newton_hypre")  # "the best Newton preset"


def is_newton(name):
    return name.startswith("newton")


def configs_for(case, spec):
    """{name: options} of the case: single-level, multilevel variants, Newton variants."""
    c = dict(PBNG_CONFIGS)
    c["multilevel"] = ["-multilevel", str(spec["levels"])]
    if spec["scene"][:2] == BOX:  # Chebyshev inside each smoothing step: faster on the box, divergent on the bar (docs/multilevel.md)
        c["multilevel_cheb"] = ["-multilevel", str(spec["levels"]), "-accel", "chebyshev"]
    if spec.get("tube"):
        c["multilevel_3"] = ["-multilevel", "3", "-multilevel_coarsen_angle", "60", "-multilevel_coarsen_quality", "0.03"]
        c["multilevel_gmsh"] = ["-mesh_levels", "GMSH_LEVELS"]
    c.update(NEWTON_CONFIGS)
    if "configs" in spec:
        c = {n: c[n] for n in spec["configs"]}
    return c


def is_multilevel(name):
    return name.startswith("multilevel")


def tube_meshes(scratch):
    """The tube (TetGen) and its Gmsh remeshes at lc 0.3, 0.45 (coarse levels), made from bench/data/tube.geo."""
    geo = os.path.join(HERE, "data", "tube.geo")
    out = {}
    for lc, name in ((0.13, "tube"), (0.3, "tube_l1"), (0.45, "tube_l2")):
        msh = os.path.join(scratch, name + ".msh")
        if not os.path.exists(msh):
            subprocess.run(["gmsh", "-3", "-format", "msh22", geo, "-setnumber", "lc", str(lc), "-o", msh], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out[name] = msh
    tet = os.path.join(scratch, "tube")
    if not os.path.exists(tet + ".node"):
        subprocess.run([sys.executable, os.path.join(tp.REPO, "tests", "data", "msh22_to_tetgen.py"), out["tube"], tet], check=True)
    return tet + ".node", "%s,%s" % (out["tube_l1"], out["tube_l2"])


def partition_levels(args, spec, scratch):
    """Partitioned files of every level of box128 for --ranks-128 parts: (fine, 'c1,c2,...')."""
    files = []
    for res in spec["partitioned"]:
        path = os.path.join(scratch, "box%d.p%d.h5" % (res, args.ranks_128))
        if not os.path.exists(path):
            print("partitioning Res-%d into %d parts ..." % (res, args.ranks_128), flush=True)
            rt.run([os.path.join(os.path.dirname(args.pbng_abs), "pbng-partition"), "-scene", "box_stretch_twist", "-res", str(res), "-parts",
                    str(args.ranks_128), "-output", path], path + ".log")
        files.append(path)
    return files[0], ",".join(files[1:])


def command(args, case, spec, name, opts, scratch, stem, budget):
    ranks = args.ranks_128 if case == "box128" else args.ranks
    launch = [args.mpiexec, "-n", str(ranks), "--bind-to", "none"] if ranks > 1 else []
    scene = list(spec["scene"])
    opts = list(opts)
    if spec.get("partitioned"):
        fine, coarse = partition_levels(args, spec, scratch)
        scene = BOX + ["-mesh", fine]
        if is_multilevel(name):  # the level files in place of the level count; the other options kept
            i = opts.index("-multilevel")
            opts[i:i + 2] = ["-mesh_levels", coarse]
    if spec.get("tube"):
        fine, gmsh_levels = tube_meshes(scratch)
        scene = ["-mesh", fine] + scene
        opts = [gmsh_levels if o == "GMSH_LEVELS" else o for o in opts]
    rtol = min(TOLERANCES) if is_multilevel(name) else spec.get("rtol", min(TOLERANCES))
    return launch + [args.pbng_abs] + scene + opts + ["-threads", str(args.threads), "-frames", "1", "-monitor", "-iters", "1000000", "-rtol",
                                                       str(rtol), "-time_budget", str(budget),
                                                       "-output", stem + ".h5", "-summary", stem + ".json"]


def run_config(args, case, spec, name, opts, scratch, rep):
    stem = os.path.join(scratch, "%s-%s-%d" % (case, name, rep))
    budget = args.newton_budget if is_newton(name) else (args.pbng_budget if name.startswith("pbng") else args.multilevel_budget)
    if case == "box128":
        budget *= args.budget_128
    text = rt.run(command(args, case, spec, name, opts, scratch, stem, budget), stem + ".log", tolerated="the solution diverged")
    curve = rt.parse_curve(text)
    if not os.path.exists(stem + ".json"):  # diverged (e.g. single-level Chebyshev on the bar): no summary
        return {"curve": curve, "rss": float("nan"), "diverged": True}
    summary = json.load(open(stem + ".json"))
    return {"curve": curve, "rss": summary.get("peak_rss_bytes_max_rank", float("nan"))}


def summarize(results):
    table = []
    for (case, name), runs in sorted(results.items()):
        for tol in TOLERANCES:
            hits = [rt.time_to(r["curve"], tol) for r in runs]
            row = {"case": case, "config": name, "tol": tol, "repeats": len(runs), "reached": sum(h is not None for h in hits),
                   "peak_rss_mib_median": statistics.median(r["rss"] for r in runs) / 1048576.0}
            if all(h is not None for h in hits):
                row["seconds_median"] = statistics.median(h[0] for h in hits)
                row["seconds_min"], row["seconds_max"] = min(h[0] for h in hits), max(h[0] for h in hits)
                row["iterations_median"] = statistics.median(h[1] for h in hits)
            else:
                row["limit"] = max(r["curve"][-1][0] for r in runs)
                row["diverged"] = sum(1 for r in runs if r.get("diverged"))
            table.append(row)
    return table


def cell(table, case, name, tol):
    return next((r for r in table if r["case"] == case and r["config"] == name and r["tol"] == tol), None)


def best_of(table, case, names, tol):
    rows = [cell(table, case, n, tol) for n in names]
    rows = [r for r in rows if r and "seconds_median" in r]
    return min(rows, key=lambda r: r["seconds_median"]) if rows else None


def verdicts(table, cases):
    out = []

    def t(case, name, tol):
        r = cell(table, case, name, tol)
        return r["seconds_median"] if r and "seconds_median" in r else None

    c32, c128 = cell(table, "box32", "multilevel", 1e-6), cell(table, "box128", "multilevel", 1e-6)
    if c32 and c128 and "iterations_median" in c32 and "iterations_median" in c128:
        g = c128["iterations_median"] / c32["iterations_median"]
        out.append("cycles to 1e-6, Res-32 -> Res-128: %g -> %g (%.2fx; target <= 1.5x: %s)" % (
            c32["iterations_median"], c128["iterations_median"], g, "met" if g <= 1.5 else "NOT met"))
    def multilevel_names(case):
        return sorted({r["config"] for r in table if r["case"] == case and is_multilevel(r["config"])})

    for case in ("box32", "box64", "box128"):
        if case not in cases:
            continue
        for tol, need in ((1e-3, 6.0), (1e-6, 1.0)):
            if case == "box128" and tol == 1e-6:
                continue
            n, m = best_of(table, case, PLAIN_NEWTON, tol), best_of(table, case, multilevel_names(case), tol)
            if n and m:
                ratio = n["seconds_median"] / m["seconds_median"]
                out.append("%s %g: multilevel (%s) %.3g s, best Newton (%s) %.3g s: %.1fx sooner (target >= %gx: %s)" % (
                    case, tol, m["config"], m["seconds_median"], n["config"], n["seconds_median"], ratio, need, "met" if ratio >= need else "NOT met"))
            else:
                out.append("%s %g: multilevel %s, best Newton %s" % (case, tol, "%.3g s" % m["seconds_median"] if m else "not reached",
                                                                     "%.3g s" % n["seconds_median"] if n else "not reached"))
    if "box128" in cases:
        ml = cell(table, "box128", "multilevel", 1e-1)
        for single in ("pbng_none", "pbng_sor"):
            sl = cell(table, "box128", single, 1e-1)
            if ml and sl:
                ratio = ml["peak_rss_mib_median"] / sl["peak_rss_mib_median"]
                out.append("box128 peak memory (largest rank): multilevel %.0f MiB, single-level %s %.0f MiB: %.2fx (target <= 1.5x: %s)" % (
                    ml["peak_rss_mib_median"], single, sl["peak_rss_mib_median"], ratio, "met" if ratio <= 1.5 else "NOT met"))
    if "bar" in cases:
        m, n = best_of(table, "bar", multilevel_names("bar"), 1e-6), best_of(table, "bar", PLAIN_NEWTON, 1e-6)
        if m and n:
            out.append("bar 1e-6: multilevel (%s) %.3g s, Newton (%s) %.3g s (target: sooner: %s)" % (
                m["config"], m["seconds_median"], n["config"], n["seconds_median"], "met" if m["seconds_median"] < n["seconds_median"] else "NOT met"))
    return out


def fmt(row):
    if row is None:
        return "-"
    if "seconds_median" in row:
        return "%.3g s (%g)" % (row["seconds_median"], row["iterations_median"])
    return "diverged" if row.get("diverged") else "not in %.0f s" % row["limit"]


def print_table(table, cases, names_of):
    for case in cases:
        print("\n%s: median time (iterations) to the relative residual, peak MiB of the largest rank" % case)
        print("%-20s" % "configuration" + "".join("%18s" % ("%g" % t) for t in TOLERANCES) + "%10s" % "MiB")
        for name in names_of[case]:
            rows = [cell(table, case, name, t) for t in TOLERANCES]
            print("%-20s" % name + "".join("%18s" % fmt(r) for r in rows) + "%10.0f" % rows[0]["peak_rss_mib_median"])


def plot(path, case, results, names, title):
    plt = rt.pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(7, 5))
    for name in names:
        runs = results.get((case, name))
        if not runs:
            continue
        c = runs[0]["curve"]
        style = "--" if is_newton(name) else ("-" if name.startswith("multilevel") else ":")
        ax.loglog([max(s, 1e-4) for s, _, _ in c], [max(r, 1e-300) for _, r, _ in c], style, label=name, marker="." if is_newton(name) else None)
    for tol in TOLERANCES:
        ax.axhline(tol, color="0.85", lw=0.8, zorder=0)
    ax.set_xlabel("wall time of the iterations [s]")
    ax.set_ylabel("relative residual")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot: %s" % path)


CURVE_POINTS = 200


def curve_sample(n, points=CURVE_POINTS):
    """Iterations 0..n-1 kept in the curves file: about `points` log-spaced ones and the last (the full
    curves of every repeat made a 9 MB file; the plots and tables use the runs in memory)."""
    if n <= points:
        return list(range(n))
    keep = {0, n - 1} | {int(round(10 ** (k * math.log10(n - 1) / (points - 1)))) for k in range(points)}
    return sorted(k for k in keep if k < n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="box32,box64,bar,tube", help="comma-separated subset of: " + ", ".join(CASES))
    ap.add_argument("--configs", default="", help="comma-separated subset of the configurations (default: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--ranks-128", type=int, default=2, help="ranks for box128 (threads: --threads each)")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--pbng-budget", type=float, default=20.0, help="seconds of iterations for single-level PBNG (default 20)")
    ap.add_argument("--multilevel-budget", type=float, default=60.0, help="seconds of iterations for multilevel PBNG (default 60)")
    ap.add_argument("--newton-budget", type=float, default=120.0, help="seconds of iterations for Newton (default 120)")
    ap.add_argument("--budget-128", type=float, default=5.0, help="box128: budgets multiplied by this (default 5)")
    ap.add_argument("--tag", default="", help="extra word in the result file names")
    tp.add_run_options(ap)
    tp.add_out_option(ap)
    args = ap.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if any(c not in CASES for c in cases) or args.repeats < 1:
        ap.error("unknown case in %s or --repeats < 1" % cases)
    pbng = tp.find_pbng(args.pbng)
    if not pbng:
        return 2
    args.pbng_abs = pbng
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    scratch = args.out or tempfile.mkdtemp(prefix="pbng-multilevel-")
    os.makedirs(scratch, exist_ok=True)
    machine = tp.machine_info()
    commit, _ = tp.git_commit(tp.REPO)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0] + (("-" + args.tag) if args.tag else "")
    print("machine: %s, %s cores, %s; %s; commit %s; load %s" % (machine["cpu_model"], machine["nproc"], machine["memory"], machine["os"],
                                                                commit, tp.load_average()), flush=True)
    only = {n.strip() for n in args.configs.split(",") if n.strip()}
    names_of = {c: [n for n in configs_for(c, CASES[c]) if not only or n in only] for c in cases}
    results = {}
    try:
        for rep in range(args.repeats):
            for case in cases:
                configs = configs_for(case, CASES[case])
                for name in names_of[case]:
                    r = run_config(args, case, CASES[case], name, configs[name], scratch, rep)
                    results.setdefault((case, name), []).append(r)
                    c = r["curve"]
                    reached = [("%g:%.3gs" % (t, rt.time_to(c, t)[0])) if rt.time_to(c, t) else ("%g:-" % t) for t in TOLERANCES]
                    print("  repeat %d %-7s %-20s %5d iterations, %.3g s, final %.2e, %.0f MiB  [%s]%s" % (
                        rep + 1, case, name, len(c) - 1, c[-1][0], c[-1][1], r["rss"] / 1048576.0, " ".join(reached),
                        "  DIVERGED" if r.get("diverged") else ""), flush=True)
    except rt.BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    table = summarize(results)
    print_table(table, cases, names_of)
    lines = verdicts(table, cases)
    print("\ntargets:")
    for line in lines:
        print("  " + line)
    head = ["pbng multilevel benchmark (bench/multilevel.py), %s" % datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine: %s, %s cores, %s, %s, %s" % (machine["cpu_model"], machine["nproc"], machine["memory"], machine["os"], machine["compiler"]),
            "commit %s, build %s, pbng %s" % (commit, tp.build_type(pbng), tp.binary_id(pbng)),
            "command: %s" % " ".join(shlex.quote(a) for a in sys.argv),
            "frame 1 of each case, %d rank(s) (box128: %d) x %d thread(s); %d repeats" % (args.ranks, args.ranks_128, args.threads, args.repeats)]
    head += ["target: " + l for l in lines]
    head += ["curves: the first repeat, at most ~%d iterations per curve (log-spaced, the last included)" % CURVE_POINTS]
    os.makedirs(tp.RESULTS_DIR, exist_ok=True)
    base = os.path.join(tp.RESULTS_DIR, "multilevel-%s-%s" % (host, stamp))
    cols = [(c, (lambda c: lambda r: ("%.6g" % r[c]) if isinstance(r.get(c), float) else r.get(c, ""))(c))
            for c in ("case", "config", "tol", "repeats", "reached", "seconds_median", "seconds_min", "seconds_max", "iterations_median", "limit",
                      "diverged", "peak_rss_mib_median")]
    tp.write_csv(base + ".csv", head, table, cols)
    rows = [{"case": case, "config": n, "repeat": 1, "iteration": it, "seconds": r["curve"][it][0], "relative": r["curve"][it][1]}
            for (case, n), runs in sorted(results.items()) for r in runs[:1] for it in curve_sample(len(r["curve"]))]
    tp.write_csv(base.replace("multilevel-", "multilevel-curves-", 1) + ".csv", head, rows,
                 [(c, (lambda c: lambda r: r[c])(c)) for c in ("case", "config", "repeat", "iteration", "seconds", "relative")])
    for case in cases:
        plot(base.replace("multilevel-", "multilevel-%s-" % case, 1) + ".png", case, results, names_of[case],
             "%s, frame 1, %s x %d thread(s), %s" % (case, "%d rank(s)" % (args.ranks_128 if case == "box128" else args.ranks), args.threads,
                                                      machine["cpu_model"]))
    print("results: %s.csv (+ curves, plots)" % base)
    if not args.out:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
