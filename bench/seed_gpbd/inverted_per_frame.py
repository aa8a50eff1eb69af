#!/usr/bin/env python3
"""Inverted or flat tetrahedra per stored frame of pbng outputs (issue 43 item 2, docs/gpbd_solver.md#inversion):
det F <= 0 of the stored positions, i.e. a signed volume of the opposite sign of the rest volume or zero (NaN
positions: every tetrahedron). Usage: inverted_per_frame.py OUT.h5 ... ; prints one line per file:
  name: frames N, status S, inverted per frame [c0, c1, ...], at the last frame c, max over frames 5.. m"""
import sys
import numpy as np
import h5py
from gpbdlib import signed_volumes


def inverted_per_frame(path):
    with h5py.File(path, "r") as f:
        X, T = f["mesh/rest_positions"][...], f["mesh/tetrahedra"][...]
        sign0 = np.sign(signed_volumes(X, T))
        counts = []
        for name in sorted(f["frames"], key=int):
            x = f["frames"][name]["positions"][...]
            counts.append(len(T) if not np.isfinite(x).all() else int(np.sum(~(signed_volumes(x, T) * sign0 > 0))))
        status = f.attrs.get("status", b"?")
        return counts, status.decode() if isinstance(status, bytes) else str(status), len(T)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        c, status, n = inverted_per_frame(path)
        later = max(c[5:]) if len(c) > 5 else float("nan")
        print(f"{path}: {n} tets, frames {len(c) - 1}, status {status}, inverted per frame {c}, at the last frame {c[-1]}, max over frames 5.. {later}")
