/* The seed's energy constraints (src/methods/pbd/energy_constraints.c) on one element of every kind:
 *  - grad C (Eq. 23) against central differences of C itself, for every kind x material x split
 *    (where S < 0, Alg. 2's G is minus the derivative of C = |S|^1/2: checked as such);
 *  - the terms' energies sum, with compliance, to pbng's element energy:
 *    sum_k sign(S_k) C_k^2 / (2 alpha_k) = sum_q V_q Psi(F_q) + offset sum_q V_q, at random F;
 *  - at rest the stable split makes no correction at all, Macklin's split a nonzero one (the seed's
 *    point, Sec. 3 and 4.2);
 *  - one projection of a term with a small step lowers the term's energy;
 *  - corotated has no split; StVK has Table 2's split only (k_0 = 2 mu, k_1 = lambda), none for lambda < 0;
 *  - the sheet terms' constraint C = sqrt(2 E) (alpha = 1) of pbd/xpbd/xpbd_qs/xpbd_ho: C^2 / 2 = E, grad C
 *    against central differences, satisfied (no step) at rest, a small XPBD step lowers the energy, and
 *    projected to convergence alone its secondary residual vanishes and its force grad C lambda = -grad E / at. */
#include <math.h>
#include <stdio.h>
#include "test_check.h"
#include <string.h>
#include "methods/pbd/energy_constraints.h"
#include "problem/geometry.h"
#include "problem/sheet_terms.h"


/* One element of a kind: reference nodes moved by an affine map and a small smooth bend (so that
 * hexahedra and prisms are not affine), its quadrature data, and identity node indices. */
typedef struct {
  const pbng_element_type *type;
  double X[PBNG_MAX_ELEMENT_NODES][3];
  double V[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS * PBNG_MAX_ELEMENT_NODES * 3];
  int32_t node[PBNG_MAX_ELEMENT_NODES];
  pbng_element_points el;
} one_element;

static void one_element_init(pbng_element_kind kind, one_element *o)
{
  static const double A[9] = {1.3, 0.2, -0.1, 0.1, 0.9, 0.15, -0.05, 0.1, 1.1};
  static pbng_element_reference ref; /* large; filled anew for each kind */
  double g[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], det_min;
  memset(o, 0, sizeof(*o));
  o->type = pbng_element_type_get(kind);
  pbng_element_reference_init(o->type, &ref);
  for (int a = 0; a < o->type->nodes; ++a) {
    const double *r = o->type->ref_nodes[a];
    for (int i = 0; i < 3; ++i) o->X[a][i] = A[3 * i] * r[0] + A[3 * i + 1] * r[1] + A[3 * i + 2] * r[2] + 0.02 * sin(r[(i + 1) % 3] + 2 * r[i]);
    o->node[a] = a;
  }
  pbng_element_precompute(&ref, (const double(*)[3])o->X, o->V, g, &det_min);
  for (int q = 0; q < ref.nq; ++q)
    for (int a = 0; a < o->type->nodes; ++a)
      for (int d = 0; d < 3; ++d) o->grad[3 * (o->type->nodes * q + a) + d] = g[q][a][d];
  o->el = (pbng_element_points){.nen = o->type->nodes, .nq = ref.nq, .node = o->node, .V = o->V, .grad = o->grad};
}

/* x = X + amplitude * random. */
static void perturbed(const one_element *o, double amplitude, uint64_t *seed, double *x)
{
  for (int a = 0; a < o->el.nen; ++a)
    for (int d = 0; d < 3; ++d) x[3 * a + d] = o->X[a][d] + amplitude * (next_random(seed) - 0.5);
}

/* S of term k at x (with its sign; the round-off skip does not matter here). */
static double term_sum(const pbng_energy_split *sp, int k, const one_element *o, const double *x)
{
  double S, C, G[PBNG_MAX_ELEMENT_NODES][3];
  pbng_energy_constraint(sp, k, &o->el, x, &S, &C, G);
  return S;
}

static double element_energy(const pbng_material *m, const one_element *o, const double *x, double *volume)
{
  double E = 0.0;
  *volume = 0.0;
  for (int q = 0; q < o->el.nq; ++q) {
    double F[9];
    pbng_qp_deformation_gradient(o->el.nen, o->node, &o->grad[3 * o->el.nen * q], x, F);
    E += o->V[q] * pbng_energy_density(m, F);
    *volume += o->V[q];
  }
  return E;
}

