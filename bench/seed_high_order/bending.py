#!/usr/bin/python3
"""The seed's bending test (xpbd-high-order-elements.txt, Sec. 5.1, Table 1, Table 3 "Bending"; issue
16): a 4 x 1 x 1 beam clamped at x = 0 sags under gravity (0, -9.8, 0) (E = 1 MPa, nu = 0.35,
rho = 1000, neo-Hookean), meshed with P1, P2, P3 tetrahedra (the seed's "unbiased" five-per-cell
split; Table 1's 1 280 / 10 240 / 81 920 P1, 160 P2, 80 P3) and Q2 hexahedra. Error = distance between
the displacement of the centre of the free end, (4, 0.5, 0.5), and the reference's (a Q2 beam solved
by Newton to relative residual 1e-10).

PBNG and Newton: the beam is solved as a series of frames of the same quasistatic problem, each
continuing from the last (-frames F -iters I -rtol 0): frame f holds the iterate after f*I iterations,
its `seconds` attribute the solver time of that frame (setup, residual evaluation and output
excluded). The time to reach an error is the summed solver time up to the first frame whose tip error
is at or below it (and stays there); medians of --repeats runs.

The seed's XPBD (-solver xpbd_ho, stable split): its own loop, dynamic from rest, 60 frames/s of 50
substeps of one sweep (Table 3), for --xpbd-seconds of simulated time (one run per mesh: its time is
the run's summed frame seconds, and ms/frame the median over its frames). The tip has settled at the
first frame from which it moves less than 1e-5 over each of the next 60 frames (one simulated
second: a single slow frame at a turning point of an oscillation does not count). pbng's xpbd_ho has
no damping, so the beam swings about its equilibrium without settling; the table then gives the last
frame's error, the range of the error over the last 3 s and the error of the tip's mean position over
those 3 s (the centre of the swing, not an equilibrium).

Target (issue 16): PBNG on P2 reaches tip error <= 1e-2 at least 5x sooner than PBNG on P1 reaches
<= 5e-2 (PBNG = its best configuration per mesh: multilevel, p-multigrid first for P2/P3).

    /usr/bin/python3 bench/seed_high_order/bending.py [--quick] [--repeats 3] [--threads 2]

Results: bench/results/seed-bending-<host>-<stamp>.csv (+ -curves.csv with every frame, + .png).
"""
import sys
import numpy as np
import seedlib as sl

TIP = np.array([4.0, 0.5, 0.5])
BEAM = ["-scene", "bar_gravity", "-youngs", "1e6", "-poisson", "0.35", "-density", "1000", "-material", "neohookean"]
SETTLE_TOL, SETTLE_FRAMES, LAST_SECONDS = 1e-5, 60, 3.0

