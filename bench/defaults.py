#!/usr/bin/python3
"""What a user's command gets by default, against Newton (issue 39): not a test, it prints tables and writes a CSV.

Every run is the command a user types -- `pbng -mesh F -fix_box ... -gravity ... -frames 1` with no solver option
(the default: multilevel PBNG with automatic levels where it runs the problem, docs/options.md#the-default-tolerance-
and-solver) -- against the same command with `-solver newton -newton_preconditioner P` for each preset (bjacobi_icc,
gamg, hypre). The figure is the wall time of the whole command (start-up, mesh reading, coarsening, partitioning,
output included), which stops by itself at the tolerance: the default 1e-3 (and the absolute floor), and, with
--tight, `-rtol 1e-6 -iters 5000` given to both. Each default result is checked by tests/check_output.py (it
recomputes the residual of every frame from the file).

Meshes (bench/data/*.geo, meshed by gmsh at the --sizes' characteristic lengths; none tuned for pbng):
  tube        the hollow tube (length 6, radii 0.5 / 0.4), clamped at x = 0, gravity -y, neo-Hookean E 1e5
  bracket     an L-bracket with two bolt holes, wall-mounted at x = 0, gravity -y, corotated E 1e5
  beam        a slender beam 10 x 0.5 x 0.5, clamped at x = 0, gravity -y, neo-Hookean E 1e6
  panel       a thin curved panel (thickness 0.05, radius 2, 60 degrees), clamped along one edge, gravity -y,
              stable neo-Hookean E 1e5
  two_blocks  two bodies meshed apart, bound by weak constraints (each node of the right body's x = 1 face to the
              nearest node of the left body's), the left clamped at x = 0, gravity -y, neo-Hookean E 1e5
and the generated box_stretch_twist at Res-32 and Res-64 (corotated and neo-Hookean, `-scene box_stretch_twist -res
R -material M`), --ranks ranks each.

Targets (issue 39), printed with the verdict: every default frame reaches 1e-3 (the checker too); on meshes of 20K
nodes or more the default reaches 1e-3 at least 3x sooner than the best Newton preset and 1e-6 sooner than Newton
does; on smaller meshes no later than Newton; box_stretch_twist Res-32 and Res-64 corotated at least 6x sooner than the
best Newton; neo-Hookean Res-32 at least 8x.

Medians over --repeats runs, configurations interleaved (repeat loop outermost). Results:
bench/results/defaults-<host>-<stamp>.csv (and defaults-latest.csv), headed by the machine and the commit.
Standard library only; run with /usr/bin/python3.
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
import time

sys.dont_write_bytecode = True
import throughput as tp  # noqa: E402  (machine info, commit, binary lookup, CSV writing)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PRESETS = ("bjacobi_icc", "gamg", "hypre")

# name: geometry file, characteristic lengths by size, pbng options (boundary sets, loads, material)
MESHES = {
    "tube": ("tube.geo", {"small": 0.13, "medium": 0.06, "large": 0.028},
             ["-fix_box", "0,-1,-1,0,1,1", "-gravity", "0,-9.8,0", "-youngs", "1e5", "-material", "neohookean"]),
    "bracket": ("bracket.geo", {"small": 0.09, "medium": 0.041, "large": 0.02},
                ["-fix_box", "0,0,0,0,2,1", "-gravity", "0,-9.8,0", "-youngs", "1e5", "-material", "corotated"]),
    "beam": ("beam.geo", {"small": 0.1, "medium": 0.045, "large": 0.021},
             ["-fix_box", "0,0,0,0,0.5,0.5", "-gravity", "0,-9.8,0", "-youngs", "1e6", "-material", "neohookean"]),
    "panel": ("panel.geo", {"small": 0.05, "medium": 0.022, "large": 0.011},
              ["-fix_box", "1.9,-0.01,0,2.1,0.01,1", "-gravity", "0,-9.8,0", "-youngs", "1e5", "-material", "stable_neohookean"]),
    "two_blocks": ("two_blocks.geo", {"small": 0.1, "medium": 0.045, "large": 0.021},
                   ["-fix_box", "0,0,0,0,1,1", "-gravity", "0,-9.8,0", "-youngs", "1e5", "-material", "neohookean"]),
}
BOXES = {"box32_corotated": (32, "corotated"), "box64_corotated": (64, "corotated"), "box32_neohookean": (32, "neohookean"),
         "box64_neohookean": (64, "neohookean")}


def msh_nodes(path):
    """Node coordinates (id -> (x, y, z)) and, per physical volume tag, the node ids of its tetrahedra (MSH 2.2 ASCII)."""
    nodes, volumes, section = {}, {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("$"):
                section = line[1:] if not line.startswith("$End") else None
                count = None
                continue
            if section == "Nodes":
                if count is None:
                    count = int(line)
                    continue
                i, x, y, z = line.split()
                nodes[int(i)] = (float(x), float(y), float(z))
            elif section == "Elements":
                if count is None:
                    count = int(line)
                    continue
                f_ = line.split()
                if f_[1] == "4":  # tetrahedron: id type ntags tags... nodes
                    ntags = int(f_[2])
                    volumes.setdefault(int(f_[3]), set()).update(int(v) for v in f_[3 + ntags:])
    return nodes, volumes


def binding_file(msh, out, k):
    """Weak constraints binding each node of the right body's x = 1 face to the nearest node of the left body's
    (pbng-weak-constraints 1: `1 a 1.0  1 b 1.0  k_n k_t`, 0-based node indices in file order)."""
    nodes, volumes = msh_nodes(msh)
    order = {nid: i for i, nid in enumerate(nodes)}
    tags = sorted(volumes)
    left = [n for n in volumes[tags[0]] if abs(nodes[n][0] - 1.0) < 1e-9]
    right = [n for n in volumes[tags[1]] if abs(nodes[n][0] - 1.0) < 1e-9]
    lines = ["pbng-weak-constraints 1", "# two_blocks: each node of the right body's x = 1 face bound to the nearest of the left's"]
    for b in right:
        pb = nodes[b]
        a = min(left, key=lambda n: sum((nodes[n][d] - pb[d]) ** 2 for d in range(3)))
        lines.append(f"1 {order[a]} 1.0   1 {order[b]} 1.0   {k:g} {k:g}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(right)


def make_mesh(name, size, scratch):
    geo, lcs, _ = MESHES[name]
    path = os.path.join(scratch, f"{name}-{size}.msh")
    if not os.path.exists(path):
        cmd = ["gmsh", "-3", "-format", "msh22", os.path.join(HERE, "data", geo), "-setnumber", "lc", str(lcs[size]), "-o", path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    extra = []
    if name == "two_blocks":
        weak = os.path.join(scratch, f"{name}-{size}.weak")
        if not os.path.exists(weak):
            binding_file(path, weak, 1e7)
        extra = ["-weak", weak]
    nodes = len(msh_nodes(path)[0])
    return path, extra, nodes


def launcher(ranks):
    return ["mpiexec", "-n", str(ranks), "--bind-to", "none"] if ranks > 1 else []


def run(cmd, scratch, stem):
    """Runs the command; its wall time, JSON summary and log (None for a failed run)."""
    summary = os.path.join(scratch, stem + ".json")
    log = os.path.join(scratch, stem + ".log")
    full = cmd + ["-summary", summary]
    t0 = time.perf_counter()
    with open(log, "w") as f:
        rc = subprocess.run(full, stdout=f, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    text = open(log).read()
    if rc != 0:
        print(f"  FAILED (exit {rc}): {shlex.join(full)}\n    {text.strip().splitlines()[-1] if text.strip() else ''}", file=sys.stderr)
        return None
    s = json.load(open(summary))
    defaults = [ln for ln in text.splitlines() if ln.startswith("defaults: multilevel") or ln.startswith("defaults: single-level")]
    return {"wall": wall, "iterations": s.get("iterations"), "capped": s.get("capped_frames"), "solver_seconds": s.get("solver_seconds"),
            "defaults": defaults[0] if defaults else "", "log": log}


def checked(output, rtol):
    cmd = [sys.executable, os.path.join(REPO, "tests", "check_output.py"), output, "--quiet"]
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def configs(tight, presets=PRESETS):
    """(config name, extra pbng options, tolerance label)."""
    out = [("default", [], "1e-3")] + [(f"newton_{p}", ["-solver", "newton", "-newton_preconditioner", p], "1e-3") for p in presets]
    if tight:
        t = ["-rtol", "1e-6", "-iters", "5000"]
        out += [("default", t, "1e-6")] + [(f"newton_{p}", ["-solver", "newton", "-newton_preconditioner", p] + t, "1e-6") for p in presets]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--meshes", default=",".join(MESHES), help="comma-separated (default: all)")
    ap.add_argument("--sizes", default="small,medium", help="small (~2K nodes), medium (~20K), large (~200K); default small,medium")
    ap.add_argument("--boxes", default=",".join(BOXES), help="generated boxes (default: all; '' for none)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tight", action="store_true", help="also to relative residual 1e-6 (-rtol 1e-6 -iters 5000)")
    ap.add_argument("--presets", default=",".join(PRESETS), help="the Newton presets run (default: all; the best of those run is compared)")
    ap.add_argument("--out", default=None, help="scratch directory (default: a temporary one)")
    args = ap.parse_args()
    pbng = tp.find_pbng(args.pbng)
    if not pbng:
        return 2
    presets = [p for p in args.presets.split(",") if p]
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        print(f"--presets: unknown {', '.join(unknown)} (known: {', '.join(PRESETS)})", file=sys.stderr)
        return 2
    scratch = args.out or tempfile.mkdtemp(prefix="pbng-defaults-")
    os.makedirs(scratch, exist_ok=True)
    cases = []
    for name in [m for m in args.meshes.split(",") if m]:
        for size in args.sizes.split(","):
            path, extra, nodes = make_mesh(name, size, scratch)
            cases.append((f"{name}-{size}", ["-mesh", path] + MESHES[name][2] + extra, nodes))
    for name in [b for b in args.boxes.split(",") if b]:
        res, material = BOXES[name]
        cases.append((name, ["-scene", "box_stretch_twist", "-res", str(res), "-material", material], res ** 3))
    runs = {}
    started = time.time()
    for rep in range(args.repeats):
        for case, opts, nodes in cases:
            for config, extra, tol in configs(args.tight, presets):
                stem = f"{case}-{config}-{tol}-{rep}"
                out = os.path.join(scratch, stem + ".h5")
                cmd = launcher(args.ranks) + [pbng] + opts + ["-frames", "1"] + extra + ["-output", out]
                r = run(cmd, scratch, stem)
                if r and config == "default" and rep == 0:
                    r["checked"] = checked(out, 1e-3 if tol == "1e-3" else 1e-6)
                runs.setdefault((case, config, tol), []).append(r)
                print(f"[{time.time() - started:7.0f} s] {stem}: " + (f"{r['wall']:.2f} s, {r['iterations']} iterations, capped {r['capped']}" if r else "failed"),
                      flush=True)
    rows = []
    for case, opts, nodes in cases:
        for config, extra, tol in configs(args.tight, presets):
            rs = [r for r in runs.get((case, config, tol), []) if r]
            walls = [r["wall"] for r in rs]
            rows.append({"case": case, "nodes": nodes, "config": config, "tolerance": tol, "runs": len(rs),
                         "wall_median": statistics.median(walls) if walls else math.nan, "wall_min": min(walls) if walls else math.nan,
                         "wall_max": max(walls) if walls else math.nan, "iterations": rs[0]["iterations"] if rs else "",
                         "capped": max(r["capped"] for r in rs) if rs else "", "checked": rs[0].get("checked", "") if rs else "",
                         "defaults": rs[0]["defaults"] if rs else "", "command": shlex.join(launcher(args.ranks) + ["pbng"] + opts + ["-frames", "1"] + extra)})
    verdicts = print_table(rows, cases, args.tight)
    write_results(rows, verdicts, args)
    return 0


def best_newton(rows, case, tol):
    ok = [r for r in rows if r["case"] == case and r["tolerance"] == tol and r["config"].startswith("newton") and r["capped"] == 0]
    return min(ok, key=lambda r: r["wall_median"]) if ok else None


def print_table(rows, cases, tight):
    print("\n%-22s %8s %-5s %10s %6s %8s %-24s %10s %7s  %s" % ("case", "nodes", "tol", "default s", "iters", "checked", "best Newton",
                                                                   "Newton s", "ratio", "defaults"))
    verdicts = []
    for case, _, nodes in cases:
        for tol in ("1e-3", "1e-6") if tight else ("1e-3",):
            d = next((r for r in rows if r["case"] == case and r["config"] == "default" and r["tolerance"] == tol), None)
            n = best_newton(rows, case, tol)
            ratio = n["wall_median"] / d["wall_median"] if d and n and d["runs"] else math.nan
            print("%-22s %8d %-5s %10.2f %6s %8s %-24s %10.2f %7.2f  %s" % (
                case, nodes, tol, d["wall_median"] if d else math.nan, d["iterations"] if d else "", d["checked"] if d else "",
                n["config"] if n else "(none converged)", n["wall_median"] if n else math.nan, ratio, d["defaults"] if d else ""))
            if d:
                d["ratio_vs_best_newton"] = ratio
                verdicts.append(verdict(case, nodes, tol, d, ratio))
    print("\nTargets (issue 39):")
    for v in verdicts:
        print("  " + v)
    return verdicts


def verdict(case, nodes, tol, d, ratio):
    converged = d["capped"] == 0 and d["checked"] is not False
    if case.startswith("box"):
        need = 8 if "neohookean" in case and case.startswith("box32") else 6 if "corotated" in case else 1
    else:
        need = 3 if nodes >= 20000 and tol == "1e-3" else 1
    met = converged and ratio >= need
    return f"{case} to {tol}: {'met' if met else 'NOT met'} (converged {converged}, {ratio:.2f}x the best Newton's speed, target {need}x)"


def write_results(rows, verdicts, args):
    info = tp.machine_info()
    commit, _ = tp.git_commit(REPO)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname()
    header = [f"bench/defaults.py {' '.join(sys.argv[1:])}", f"date {datetime.datetime.now().isoformat(timespec='seconds')}, host {host}",
              f"machine: {info['cpu_model']}, {info['nproc']} cores, {info['memory']}, {info['os']}, {info['compiler']}",
              f"commit {commit}, {args.ranks} rank(s), {args.repeats} repeats, load average at the end {tp.load_average()}",
              "wall: seconds of the whole command (mpiexec included), medians over the repeats"] + verdicts
    cols = [(c, (lambda c: lambda r: ("%.3f" % r[c]) if isinstance(r.get(c), float) else r.get(c, ""))(c))
            for c in ("case", "nodes", "config", "tolerance", "runs", "wall_median", "wall_min", "wall_max", "iterations", "capped",
                      "checked", "ratio_vs_best_newton", "defaults", "command")]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", f"defaults-{host}-{stamp}.csv")
    tp.write_csv(path, header, rows, cols)
    tp.write_csv(os.path.join(HERE, "results", "defaults-latest.csv"), header, rows, cols)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(main())
