#!/usr/bin/python3
"""The seed's stable-constraint experiment (xpbd-high-order-elements.txt, Sec. 5.3, Fig. 9, Table 3
"Stable constraint"; issue 16): a 3 x 1 x 1 beam clamped at x = 0 under gravity (0, -9.8, 0), rho = 100,
nu = 0.49, E = 1e5, P2 tetrahedra (6 x 2 x 2 cells, five per cell: 120 elements, 301 nodes; the seed
gives no mesh size), pbng's neohookean (Smith et al.'s stable form, Psi = mu/2 I2 + lh/2 (J - gamma)^2).
The seed's XPBD (-solver xpbd_ho, one sweep per substep) with the stable split (Eq. 24-28) and
Macklin's (-xpbd_ho_split macklin) at 20, 50, 100 substeps per frame of 1/60 s, against the FEM
equilibrium of the same mesh (Newton, relative residual 1e-10). Error = distance between the
displacements of the centre of the free end (3, 0.5, 0.5). The seed's claim: the stable split is
close to the reference with 20 substeps, Macklin's is far even with 100.

Two measurements per split and substep count:
- dynamic: the seed's loop from rest for --seconds of simulated time. pbng's xpbd_ho has no damping,
  so the beam swings without settling (settled: the tip moves < 1e-5 over each of 60 frames); the
  table gives the last frame's error, the error range over the last 3 s and the error of the tip's mean
  position over them (the centre of the swing);
- at rest: where the loop comes to rest: a rest state of the loop (v = 0, x unchanged by a substep) is
  a fixed point of zero-velocity pseudo steps of the substep length h = (1/60)/N, so these are run from
  the Newton equilibrium for --rest-seconds (seedlib.xpbd_at_rest_args); reported: the tip error, the
  tip's move over the last simulated second (0 = at rest) and the FEM residual of the state over that
  of the undeformed beam.

    /usr/bin/python3 bench/seed_high_order/stable_constraint.py [--quick] [--threads 2]

Results: bench/results/seed-stable_constraint-<host>-<stamp>.csv (+ -curves.csv, + .png).
"""
import sys
import numpy as np
import seedlib as sl

TIP = np.array([3.0, 0.5, 0.5])
BEAM = ["-scene", "bar_gravity", "-bar_length", "3", "-youngs", "1e5", "-poisson", "0.49", "-density", "100",
        "-material", "neohookean", "-element", "tet10", "-cells", "6,2,2"]
SUBSTEPS = [20, 50, 100]
SPLITS = ["stable", "macklin"]
SETTLE_TOL, SETTLE_FRAMES, LAST_SECONDS = 1e-5, 60, 3.0


def tip(path):
    """Tip displacement per frame (frame 0 included) and the result."""
    r = sl.read(path)
    i = sl.node_at(r["X"], TIP)
    return [fr["x"][i] - r["X"][i] for fr in r["frames"]], r


def dynamic(b, split, n, seconds, ref_tip, curves):
    frames = int(round(seconds / sl.FRAME_DT))
    path, cmd = b.run(BEAM + ["-solver", "xpbd_ho", "-mode", "dynamic", "-xpbd_ho_split", split, "-dt", repr(sl.FRAME_DT),
                              "-xpbd_ho_substeps", str(n), "-frames", str(frames)], "dyn-%s-%d" % (split, n))
    disp, r = tip(path)
    err = [float(np.linalg.norm(d - ref_tip)) for d in disp]
    curves += [(split, n, k * sl.FRAME_DT, disp[k][1], err[k]) for k in range(len(disp))]
    last = int(round(LAST_SECONDS / sl.FRAME_DT))
    return dict(split=split, substeps=n, run="dynamic", final_error=err[-1], settled_frame=sl.settled_at(disp, SETTLE_TOL, SETTLE_FRAMES),
                error_min_last=min(err[-last:]), error_max_last=max(err[-last:]),
                mean_tip_error_last=float(np.linalg.norm(np.mean(disp[-last:], axis=0) - ref_tip)),
                ms_per_frame=1e3 * sl.median([fr["seconds"] for fr in r["frames"][1:]]), command=" ".join(cmd))