# (label, element, cells, method, extra options, frames, iterations per frame)
CASES = [
    ("P1 1280", "tet4", "16,4,4", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P1 10240", "tet4", "32,8,8", "pbng_ml", ["-multilevel", "4"], 40, 1),
    ("P1 81920", "tet4", "64,16,16", "pbng_ml", ["-multilevel", "5"], 60, 1),
    ("P2 160", "tet10", "8,2,2", "pbng_ml", ["-multilevel", "2"], 40, 1),
    ("P2 1280", "tet10", "16,4,4", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P2 4320", "tet10", "24,6,6", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P3 80", "tet20", "4,2,2", "pbng_ml", ["-multilevel", "2"], 60, 1),
    ("P3 160", "tet20", "8,2,2", "pbng_ml", ["-multilevel", "3"], 60, 1),
    ("P2 160", "tet10", "8,2,2", "pbng_sor", ["-accel", "sor"], 60, 500),
    ("P1 1280", "tet4", "16,4,4", "pbng_sor", ["-accel", "sor"], 60, 500),
    ("Q2 32", "hex27", "8,2,2", "newton", ["-solver", "newton"], 40, 1),
    ("P1 10240", "tet4", "32,8,8", "newton", ["-solver", "newton"], 40, 1),
    ("P2 1280", "tet10", "16,4,4", "newton", ["-solver", "newton"], 40, 1),
    ("P3 160", "tet20", "8,2,2", "newton", ["-solver", "newton"], 60, 1),
]
QUICK = {("P1 1280", "pbng_ml"), ("P2 160", "pbng_ml"), ("Q2 32", "newton")}
# the seed's XPBD on Table 1's meshes: (label, element, cells)
# (label, element, cells, cap on the simulated seconds: P1 81920 costs ~3 s per frame, so it is run for its ms/frame only)
XPBD_CASES = [("P1 1280", "tet4", "16,4,4", None), ("P1 10240", "tet4", "32,8,8", None), ("P1 81920", "tet4", "64,16,16", 0.5),
              ("P2 160", "tet10", "8,2,2", None), ("P3 80", "tet20", "4,2,2", None)]
XPBD_QUICK = {"P1 1280", "P2 160"}


def tip_errors(path, ref_tip):
    """Per frame after frame 0: tip displacement, its error and the residual over the run's r0; the result."""
    r = sl.read(path)
    i = sl.node_at(r["X"], TIP)
    disp = [fr["x"][i] - r["X"][i] for fr in r["frames"][1:]]
    return disp, [float(np.linalg.norm(d - ref_tip)) for d in disp], sl.run_relative(r["frames"]), r


def reference_tip(b, cells, label):
    path, cmd = b.cached(BEAM + ["-element", "hex27", "-cells", cells] + sl.NEWTON + ["-frames", "1", "-iters", "200"], label)
    r = sl.read(path)
    i = sl.node_at(r["X"], TIP)
    return r["frames"][-1]["x"][i] - r["X"][i], r, cmd


def reference(b, cells):
    """The Q2 reference's tip displacement; its own error estimated from the Q2 beam of half the cells
    (Richardson with the measured rate ~2 of docs/high_order.md: |u_h - u_2h| / (2^2 - 1))."""
    tip, r, cmd = reference_tip(b, cells, "reference")
    coarse = ",".join(str(int(c) // 2) for c in cells.split(","))
    tip2 = reference_tip(b, coarse, "reference-coarse")[0]
    est = float(np.linalg.norm(tip - tip2)) / 3
    print("reference: Q2, %s cells (%d elements, %d nodes), tip displacement %s, relative residual %.1e; |u(%s) - u(%s)| / 3 = %.1e "
          "(its estimated error)" % (cells, r["elements"], len(r["X"]), np.array2string(tip, precision=6),
                                     r["frames"][-1]["relative_residual"], coarse, cells, est))
    b.head.append("# reference: %s; tip %s; estimated error %.1e (Q2 %s against %s, / 3)" % (" ".join(cmd), np.array2string(tip, precision=9),
                                                                                          est, coarse, cells))
    return tip


def solver_case(b, case, ref_tip, curves):
    """A PBNG or Newton case: medians over the repeats of the times to 1e-2 and 5e-2."""
    label, element, cells, method, extra, frames, iters = case
    args = BEAM + ["-element", element, "-cells", cells, "-frames", str(frames), "-iters", str(iters), "-rtol", "0"] + extra
    times = []
    for rep in range(b.a.repeats):
        path, cmd = b.run(args, "%s-%s-%d" % (label, method, rep))
        disp, err, rel, r = tip_errors(path, ref_tip)
        t = sl.cumulative_seconds(r["frames"])
        times.append((sl.time_to(t, err, 1e-2), sl.time_to(t, err, 5e-2), t[-1]))
        if rep == 0:
            curves += [(label, method, (k + 1) * iters, t[k], err[k], rel[k]) for k in range(len(err))]
            first = dict(elements=r["elements"], nodes=len(r["X"]), final_error=err[-1], final_relative_residual=rel[-1], command=" ".join(cmd))
    row = dict(label=label, element=element, cells=cells, method=method, t_1e2=sl.median([t[0] for t in times]),
               t_5e2=sl.median([t[1] for t in times]), total_seconds=sl.median([t[2] for t in times]), **first)
    print("%-9s %-6s %-9s %-9s %6d el %6d nodes  final error %.3e (rel. residual %.1e)  to 1e-2: %s s  to 5e-2: %s s"
          % (label, element, cells, method, row["elements"], row["nodes"], row["final_error"], row["final_relative_residual"],
             sl.fmt(row["t_1e2"], "%.3f"), sl.fmt(row["t_5e2"], "%.3f")), flush=True)
    return row


def xpbd_case(b, case, ref_tip, seconds, curves):
    """The seed's XPBD loop from rest: settling, final error, the last seconds' error band."""
    label, element, cells, cap = case
    frames = int(round(min(seconds, cap or seconds) / sl.FRAME_DT))
    args = BEAM + ["-element", element, "-cells", cells, "-solver", "xpbd_ho", "-mode", "dynamic", "-xpbd_ho_split", "stable",
                   "-dt", repr(sl.FRAME_DT), "-xpbd_ho_substeps", str(sl.SEED_SUBSTEPS), "-frames", str(frames)]
    path, cmd = b.run(args, "%s-xpbd" % label)
    disp, err, rel, r = tip_errors(path, ref_tip)
    t = sl.cumulative_seconds(r["frames"])
    curves += [(label, "xpbd_ho", (k + 1) * sl.SEED_SUBSTEPS, t[k], err[k], rel[k]) for k in range(len(err))]
    last = min(int(round(LAST_SECONDS / sl.FRAME_DT)), frames)
    settled = sl.settled_at([np.zeros(3)] + disp, SETTLE_TOL, SETTLE_FRAMES)
    row = dict(label=label, element=element, cells=cells, method="xpbd_ho", elements=r["elements"], nodes=len(r["X"]),
               final_error=err[-1], final_relative_residual=rel[-1],
               t_1e2=sl.time_to(t, err, 1e-2), t_5e2=sl.time_to(t, err, 5e-2), total_seconds=t[-1],
               simulated_seconds=frames * sl.FRAME_DT, settled_frame=settled,
               ms_per_frame=1e3 * sl.median([fr["seconds"] for fr in r["frames"][1:]]),
               error_min_last=min(err[-last:]), error_max_last=max(err[-last:]),
               mean_tip_error_last=float(np.linalg.norm(np.mean(disp[-last:], axis=0) - ref_tip)), command=" ".join(cmd))
    print("%-9s %-6s %-9s xpbd_ho   %6d el %6d nodes  %.0f s simulated in %.1f s (%.1f ms/frame): %s; final error %.3e, "
          "last %.0f s: error %.3e..%.3e, mean position's error %.3e"
          % (label, element, cells, row["elements"], row["nodes"], row["simulated_seconds"], row["total_seconds"], row["ms_per_frame"],
             "settled at frame %d" % settled if settled is not None else "not settled", row["final_error"], last * sl.FRAME_DT,
             row["error_min_last"], row["error_max_last"], row["mean_tip_error_last"]), flush=True)
    return row


def xpbd_rest_case(b, case, ref_tip, seconds):
    """Where the seed's loop comes to rest on this mesh: zero-velocity pseudo steps of its substep length
    from the mesh's Newton equilibrium (seedlib.xpbd_at_rest_args); the tip error there, the tip's move
    over the last simulated second (0 = at rest), and the Newton equilibrium's own tip error."""
    label, element, cells, _ = case
    args = BEAM + ["-element", element, "-cells", cells]
    newton, _ = b.cached(args + sl.NEWTON + ["-frames", "1"], "%s-newton-eq" % label)
    path, cmd = b.run(args + sl.xpbd_at_rest_args(newton, sl.SEED_SUBSTEPS, frames=seconds), "%s-xpbd-rest" % label)
    disp, err, _, r = tip_errors(path, ref_tip)
    fem = tip_errors(newton, ref_tip)[1][-1]
    row = dict(label=label, element=element, cells=cells, method="xpbd_ho_at_rest", elements=r["elements"], nodes=len(r["X"]),
               final_error=err[-1], fem_error=fem, moved_last_second=float(np.linalg.norm(np.diff([f["x"][sl.node_at(r["X"], TIP)] for f in r["frames"][-2:]], axis=0))),
               total_seconds=sum(fr["seconds"] for fr in r["frames"][1:]), simulated_seconds=float(seconds), command=" ".join(cmd))
    print("%-9s %-6s %-9s xpbd_ho at rest: tip error %.3e (the mesh's FEM equilibrium: %.3e), moved %.1e over the last second"
          % (label, element, cells, row["final_error"], fem, row["moved_last_second"]), flush=True)
    return row


def target(rows):
    best = lambda prefix, key: min((r[key] for r in rows if r["label"].startswith(prefix) and r["method"].startswith("pbng")
                                    and r[key] is not None), default=None)
    p2, p1 = best("P2", "t_1e2"), best("P1", "t_5e2")
    print("\nTarget: PBNG on P2 to tip error <= 1e-2 at least 5x sooner than PBNG on P1 to <= 5e-2")
    if p2 is None or p1 is None:
        print("  P2 best %s s, P1 best %s s: NOT DECIDED (a threshold never reached)" % (p2, p1))
    else:
        print("  P2 best %.3f s, P1 best %.3f s: %.1fx  %s" % (p2, p1, p1 / p2, "MET" if p1 >= 5 * p2 else "NOT MET"))


def plot(base, curves):
    plt = sl.pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5))
    for key in dict.fromkeys((c[0], c[1]) for c in curves):
        pts = [c for c in curves if (c[0], c[1]) == key]
        style = "-" if key[1].startswith("pbng_ml") else ":" if key[1] == "xpbd_ho" else "--"
        ax.loglog([p[3] for p in pts], [p[4] for p in pts], style, label="%s %s" % key)
        if key[1] == "xpbd_ho":
            bx.semilogy([p[2] / sl.SEED_SUBSTEPS * sl.FRAME_DT for p in pts], [p[4] for p in pts], label=key[0])
    for x in (ax, bx):
        x.axhline(1e-2, color="grey", lw=0.5), x.axhline(5e-2, color="grey", lw=0.5), x.legend(fontsize=6)
        x.set_ylabel("tip error [m]")
    ax.set_xlabel("solver seconds"), ax.set_title("seed bending beam: tip error vs wall time")
    bx.set_xlabel("simulated seconds"), bx.set_title("xpbd_ho (dynamic, 50 substeps, 60 frames/s)")
    fig.tight_layout(), fig.savefig(base + ".png", dpi=120)


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--reference-cells", default="32,8,8", help="cells of the Q2 reference beam")
    ap.add_argument("--xpbd-seconds", type=float, default=3.0, help="simulated seconds of the seed's XPBD runs")
    ap.add_argument("--rest-seconds", type=int, default=2, help="simulated seconds of pseudo steps of the at-rest XPBD runs")
    ap.add_argument("--only", default="", help="comma-separated label/method filter, e.g. 'P2 160/pbng_ml,P2 160/xpbd_ho'")
    a = ap.parse_args()
    if a.quick:
        a.reference_cells, a.repeats, a.xpbd_seconds, a.rest_seconds = "8,2,2", 1, min(a.xpbd_seconds, 1.0), 1
    b = sl.Bench("bending", a)
    keep = lambda label, method: (f"{label}/{method}" in a.only.split(",")) if a.only else (not a.quick or (label, method) in QUICK
                                                                                              or (method.startswith("xpbd_ho") and label in XPBD_QUICK))
    ref_tip = reference(b, a.reference_cells)
    rows, curves = [], []
    rows += [solver_case(b, c, ref_tip, curves) for c in CASES if keep(c[0], c[3])]
    rows += [xpbd_case(b, c, ref_tip, a.xpbd_seconds, curves) for c in XPBD_CASES if keep(c[0], "xpbd_ho")]
    rows += [xpbd_rest_case(b, c, ref_tip, a.rest_seconds) for c in XPBD_CASES if c[3] is None and keep(c[0], "xpbd_ho_at_rest")]
    target(rows)
    keys = ["label", "element", "cells", "method", "elements", "nodes", "final_error", "final_relative_residual", "t_1e2", "t_5e2",
            "total_seconds", "simulated_seconds", "settled_frame", "ms_per_frame", "error_min_last", "error_max_last",
            "mean_tip_error_last", "fem_error", "moved_last_second", "command"]
    b.finish(rows, keys, curves, ("label,method,iterations,seconds,tip_error,relative_residual", "%s,%s,%d,%.6g,%.6e,%.6e"),
             lambda base: plot(base, curves))


if __name__ == "__main__":
    sys.exit(main())
