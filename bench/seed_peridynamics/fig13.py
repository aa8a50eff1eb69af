#!/usr/bin/python3
"""The projective-peridynamics seed's Fig. 13 study (issue 20; projective-peridynamics-membranes.txt Sec. 7.4):
relative energy error eta = (E(y^k) - E(y*)) / (E(y^0) - E(y*)) against iterations and time at the 20th frame of
the stretched-cloth case (s0 = 4.8e7, s1 = 1.2e7, compressible neo-Hookean, h = 1 ms, no bending), for SISSM
(exact form, plain and Chebyshev; the seed's Eq. 25 form), Newton on the same peridynamic energy, and PBNG and
Newton on the FEM membrane of the same triangle mesh (issue 11) with the same Lame pair (mu = 2 s0, lambda = 2 s1:
E = 2.112e8, nu = 0.1; StVK plane stress, the FEM sheets' law), y* from Newton to 1e-10 on each model.

Scene: -scene cloth_stretch -mode dynamic -dt 0.001 (the left edge held, the right pulled at 0.2 m/s), --res N
(default 21; the seed's cloth is finer). Frames 1-19 once per model by Newton, every frame to -rtol 1e-10 or the
absolute floor -atol 1e-9 (the forces' round-off with s0 = 4.8e7 is ~5e-11); then every method solves frame 20 from
that common state (-initial FILE -initial_frame 19: positions and velocity), capped at --iters, -monitor printing
the energy (16 digits) after every iteration. Newton on the peridynamic energy uses -pd_hessian fd (with the
analytic fixed-normal matrices it stalls on this sheet: docs/peridynamics.md). y* is Newton's frame 20 from the
same state, and y^0 (x + dt v) is the same for every method of a model, as in the seed's study. eta is limited by
round-off: E ~ 1.7 J while E(y^0) - E(y*) ~ 5e-12 J at frame 20 (x + dt v is already close), at the energy's
round-off, so eta is noise from its first decade on. The study therefore also measures the position error
eta_x = |y^k - y*| / |y^0 - y*| over the free nodes: each method is run again with -iters k for k in KS (its
frame-20 positions read from the file), the first k of the list reaching a level is reported.

    /usr/bin/python3 bench/seed_peridynamics/fig13.py [--res 21] [--iters 3000] [--threads 2] [--ranks 1] [--pbng PATH]

Output: a table (iterations and seconds to eta <= 1e-2, 1e-4, 1e-6 and relative residual <= 1e-3, 1e-6; seconds per iteration, which include
-monitor's residual and energy evaluation every iteration) and bench/results/seed-pd-fig13-<host>-<stamp>.csv
(method, model, iteration, seconds, energy, eta, relative residual).
"""
import argparse, csv, datetime, os, re, socket, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LINE = re.compile(r"frame (\d+) iter\s+(\d+)\s+residual (\S+)\s+relative (\S+)\s+energy (\S+)(?:\s+(\S+) s)?")

PD = ["-sheet_model", "peridynamic", "-pd_material", "neohookean", "-pd_s0", "4.8e7", "-pd_s1", "1.2e7", "-pd_kb", "0"]
FEM = ["-sheet_youngs", "2.112e8", "-sheet_poisson", "0.1", "-sheet_bending_stiffness", "0"]


def methods(iters):
    it = ["-iters", str(iters)]
    return [
        ("newton", "peridynamic", PD + ["-solver", "newton", "-pd_hessian", "fd", "-iters", "50"]),
        ("sissm", "peridynamic", PD + ["-solver", "sissm"] + it),
        ("sissm_chebyshev", "peridynamic", PD + ["-solver", "sissm", "-sissm_chebyshev"] + it),
        ("sissm_seed_eq25", "peridynamic", PD + ["-solver", "sissm", "-sissm_form", "seed"] + it),
        ("newton", "fem", FEM + ["-solver", "newton", "-iters", "50"]),
        ("pbng_chebyshev", "fem", FEM + ["-solver", "pbng", "-accel", "chebyshev"] + it),
        ("pbng_plain", "fem", FEM + ["-solver", "pbng", "-accel", "none"] + it),
    ]


def run(pbng, args, ranks, threads, out):
    cmd = ([] if ranks == 1 else ["mpiexec", "-n", str(ranks), "--oversubscribe", "--bind-to", "none"]) + [pbng] + args + [
        "-threads", str(threads), "-monitor", "-output", out]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def curve(text, frame):
    """Frame `frame`'s monitor lines: (iteration, seconds, energy, relative residual)."""
    out = []
    for m in LINE.finditer(text):
        if int(m.group(1)) == frame:
            out.append((int(m.group(2)), float(m.group(6) or 0.0), float(m.group(5)), float(m.group(4))))
    return out


KS = [1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200, 300, 500, 800, 1300, 2000, 3000]


def free_positions(path, frame, free):
    import h5py
    with h5py.File(path, "r") as f:
        return f[f"frames/{frame:06d}/positions"][...][free]