def at_rest(b, split, n, seconds, newton, ref_tip, r0):
    path, cmd = b.run(BEAM + sl.xpbd_at_rest_args(newton, n, split, frames=seconds), "rest-%s-%d" % (split, n))
    disp, r = tip(path)
    return dict(split=split, substeps=n, run="at_rest", final_error=float(np.linalg.norm(disp[-1] - ref_tip)),
                moved_last_second=float(np.linalg.norm(disp[-1] - disp[-2])), relative_residual=r["frames"][-1]["residual"] / r0,
                command=" ".join(cmd))


def plot(base, curves, rows, ref_tip):
    plt = sl.pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
    for split, n in dict.fromkeys((c[0], c[1]) for c in curves):
        pts = [c for c in curves if (c[0], c[1]) == (split, n)]
        ax.plot([p[2] for p in pts], [p[3] for p in pts], "-" if split == "stable" else "--", lw=0.8, label="%s, %d substeps" % (split, n))
    ax.axhline(ref_tip[1], color="red", label="FEM equilibrium (Newton)")
    ax.set_xlabel("simulated seconds"), ax.set_ylabel("tip y displacement [m]"), ax.legend(fontsize=6)
    ax.set_title("dynamic, from rest (no damping in xpbd_ho)", fontsize=9)
    for split in SPLITS:
        pts = [r for r in rows if r["split"] == split and r["run"] == "at_rest"]
        bx.loglog([r["substeps"] for r in pts], [r["final_error"] for r in pts], "o-", label="%s: tip error at rest" % split)
    bx.set_xlabel("substeps per frame"), bx.set_ylabel("tip error vs FEM [m]"), bx.legend(fontsize=7)
    bx.set_title("where the loop comes to rest", fontsize=9)
    fig.tight_layout(), fig.savefig(base + ".png", dpi=120)


def main():
    ap = sl.parser(__doc__)
    ap.set_defaults(repeats=1)
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated seconds of the dynamic runs")
    ap.add_argument("--rest-seconds", type=int, default=10, help="simulated seconds of pseudo steps of the at-rest runs")
    a = ap.parse_args()
    if a.quick:
        a.seconds, a.rest_seconds = 1.0, 2
    b = sl.Bench("stable_constraint", a)
    newton, cmd = b.run(BEAM + ["-frames", "1"] + sl.NEWTON, "newton")
    disp, r = tip(newton)
    ref_tip, r0 = disp[-1], r["frames"][1]["residual"] / r["frames"][1]["relative_residual"]
    b.head.append("# reference: %s; tip %s" % (" ".join(cmd), np.array2string(ref_tip, precision=9)))
    print("FEM equilibrium (Newton, P2): tip displacement %s, relative residual %.1e" % (np.array2string(ref_tip, precision=6),
                                                                                        r["frames"][-1]["relative_residual"]))
    rows, curves = [], []
    for split in SPLITS:
        for n in SUBSTEPS:
            d = dynamic(b, split, n, a.seconds, ref_tip, curves)
            s = at_rest(b, split, n, a.rest_seconds, newton, ref_tip, r0)
            rows += [d, s]
            print("%-7s %3d substeps  dynamic %.0f s: %s, last error %.3e, last %.0f s: %.3e..%.3e, mean position's %.3e (%.2f ms/frame)"
                  "  |  at rest: error %.3e, moved %.1e over the last second, residual %.2e of the undeformed beam's"
                  % (split, n, a.seconds, "settled at frame %d" % d["settled_frame"] if d["settled_frame"] is not None else "not settled",
                     d["final_error"], LAST_SECONDS, d["error_min_last"], d["error_max_last"], d["mean_tip_error_last"], d["ms_per_frame"],
                     s["final_error"], s["moved_last_second"], s["relative_residual"]), flush=True)
    b.finish(rows, ["split", "substeps", "run", "final_error", "settled_frame", "error_min_last", "error_max_last", "mean_tip_error_last",
                    "ms_per_frame", "moved_last_second", "relative_residual", "command"], curves,
             ("split,substeps,simulated_seconds,tip_y_displacement,tip_error", "%s,%d,%.6g,%.6e,%.6e"),
             lambda base: plot(base, curves, rows, ref_tip))


if __name__ == "__main__":
    sys.exit(main())
