#!/usr/bin/python3
"""The seed's bending test (xpbd-high-order-elements.txt, Table 1 and 3; issue 16): a 4 x 1 x 1 beam
clamped at x = 0 sags under gravity (E = 1 MPa, nu = 0.35, rho = 1000, neo-Hookean), meshed with P1,
P2, P3 tetrahedra (the seed's "unbiased" five-per-cell split) and Q2 hexahedra. Error = distance
between the displacement of the centre of the free end, (4, 0.5, 0.5), and the reference's (a Q2
beam solved by Newton to relative residual 1e-10).

Not a test: prints tables, writes CSV and a PNG. For every mesh and method the beam is solved as a
series of frames of the same quasistatic problem, each continuing from the last (-frames F -iters I
-rtol 0): frame f holds the iterate after f*I iterations, its `seconds` attribute the solver time of
that frame (setup, residual evaluation and output excluded). The time to reach an error is the
summed solver time up to the first frame whose tip error is at or below it (and stays there).

Target (issue 16): PBNG on P2 reaches tip error <= 1e-2 at least 5x sooner than PBNG on P1 reaches
<= 5e-2 (PBNG = its best configuration per mesh: multilevel, p-multigrid first for P2/P3).

Run with /usr/bin/python3 (numpy, h5py, matplotlib). Results: bench/results/seed-bending-<host>-<stamp>.csv
(+ -curves.csv with every frame, + .png).
"""
import argparse, datetime, os, platform, socket, statistics, subprocess, sys, tempfile
import numpy as np
import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(REPO, "bench", "results")
TIP = np.array([4.0, 0.5, 0.5])
BEAM = ["-scene", "bar_gravity", "-youngs", "1e6", "-poisson", "0.35", "-density", "1000", "-material", "neohookean"]

