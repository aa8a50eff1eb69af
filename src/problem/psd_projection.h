/* Positive-semidefinite projection of symmetric element matrices (issue 4's Newton baseline: each
 * element stiffness is made PSD before assembly so that Newton steps descend on these non-convex
 * energies). */
#ifndef PBNG_PROBLEM_PSD_PROJECTION_H
#define PBNG_PROBLEM_PSD_PROJECTION_H

#include <petscsys.h>

/* K (n x n, symmetric, row-major) <- V max(Lambda, 0) V^T from its eigendecomposition (LAPACK syev).
 * Thread-safe (no PETSc error machinery): returns 0, -1 when n is not in 1..81, or LAPACK's info. */
int pbng_project_psd(int n, double *K);

#endif