/* Central differences of C = |S|^1/2 against sign(S) G, node by node. */
static void check_gradient(const pbng_energy_split *sp, const one_element *o, const double *x0, const char *tag)
{
  double x[3 * PBNG_MAX_ELEMENT_NODES];
  char what[160];
  memcpy(x, x0, sizeof(double) * 3 * (size_t)o->el.nen);
  for (int k = 0; k < PBNG_SPLIT_TERMS; ++k) {
    double S, C, G[PBNG_MAX_ELEMENT_NODES][3], gmax = 0.0, err = 0.0;
    if (!pbng_energy_constraint(sp, k, &o->el, x, &S, &C, G)) continue;
    const double sign = S < 0 ? -1.0 : 1.0;
    for (int a = 0; a < o->el.nen; ++a)
      for (int d = 0; d < 3; ++d) {
        const double h = 1e-6, xi = x[3 * a + d];
        x[3 * a + d] = xi + h;
        const double Cp = sqrt(fabs(term_sum(sp, k, o, x)));
        x[3 * a + d] = xi - h;
        const double Cm = sqrt(fabs(term_sum(sp, k, o, x)));
        x[3 * a + d] = xi;
        err = fmax(err, fabs((Cp - Cm) / (2 * h) - sign * G[a][d]));
        gmax = fmax(gmax, fabs(G[a][d]));
      }
    snprintf(what, sizeof(what), "grad C_%d = central differences of C (%s, S %.3g)", k, tag, S);
    check(err <= 1e-6 * (1.0 + gmax), what, err, gmax);
  }
}

/* sum_k sign(S_k) C_k^2 k_k / 2 = element energy + offset * volume. */
static void check_energy(const pbng_material *m, const pbng_energy_split *sp, const one_element *o, const double *x, const char *tag)
{
  double vol, sum = 0.0;
  char what[160];
  const double E = element_energy(m, o, x, &vol);
  for (int k = 0; k < PBNG_SPLIT_TERMS; ++k) {
    double S, C, G[PBNG_MAX_ELEMENT_NODES][3];
    const int active = pbng_energy_constraint(sp, k, &o->el, x, &S, &C, G);
    sum += 0.5 * sp->stiffness[k] * (active ? (S < 0 ? -C * C : C * C) : S); /* C^2 / (2 alpha) */
  }
  snprintf(what, sizeof(what), "sum_k C_k^2 / (2 alpha_k) = element energy + const (%s)", tag);
  check(fabs(sum - (E + sp->offset * vol)) <= 1e-11 * (fabs(E) + fabs(sp->offset * vol)), what, sum, E + sp->offset * vol);
}

/* At rest: no correction from the stable split (bitwise), a nonzero one from Macklin's. */
static void check_rest(const pbng_energy_split *sp, const one_element *o, const char *tag)
{
  double x[3 * PBNG_MAX_ELEMENT_NODES], w[PBNG_MAX_ELEMENT_NODES], lambda[PBNG_SPLIT_TERMS] = {0, 0}, moved = 0.0;
  char what[160];
  for (int a = 0; a < o->el.nen; ++a) {
    w[a] = 1.0;
    for (int d = 0; d < 3; ++d) x[3 * a + d] = o->X[a][d];
  }
  const uint32_t bits = pbng_project_energy_constraints(sp, 1e4, &o->el, w, lambda, x);
  for (int a = 0; a < o->el.nen; ++a)
    for (int d = 0; d < 3; ++d) moved = fmax(moved, fabs(x[3 * a + d] - o->X[a][d]));
  if (sp->kind == PBNG_SPLIT_STABLE) {
    snprintf(what, sizeof(what), "stable split: no correction at rest (%s)", tag);
    check(bits == 0 && moved == 0.0, what, moved, bits);
  } else {
    snprintf(what, sizeof(what), "Macklin's split: a correction at rest (%s)", tag);
    check(bits != 0 && moved > 1e-6, what, moved, bits);
  }
}

/* Projecting term k alone (Eq. 16-17) with a small step lowers its energy k/2 S_k: the constraint
 * force is the term's force, for either sign of S. */
static void check_projection(const pbng_energy_split *sp, const one_element *o, const double *x0, const char *tag)
{
  double w[PBNG_MAX_ELEMENT_NODES];
  char what[160];
  for (int a = 0; a < o->el.nen; ++a) w[a] = 1.0;
  for (int k = 0; k < PBNG_SPLIT_TERMS; ++k) {
    double x[3 * PBNG_MAX_ELEMENT_NODES], lambda = 0.0;
    const double before = term_sum(sp, k, o, x0);
    memcpy(x, x0, sizeof(double) * 3 * (size_t)o->el.nen);
    pbng_project_energy_term(sp, k, 1e3 * sp->stiffness[k], &o->el, w, &lambda, x);
    const double after = term_sum(sp, k, o, x);
    snprintf(what, sizeof(what), "a small XPBD step of term %d lowers its energy (%s)", k, tag);
    check(after < before, what, after, before);
  }
}