# (label, element, cells, method, extra options, frames, iterations per frame)
CASES = [
    ("P1 1280", "tet4", "16,4,4", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P1 10240", "tet4", "32,8,8", "pbng_ml", ["-multilevel", "4"], 40, 1),
    ("P1 81920", "tet4", "64,16,16", "pbng_ml", ["-multilevel", "5"], 40, 1),
    ("P2 160", "tet10", "8,2,2", "pbng_ml", ["-multilevel", "2"], 40, 1),
    ("P2 1280", "tet10", "16,4,4", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P2 4320", "tet10", "24,6,6", "pbng_ml", ["-multilevel", "3"], 40, 1),
    ("P3 80", "tet20", "4,2,2", "pbng_ml", ["-multilevel", "2"], 60, 1),
    ("P3 320", "tet20", "8,2,2", "pbng_ml", ["-multilevel", "3"], 60, 1),
    ("P2 160", "tet10", "8,2,2", "pbng_sor", ["-accel", "sor"], 60, 500),
    ("P1 1280", "tet4", "16,4,4", "pbng_sor", ["-accel", "sor"], 60, 500),
    ("Q2 32", "hex27", "8,2,2", "newton", ["-solver", "newton"], 40, 1),
    ("P1 10240", "tet4", "32,8,8", "newton", ["-solver", "newton"], 40, 1),
    ("P2 1280", "tet10", "16,4,4", "newton", ["-solver", "newton"], 40, 1),
    ("P3 320", "tet20", "8,2,2", "newton", ["-solver", "newton"], 60, 1),
]


def run(pbng, args, out, threads):
    cmd = [pbng] + BEAM + args + ["-threads", str(threads), "-output", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("failed: %s\n%s" % (" ".join(cmd), p.stdout[-2000:] + p.stderr[-2000:]))
    return cmd


def tip_series(path):
    """Per frame: (cumulative solver seconds, tip displacement, relative residual)."""
    with h5py.File(path, "r") as f:
        X = f["mesh/rest_positions"][...]
        i = int(np.argmin(np.linalg.norm(X - TIP, axis=1)))
        if np.linalg.norm(X[i] - TIP) > 1e-12:
            raise RuntimeError("%s: no node at the tip point" % path)
        out, t = [], 0.0
        for name in sorted(f["frames"]):
            if name == "000000":
                continue
            g = f["frames"][name]
            t += float(g.attrs["seconds"])
            out.append((t, g["positions"][i] - X[i], float(g.attrs["relative_residual"])))
        return out, len(X), f["mesh/elements" if "mesh/elements" in f else "mesh/tetrahedra"].shape[0]


def time_to(series, err, threshold):
    """Summed time at the first frame from which the error stays <= threshold (None: never)."""
    for k in range(len(series)):
        if all(e <= threshold for e in err[k:]):
            return series[k][0]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per case (median reported)")
    ap.add_argument("--reference-cells", default="32,8,8", help="cells of the Q2 reference beam")
    ap.add_argument("--only", default="", help="comma-separated labels+method filter, e.g. 'P2 160/pbng_ml'")
    a = ap.parse_args()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname()
    os.makedirs(RESULTS, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="seed-bending-")
    ref_path = os.path.join(tmp, "reference.h5")
    ref_cmd = run(a.pbng, ["-element", "hex27", "-cells", a.reference_cells, "-solver", "newton", "-frames", "1", "-iters", "200",
                           "-rtol", "1e-10", "-residual_every", "1"], ref_path, a.threads)
    ref_series, ref_nodes, ref_elems = tip_series(ref_path)
    ref_tip = ref_series[-1][1]
    print("reference: Q2, %s cells (%d elements, %d nodes), tip displacement %s, relative residual %.1e"
          % (a.reference_cells, ref_elems, ref_nodes, np.array2string(ref_tip, precision=6), ref_series[-1][2]))
    rows, curves = [], []
    for label, element, cells, method, extra, frames, iters in CASES:
        if a.only and ("%s/%s" % (label, method)) not in a.only.split(","):
            continue
        args = ["-element", element, "-cells", cells, "-frames", str(frames), "-iters", str(iters), "-rtol", "0"] + extra
        times = []
        for r in range(a.repeats):
            path = os.path.join(tmp, "%s-%s-%d.h5" % (label.replace(" ", "_"), method, r))
            cmd = run(a.pbng, args, path, a.threads)
            series, nodes, elems = tip_series(path)
            err = [float(np.linalg.norm(s[1] - ref_tip)) for s in series]
            times.append((time_to(series, err, 1e-2), time_to(series, err, 5e-2), series[-1][0]))
            if r == 0:
                for k, s in enumerate(series):
                    curves.append((label, method, (k + 1) * iters, s[0], err[k], s[2]))
                final_err, final_res = err[-1], series[-1][2]
        med = lambda k: (statistics.median([t[k] for t in times]) if all(t[k] is not None for t in times) else None)
        row = dict(label=label, element=element, cells=cells, method=method, elements=elems, nodes=nodes, final_error=final_err,
                   final_relative_residual=final_res, t_1e2=med(0), t_5e2=med(1), total_seconds=med(2), command=" ".join(cmd))
        rows.append(row)
        fmt = lambda v: "%.3f" % v if v is not None else "never"
        print("%-9s %-6s %-9s %-9s %6d el %6d nodes  final error %.3e (last frame rel. residual %.1e)  to 1e-2: %s s  to 5e-2: %s s"
              % (label, element, cells, method, elems, nodes, final_err, final_res, fmt(row["t_1e2"]), fmt(row["t_5e2"])))
    best = lambda prefix, key: min((r[key] for r in rows if r["label"].startswith(prefix) and r["method"].startswith("pbng") and r[key] is not None),
                                   default=None)
    p2, p1 = best("P2", "t_1e2"), best("P1", "t_5e2")
    print("\nTarget: PBNG on P2 to tip error <= 1e-2 at least 5x sooner than PBNG on P1 to <= 5e-2")
    if p2 is None or p1 is None:
        print("  P2 best %s s, P1 best %s s: NOT DECIDED (a threshold never reached)" % (p2, p1))
    else:
        print("  P2 best %.3f s, P1 best %.3f s: %.1fx  %s" % (p2, p1, p1 / p2, "MET" if p1 >= 5 * p2 else "NOT MET"))
    base = os.path.join(RESULTS, "seed-bending-%s-%s" % (host, stamp))
    head = ["# seed bending benchmark (bench/seed_high_order/bending.py), %s, %s, %s, threads %d, repeats %d" %
            (stamp, host, platform.processor() or platform.machine(), a.threads, a.repeats),
            "# reference: %s; tip %s" % (" ".join(ref_cmd), np.array2string(ref_tip, precision=9))]
    with open(base + ".csv", "w") as f:
        f.write("\n".join(head) + "\n")
        keys = list(rows[0].keys())
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join('"%s"' % r[k] if k == "command" else str(r[k]) for k in keys) + "\n")
    with open(base + "-curves.csv", "w") as f:
        f.write("\n".join(head) + "\nlabel,method,iterations,seconds,tip_error,relative_residual\n")
        for c in curves:
            f.write("%s,%s,%d,%.6g,%.6e,%.6e\n" % c)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for key in dict.fromkeys((c[0], c[1]) for c in curves):
            pts = [(c[3], c[4]) for c in curves if (c[0], c[1]) == key]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "-" if key[1].startswith("pbng_ml") else "--", label="%s %s" % key)
        ax.axhline(1e-2, color="grey", lw=0.5), ax.axhline(5e-2, color="grey", lw=0.5)
        ax.set_xlabel("solver seconds"), ax.set_ylabel("tip error [m]"), ax.legend(fontsize=6), ax.set_title("seed bending beam")
        fig.savefig(base + ".png", dpi=120)
    except ImportError:
        pass
    print("results: %s.csv, %s-curves.csv, %s.png" % (base, base, base))


if __name__ == "__main__":
    sys.exit(main())
