/* Sheet meshes (src/mesh/sheet.c; docs/cloth.md#sheet-meshes): a generated grid's counts (2 (nx-1)(ny-1)
 * triangles, one stencil per interior edge), triangles counter-clockwise about e_u x e_v with their areas
 * summing to the rectangle's, every stencil's edge in both of its triangles and its third corners apart;
 * with the kernels: zero membrane and bending energy at rest, a sheet folded rigidly along a grid line
 * has bending energy on that line's stencils only (each the hinge's closed form), a uniform stretch along
 * the weft gives one stress everywhere; errors named: non-manifold edge, inconsistent orientation, a
 * repeated corner, a corner out of range, bad grid arguments. */
#include <math.h>
#include <petscsys.h>
#include <string.h>
#include "core/bending.h"
#include "core/membrane.h"
#include "mesh/sheet.h"
#include "test_check.h"

static void corners3(const pbng_sheet *s, const int64_t *c, int n, const double *X, double (*out)[3])
{
  for (int a = 0; a < n; ++a)
    for (int k = 0; k < 3; ++k) out[a][k] = X[3 * c[a] + k];
  (void)s;
}

static void check_grid(void)
{
  const int64_t nx = 7, ny = 5;
  const double o[3] = {0.1, 0.2, 0.3}, eu[3] = {1, 0, 1}, ev[3] = {0, 2, 0}, lx = 1.2, ly = 0.8;
  pbng_sheet s;
  PetscErrorCode ierr = pbng_sheet_grid(nx, ny, lx, ly, o, eu, ev, &s);
  check(ierr == 0, "grid made", ierr, 0);
  const int64_t edges = (nx - 1) * ny + nx * (ny - 1) + (nx - 1) * (ny - 1), boundary = 2 * (nx - 1) + 2 * (ny - 1);
  check(s.nnodes == nx * ny && s.ntri == 2 * (nx - 1) * (ny - 1), "grid: node and triangle counts", (double)s.ntri, 2.0 * (nx - 1) * (ny - 1));
  check(s.nstencil == edges - boundary, "grid: one stencil per interior edge", (double)s.nstencil, (double)(edges - boundary));
  double nrm[3] = {eu[1] * ev[2] - eu[2] * ev[1], eu[2] * ev[0] - eu[0] * ev[2], eu[0] * ev[1] - eu[1] * ev[0]}, area = 0;
  int wrong = 0;
  for (int64_t t = 0; t < s.ntri; ++t) {
    double x[3][3], a[3], b[3], c[3];
    corners3(&s, s.tri[t], 3, s.X, x);
    for (int k = 0; k < 3; ++k) a[k] = x[1][k] - x[0][k], b[k] = x[2][k] - x[0][k];
    c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
    wrong += c[0] * nrm[0] + c[1] * nrm[1] + c[2] * nrm[2] <= 0;
    area += 0.5 * sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  }
  check(wrong == 0, "grid: every triangle counter-clockwise about e_u x e_v", wrong, 0);
  check(fabs(area - lx * ly) < 1e-12, "grid: areas sum to lx ly", area, lx * ly);
  int bad = 0;
  for (int64_t k = 0; k < s.nstencil; ++k) {
    const int64_t *st = s.stencil[k];
    int found = 0;
    for (int64_t t = 0; t < s.ntri; ++t) {
      const int64_t *c = s.tri[t];
      int has0 = 0, has1 = 0, has2 = 0, has3 = 0;
      for (int a = 0; a < 3; ++a) has0 |= c[a] == st[0], has1 |= c[a] == st[1], has2 |= c[a] == st[2], has3 |= c[a] == st[3];
      found += has0 && has1 && (has2 || has3);
    }
    bad += found != 2 || st[2] == st[3] || st[0] >= st[1];
  }
  check(bad == 0, "grid: each stencil's edge in both its triangles, third corners apart", bad, 0);
  int rising = 0, falling = 0; /* diagonal edges: (i, j)-(i+1, j+1) and (i+1, j)-(i, j+1) */
  for (int64_t k = 0; k < s.nstencil; ++k) rising += s.stencil[k][1] - s.stencil[k][0] == nx + 1, falling += s.stencil[k][1] - s.stencil[k][0] == nx - 1;
  check(rising == falling && rising + falling == (nx - 1) * (ny - 1), "grid: the diagonals alternate (as many of each direction)", rising, falling);
  /* rest: zero energies */
  pbng_membrane_material m;
  pbng_membrane_orthotropic(1000, 500, 200, 0.3, 0.15, 0.01, &m);
  double worst = 0;
  for (int64_t t = 0; t < s.ntri; ++t) {
    double X[3][3];
    pbng_membrane_rest r;
    corners3(&s, s.tri[t], 3, s.X, X);
    pbng_membrane_rest_shape(X, eu, &r);
    worst = fmax(worst, fabs(pbng_membrane_energy(&m, &r, X)));
  }
  for (int64_t k = 0; k < s.nstencil; ++k) {
    double X[4][3];
    pbng_bending_stencil b;
    corners3(&s, s.stencil[k], 4, s.X, X);
    check(pbng_bending_rest(X, &b) == 0, "grid: stencil rest shape", 0, 0);
    worst = fmax(worst, pbng_bending_energy(&b, 1.0, X));
  }
  check(worst < 1e-20, "grid at rest: zero membrane and bending energy", worst, 0);
  /* fold rigidly along the grid line i = 3 (a line of constant u): the part beyond it turned about it */
  const double theta = 0.6, ulen = sqrt(2.0);
  const double uu[3] = {eu[0] / ulen, eu[1] / ulen, eu[2] / ulen}, vv[3] = {0, 1, 0};
  double nn[3] = {uu[1] * vv[2] - uu[2] * vv[1], uu[2] * vv[0] - uu[0] * vv[2], uu[0] * vv[1] - uu[1] * vv[0]};
  double *x;
  PetscMalloc1(3 * s.nnodes, &x);
  const double ufold = lx * 3.0 / (nx - 1);
  for (int64_t p = 0; p < s.nnodes; ++p) {
    double d[3], cu, cv;
    for (int k = 0; k < 3; ++k) d[k] = s.X[3 * p + k] - o[k];
    cu = d[0] * uu[0] + d[1] * uu[1] + d[2] * uu[2], cv = d[0] * vv[0] + d[1] * vv[1] + d[2] * vv[2];
    const double beyond = cu > ufold + 1e-12 ? cu - ufold : 0.0, along = cu - beyond;
    for (int k = 0; k < 3; ++k) x[3 * p + k] = o[k] + (along + beyond * cos(theta)) * uu[k] + cv * vv[k] + beyond * sin(theta) * nn[k];
  }
  int on_line = 0, off_bad = 0;
  double worst_hinge = 0;
  for (int64_t k = 0; k < s.nstencil; ++k) {
    double X[4][3], y[4][3];
    pbng_bending_stencil b;
    corners3(&s, s.stencil[k], 4, s.X, X), corners3(&s, s.stencil[k], 4, x, y);
    pbng_bending_rest(X, &b);
    const double e = pbng_bending_energy(&b, 1.0, y);
    const int i0 = (int)(s.stencil[k][0] % nx), i1 = (int)(s.stencil[k][1] % nx);
    if (i0 == 3 && i1 == 3) {
      double L = 0;
      for (int c = 0; c < 3; ++c) L += (X[1][c] - X[0][c]) * (X[1][c] - X[0][c]);
      const double expect = 0.5 * b.scale * 4 * L * pow(sin(theta / 2), 2);
      worst_hinge = fmax(worst_hinge, fabs(e - expect) / expect), ++on_line;
    } else off_bad += e > 1e-20;
  }
  check(on_line == ny - 1 && worst_hinge < 1e-10, "folded sheet: the fold line's stencils carry the hinge energy", worst_hinge, 0);
  check(off_bad == 0, "folded sheet: no bending energy off the fold line", off_bad, 0);
  /* a uniform stretch by 1.1 along the weft: the same S in every triangle */
  for (int64_t p = 0; p < s.nnodes; ++p) {
    double d[3], cu;
    for (int k = 0; k < 3; ++k) d[k] = s.X[3 * p + k] - o[k];
    cu = d[0] * uu[0] + d[1] * uu[1] + d[2] * uu[2];
    for (int k = 0; k < 3; ++k) x[3 * p + k] = s.X[3 * p + k] + 0.1 * cu * uu[k];
  }
  double S0 = 0, spread = 0;
  for (int64_t t = 0; t < s.ntri; ++t) {
    double X[3][3], y[3][3], F[3][2], S[2][2];
    pbng_membrane_rest r;
    corners3(&s, s.tri[t], 3, s.X, X), corners3(&s, s.tri[t], 3, x, y);
    pbng_membrane_rest_shape(X, eu, &r);
    pbng_membrane_deformation(y, &r, F);
    pbng_membrane_stress(&m, F, S);
    if (t == 0) S0 = S[0][0];
    spread = fmax(spread, fabs(S[0][0] - S0) + fabs(S[0][1]));
  }
  const double exx = 0.5 * (1.1 * 1.1 - 1);
  check(spread < 1e-10 * S0 && fabs(S0 - m.C[0][0] * exx) < 1e-10 * S0, "stretched along the weft: S_xx = C_11 E_xx in every triangle", S0, m.C[0][0] * exx);
  PetscFree(x);
  pbng_sheet_destroy(&s);
}

