/* The sheet kinds' terms as the problem uses them (src/problem/sheet_terms.c; docs/cloth.md):
 *  - per corner, the force is minus the energy's gradient (central differences of
 *    pbng_sheet_element_energy) for a stretched, a compressed and a folded state of a tri3 and a bend4;
 *  - the exact element Hessian is the force's derivative (central differences) and symmetric;
 *  - PBNG's block is symmetric positive definite: for a slack membrane (rest state: no stress) too,
 *    where only the normal shift makes it so (1e-2 of its mean diagonal), and it adds nothing in the
 *    sheet's plane; the stencil's block is the exact diagonal block k_b Q_aa I;
 *  - the corner masses sum to density x thickness x area; a stencil has none. */
#include <math.h>
#include <string.h>
#include "problem/sheet_terms.h"
#include "test_check.h"

static const int32_t corners[4] = {0, 1, 2, 3};

static double energy_at(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const double *x)
{
  return pbng_sheet_element_energy(m, kind, r, corners, x);
}

/* The force of every corner against central differences of the energy; the Hessian against central
 * differences of the forces. */
static void check_derivatives(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const double *x0, const char *what)
{
  const int n = kind == PBNG_ELEMENT_TRI3 ? 3 : 4;
  double x[12], K[144], err_f = 0, scale_f = 0, err_k = 0, scale_k = 0, asym = 0;
  memcpy(x, x0, sizeof(double) * 3 * n);
  pbng_sheet_element_hessian(m, kind, r, corners, x, K);
  for (int a = 0; a < n; ++a) {
    double f[3];
    pbng_sheet_node_terms(m, kind, r, corners, a, x, f, NULL);
    for (int i = 0; i < 3; ++i) {
      const double eps = 1e-6, keep = x[3 * a + i];
      x[3 * a + i] = keep + eps;
      const double ep = energy_at(m, kind, r, x);
      double fp[4][3], fm[4][3];
      for (int b = 0; b < n; ++b) pbng_sheet_node_terms(m, kind, r, corners, b, x, fp[b], NULL);
      x[3 * a + i] = keep - eps;
      const double em = energy_at(m, kind, r, x);
      for (int b = 0; b < n; ++b) pbng_sheet_node_terms(m, kind, r, corners, b, x, fm[b], NULL);
      x[3 * a + i] = keep;
      err_f = fmax(err_f, fabs(f[i] + (ep - em) / (2 * eps))), scale_f = fmax(scale_f, fabs(f[i]));
      for (int b = 0; b < n; ++b)
        for (int k = 0; k < 3; ++k) { /* K[(3b+k)(3a+i)] = -d f_bk / d x_ai */
          const double fd = -(fp[b][k] - fm[b][k]) / (2 * eps), v = K[3 * n * (3 * b + k) + 3 * a + i];
          err_k = fmax(err_k, fabs(v - fd)), scale_k = fmax(scale_k, fabs(v));
          asym = fmax(asym, fabs(v - K[3 * n * (3 * a + i) + 3 * b + k]));
        }
    }
  }
  char msg[128];
  snprintf(msg, sizeof msg, "%s: force = -dE/dx (central differences)", what);
  check(err_f <= 1e-6 * fmax(scale_f, 1e-3), msg, err_f, scale_f);
  snprintf(msg, sizeof msg, "%s: exact Hessian = -df/dx (central differences)", what);
  check(err_k <= 1e-5 * fmax(scale_k, 1e-3), msg, err_k, scale_k);
  snprintf(msg, sizeof msg, "%s: exact Hessian symmetric", what);
  check(asym <= 1e-12 * scale_k, msg, asym, scale_k);
}

/* Smallest eigenvalue of a symmetric 3 x 3 matrix over its largest diagonal entry, by the
 * characteristic polynomial's trigonometric roots. */
static double smallest_eigen_ratio(const double H[9])
{
  const double q = (H[0] + H[4] + H[8]) / 3;
  const double p1 = H[1] * H[1] + H[2] * H[2] + H[5] * H[5];
  const double p2 = (H[0] - q) * (H[0] - q) + (H[4] - q) * (H[4] - q) + (H[8] - q) * (H[8] - q) + 2 * p1, p = sqrt(p2 / 6);
  if (p == 0) return 1;
  double B[9];
  for (int k = 0; k < 9; ++k) B[k] = (H[k] - (k % 4 == 0 ? q : 0)) / p;
  const double det = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) + B[2] * (B[3] * B[7] - B[4] * B[6]);
  const double phi = acos(fmax(-1, fmin(1, det / 2))) / 3;
  return (q + 2 * p * cos(phi + 2.0943951023931954923)) / fmax(H[0], fmax(H[4], H[8]));
}

