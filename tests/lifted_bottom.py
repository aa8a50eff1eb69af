#!/usr/bin/python3
"""A box resting on the plane y = 0 and lifted by its top face (tests/test_contact.sh, test_contact_xpbd.sh):
the lowest point of its rest bottom face (y = 0) at the last frame, for a run with spring contacts and one
with unilateral contacts. The paper's spring holds what touched once (bottom within 3.6e-8 of the plane: measured 1.21e-8 with PBNG,
6.05e-9 with XPBD-QS, 2026-11-27);
unilateral contacts let the surface go (bottom above 0.04 after a lift of 0.1).

    lifted_bottom.py SPRING.h5 UNILATERAL.h5 [LABEL]     (exit status 1 when either does not hold)
"""
import sys

import h5py


def bottom(path):
    with h5py.File(path, "r") as f:
        last = sorted(f["frames"].keys())[-1]
        X, x = f["mesh/rest_positions"][:], f[f"frames/{last}/positions"][:]
    return x[X[:, 1] < 1e-9, 1].min()


def main():
    s, u = bottom(sys.argv[1]), bottom(sys.argv[2])
    print("%slifted by 0.1: bottom at %.2e (spring), %.4f (unilateral)" % (sys.argv[3] + ", " if len(sys.argv) > 3 else "", s, u))
    return 0 if abs(s) < 3.6e-8 and u > 0.04 else 1


if __name__ == "__main__":
    sys.exit(main())
