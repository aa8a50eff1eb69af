/* VBD's node block (-vbd_exact_block, docs/gpbd_solver.md#vbd-and-pbng): pbng_tet_node_block, node a's
 * exact 3x3 block V sum g^T (dP/dF) g, against central differences of the node's element force
 * -V P g_a in x_a and against the diagonal blocks of the 12x12 pbng_tet_stiffness, for every material on
 * mild, compressed and (where the energy is finite) inverted tetrahedra; and pbng_clamp_psd3: PSD,
 * symmetric, the same as LAPACK's eigenvalue clamp (pbng_project_psd), a PD block unchanged. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/mat3.h"
#include "core/stress_derivative.h"
#include "problem/psd_projection.h"

#include "test_check.h"

static double uniform(uint64_t *s, double lo, double hi) { return lo + (hi - lo) * next_random(s); }

/* Node a's element force -V P(F(x)) g_a. */
static void node_force(const pbng_material *m, const double x[12], const double B[9], double V, int a, double f[3])
{
  double F[9], P[9], g[3], Pg[3];
  pbng_tet_deformation_gradient(&x[0], &x[3], &x[6], &x[9], B, F);
  pbng_first_piola(m, F, P);
  pbng_tet_shape_gradient(B, a, g);
  mat3_vec(P, g, Pg);
  for (int d = 0; d < 3; ++d) f[d] = -V * Pg[d];
}

static double smallest_eigenvalue3(const double H[9])
{
  const double p1 = H[1] * H[1] + H[2] * H[2] + H[5] * H[5], q = (H[0] + H[4] + H[8]) / 3.0;
  const double p2 = (H[0] - q) * (H[0] - q) + (H[4] - q) * (H[4] - q) + (H[8] - q) * (H[8] - q) + 2 * p1, p = sqrt(p2 / 6.0);
  if (p == 0.0) return q;
  double Bm[9];
  for (int k = 0; k < 9; ++k) Bm[k] = (H[k] - (k % 4 == 0 ? q : 0.0)) / p;
  const double r = fmax(-1.0, fmin(1.0, mat3_det(Bm) / 2.0)), phi = acos(r) / 3.0;
  return q + 2 * p * cos(phi + 2.0943951023931957) /* + 2 pi / 3 */;
}

static void check_tet(const pbng_material *m, const char *name, uint64_t *s, double squeeze, int inverted, const char *label)
{
  const double X[12] = {0, 0, 0, 1, 0.1, 0, 0.2, 1, 0, 0.1, 0.3, 1.2};
  double B[9], x[12], F[9], D[81], K[144], scale = 0.0;
  char what[192];
  const double V = pbng_tet_rest_shape(&X[0], &X[3], &X[6], &X[9], B);
  for (int k = 0; k < 12; ++k) x[k] = squeeze * X[k] + uniform(s, -0.2, 0.2);
  if (inverted)
    for (int a = 0; a < 4; ++a) x[3 * a] = -x[3 * a];
  pbng_tet_deformation_gradient(&x[0], &x[3], &x[6], &x[9], B, F);
  if ((mat3_det(F) > 0) == inverted) return; /* the perturbation undid the intent: not this case */
  pbng_stress_derivative(m, F, D);
  pbng_tet_stiffness(D, B, V, K);
  for (int p = 0; p < 144; ++p) scale = fmax(scale, fabs(K[p]));
  for (int a = 0; a < 4; ++a) {
    double g[3], H[9], Hp[9], Hl[9];
    pbng_tet_shape_gradient(B, a, g);
    pbng_tet_node_block(D, g, V, H);
    for (int r = 0; r < 3; ++r) {
      double xp[12], xm[12], fp[3], fm[3];
      const double h = 1e-6;
      memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
      xp[3 * a + r] += h, xm[3 * a + r] -= h;
      node_force(m, xp, B, V, a, fp);
      node_force(m, xm, B, V, a, fm);
      for (int c = 0; c < 3; ++c) {
        const double fd = -(fp[c] - fm[c]) / (2 * h);
        snprintf(what, sizeof(what), "%s %s: node %d block (%d,%d) vs force differences", name, label, a, c, r);
        check(fabs(fd - H[3 * c + r]) <= 1e-6 * scale, what, H[3 * c + r], fd);
        snprintf(what, sizeof(what), "%s %s: node %d block (%d,%d) vs the 12x12 stiffness", name, label, a, c, r);
        check(fabs(K[12 * (3 * a + c) + 3 * a + r] - H[3 * c + r]) <= 1e-12 * scale, what, H[3 * c + r], K[12 * (3 * a + c) + 3 * a + r]);
      }
    }
    /* the clamp: PSD, symmetric, LAPACK's clamp; a positive definite block unchanged */
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < r; ++c) H[3 * r + c] = H[3 * c + r] = 0.5 * (H[3 * r + c] + H[3 * c + r]);
    memcpy(Hp, H, sizeof(Hp)), memcpy(Hl, H, sizeof(Hl));
    const double lmin = smallest_eigenvalue3(H);
    pbng_clamp_psd3(Hp);
    check(pbng_project_psd(3, Hl) == 0, "LAPACK clamp", 0, 0);
    double diff = 0.0, asym = 0.0, hs = 1e-300;
    for (int k = 0; k < 9; ++k) diff = fmax(diff, fabs(Hp[k] - Hl[k])), hs = fmax(hs, fabs(H[k]));
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) asym = fmax(asym, fabs(Hp[3 * r + c] - Hp[3 * c + r]));
    snprintf(what, sizeof(what), "%s %s: node %d clamped block = LAPACK's clamp", name, label, a);
    check(diff <= 1e-10 * hs, what, diff, 0.0);
    snprintf(what, sizeof(what), "%s %s: node %d clamped block PSD and symmetric", name, label, a);
    check(smallest_eigenvalue3(Hp) >= -1e-8 * hs /* the closed form's round-off at a zero eigenvalue */ && asym <= 1e-12 * hs, what, smallest_eigenvalue3(Hp), asym);
    if (lmin > 1e-8 * hs) {
      snprintf(what, sizeof(what), "%s %s: node %d positive definite block unchanged", name, label, a);
      check(memcmp(Hp, H, sizeof(H)) == 0, what, lmin, 0.0);
    }
  }
}

int main(void)
{
  const struct {
    pbng_material_kind kind;
    const char *name;
  } mats[] = {{PBNG_MATERIAL_COROTATED, "corotated"},
              {PBNG_MATERIAL_NEOHOOKEAN, "neohookean"},
              {PBNG_MATERIAL_STABLE_NEOHOOKEAN, "stable_neohookean"},
              {PBNG_MATERIAL_STVK, "stvk"},
              {PBNG_MATERIAL_NEOHOOKEAN_LOG, "neohookean_log"}};
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t k = 0; k < sizeof(mats) / sizeof(mats[0]); ++k) {
    pbng_material m;
    pbng_material_init(&m, mats[k].kind, 1e5, 0.3);
    for (int t = 0; t < 20; ++t) {
      check_tet(&m, mats[k].name, &s, 1.0, 0, "mild");
      check_tet(&m, mats[k].name, &s, 0.4, 0, "compressed");
      if (mats[k].kind != PBNG_MATERIAL_NEOHOOKEAN_LOG && mats[k].kind != PBNG_MATERIAL_COROTATED) check_tet(&m, mats[k].name, &s, 1.0, 1, "inverted");
    }
  }
  printf("test_vbd_block: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