/* The sheet terms' energy constraints (a tri3 and a bend4 on corners 0..3 of X) at state x. */
static void check_sheet_constraint(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const double *x0, const char *tag)
{
  static const int32_t corners[4] = {0, 1, 2, 3};
  const int n = kind == PBNG_ELEMENT_TRI3 ? 3 : 4;
  double x[12], G[4][3], C, err = 0.0, gmax = 0.0, w[4] = {1, 1, 1, 1}, force[12] = {0};
  char what[160];
  memcpy(x, x0, sizeof(x));
  const double E = pbng_sheet_element_energy(m, kind, r, corners, x);
  snprintf(what, sizeof(what), "%s: the constraint is active", tag);
  check(pbng_sheet_constraint(m, kind, r, corners, x, &C, G) == 1, what, E, 0);
  snprintf(what, sizeof(what), "%s: C^2 / 2 = E (alpha = 1)", tag);
  check(fabs(0.5 * C * C - E) <= 1e-13 * E, what, 0.5 * C * C, E);
  for (int a = 0; a < n; ++a)
    for (int d = 0; d < 3; ++d) {
      double Cp, Cm, Gs[4][3];
      const double h = 1e-6, keep = x[3 * a + d];
      x[3 * a + d] = keep + h;
      pbng_sheet_constraint(m, kind, r, corners, x, &Cp, Gs);
      x[3 * a + d] = keep - h;
      pbng_sheet_constraint(m, kind, r, corners, x, &Cm, Gs);
      x[3 * a + d] = keep;
      err = fmax(err, fabs(G[a][d] - (Cp - Cm) / (2 * h))), gmax = fmax(gmax, fabs(G[a][d]));
    }
  snprintf(what, sizeof(what), "%s: grad C = grad E / C (central differences)", tag);
  check(err <= 1e-6 * gmax, what, err, gmax);
  double lambda = 0.0, at = 1e3 * (w[0] * (G[0][0] * G[0][0] + G[0][1] * G[0][1] + G[0][2] * G[0][2]) + 1.0); /* a small step */
  pbng_project_sheet_constraint(m, kind, r, corners, at, w, &lambda, x);
  snprintf(what, sizeof(what), "%s: a small XPBD step lowers the energy", tag);
  check(pbng_sheet_element_energy(m, kind, r, corners, x) < E, what, pbng_sheet_element_energy(m, kind, r, corners, x), E);
  at = 1.0, lambda = 0.0; /* alone and projected to convergence: C + at lambda = 0, force grad C lambda = -grad E / at */
  memcpy(x, x0, sizeof(x));
  for (int it = 0; it < 200; ++it) pbng_project_sheet_constraint(m, kind, r, corners, at, w, &lambda, x);
  const double h2 = pbng_sheet_constraint_residual(m, kind, r, corners, at, lambda, x, force);
  double gradE[4][3];
  pbng_sheet_element_gradient(m, kind, r, corners, x, gradE);
  err = 0.0, gmax = 0.0;
  for (int a = 0; a < n; ++a)
    for (int d = 0; d < 3; ++d) err = fmax(err, fabs(force[3 * a + d] + gradE[a][d] / at)), gmax = fmax(gmax, fabs(gradE[a][d]));
  snprintf(what, sizeof(what), "%s: secondary residual 0 at the projection's fixed point", tag);
  check(h2 <= 1e-24 * (1.0 + E), what, h2, 0);
  snprintf(what, sizeof(what), "%s: constraint force grad C lambda = -grad E / alpha~", tag);
  check(err <= 1e-9 * gmax, what, err, gmax);
}

