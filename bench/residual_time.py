#!/usr/bin/python3
"""PBNG against the PETSc Newton baseline: relative residual against wall time (issue 4).

Not a test: it prints tables and writes CSV files and PNG plots.

Scene: the paper's box stretch-and-twist at Res-R (default 32), quasistatic.  Two frames are solved:
  first  frame 1 from the rest shape;
  later  frame K (default 10, the most twisted frame of the main job), started from frame K-1 of a
         reference run (Newton to relative residual 1e-10, made once per invocation and read with
         `-initial REF -initial_frame K-1`), so every configuration starts from the same state.
Configurations: PBNG plain / SOR / Chebyshev (paper's parameters) and Newton with each linear-solver
preset (gamg, hypre, bjacobi_icc), with Eisenstat-Walker (-newton_snes_ksp_ew), and with the PSD
projection through dP/dF (-newton_projection stress).  Each run uses
`-monitor`: the residual after every iteration with the cumulative wall time of the iterations alone
(residual evaluations and output excluded, identically for both methods).  PBNG runs stop at the
tolerance or after --pbng-budget seconds of iterations (-time_budget), Newton runs at the tolerance or
after --newton-budget seconds.  Times to reach relative residual 1e-1, 1e-2, 1e-3, 1e-6 are the first
monitored iterate at or below the tolerance; the table gives medians over --repeats runs (configurations
interleaved, repeat loop outermost) and the speed-up of the best PBNG over the best Newton at each
tolerance (target: >= 6x at 1e-2 and 1e-3).

Fixed-budget regime (paper Fig. 3): all F frames (default 10) with the same small time budget per frame
(--fixed-budget seconds of iterations, at least one iteration) for every configuration; per frame the
relative residual reached, and whether the run stayed finite and below its starting residual.

Results in bench/results/: residual_time-<host>-<stamp>.csv (table), residual_time-curves-...csv
(every monitored iterate), residual_time-fixed-...csv, residual_time-<host>-<stamp>.png and
residual_time-fixed-<host>-<stamp>.png.  Standard library + matplotlib (for the plots); run with
/usr/bin/python3.  See bench/README.md.
"""

import argparse
import datetime
import math
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
import throughput as tp  # noqa: E402  (machine info, binary lookup, CSV writing)

TOLERANCES = (1e-1, 1e-2, 1e-3, 1e-6)
TARGET_SPEEDUP = 6.0
TARGET_TOLS = (1e-2, 1e-3)

CONFIGS = {
    "pbng_none": ["-solver", "pbng", "-accel", "none"],
    "pbng_sor": ["-solver", "pbng", "-accel", "sor"],
    "pbng_chebyshev": ["-solver", "pbng", "-accel", "chebyshev"],
    "newton_gamg": ["-solver", "newton", "-newton_preconditioner", "gamg"],
    "newton_hypre": ["-solver", "newton", "-newton_preconditioner", "hypre"],
    "newton_bjacobi_icc": ["-solver", "newton", "-newton_preconditioner", "bjacobi_icc"],
    "newton_bjacobi_icc_ew": ["-solver", "newton", "-newton_preconditioner", "bjacobi_icc", "-newton_snes_ksp_ew"],
    "newton_bjacobi_icc_stress": ["-solver", "newton", "-newton_preconditioner", "bjacobi_icc", "-newton_projection", "stress"],
    "newton_hypre_stress": ["-solver", "newton", "-newton_preconditioner", "hypre", "-newton_projection", "stress"],
}

ITER_LINE = re.compile(r"^\s+frame (\d+) iter\s+(\d+)\s+residual (\S+)\s+relative (\S+)\s+energy \S+(?:\s+(\S+) s)?(?:\s+linear (\d+))?")
FRAME_LINE = re.compile(r"^frame\s+(\d+)/\d+\s+iters\s+(\d+)(?:\s+linear\s+(\d+))?\s+rel\.residual (\S+)\s+residual (\S+)\s+(\S+) s")


class BenchError(Exception):
    pass


def is_newton(name):
    return name.startswith("newton")


def run(cmd, log, tolerated=None):
    """The command's output (also written to log); a failure is an error unless its output holds `tolerated`."""
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    text = open(log).read()
    if p.returncode != 0 and not (tolerated and tolerated in text):
        raise BenchError("command failed (exit %d), log %s:\n%s" % (p.returncode, log, text[-3000:]))
    return text


