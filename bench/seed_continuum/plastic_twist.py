#!/usr/bin/python3
"""The continuum seed's plastic beam (position-based-continuous-materials.txt, Sec. 6, Fig. 8; issue 18):
-scene plastic_twist — a StVK beam [0, 4] x [0, 1] x [0, 1] (res 6), its x = 0 end held, its x = 4 end
twisted 90 degrees over t in [0, 1], held until t = 1.4 and released (-bc1_release), quasistatic frames of
0.2 solved by Newton. The seed's four parameter sets, as we chose them (its figure prints no values):

  (a) base:            gamma_yield 0.02, gamma_creep 2, gamma_max 0.2
  (b) larger creep:    gamma_creep 4.5 (dt gamma_creep <= 1)
  (c) larger yield:    gamma_yield 0.06
  (d) limited maximum: gamma_max 0.05

For each: the largest and mean |eps_p| at the release, the end's twist angle while held (90 degrees) and
after the release (the permanent set), and the fraction of the twist kept. The seed's observations to
compare with: (b) absorbs almost all elastic strain (the most twist kept), (c) begins later and absorbs
less, (d) leaves more elastic strain (springs back more).

    /usr/bin/python3 bench/seed_continuum/plastic_twist.py [--quick] [--threads 2]

Results: bench/results/seed-plastic_twist-<host>-<stamp>.csv.
"""
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402
import h5py  # noqa: E402

SETS = [("a", "base", []), ("b", "larger creep", ["-plastic_creep", "4.5"]), ("c", "larger yield", ["-plastic_yield", "0.06"]),
        ("d", "limited maximum", ["-plastic_max", "0.05"])]


def end_angle(X, x):
    """Mean rotation (degrees) of the x = 4 face about the axis y = z = 0.5."""
    face = np.isclose(X[:, 0], 4.0)
    r0 = X[face][:, 1:] - 0.5
    r1 = x[face][:, 1:] - 0.5
    keep = np.linalg.norm(r0, axis=1) > 1e-9
    a = np.arctan2(r1[keep, 1], r1[keep, 0]) - np.arctan2(r0[keep, 1], r0[keep, 0])
    return float(np.degrees(np.angle(np.exp(1j * a).mean())))


def plastic_norms(ep):
    n = np.sqrt((ep[:, :3] ** 2).sum(1) + 2 * (ep[:, 3:] ** 2).sum(1))
    return float(n.max()), float(n.mean())


def main():
    a = sl.parser(__doc__).parse_args()
    b = sl.Bench("plastic_twist", a)
    rows = []
    for tag, name, extra in (SETS[:2] if a.quick else SETS):
        out, _ = b.run(["-scene", "plastic_twist"] + extra, "set-" + tag)
        with h5py.File(out, "r") as f:
            X = f["mesh/rest_positions"][()]
            frames = sorted(f["frames"].keys())
            held = [k for k in frames if "handle_targets" in f["frames"][k]][-1]
            last = frames[-1]
            mx, mean = plastic_norms(f["frames/%s/plastic_strain" % last][()])
            a_held = end_angle(X, f["frames/%s/positions" % held][()])
            a_last = end_angle(X, f["frames/%s/positions" % last][()])
        rows.append(dict(set=tag, name=name, eps_p_max=mx, eps_p_mean=mean, angle_held=a_held, angle_after=a_last, kept=a_last / a_held))
    sl.print_table(rows, [("set", "set", "%s"), ("name", "parameters", "%s"), ("eps_p_max", "max |eps_p|", "%.4f"),
                          ("eps_p_mean", "mean |eps_p|", "%.4f"), ("angle_held", "twist held (deg)", "%.2f"),
                          ("angle_after", "after release (deg)", "%.2f"), ("kept", "fraction kept", "%.3f")])
    b.finish(rows)


if __name__ == "__main__":
    main()
