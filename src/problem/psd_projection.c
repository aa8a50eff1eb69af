#include "problem/psd_projection.h"
#include <petscblaslapack.h>

enum { PSD_MAX = 81 }; /* 3 x 27: the hex27 element matrix */

int pbng_project_psd(int n, double *K)
{
  double V[PSD_MAX * PSD_MAX], lambda[PSD_MAX], work[PSD_MAX * PSD_MAX];
  PetscBLASInt bn = n, lwork = PSD_MAX * PSD_MAX, info;

  if (n <= 0 || n > PSD_MAX) return -1;
  for (int k = 0; k < n * n; ++k) V[k] = K[k]; /* symmetric: row- and column-major alike */
  LAPACKsyev_("V", "U", &bn, V, &bn, lambda, work, &lwork, &info);
  if (info != 0) return (int)info;
  if (lambda[0] >= 0.0) return 0; /* already PSD (eigenvalues ascend) */
  /* column c of V (column-major) is the eigenvector of lambda[c] */
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double v = 0.0;
      for (int c = 0; c < n; ++c)
        if (lambda[c] > 0.0) v += V[c * n + i] * lambda[c] * V[c * n + j];
      K[i * n + j] = v;
    }
  return 0;
}