/* A tri3 and a bend4 on one rest stencil: the constraint in three states, and none at a flat rest shape. */
static void check_sheet_constraints(void)
{
  pbng_sheet_material m = {.bending_stiffness = 0.3, .weft = {1, 0, 0}, .density = 200};
  static const int32_t corners[4] = {0, 1, 2, 3};
  const double X[4][3] = {{0, 0, 0}, {1, 0.1, 0}, {0.2, 0.9, 0.1}, {0.8, -0.7, 0.05}};
  const double states[3][12] = {{0, 0, 0, 1.3, 0.1, 0.05, 0.25, 1.1, 0.1, 0.9, -0.8, 0.0},
                                {0, 0, 0, 0.7, 0.1, 0.0, 0.15, 0.6, 0.12, 0.6, -0.5, 0.05},
                                {0, 0, 0, 1.0, 0.12, 0.0, 0.2, 0.85, 0.3, 0.7, -0.6, 0.6}};
  const char *names[3] = {"stretched", "compressed", "folded"};
  pbng_sheet_rest tri, bend;
  check(pbng_membrane_orthotropic(1e3, 5e2, 2e2, 0.3, 0.15, 0.01, &m.membrane) == NULL, "orthotropic membrane", 0, 0);
  check(pbng_membrane_rest_shape(X, m.weft, &tri.membrane) == 0 && pbng_bending_rest(X, &bend.bending) == 0, "rest sheet terms", 0, 0);
  for (int k = 0; k < 3; ++k) {
    char tag[64];
    snprintf(tag, sizeof(tag), "tri3 %s", names[k]);
    check_sheet_constraint(&m, PBNG_ELEMENT_TRI3, &tri, states[k], tag);
    snprintf(tag, sizeof(tag), "bend4 %s", names[k]);
    check_sheet_constraint(&m, PBNG_ELEMENT_BEND4, &bend, states[k], tag);
  }
  /* at rest on a flat stencil (the bending model's rest shape: X above is not flat) */
  const double Xf[4][3] = {{0, 0, 0}, {1, 0.1, 0}, {0.2, 0.9, 0}, {0.8, -0.7, 0}};
  double x[12], w[4] = {1, 1, 1, 1}, lambda = 0.0;
  check(pbng_membrane_rest_shape(Xf, m.weft, &tri.membrane) == 0 && pbng_bending_rest(Xf, &bend.bending) == 0, "flat rest sheet terms", 0, 0);
  memcpy(x, Xf, sizeof(x));
  const uint32_t moved_tri = pbng_project_sheet_constraint(&m, PBNG_ELEMENT_TRI3, &tri, corners, 1.0, w, &lambda, x);
  const uint32_t moved_bend = pbng_project_sheet_constraint(&m, PBNG_ELEMENT_BEND4, &bend, corners, 1.0, w, &lambda, x);
  check(moved_tri == 0 && moved_bend == 0 && lambda == 0.0 && !memcmp(x, Xf, sizeof(x)),
        "sheet terms at rest: satisfied, no step (C = 0 where grad C is singular)", pbng_sheet_element_energy(&m, PBNG_ELEMENT_TRI3, &tri, corners, x),
        pbng_sheet_element_energy(&m, PBNG_ELEMENT_BEND4, &bend, corners, x));
}

int main(void)
{
  check_sheet_constraints();
  const pbng_material_kind materials[3] = {PBNG_MATERIAL_NEOHOOKEAN, PBNG_MATERIAL_STABLE_NEOHOOKEAN, PBNG_MATERIAL_STVK};
  uint64_t seed = 0x1234abcdull;
  pbng_material cor;
  pbng_energy_split sp;

  pbng_material_init(&cor, PBNG_MATERIAL_COROTATED, 1e3, 0.3);
  check(pbng_energy_split_init(&cor, PBNG_SPLIT_STABLE, &sp) == -1, "corotated has no split", 0, 0);
  pbng_material stvk;
  pbng_material_init(&stvk, PBNG_MATERIAL_STVK, 1e3, 0.3);
  check(pbng_energy_split_init(&stvk, PBNG_SPLIT_MACKLIN, &sp) == -1, "stvk has no Macklin split", 0, 0);
  check(pbng_energy_split_init(&stvk, PBNG_SPLIT_STABLE, &sp) == 0 && sp.stiffness[0] == 2.0 * stvk.mu && sp.stiffness[1] == stvk.lambda,
        "stvk split: k_0 = 2 mu, k_1 = lambda", sp.stiffness[0], sp.stiffness[1]);
  pbng_material_init(&stvk, PBNG_MATERIAL_STVK, 1e3, -0.2);
  check(pbng_energy_split_init(&stvk, PBNG_SPLIT_STABLE, &sp) == -1, "stvk with lambda < 0 has no split", stvk.lambda, 0);
  for (int kind = 0; kind < PBNG_ELEMENT_KIND_COUNT; ++kind) {
    if (pbng_element_is_sheet(pbng_element_type_get((pbng_element_kind)kind))) continue; /* volume kinds only */
    one_element o;
    one_element_init((pbng_element_kind)kind, &o);
    for (int mk = 0; mk < 3; ++mk)
      for (int split = 0; split < (materials[mk] == PBNG_MATERIAL_STVK ? 1 : PBNG_SPLIT_COUNT); ++split) {
        pbng_material m;
        char tag[96];
        pbng_material_init(&m, materials[mk], 1e3, 0.45);
        check(pbng_energy_split_init(&m, (pbng_split_kind)split, &sp) == 0, "split of a neo-Hookean or StVK material", mk, split);
        snprintf(tag, sizeof(tag), "%s, %s, %s split", o.type->name, pbng_material_kind_name(m.kind), pbng_split_kind_name(sp.kind));
        check_rest(&sp, &o, tag);
        for (int trial = 0; trial < 4; ++trial) {
          double x[3 * PBNG_MAX_ELEMENT_NODES];
          perturbed(&o, trial < 2 ? 0.05 : 0.4, &seed, x);
          check_gradient(&sp, &o, x, tag);
          check_energy(&m, &sp, &o, x, tag);
          check_projection(&sp, &o, x, tag);
        }
      }
  }
  printf("test_xpbd_ho_constraints: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
