#!/usr/bin/python3
"""The continuum seed's beam study (position-based-continuous-materials.txt, Sec. 6, Fig. 5; issue 18):
a StVK beam (-scene beam_pull: [0, 4] x [0, 1] x [0, 1], res 6, x = 0 held, 100 N pulling the x = 4 face
along +x, nu = 0.3) — the total strain of the beam at rest, (mean x-displacement of the pulled face) / 4.

- The seed's solver (-solver continuum_pbd -mode dynamic, dt 0.01, --frames frames with damping 0.02 per
  step, one substep per frame): strain against the sweeps per step n_it (E = 1000, the seed's k) and
  against E (n_it = 5). The run is taken to be at rest when the face moved less than 1e-4 of its
  displacement over the last 20 frames (else marked "not settled").
- PBNG (quasistatic, Chebyshev, to relative residual 1e-8) and Newton (to 1e-10) for the same E: the
  equilibrium, whatever the iteration budget (PBNG's cap is reported beside it).

The seed's finding — "the stiffness does not solely depend on the stiffness parameter but also on the
number of iterations and the time step size" — is the n_it column; the linear estimate F L / (E A L) =
10 % at E = 1000 is the scale of the true strain.

    /usr/bin/python3 bench/seed_continuum/beam_strain.py [--quick] [--threads 2]

Results: bench/results/seed-beam_strain-<host>-<stamp>.csv.
"""
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402

BEAM = ["-scene", "beam_pull"]


def face_strain(path):
    """Strain of every frame: mean x displacement of the x = 4 face / 4."""
    r = sl.read(path)
    face = np.isclose(r["X"][:, 0], 4.0)
    return [float((f["x"][face, 0] - r["X"][face, 0]).mean() / 4.0) for f in r["frames"]]


def settled(strains, window=20, tol=1e-4):
    tail = strains[-window:]
    return max(tail) - min(tail) <= tol * abs(tail[-1])


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--frames", type=int, default=300)
    a = ap.parse_args()
    b = sl.Bench("beam_strain", a)
    frames = 60 if a.quick else a.frames
    iterations = [1, 5, 20] if a.quick else [1, 2, 5, 10, 20, 50]
    moduli = [1000, 5000] if a.quick else [500, 1000, 2000, 5000, 10000]
    rows = []

    def seed_run(n_it, E):
        args = BEAM + ["-solver", "continuum_pbd", "-mode", "dynamic", "-dt", "0.01", "-frames", str(frames), "-iters", str(n_it),
                       "-continuum_pbd_iterations", str(n_it), "-continuum_pbd_damping", "0.02", "-youngs", str(E)]
        out, _ = b.run(args, "cpbd-%d-%g" % (n_it, E))
        s = face_strain(out)
        rows.append(dict(method="continuum_pbd", E=E, n_it=n_it, strain_percent=100 * s[-1], settled=settled(s), iterations=n_it * frames))

    def equilibrium(method, E):
        extra = ["-solver", "newton", "-iters", "50", "-rtol", "1e-10"] if method == "newton" else []
        out, _ = b.run(BEAM + ["-youngs", str(E)] + extra, "%s-%g" % (method, E))
        r = sl.read(out)
        rows.append(dict(method=method, E=E, n_it="", strain_percent=100 * face_strain(out)[-1], settled=r["frames"][-1]["relative_residual"] <= 1e-8,
                         iterations=""))

    for n_it in iterations:
        seed_run(n_it, 1000)
    for E in moduli:
        if E != 1000:
            seed_run(5, E)
        equilibrium("pbng", E)
        equilibrium("newton", E)
    sl.print_table(rows, [("method", "method", "%s"), ("E", "E", "%g"), ("n_it", "n_it", "%s"), ("strain_percent", "strain %", "%.4g"),
                          ("settled", "at rest/converged", "%s")])
    b.finish(rows)


if __name__ == "__main__":
    main()
