#!/usr/bin/python3
"""Multilevel PBNG on hexahedra (issue 16): the seed's bending beam (bench/seed_high_order/bending.py: a
4 x 1 x 1 beam clamped at x = 0 under gravity, E = 1e6, nu = 0.35, rho = 1000, neo-Hookean) as Q1 (hex8)
and Q2 (hex27) meshes, solved from rest to relative residual 1e-8 by Newton (the bjacobi_icc preset) and
by PBNG with -multilevel 1 (single level), 2, 3, 4 where the mesh has that many levels.

Not a test: it prints a table and writes a CSV. Each run is

    build/bin/pbng -scene bar_gravity -youngs 1e6 -poisson 0.35 -density 1000 -material neohookean \\
                   -element KIND -cells NX,NY,NZ [-multilevel L | -solver newton] -iters N -rtol 1e-8 \\
                   -residual_every 1 -threads T -time_budget B -output X.h5 -summary X.json

and its figures come from the JSON summary: iterations (FAS cycles, Newton steps) and the solver time
(the iterations only: set-up, residual evaluations and output excluded). A run that stops at its
-time_budget (--budget; --budget-single for single-level PBNG, which is there to show that it does not
get far) without reaching 1e-8 is reported with the residual it reached. Medians over --repeats runs;
configurations interleaved (the repeat loop is outermost). One thread by default: on a machine shared
with other work, two OpenMP threads per run make the times vary tenfold (spinning barriers on
oversubscribed cores), one thread does not.

--coarse-kinds also compares the kind of the coarse levels under a hexahedral beam: hex8 (what pbng
generates) against linear tetrahedra of the same grids (five per cell), both given as Gmsh files
(-mesh FILE -mesh_levels C1,...) written from pbng's own generated meshes (write_msh below), so that
the two differ in the coarse kind only; the hex8 files reproduce the generated run's iterates.

    /usr/bin/python3 bench/multilevel_kinds.py [--repeats 3] [--threads 1] [--coarse-kinds] [--quick]

Results: bench/results/multilevel-kinds-<host>-<stamp>.csv. Standard library + h5py; run with
/usr/bin/python3.
"""