def position_errors(pbng, args, ranks, threads, tmp, tag, ystar, y0, free, iters):
    """[(k, eta_x)] for k in KS up to iters: the method's frame-20 positions after k iterations against y*."""
    import numpy as np
    out = []
    for k in [k for k in KS if k <= iters]:
        path = os.path.join(tmp, f"{tag}-k{k}.h5")
        rc, _ = run(pbng, args + ["-iters", str(k)], ranks, threads, path)
        if rc:
            break
        y = free_positions(path, 1, free)
        out.append((k, float(np.linalg.norm(y - ystar) / np.linalg.norm(y0 - ystar))))
    return out


def first_below(points, eta, level):
    for (k, t, _, _), e in zip(points, eta):
        if e <= level:
            return k, t
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", type=int, default=21)
    ap.add_argument("--iters", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--pbng", default=os.path.join(ROOT, "build", "bin", "pbng"))
    a = ap.parse_args()
    common = ["-scene", "cloth_stretch", "-res", str(a.res), "-mode", "dynamic", "-dt", "0.001", "-rtol", "1e-10", "-atol", "1e-9"]
    results, estar = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        base = {}
        for name, model, extra in methods(a.iters):  # frames 1-19: Newton on each model, the common state
            if name != "newton":
                continue
            base[model] = os.path.join(tmp, f"base-{model}.h5")
            rc, text = run(a.pbng, common + extra + ["-frames", "19"], a.ranks, a.threads, base[model])
            if rc:
                print(f"frames 1-19 ({model}): failed (exit {rc})\n{text[-2000:]}")
                return 1
        import h5py, numpy as np
        ref = {}
        for name, model, extra in methods(a.iters):  # frame 20 from it, by every method (Newton first: y*)
            start = ["-frames", "1", "-initial", base[model], "-initial_frame", "19"]
            out = os.path.join(tmp, f"{name}-{model}.h5")
            rc, text = run(a.pbng, common + extra + start, a.ranks, a.threads, out)
            pts = curve(text, 1)
            if rc or not pts:
                print(f"{name} ({model}): failed (exit {rc})\n{text[-2000:]}")
                continue
            if name == "newton":
                estar[model] = pts[-1][2]
                with h5py.File(base[model], "r") as f:
                    free = np.ones(len(f["mesh/rest_positions"]), bool)
                    free[np.asarray(f["mesh/fixed_nodes"][...], dtype=np.int64)] = False
                x19, x18 = free_positions(base[model], 19, free), free_positions(base[model], 18, free)
                ref[model] = (free_positions(out, 1, free), 2 * x19 - x18, free)  # y*, y^0 = x + dt v
                errs = []
            else:
                ystar, y0, free = ref[model]
                it = extra.index("-iters")  # the cap dropped: position_errors sets its own (a run may stop sooner, at the tolerance)
                args = common + extra[:it] + extra[it + 2:] + start
                errs = position_errors(a.pbng, args, a.ranks, a.threads, tmp, f"{name}-{model}", ystar, y0, free, pts[-1][0])
            results.append((name, model, pts, errs))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0]
    path = os.path.join(ROOT, "bench", "results", f"seed-pd-fig13-{host}-{stamp}.csv")
    print(f"Fig. 13 study: cloth_stretch -res {a.res}, dt 1 ms, frame 20, {a.ranks} rank(s) x {a.threads} thread(s), {host}")
    print(f"{'method':18s} {'model':12s} {'iters':>6s} {'s/iter':>9s}  " + "  ".join(f"eta<={l:.0e} (it, s)" for l in (1e-2, 1e-4))
          + "  " + f"eta<={1e-6:.0e} (it, s)" + "  " + "  ".join(f"rel.res<={l:.0e} (it, s)" for l in (1e-3, 1e-6))
          + "  " + "  ".join(f"eta_x<={l:.0e} (it)" for l in (1e-2, 1e-4, 1e-6)) + "   final eta, rel.res")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "model", "iteration", "seconds", "energy", "eta", "relative_residual", "eta_x", "res", "host"])
        for name, model, pts, errs in results:
            e0, es = pts[0][2], estar.get(model)
            eta = [(e - es) / (e0 - es) if es is not None and e0 != es else float("nan") for (_, _, e, _) in pts]
            ex = dict(errs)
            for (k, t, e, r), h in zip(pts, eta):
                w.writerow([name, model, k, t, repr(e), repr(h), r, repr(ex[k]) if k in ex else "", a.res, host])
            last = pts[-1]
            per = last[1] / last[0] if last[0] else float("nan")
            cells = []
            for series, levels in ((eta, (1e-2, 1e-4, 1e-6)), ([p[3] for p in pts], (1e-3, 1e-6))):
                for level in levels:
                    k, t = first_below(pts, series, level)
                    cells.append(f"{'-':>17s}" if k is None else f"{k:7d} {t:8.3f} s")
            for level in (1e-2, 1e-4, 1e-6):
                k = next((k for k, e in errs if e <= level), None)
                cells.append(f"{'-' if name == 'newton' else 'never':>15s}" if k is None else f"{k:>15d}")
            print(f"{name:18s} {model:12s} {last[0]:6d} {per:9.2e}  " + "  ".join(cells) + f"   {eta[-1]:.2e}, {last[3]:.2e}")
    print(f"results: {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