/* A two-triangle sheet altered by `change`; the stencil build's error must name `expect`. */
static void check_bad(const char *what, int change, const char *expect)
{
  pbng_sheet s;
  const double o[3] = {0, 0, 0}, eu[3] = {1, 0, 0}, ev[3] = {0, 1, 0};
  pbng_sheet_grid(2, 2, 1, 1, o, eu, ev, &s);
  PetscRealloc(sizeof(*s.tri) * 3, &s.tri);
  if (change == 0) s.tri[2][0] = s.tri[0][0], s.tri[2][1] = s.tri[0][2], s.tri[2][2] = s.tri[0][1], s.ntri = 3; /* a third on an edge */
  if (change == 1) { const int64_t t = s.tri[1][1]; s.tri[1][1] = s.tri[1][2], s.tri[1][2] = t; } /* flipped */
  if (change == 2) s.tri[1][1] = s.tri[1][0];                                                         /* repeated corner */
  if (change == 3) s.tri[1][2] = 7;                                                                   /* out of range */
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  PetscErrorCode ierr = pbng_sheet_build_stencils(&s);
  PetscPopErrorHandler();
  char *specific = NULL;
  PetscErrorMessage(ierr, NULL, &specific); /* the message the failing check set */
  char line[300];
  snprintf(line, sizeof(line), "%s (message '%s' names '%s')", what, specific ? specific : "", expect);
  check(ierr != 0 && specific && strstr(specific, expect), line, ierr, 1);
  pbng_sheet_destroy(&s);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  (void)next_random;
  check_grid();
  check_bad("non-manifold edge refused", 0, "non-manifold");
  check_bad("inconsistent orientation refused", 1, "same way");
  check_bad("repeated corner refused", 2, "repeats");
  check_bad("corner out of range refused", 3, "outside");
  pbng_sheet s;
  const double o[3] = {0, 0, 0}, eu[3] = {1, 0, 0};
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  check(pbng_sheet_grid(1, 3, 1, 1, o, eu, eu, &s) != 0 && pbng_sheet_grid(3, 3, 1, 1, o, eu, eu, &s) != 0 && pbng_sheet_grid(3, 3, 0, 1, o, eu, (double[3]){0, 1, 0}, &s) != 0,
        "bad grid arguments refused", 0, 0);
  PetscPopErrorHandler();
  printf("test_sheet: %d checks, %d failed\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures != 0;
}