def base_command(args, pbng):
    launch = []
    if args.ranks > 1:
        launch = [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none"]
    return launch + [pbng, "-scene", "box_stretch_twist", "-res", str(args.res), "-threads", str(args.threads)]


def make_reference(args, pbng, scratch):
    """Frames 1..K-1 with Newton to 1e-10: the common start of the later frame."""
    ref = os.path.join(scratch, "reference.h5")
    cmd = base_command(args, pbng) + ["-frames", str(args.later_frame - 1), "-solver", "newton", "-iters", "100", "-rtol", "1e-10",
                                      "-residual_every", "1", "-output", ref]
    print("reference: frames 1..%d with Newton to 1e-10 ..." % (args.later_frame - 1), flush=True)
    run(cmd, os.path.join(scratch, "reference.log"))
    return ref


def parse_curve(text):
    """[(seconds, relative, linear)] of the monitored iterates (iterate 0 at 0 s)."""
    curve = []
    for line in text.splitlines():
        m = ITER_LINE.match(line)
        if m:
            seconds = float(m.group(5)) if m.group(5) else 0.0
            curve.append((seconds, float(m.group(4)), int(m.group(6)) if m.group(6) else 0))
    return curve


def time_to(curve, tol):
    """(seconds, iterations) of the first iterate at or below tol, or None."""
    for k, (s, rel, _) in enumerate(curve):
        if math.isfinite(rel) and rel <= tol:
            return s, k
    return None


def solve_frame(args, pbng, scratch, name, kind, ref, rep):
    stem = os.path.join(scratch, "%s-%s-%d" % (name, kind, rep))
    budget = args.newton_budget if is_newton(name) else args.pbng_budget
    cmd = base_command(args, pbng) + CONFIGS[name] + ["-frames", "1", "-monitor", "-iters", "1000000", "-rtol", str(min(TOLERANCES)),
                                                       "-time_budget", str(budget), "-output", stem + ".h5"]
    if kind == "later":
        cmd += ["-initial", ref, "-initial_frame", str(args.later_frame - 1)]
    curve = parse_curve(run(cmd, stem + ".log"))
    if len(curve) < 2:
        raise BenchError("%s: no monitored iterations in %s.log" % (name, stem))
    return curve


def fixed_budget(args, pbng, scratch, name):
    stem = os.path.join(scratch, "%s-fixed" % name)
    cmd = base_command(args, pbng) + CONFIGS[name] + ["-frames", str(args.fixed_frames), "-iters", "1000000",
                                                       "-time_budget", str(args.fixed_budget), "-output", stem + ".h5"]
    frames = []
    try:
        text = run(cmd, stem + ".log")
        ok = True
    except BenchError as e:
        text, ok = open(stem + ".log").read(), False
        print("  %s: fixed-budget run failed: %s" % (name, str(e).splitlines()[0]))
    for line in text.splitlines():
        m = FRAME_LINE.match(line)
        if m:
            frames.append({"frame": int(m.group(1)), "iterations": int(m.group(2)), "linear": int(m.group(3) or 0),
                           "relative": float(m.group(4)), "residual": float(m.group(5)), "seconds": float(m.group(6))})
    return ok, frames


def summarize(curves):
    """Per (config, kind, tol): median seconds and iterations over the repeats that reached tol."""
    table = []
    for (name, kind), runs in sorted(curves.items()):
        for tol in TOLERANCES:
            hits = [time_to(c, tol) for c in runs]
            reached = [h for h in hits if h is not None]
            row = {"config": name, "frame": kind, "tol": tol, "repeats": len(runs), "reached": len(reached)}
            if len(reached) == len(runs):
                row["seconds_median"] = statistics.median(h[0] for h in reached)
                row["seconds_min"] = min(h[0] for h in reached)
                row["seconds_max"] = max(h[0] for h in reached)
                row["iterations_median"] = statistics.median(h[1] for h in reached)
            else:
                row["limit"] = min(max(c[-1][0] for c in runs), 1e300)
            table.append(row)
    return table


def best(table, kind, tol, newton):
    rows = [r for r in table if r["frame"] == kind and r["tol"] == tol and is_newton(r["config"]) == newton and "seconds_median" in r]
    return min(rows, key=lambda r: r["seconds_median"]) if rows else None


def fmt_time(row):
    if "seconds_median" in row:
        return "%.3g s (%g it)" % (row["seconds_median"], row["iterations_median"])
    return "not in %.0f s" % row["limit"]


def print_table(table, kinds):
    names = sorted({r["config"] for r in table}, key=list(CONFIGS).index)
    verdicts = []
    for kind in kinds:
        print("\n%s frame: median time (iterations) to reach the relative residual" % kind)
        print("%-24s" % "configuration" + "".join("%20s" % ("%g" % t) for t in TOLERANCES))
        for name in names:
            cells = [next(r for r in table if r["config"] == name and r["frame"] == kind and r["tol"] == t) for t in TOLERANCES]
            print("%-24s" % name + "".join("%20s" % fmt_time(c) for c in cells))
        for tol in TOLERANCES:
            p, n = best(table, kind, tol, False), best(table, kind, tol, True)
            if p and n:
                ratio = n["seconds_median"] / p["seconds_median"]
                line = "  %g: best PBNG %s %.3g s, best Newton %s %.3g s: PBNG %.1fx sooner" % (
                    tol, p["config"], p["seconds_median"], n["config"], n["seconds_median"], ratio)
                if tol in TARGET_TOLS:
                    met = ratio >= TARGET_SPEEDUP
                    line += " (target >= %gx: %s)" % (TARGET_SPEEDUP, "met" if met else "NOT met")
                    verdicts.append((kind, tol, ratio, met))
            else:
                line = "  %g: %s" % (tol, "no PBNG configuration reached it" if not p else "no Newton configuration reached it")
                if tol in TARGET_TOLS:
                    verdicts.append((kind, tol, None, bool(p and not n)))
            print(line)
    return verdicts


def pyplot():
    """matplotlib.pyplot with the file-only backend, or None (with a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("matplotlib not available: no plot")
        return None


def plot(path, curves, kinds, title):
    plt = pyplot()
    if not plt:
        return
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 4.8), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        for name in CONFIGS:
            runs = curves.get((name, kind))
            if not runs:
                continue
            c = runs[0]
            t = [max(s, 1e-4) for s, _, _ in c]
            ax.loglog(t, [max(r, 1e-300) for _, r, _ in c], ("--" if is_newton(name) else "-"), label=name, marker="." if is_newton(name) else None)
        for tol in TOLERANCES:
            ax.axhline(tol, color="0.85", lw=0.8, zorder=0)
        ax.set_xlabel("wall time of the iterations [s]")
        ax.set_ylabel("relative residual")
        ax.set_title("%s frame" % kind)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot: %s" % path)


def plot_fixed(path, fixed, title):
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    for name, (_, frames) in fixed.items():
        if frames:
            ax.semilogy([f["frame"] for f in frames], [max(f["relative"], 1e-300) for f in frames], ("--o" if is_newton(name) else "-s"),
                        label="%s (%.2g s/frame)" % (name, statistics.median(f["seconds"] for f in frames)), ms=3)
    ax.set_xlabel("frame")
    ax.set_ylabel("relative residual at the end of the frame")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot: %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--res", type=int, default=32)
    ap.add_argument("--later-frame", type=int, default=10, help="the later frame K (started from frame K-1 of the reference)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of: " + ", ".join(CONFIGS))
    ap.add_argument("--pbng-budget", type=float, default=20.0, help="seconds of iterations per PBNG frame (default 20)")
    ap.add_argument("--newton-budget", type=float, default=120.0, help="seconds of iterations per Newton frame (default 120)")
    ap.add_argument("--fixed-budget", type=float, default=0.1, help="fixed-budget regime: seconds per frame (default 0.1)")
    ap.add_argument("--fixed-frames", type=int, default=10)
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed-budget regime")
    ap.add_argument("--tag", default="", help="extra word in the result file names")
    ap.add_argument("--reference", default="", help="reuse this reference result (frames 0..K-1 of the same Res) instead of computing it")
    tp.add_run_options(ap)
    tp.add_out_option(ap)
    args = ap.parse_args()
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown or args.later_frame < 2 or args.repeats < 1:
        ap.error("unknown configurations %s or --later-frame < 2 or --repeats < 1" % unknown)
    pbng = tp.find_pbng(args.pbng)
    if not pbng:
        return 2
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    scratch = args.out or tempfile.mkdtemp(prefix="pbng-residual-time-")
    os.makedirs(scratch, exist_ok=True)
    machine = tp.machine_info()
    commit, _ = tp.git_commit(tp.REPO)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0] + (("-" + args.tag) if args.tag else "")
    print("machine: %s, %s cores, %s; %s; commit %s; load %s" % (machine["cpu_model"], machine["nproc"], machine["memory"], machine["os"],
                                                                commit, tp.load_average()))
    kinds = ["first", "later"]
    try:
        ref = os.path.abspath(args.reference) if args.reference else make_reference(args, pbng, scratch)
        curves = {}
        for rep in range(args.repeats):
            for kind in kinds:
                for name in names:
                    c = solve_frame(args, pbng, scratch, name, kind, ref, rep)
                    curves.setdefault((name, kind), []).append(c)
                    reached = [("%g:%.3gs" % (t, time_to(c, t)[0])) if time_to(c, t) else ("%g:-" % t) for t in TOLERANCES]
                    print("  repeat %d %-6s %-24s %4d iterations, %.3g s, final %.2e  [%s]" % (
                        rep + 1, kind, name, len(c) - 1, c[-1][0], c[-1][1], " ".join(reached)), flush=True)
        fixed = {}
        if not args.no_fixed:
            print("\nfixed budget: %g s per frame, %d frames" % (args.fixed_budget, args.fixed_frames))
            for name in names:
                fixed[name] = fixed_budget(args, pbng, scratch, name)
                ok, frames = fixed[name]
                rels = [f["relative"] for f in frames]
                stable = ok and len(frames) == args.fixed_frames and all(math.isfinite(r) and r < 1 for r in rels)
                print("  %-24s %s; s/frame median %.3g; iterations/frame %s; relative residual per frame %s" % (
                    name, "stable" if stable else "UNSTABLE or failed", statistics.median(f["seconds"] for f in frames) if frames else float("nan"),
                    ",".join(str(f["iterations"]) for f in frames), " ".join("%.1e" % r for r in rels)))
    except BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    table = summarize(curves)
    verdicts = print_table(table, kinds)

    head = ["pbng residual against time (bench/residual_time.py), %s" % datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine: %s, %s cores, %s, %s, %s" % (machine["cpu_model"], machine["nproc"], machine["memory"], machine["os"], machine["compiler"]),
            "commit %s, build %s, pbng %s" % (commit, tp.build_type(pbng), tp.binary_id(pbng)),
            "command: %s" % " ".join(shlex.quote(a) for a in sys.argv),
            "scene box_stretch_twist Res-%d, %d rank(s) x %d thread(s); first frame = frame 1; later frame = frame %d from the Newton "
            "reference of frames 1..%d; PBNG budget %g s, Newton budget %g s; %d repeats" % (
                args.res, args.ranks, args.threads, args.later_frame, args.later_frame - 1, args.pbng_budget, args.newton_budget, args.repeats)]
    head += ["target: best PBNG reaches %s at least %gx sooner than best Newton: %s" % (
        " and ".join("%g" % t for t in TARGET_TOLS), TARGET_SPEEDUP,
        "; ".join("%s %g: %s%s" % (k, t, ("%.1fx " % r) if r else "", "met" if m else "NOT met") for k, t, r, m in verdicts))]
    os.makedirs(tp.RESULTS_DIR, exist_ok=True)
    base = os.path.join(tp.RESULTS_DIR, "residual_time-%s-%s" % (host, stamp))
    cols = [(c, (lambda c: lambda r: ("%.6g" % r[c]) if isinstance(r.get(c), float) else r.get(c, ""))(c))
            for c in ("config", "frame", "tol", "repeats", "reached", "seconds_median", "seconds_min", "seconds_max", "iterations_median", "limit")]
    tp.write_csv(base + ".csv", head, table, cols)
    rows = [{"config": n, "frame": k, "repeat": i + 1, "iteration": it, "seconds": s, "relative": r, "linear": lin}
            for (n, k), runs in sorted(curves.items()) for i, c in enumerate(runs) for it, (s, r, lin) in enumerate(c)]
    tp.write_csv(base.replace("residual_time-", "residual_time-curves-") + ".csv", head, rows,
                 [(c, (lambda c: lambda r: r[c])(c)) for c in ("config", "frame", "repeat", "iteration", "seconds", "relative", "linear")])
    if fixed:
        frows = [dict(f, config=n, ok=int(ok)) for n, (ok, frames) in fixed.items() for f in frames]
        tp.write_csv(base.replace("residual_time-", "residual_time-fixed-") + ".csv", head + ["fixed budget %g s per frame" % args.fixed_budget],
                     frows, [(c, (lambda c: lambda r: r[c])(c)) for c in ("config", "ok", "frame", "iterations", "linear", "relative", "residual", "seconds")])
        plot_fixed(base.replace("residual_time-", "residual_time-fixed-") + ".png", fixed,
                   "Res-%d stretch-twist, %g s per frame (PBNG) / at least one step (Newton)" % (args.res, args.fixed_budget))
    plot(base + ".png", curves, kinds, "Res-%d box stretch-twist, %d rank(s) x %d thread(s), %s" % (args.res, args.ranks, args.threads, machine["cpu_model"]))
    print("results: %s.csv (+ curves, fixed)" % base)
    if not args.out:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