int main(void)
{
  (void)next_random; /* deterministic states only */
  pbng_sheet_material m = {.bending_stiffness = 0.3, .weft = {1, 0, 0}, .density = 200};
  check(pbng_membrane_orthotropic(1e3, 5e2, 2e2, 0.3, 0.15, 0.01, &m.membrane) == NULL, "orthotropic membrane", 0, 0);
  const double X[4][3] = {{0, 0, 0}, {1, 0.1, 0}, {0.2, 0.9, 0.1}, {0.8, -0.7, 0.05}};
  pbng_sheet_rest tri, bend;
  check(pbng_membrane_rest_shape((const double(*)[3])X, m.weft, &tri.membrane) == 0, "rest triangle", 0, 0);
  check(pbng_bending_rest(X, &bend.bending) == 0, "rest stencil", 0, 0);

  /* states: stretched, compressed, folded (corner 3 lifted out of the plane) */
  const double states[3][12] = {{0, 0, 0, 1.3, 0.1, 0.05, 0.25, 1.1, 0.1, 0.9, -0.8, 0.0},
                                {0, 0, 0, 0.7, 0.1, 0.0, 0.15, 0.6, 0.12, 0.6, -0.5, 0.05},
                                {0, 0, 0, 1.0, 0.12, 0.0, 0.2, 0.85, 0.3, 0.7, -0.6, 0.6}};
  const char *names[3] = {"stretched", "compressed", "folded"};
  for (int k = 0; k < 3; ++k) {
    char what[64];
    snprintf(what, sizeof what, "tri3 %s", names[k]);
    check_derivatives(&m, PBNG_ELEMENT_TRI3, &tri, states[k], what);
    snprintf(what, sizeof what, "bend4 %s", names[k]);
    check_derivatives(&m, PBNG_ELEMENT_BEND4, &bend, states[k], what);
  }

  /* PBNG's blocks */
  double f[3], H[9], Hs[9];
  const double *x = &X[0][0];
  for (int a = 0; a < 3; ++a) {
    pbng_sheet_node_terms(&m, PBNG_ELEMENT_TRI3, &tri, corners, a, x, f, H);
    check(smallest_eigen_ratio(H) > 1e-7, "slack membrane: PBNG block positive definite (the normal shift)", smallest_eigen_ratio(H), 0);
    pbng_membrane_node_block(&m.membrane, &tri.membrane, X, a, Hs);
    double u[3] = {X[1][0] - X[0][0], X[1][1] - X[0][1], X[1][2] - X[0][2]}, in_plane = 0; /* an in-plane direction: the shift leaves it */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) in_plane += u[i] * (H[3 * i + j] - Hs[3 * i + j]) * u[j];
    check(fabs(in_plane) <= 1e-12 * (Hs[0] + Hs[4] + Hs[8]), "the shift adds nothing in the sheet's plane", in_plane, 0);
    check(fabs(f[0]) + fabs(f[1]) + fabs(f[2]) < 1e-9, "no force at rest", f[0], f[1]);
  }
  for (int a = 0; a < 4; ++a) {
    double K[144];
    pbng_sheet_node_terms(&m, PBNG_ELEMENT_BEND4, &bend, corners, a, states[2], f, H);
    pbng_sheet_element_hessian(&m, PBNG_ELEMENT_BEND4, &bend, corners, states[2], K);
    double err = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) err = fmax(err, fabs(H[3 * i + j] - K[12 * (3 * a + i) + 3 * a + j]));
    check(err == 0, "stencil: PBNG block = exact diagonal block k_b Q_aa I", err, 0);
  }

  /* masses */
  const double ms = pbng_sheet_corner_mass(&m, PBNG_ELEMENT_TRI3, &tri, 0);
  check(fabs(3 * ms - m.density * m.membrane.thickness * tri.membrane.area) <= 1e-15, "tri3 corner masses sum to rho h A", 3 * ms,
        m.density * m.membrane.thickness * tri.membrane.area);
  check(pbng_sheet_corner_mass(&m, PBNG_ELEMENT_BEND4, &bend, 0) == 0, "a stencil has no mass", 0, 0);
  if (failures) {
    printf("test_sheet_terms: %d of %d checks FAILED\n", failures, checks);
    return 1;
  }
  printf("test_sheet_terms: %d checks passed\n", checks);
  return 0;
}
