#!/usr/bin/python3
"""Element kinds at equal node counts (issue 16, the seed's scaling experiment, Sec. 5.2 / Fig. 8, and
the throughput figures): the Res-N unit cube stretched and twisted (box_stretch_twist, neo-Hookean)
meshed with every generated kind at about the same number of nodes, a fixed number of iterations of
PBNG and of the seed's XPBD (-solver xpbd_ho, quasistatic pseudo steps of the seed's substep length
1/3000 s: the same sweep as its dynamic substeps). Reports per kind and solver the time per iteration,
element visits/s, quadrature-point visits/s and peak memory, medians of --repeats runs with the kinds
interleaved (repeat loop outermost).

Work units: a PBNG iteration visits every element from each of its nodes (its node steps), so
element visits = nodes per element x elements x iterations, and quadrature-point visits = element
visits x quadrature points (the work unit of the per-quadrature-point kernels; pbng's summary). An
xpbd_ho sweep projects every element's two constraints once, each evaluating F at every quadrature
point: for it the table gives element updates (elements x iterations) and quadrature-point updates
(x quadrature points) per second instead.

Default sizes: ~10,000 vertices (the seed's scaling cube; both solvers) and ~70,000 vertices (PBNG
only: the throughput per kind; the P2 mesh is the 40 000-element box of docs/high_order.md's
throughput figure); 275k (the Res-64 box's node count) on request. Target: P2 PBNG >= 30 M
quadrature-point visits/s on 2 threads. The seed's scaling cube is clamped at its base under gravity
(nu = 0.49); the stretched and twisted box is used here because its iterations cost the same per
element and it is the throughput benchmark's scene (bench/throughput.py).

    /usr/bin/python3 bench/seed_high_order/scaling.py [--quick] [--sizes 10k,70k] [--solvers pbng,xpbd_ho]

Results: bench/results/seed-scaling-<host>-<stamp>.csv (+ .png).
"""
import json, os, sys
import seedlib as sl

# (kind, -res) with about the same node count: order p puts p (res - 1) + 1 nodes per axis
SIZES = {
    "10k": [("tet4", 22), ("tet10", 11), ("tet20", 8), ("hex8", 22), ("hex27", 11)],
    "70k": [("tet4", 42), ("tet10", 21), ("tet20", 15), ("hex8", 42), ("hex27", 21)],
    "275k": [("tet4", 65), ("tet10", 33), ("tet20", 22), ("hex8", 65), ("hex27", 33)],
}
XPBD_SIZES = {"10k"}  # the seed's XPBD is run at these sizes only (its sweep is ~10x slower per element)
SOLVER_ARGS = {"pbng": [], "xpbd_ho": ["-solver", "xpbd_ho", "-xpbd_ho_dt", repr(sl.FRAME_DT / sl.SEED_SUBSTEPS)]}


def one_run(b, size, kind, res, solver, iters):
    js = os.path.join(b.tmp, "s.json")
    sl.run(b.a.pbng, ["-scene", "box_stretch_twist", "-element", kind, "-res", str(res), "-frames", "1", "-iters", str(iters), "-rtol", "0",
                      "-summary", js] + SOLVER_ARGS[solver], os.path.join(b.tmp, "o.h5"), b.a.threads)
    s = json.load(open(js))
    if solver != "pbng":  # element updates: the summary counts visits per node of an element
        npe = s["element_visits_per_second"] * s["solver_seconds"] / (s["elements"] * s["iterations"])
        s["element_visits_per_second"] /= npe
        s["quadrature_point_visits_per_second"] /= npe
    return s


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--sizes", default="10k,70k")
    ap.add_argument("--solvers", default="pbng,xpbd_ho")
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.repeats, a.iters = "10k", 1, 5
    b = sl.Bench("scaling", a)
    configs = [(size, kind, res, solver) for size in a.sizes.split(",") for kind, res in SIZES[size] for solver in a.solvers.split(",")
               if solver == "pbng" or size in XPBD_SIZES]
    runs = {c: [] for c in configs}
    for r in range(a.repeats):
        for c in configs:
            s = one_run(b, *c, a.iters)
            runs[c].append(s)
            print("[%d/%d] %-5s %-6s res %3d %-8s %7d nodes %8d elements  %8.2f ms/iteration  %7.2f M qp visits/s  %7.1f MiB"
                  % (r + 1, a.repeats, c[0], c[1], c[2], c[3], s["nodes"], s["elements"], 1e3 * s["seconds_per_iteration"],
                     s["quadrature_point_visits_per_second"] / 1e6, s["peak_rss_bytes_max_rank"] / 2**20), flush=True)
    med = lambda c, k: sl.median([s[k] for s in runs[c]])
    rows = []
    for c in configs:
        s0 = runs[c][0]
        rows.append(dict(size=c[0], element=c[1], res=c[2], solver=c[3], nodes=s0["nodes"], elements=s0["elements"],
                         quadrature_points=s0["quadrature_points_per_element"], ms_per_iteration=1e3 * med(c, "seconds_per_iteration"),
                         element_visits_per_s=med(c, "element_visits_per_second"), qp_visits_per_s=med(c, "quadrature_point_visits_per_second"),
                         peak_mib_max=med(c, "peak_rss_bytes_max_rank") / 2**20))
    b.head.append("# %d iterations; xpbd_ho rows: element and quadrature-point updates (one per element per sweep)" % a.iters)
    print("\nmedians:")
    sl.print_table(rows, [("size", "size", "%s"), ("element", "kind", "%s"), ("solver", "solver", "%s"), ("nodes", "nodes", "%d"),
                          ("elements", "elements", "%d"), ("ms_per_iteration", "ms/it", "%.2f"), ("element_visits_per_s", "el visits/s", "%.3g"),
                          ("qp_visits_per_s", "qp visits/s", "%.3g"), ("peak_mib_max", "MiB", "%.1f")])
    p2 = [r["qp_visits_per_s"] for r in rows if r["element"] == "tet10" and r["solver"] == "pbng"]
    if a.threads == 2 and p2:
        print("\nTarget: P2 PBNG >= 30 M quadrature-point visits/s on 2 threads: %s M/s  %s"
              % (", ".join("%.1f" % (v / 1e6) for v in p2), "MET" if min(p2) >= 30e6 else "NOT MET"))
    b.finish(rows, plot=lambda base: plot(base, rows))


def plot(base, rows):
    plt = sl.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, key, title in ((axes[0], "ms_per_iteration", "ms per iteration"), (axes[1], "peak_mib_max", "peak memory [MiB]")):
        for solver in dict.fromkeys(r["solver"] for r in rows):
            for size in dict.fromkeys(r["size"] for r in rows):
                pts = [r for r in rows if (r["solver"], r["size"]) == (solver, size)]
                ax.plot([r["element"] for r in pts], [r[key] for r in pts], "o-" if solver == "pbng" else "s--", label="%s %s" % (solver, size))
        ax.set_yscale("log"), ax.set_title(title + " at equal node counts", fontsize=9), ax.legend(fontsize=7)
    fig.tight_layout(), fig.savefig(base + ".png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())