import argparse
import csv
import datetime
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BEAM = ["-scene", "bar_gravity", "-youngs", "1e6", "-poisson", "0.35", "-density", "1000", "-material", "neohookean"]
RTOL = 1e-8
# (label, kind, cells, level counts)
MESHES = [
    ("Q1 32x8x8", "hex8", "32,8,8", (1, 2, 3, 4)),
    ("Q1 64x16x16", "hex8", "64,16,16", (2, 3, 4, 5)),
    ("Q2 8x2x2", "hex27", "8,2,2", (1, 2, 3)),
    ("Q2 16x4x4", "hex27", "16,4,4", (1, 2, 3, 4)),
    ("Q2 24x6x6", "hex27", "24,6,6", (2, 3, 4)),
]
QUICK = ("Q1 32x8x8", "Q2 8x2x2")
GMSH_TYPE = {"tet4": 4, "hex8": 5, "hex27": 12}


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(HERE, "..", "build", "bin", "pbng"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of iterations per run")
    ap.add_argument("--budget-single", type=float, default=10.0, help="the same for single-level PBNG (-multilevel 1)")
    ap.add_argument("--coarse-kinds", action="store_true", help="also hex8 against tet4 coarse levels (Gmsh files)")
    ap.add_argument("--quick", action="store_true", help="the two smallest meshes")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    return ap.parse_args()


def run(args, opts, budget, stem):
    """Runs pbng; returns (summary dict or None, command line)."""
    cmd = [args.pbng] + opts + ["-threads", str(args.threads), "-time_budget", str(budget), "-output", stem + ".h5", "-summary", stem + ".json"]
    with open(stem + ".log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False)
    summary = json.load(open(stem + ".json")) if os.path.exists(stem + ".json") else None
    for ext in (".h5", ".xdmf"):
        if os.path.exists(stem + ext):
            os.remove(stem + ext)
    return summary, cmd


def write_msh(h5path, mshpath):
    """A pbng result's mesh (rest positions, native Gmsh-ordered elements of one kind: /mesh/elements, or
    /mesh/tetrahedra for tet4) as a Gmsh 2.2 ASCII file."""
    import h5py
    with h5py.File(h5path, "r") as f:
        X = f["mesh/rest_positions"][...]
        kind = f.attrs["element"].decode()
        E = f["mesh/tetrahedra" if kind == "tet4" else "mesh/elements"][...]
    with open(mshpath, "w") as out:
        out.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n" % len(X))
        out.writelines("%d %.17g %.17g %.17g\n" % (i + 1, x[0], x[1], x[2]) for i, x in enumerate(X))
        out.write("$EndNodes\n$Elements\n%d\n" % len(E))
        out.writelines("%d %d 2 1 1 %s\n" % (e + 1, GMSH_TYPE[kind], " ".join(str(int(n) + 1) for n in row)) for e, row in enumerate(E))
        out.write("$EndElements\n")


def generated_msh(args, scratch, kind, cells):
    """The beam pbng generates with kind and cells, as a Gmsh file (one iteration run for its mesh)."""
    stem = os.path.join(scratch, "mesh-%s-%s" % (kind, cells.replace(",", "x")))
    if not os.path.exists(stem + ".msh"):
        cmd = [args.pbng] + BEAM + ["-element", kind, "-cells", cells, "-iters", "1", "-output", stem + ".h5"]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)
        write_msh(stem + ".h5", stem + ".msh")
        os.remove(stem + ".h5")
        os.remove(stem + ".xdmf")
    return stem + ".msh"


def coarse_cells(kind, cells, levels):
    """The cells of coarse levels 1 .. levels-1 as pbng makes them (p-coarsening first for hex27)."""
    out, c = [], cells
    for k in range(1, levels):
        if not (kind == "hex27" and k == 1):
            c = ",".join(str((int(n) + 2) // 2 - 1) for n in c.split(","))  # nodes n+1 -> (n+2)/2 -> cells (n+2)/2 - 1
        out.append(c)
    return out


def configs(args, scratch):
    """(mesh label, config name, pbng options) of every run."""
    meshes = [m for m in MESHES if not args.quick or m[0] in QUICK]
    out = []
    for label, kind, cells, levels in meshes:
        base = BEAM + ["-element", kind, "-cells", cells]
        out.append((label, "newton", base + ["-solver", "newton", "-iters", "200", "-rtol", str(RTOL), "-residual_every", "1"]))
        for L in levels:
            iters = "100000" if L == 1 else "500"
            out.append((label, "L=%d" % L, base + ["-multilevel", str(L), "-iters", iters, "-rtol", str(RTOL), "-residual_every", "1"]))
    if args.coarse_kinds:
        for label, kind, cells, L in (("Q1 32x8x8", "hex8", "32,8,8", 3), ("Q1 64x16x16", "hex8", "64,16,16", 4), ("Q2 16x4x4", "hex27", "16,4,4", 3)):
            if args.quick and label not in QUICK:
                continue
            fine = generated_msh(args, scratch, kind, cells)
            for ck in ("hex8", "tet4"):
                files = [generated_msh(args, scratch, ck, c) for c in coarse_cells(kind, cells, L)]
                out.append((label, "L=%d files, %s coarse" % (L, ck),
                            BEAM + ["-mesh", fine, "-mesh_levels", ",".join(files), "-iters", "500", "-rtol", str(RTOL),
                                                   "-residual_every", "1"]))
    return out


def main():
    args = parse()
    if not os.path.exists(args.pbng):
        sys.exit("no pbng at %s: build first (cmake --build build)" % args.pbng)
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0]
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        runs = configs(args, scratch)
        for rep in range(args.repeats):
            for i, (label, name, opts) in enumerate(runs):
                s, cmd = run(args, opts, args.budget_single if name == "L=1" else args.budget, os.path.join(scratch, "run%d-%d" % (i, rep)))
                r = results.setdefault((label, name), dict(command=" ".join(shlex.quote(c) for c in cmd), seconds=[], iterations=None, rel=None))
                if s is None:
                    print("%-12s %-22s failed: %s" % (label, name, " ".join(cmd)), flush=True)
                    continue
                r["seconds"].append(s["solver_seconds"])
                r["iterations"], r["rel"], r["nodes"], r["elements"] = s["iterations"], s["final_relative_residual"], s["nodes"], s["elements"]
                print("%-12s %-22s repeat %d: %5d iterations, %8.3f s, relative residual %.1e" % (label, name, rep, r["iterations"], s["solver_seconds"],
                                                                                                 r["rel"]), flush=True)
    path = os.path.join(args.out, "multilevel-kinds-%s-%s.csv" % (host, stamp))
    with open(path, "w") as f:
        f.write("# bench/multilevel_kinds.py, %s, commit %s, host %s, load average %.2f at the start and %.2f at the end, threads %d, repeats %d, "
                "rtol %g, budget %g s (single level %g s)\n"
                % (stamp, commit, host, load, os.getloadavg()[0], args.threads, args.repeats, RTOL, args.budget, args.budget_single))
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["mesh", "config", "nodes", "elements", "iterations", "relative_residual", "median_seconds", "min_seconds", "max_seconds", "command"])
        print("\n%-12s %-22s %8s %10s %10s %12s" % ("mesh", "config", "nodes", "iterations", "residual", "median s"))
        for (label, name), r in results.items():
            if not r["seconds"]:
                continue
            med = statistics.median(r["seconds"])
            out.writerow([label, name, r.get("nodes"), r.get("elements"), r["iterations"], "%.3e" % r["rel"], "%.4f" % med, "%.4f" % min(r["seconds"]),
                          "%.4f" % max(r["seconds"]), r["command"]])
            print("%-12s %-22s %8s %10d %10.1e %12.3f" % (label, name, r.get("nodes"), r["iterations"], r["rel"], med))
    print("\nwritten: %s" % path)


if __name__ == "__main__":
    main()
