#!/usr/bin/python3
"""Contacts in the constraint solvers against PBNG (issue 17; docs/contact.md, "Measured"): the colliding
blocks (-scene two_blocks_colliding, its defaults: Res-8, dynamic, dt 0.002, 40 iterations per frame,
k_n = 1e8) run for --frames frames (the blocks touch at frame 57) by each solver of --solvers, on --ranks
ranks x --threads threads:

    mpiexec -n R --bind-to none build/bin/pbng -scene two_blocks_colliding -solver S -contact_model M \\
        -frames F -threads T -output X.h5 -summary X.json -log_view :X.log

Per frame: the residual (the problem's: elastic, inertia and contact forces) and its value relative to the
frame's first, the deepest penetration (tests/check_output.py's frame_penetrations: winding numbers of the
other block's surface, from the positions alone), the contacts in force, and the time per iteration (the
frame's iteration seconds / iterations). Per run: the time per iteration over the contact frames and over
the frames before, and from -log_view the seconds of the contact work (PBDContacts: the constraint
solvers' gather and projection of the contacts; PBNGContactPatch: PBNG's joint step).

    /usr/bin/python3 bench/contact_solvers.py [--ranks 2] [--threads 1] [--frames 80] [--solvers pbng,xpbd]
                                              [--models spring,unilateral]

Results: bench/results/contact-solvers-<host>-<stamp>.csv (one row per run and frame). Standard library +
numpy + h5py; run with /usr/bin/python3.
"""

import argparse
import csv
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import check_output  # noqa: E402  (the independent penetration check)


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(HERE, "..", "build", "bin", "pbng"))
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--frames", type=int, default=80)
    ap.add_argument("--solvers", default="pbng,xpbd")
    ap.add_argument("--models", default="spring,unilateral")
    ap.add_argument("--out", default=None, help="CSV path (default bench/results/contact-solvers-<host>-<stamp>.csv)")
    return ap.parse_args()


def log_seconds(path, event):
    """The max-over-ranks seconds of a -log_view event (0 when absent)."""
    with open(path) as f:
        for line in f:
            if line.startswith(event + " "):
                return float(line.split()[3])
    return 0.0


def run(args, tmp, solver, model):
    tag = f"{solver}-{model}"
    h5, js, log = (os.path.join(tmp, tag + ext) for ext in (".h5", ".json", ".log"))
    cmd = [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none", args.pbng, "-scene", "two_blocks_colliding", "-solver", solver,
           "-contact_model", model, "-frames", str(args.frames), "-threads", str(args.threads), "-output", h5, "-summary", js,
           "-log_view", ":" + log]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    contacts = [int(m.group(1)) for m in re.finditer(r"^frame +\d+/\d+ .* contacts (\d+)\b", out.stdout, re.M)]
    rep = check_output.Report()
    with h5py.File(h5, "r") as f:
        mesh = check_output.check_mesh(rep, f)
        frames = check_output.check_frames(rep, f, len(mesh["X"]))
        depth = check_output.frame_penetrations(f, mesh, frames)
    with open(js) as f:
        summary = json.load(f)
    rows = []
    for k in range(1, len(frames)):
        a = frames[k][1]
        rows.append({"solver": solver, "model": model, "frame": k, "contacts": contacts[k - 1], "residual": a["residual"],
                     "relative_residual": a["relative_residual"], "max_penetration": depth[k][0], "iterations": int(a["iterations"]),
                     "ms_per_iteration": 1e3 * a["seconds"] / max(1, a["iterations"])})
    events = ("PBDContactGather", "PBDContactProject", "PBDProject", "PBDHaloExchange") if solver != "pbng" else ("PBNGContactPatch", "PBNGNodeUpdate", "PBNGHaloExchange")
    totals = {"solver_seconds": summary.get("solver_seconds"), "events": {e: log_seconds(log, e) for e in events},
              "command": " ".join(cmd[:5] + ["build/bin/pbng"] + cmd[6:])}
    return rows, totals


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def main():
    args = parse()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    out = args.out or os.path.join(HERE, "results", f"contact-solvers-{socket.gethostname().split('.')[0][:8]}-{stamp}.csv")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            for solver in args.solvers.split(","):
                r, t = run(args, tmp, solver, model)
                rows += r
                touching = [x for x in r if x["contacts"] > 0]
                before = [x for x in r if x["contacts"] == 0]
                print(f"{t['command']}")
                print(f"  {solver:5s} {model:10s}: first contact frame {touching[0]['frame'] if touching else '-'}, "
                      f"ms/iteration {mean([x['ms_per_iteration'] for x in before]):.3f} before contact, "
                      f"{mean([x['ms_per_iteration'] for x in touching]):.3f} in contact; solver {t['solver_seconds']:.3f} s, "
                      f"{', '.join(f'{e} {v:.3f} s' for e, v in t['events'].items())}; deepest penetration {max(x['max_penetration'] for x in r):.3e}")
                for x in touching:
                    print(f"    frame {x['frame']:3d}  contacts {x['contacts']:4d}  residual {x['residual']:.3e}  relative "
                          f"{x['relative_residual']:.3e}  penetration {x['max_penetration']:.3e}  {x['ms_per_iteration']:.3f} ms/iteration")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"results: {out}")


if __name__ == "__main__":
    main()
