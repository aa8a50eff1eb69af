#!/usr/bin/python3
"""The drape (issue 18; the continuum seed's cloth, position-based-continuous-materials.txt Sec. 6): a
1 m x 1 m sheet (-res 21, dt 0.1 / (res - 1) = 0.005 s, 1 s) falling on the sphere (-drape sphere) and
on the table edge (-drape table), solved by Newton every frame (-rtol 1e-6), the sheet colliding with the
obstacle and with itself (unilateral contacts, docs/cloth.md#the-drape), and rendered by ParaView
(pbng-render, coloured by |x - X|).

Per case: frames that stopped at the iteration cap, the largest relative residual, contacts in force at
the end, the deepest any vertex went inside the obstacle (any frame), the sheet's lowest point at the
end, seconds (one run each). --quick: -res 11 (dt 0.01), 0.5 s.

    /usr/bin/python3 bench/seed_continuum/drape.py [--quick] [--threads 2] [--no-render]

Results: bench/results/seed-drape-<host>-<stamp>.csv and, with paraview and xvfb installed,
-sphere.png / -table.png beside it.
"""
import os, subprocess, sys, time
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402
import h5py  # noqa: E402

SPHERE = (np.array([0.5, -0.3, 0.5]), 0.25)  # the scene's obstacles (src/app/scene.c scene_cloth_drape)
TABLE = (np.array([-1.0, -1.0, -1.0]), np.array([0.5, -0.05, 2.0]))
PANELS = {"sphere": "0,30,60,90,140,200", "table": "0,30,60,90,120,160"}
CAMERA = {"sphere": "1,0.8,1.6", "table": "0.3,0.5,1.6"}


def inside(case, x):
    """How deep the deepest vertex is inside the obstacle (0: none inside)."""
    if case == "sphere":
        return float(max(0.0, (SPHERE[1] - np.linalg.norm(x - SPHERE[0], axis=1)).max()))
    depth = np.minimum(x - TABLE[0], TABLE[1] - x).min(axis=1)  # > 0 inside the box: distance to its nearest face
    return float(max(0.0, depth.max()))


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--no-render", action="store_true")
    a = ap.parse_args()
    b = sl.Bench("drape", a)
    res = 11 if a.quick else 21
    frames = 50 if a.quick else 200
    rows = []
    for case in ("sphere", "table"):
        t0 = time.time()
        out, cmd = b.run(["-scene", "cloth_drape", "-drape", case, "-res", str(res), "-frames", str(frames), "-solver", "newton"], case)
        seconds = time.time() - t0
        r = sl.read(out)
        rel = [fr["relative_residual"] for fr in r["frames"][1:]]
        with h5py.File(out, "r") as f:
            last = sorted(f["frames"].keys())[-1]
            x = f["frames/%s/positions" % last][()]
            xs = [f["frames/%s/positions" % k][()] for k in sorted(f["frames"].keys())]
            contacts = len(f["frames/%s/contacts/vertex" % last][()])
            h = float(f.attrs["contact_thickness"][0])
        capped = sum(1 for v in rel if v > 1e-6)
        rows.append(dict(case=case, res=res, frames=frames, capped_frames=capped, worst_relative_residual=max(rel),
                         contacts_at_end=contacts, deepest_inside=max(inside(case, y) for y in xs), lowest_point=float(x[:, 1].min()),
                         thickness_h=h, seconds=seconds, command=" ".join(cmd)))
        if not a.no_render:
            png = b.base + "-%s.png" % case
            render = [os.path.join(os.path.dirname(a.pbng), "pbng-render"), out, "--png", png, "--color", "displacement", "--camera", CAMERA[case],
                      "--size", "400,320"] + (["--frames", PANELS[case]] if not a.quick else [])
            p = subprocess.run(render, capture_output=True, text=True)  # (pbng-render retries pvbatch's start-up deaths)
            print(p.stdout.strip() if p.returncode == 0 else "rendering failed: %s" % (p.stdout + p.stderr)[-800:])
    sl.print_table(rows, [("case", "case", "%s"), ("res", "res", "%d"), ("frames", "frames", "%d"), ("capped_frames", "capped", "%d"),
                          ("worst_relative_residual", "worst rel.res", "%.1e"), ("contacts_at_end", "contacts", "%d"),
                          ("deepest_inside", "deepest inside", "%.1e"), ("lowest_point", "lowest y", "%.3f"), ("seconds", "s", "%.1f")])
    b.finish(rows)


if __name__ == "__main__":
    main()
