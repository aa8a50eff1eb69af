#!/usr/bin/python3
"""Element kinds at equal node counts (issue 16, the seed's scaling experiment and the throughput
figures): the Res-N unit cube stretched and twisted (box_stretch_twist, neo-Hookean) meshed with every
generated kind at about the same number of nodes, a fixed number of PBNG iterations. Reports per kind
the time per iteration, element visits/s, quadrature-point visits/s (element visits x quadrature points:
the work unit of the per-quadrature-point kernels) and peak memory, medians of --repeats runs with
the kinds interleaved (repeat loop outermost).

Default sizes: ~10,000 vertices (the seed's scaling cube) and ~275,000 vertices (the Res-64 box's node
count, where bench/README.md's linear-tet throughput is measured); target: P2 >= 30 M quadrature-point
visits/s on 2 threads.

Run with /usr/bin/python3. Results: bench/results/seed-scaling-<host>-<stamp>.csv.
"""
import argparse, datetime, json, os, platform, socket, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# (kind, -res) with about the same node count: order p puts p (res - 1) + 1 nodes per axis
SIZES = {
    "10k": [("tet4", 22), ("tet10", 11), ("tet20", 8), ("hex8", 22), ("hex27", 11)],
    "275k": [("tet4", 65), ("tet10", 33), ("tet20", 22), ("hex8", 65), ("hex27", 33)],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--sizes", default="10k,275k")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="seed-scaling-")
    configs = [(size, kind, res) for size in a.sizes.split(",") for kind, res in SIZES[size]]
    runs = {c: [] for c in configs}
    for r in range(a.repeats):
        for c in configs:
            size, kind, res = c
            js = os.path.join(tmp, "s.json")
            cmd = [a.pbng, "-scene", "box_stretch_twist", "-element", kind, "-res", str(res), "-frames", "1", "-iters", str(a.iters),
                   "-threads", str(a.threads), "-output", os.path.join(tmp, "o.h5"), "-summary", js]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
            runs[c].append(json.load(open(js)))
            s = runs[c][-1]
            print("[%d/%d] %-5s %-6s res %3d: %7d nodes %8d elements  %8.2f ms/iteration  %7.2f M qp visits/s  %7.1f MiB"
                  % (r + 1, a.repeats, size, kind, res, s["nodes"], s["elements"], 1e3 * s["seconds_per_iteration"],
                     s["quadrature_point_visits_per_second"] / 1e6, s["peak_rss_bytes_max_rank"] / 2**20), flush=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    out = os.path.join(REPO, "bench", "results", "seed-scaling-%s-%s.csv" % (socket.gethostname(), stamp))
    med = lambda c, k: statistics.median(s[k] for s in runs[c])
    with open(out, "w") as f:
        f.write("# bench/seed_high_order/scaling.py %s, %s, %s, %d threads, %d iterations, medians of %d\n"
                % (stamp, socket.gethostname(), platform.processor() or platform.machine(), a.threads, a.iters, a.repeats))
        f.write("size,element,res,nodes,elements,quadrature_points,ms_per_iteration,element_visits_per_s,qp_visits_per_s,peak_mib_max\n")
        print("\nmedians:")
        for c in configs:
            s0 = runs[c][0]
            row = (c[0], c[1], c[2], s0["nodes"], s0["elements"], s0["quadrature_points_per_element"], 1e3 * med(c, "seconds_per_iteration"),
                   med(c, "element_visits_per_second"), med(c, "quadrature_point_visits_per_second"), med(c, "peak_rss_bytes_max_rank") / 2**20)
            f.write("%s,%s,%d,%d,%d,%d,%.4f,%.6g,%.6g,%.1f\n" % row)
            print("  %-5s %-6s %7d nodes %8d el  %8.2f ms/it  %7.2f M el visits/s  %7.2f M qp visits/s  %7.1f MiB" % (row[0], row[1], row[3], row[4],
                                                                                                             row[6], row[7] / 1e6, row[8] / 1e6, row[9]))
    p2 = [med(c, "quadrature_point_visits_per_second") for c in configs if c[1] == "tet10"]
    if a.threads == 2 and p2:
        print("\nTarget: P2 >= 30 M quadrature-point visits/s on 2 threads: %s M/s  %s" % (", ".join("%.1f" % (v / 1e6) for v in p2),
                                                                                           "MET" if min(p2) >= 30e6 else "NOT MET"))
    print("results: %s" % out)


if __name__ == "__main__":
    main()
