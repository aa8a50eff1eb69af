#!/usr/bin/env python3
"""Coarse levels made three ways, measured (issue 39 item 2; docs/multilevel.md#coarse-levels-made-two-ways): not a
test, it prints a table and writes a CSV.

For each mesh of bench/data (Gmsh, meshed here at the `--size` of bench/defaults.py) the same run, to relative
residual 1e-6, with its coarse levels
  collapse  made by pbng from the fine mesh by edge collapses (`-multilevel auto`: what a user gets), and
  remeshed  made by Gmsh from the same geometry at 2x and 4x the characteristic length (`-mesh_levels C1,C2`:
            non-nested meshes, the transfers by point location; a P2 mesh's levels are P1), and
  aggregation  one coarse mesh by edge collapses, then 3 levels by aggregation of its Newton matrix
            (`-multilevel 2 -multilevel_aggregation 3`: what an explicit -multilevel L gets below the meshes the
            collapses could make),
and the cycles, the solver time and the whole command's wall time, medians over `--repeats` (interleaved). Meshes: the
thin-walled tube, the thin curved panel (a plate-like part), the slender beam, two blocks bound by weak constraints,
and the tube in P2 tetrahedra (`gmsh -order 2`).

    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /usr/bin/python3 bench/coarsening.py --repeats 3
"""
import argparse
import csv
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import defaults as dflt  # noqa: E402  (the meshes, their options and binding files)
import throughput as tp  # noqa: E402  (machine info, commit, binary lookup)

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {  # case: (mesh of defaults.MESHES, gmsh order)
    "tube": ("tube", 1), "panel": ("panel", 1), "beam": ("beam", 1), "two_blocks": ("two_blocks", 1), "tube_p2": ("tube", 2)}


def METHODS(levels):
    """(method, its options): levels is the -mesh_levels value of the remeshed levels."""
    return (("collapse", ["-multilevel", "auto"]), ("remeshed", ["-mesh_levels", levels]),
            ("aggregation", ["-multilevel", "2", "-multilevel_aggregation", "3"]))


def gmsh(geo, lc, order, path):
    if not os.path.exists(path):
        cmd = ["gmsh", "-3", "-order", str(order), "-format", "msh22", os.path.join(HERE, "data", geo), "-setnumber", "lc", str(lc), "-o", path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def make_case(case, size, scratch):
    """(the fine mesh's options, the remeshed levels' -mesh_levels value, fine nodes)."""
    mesh, order = CASES[case]
    geo, lcs, opts = dflt.MESHES[mesh]
    lc = lcs[size]
    fine = gmsh(geo, lc, order, os.path.join(scratch, f"{case}-{size}.msh"))
    levels = [gmsh(geo, f * lc, 1, os.path.join(scratch, f"{mesh}-{size}-x{f}.msh")) for f in (2, 4)]
    extra = []
    if mesh == "two_blocks":
        weak = os.path.join(scratch, f"{case}-{size}.weak")
        if not os.path.exists(weak):
            dflt.binding_file(fine, weak, 1e7)
        extra = ["-weak", weak]
    return ["-mesh", fine] + opts + extra, ",".join(levels), len(dflt.msh_nodes(fine)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(os.path.dirname(HERE), "build", "bin", "pbng"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--size", default="small", help="a size of bench/defaults.py (small ~2K nodes, medium ~20K)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="scratch directory (default: a temporary one)")
    args = ap.parse_args()
    pbng = tp.find_pbng(args.pbng)
    if not pbng:
        return 2
    scratch = args.out or tempfile.mkdtemp(prefix="pbng-coarsening-")
    os.makedirs(scratch, exist_ok=True)
    cases = [(c, *make_case(c, args.size, scratch)) for c in args.cases.split(",") if c]
    tight = ["-frames", "1", "-rtol", "1e-6", "-iters", "5000"]
    runs = {}
    for rep in range(args.repeats):
        for case, opts, levels, nodes in cases:
            for method, extra in METHODS(levels):
                stem = f"{case}-{method}-{rep}"
                out = os.path.join(scratch, stem + ".h5")
                cmd = dflt.launcher(args.ranks) + [pbng] + opts + tight + extra + ["-output", out]
                r = dflt.run(cmd, scratch, stem)
                if r is None:
                    continue
                text = open(r["log"]).read()
                r["levels"] = sum(1 for ln in text.splitlines() if ln.startswith("level "))
                r["levels"] += sum(int(ln.split()[3]) for ln in text.splitlines() if ln.startswith("below level 0: "))
                r["converged"] = "every frame reached it" in text
                runs.setdefault((case, method), []).append(r)
                print(f"  {case:10s} {method:9s} rep {rep}: {r['wall']:.2f} s, {r['iterations']} cycles, {r['levels']} levels"
                      f"{'' if r['converged'] else ', NOT converged'}", flush=True)
    info = tp.machine_info()
    commit, _ = tp.git_commit(os.path.dirname(HERE))
    stamp = time.strftime("%Y%m%d-%H%M")
    path = os.path.join(HERE, "results", f"coarsening-{socket.gethostname()}-{stamp}.csv")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    print(f"\n{'case':10s} {'nodes':>7s} | {'method':9s} {'levels':>6s} {'cycles':>6s} {'solver s':>8s} {'wall s':>7s}")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "nodes", "method", "levels", "cycles", "solver_s_median", "wall_s_median", "repeats", "converged", "ranks", "commit",
                    "machine"])
        for case, opts, levels, nodes in cases:
            for method, _ in METHODS(""):
                rs = runs.get((case, method), [])
                if not rs:
                    print(f"{case:10s} {nodes:7d} | {method:9s} failed")
                    continue
                wall = statistics.median(r["wall"] for r in rs)
                solver = statistics.median(r["solver_seconds"] for r in rs)
                cycles = statistics.median(r["iterations"] for r in rs)
                conv = all(r["converged"] for r in rs)
                print(f"{case:10s} {nodes:7d} | {method:9s} {rs[0]['levels']:6d} {cycles:6.0f} {solver:8.2f} {wall:7.2f}{'' if conv else '  NOT converged'}")
                w.writerow([case, nodes, method, rs[0]["levels"], cycles, f"{solver:.3f}", f"{wall:.3f}", len(rs), conv, args.ranks,
                            commit, f"{info['cpu_model']}, {info['nproc']} cores"])
    print(f"\nCSV: {path}\ncommand lines: {shlex.join(dflt.launcher(args.ranks) + [pbng] + cases[0][1] + tight)} (+ -multilevel auto | -mesh_levels ... | -multilevel 2 -multilevel_aggregation 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
