/* SISSM, the semi-implicit successive substitution method of projective peridynamics (issue 20; seed
 * projective-peridynamics-membranes.txt, Sec. 4, Eq. 20-33) on peridynamic membranes (-sheet_model
 * peridynamic, problem/pd_terms.h), one backward-Euler step per frame (-mode dynamic).
 *
 * One Jacobi step per iteration (Eq. 25) from the previous iterate for every free vertex, then one halo
 * exchange: y_i <- y_i + alpha_i dy_i, dy_i = -D_i^-1 g_i, D_i = m_i / h^2 I + A_i (Eq. 26 over h^2):
 *   -sissm_form seed   Eq. 25 as printed with the seed's split P = P+ + P- (Eq. 20, pbng_pd_stress_split): ring r
 *                      acts on bond j by the spring omega_j (N_r + V k_b (F F^T)^-1) (y_j - y_i), N_r = V P+ K^-1 F^-1
 *                      (Eq. 21 with the ring's own K instead of the isotropic kappa I of Eq. 23, so that it is exact
 *                      for an affine ring), and explicitly by V omega_j (P- K^-1 - k_b F^-T) xi_j (Eq. 22, 43, 45);
 *                      A_i = sum_j (omega_ij M_i + omega_ji M_j), M_r = sym N_r + V k_b (F F^T)^-1 (Eq. 26, 44). Its
 *                      fixed point is the membrane's equilibrium only where every ring is affine.
 *   -sissm_form exact  g_i the exact gradient of the incremental potential (default) and A_i the absolute row sums
 *                      of the rings' Hessians (the virtual bond held fixed; Gershgorin: D >= H where H is
 *                      positive), a fixed point at the problem's equilibrium (the residual every solver reports).
 * The step length alpha_i of Eq. 33 (-sissm_step_length) bounds the step by the root of the first-order model of
 * the vertex's energy E_i = m_i/(2 h^2) |y_i - x~_i|^2 + sum over the rings around i of W_r + E_b,r, with
 * x~ = x^n + h v^n + h^2 f_ext / m (so E_i >= 0): alpha_i = min(-E_i / (g_i . dy_i), 1), 1 where g_i . dy_i >= 0
 * or its magnitude is below 1e-12 |g_i| |dy_i|. -sissm_chebyshev accelerates the iterates as PBNG's Eq. 39
 * (gamma = 1) with -sissm_rho. With the contact barrier in the frame's energy (-pd_contact_kappa > 0) kappa sum_c B(f(d_c) - xi)
 * (Eq. 3, 51) is a term of E_i: its gradient joins g_i, the Gershgorin rows of its curvature D_i, its value E_i, and the
 * problem's residual (pbng_problem_term), while the contact local step only clamps and reverts (add_barrier).
 * docs/peridynamics.md#sissm, #the-barrier-in-the-frames-residual. */
#include <math.h>
#include <string.h>
#include "core/chebyshev.h"
#include "core/element.h"
#include "core/mat3.h"
#include "core/peridynamics_hessian.h"
#include "core/vec3.h"
#include "methods/pbd/constraint_sweep.h"
#include "contact/pd_contact.h"
#include "problem/pd_terms.h"
#include "methods/solver.h"

enum { SISSM_FORM_EXACT = 0, SISSM_FORM_SEED = 1 };
enum { SLOT_G = 0, SLOT_STEP = 3, SLOT_D = 6, SLOT_E = 12, SLOT_W = 15 }; /* per slot: exact gradient, step's gradient, D (6), energy, pad */

static const char *const form_names[] = {"exact", "seed"};

typedef struct {
  double h;          /* the step: -dt */
  double *slot;      /* [nslots][SLOT_W] each ring's contributions to its nodes */
  double *node;      /* [nlocal][SLOT_W] their sums (owned nodes complete after the reverse halo) */
  double *y_prev, *y_curr; /* Chebyshev: [nfree][3] the iterates k-1 and k */
  double omega_prev;
  double *x_tilde;   /* [nowned][3] x^n + h v^n + h^2 f_ext / m */
  long long shortened; /* vertex steps with alpha < 1 in the last iteration (this rank) */
  long long increases; /* -sissm_check_energy: vertex steps that raised their E_i in the last iteration (this rank) */
  int32_t *slot_ring;  /* -sissm_check_energy: [nslots] each slot's ring */
  double *slot_d;      /* -sissm_d_every > 1: [nslots][3] the exact form's D parts of the last rebuild */
  int d_valid;         /* slot_d holds a rebuild of this frame */
  pbng_pd_contact *contact;       /* the contact local step (-pd_contact), or NULL */
  pbng_pd_contact_stats contact_stats; /* its last projection's figures */
  double *barrier_grad, *barrier_diag; /* -pd_contact_kappa > 0: [nlocal][3] the barrier's gradient and D's part at the iterate */
  double *barrier_energy;              /* [nlocal] kappa B of the pairs holding each node (Eq. 33's E_i) */
} sissm_data;

/* ---- ring contributions ------------------------------------------------------------------------- */

/* The seed's spring matrix of ring r: N_r = V_r P+ K^-1 F^-1 (Eq. 21 with the ring's own K: T+ = V omega N_r eta_j,
 * exact for an affine ring) and M_r = sym(N_r) + V_r k_b (F F^T)^-1 (Eq. 44) for D. Returns -1 for an inverted
 * or degenerate ring. */
static int ring_springs(const pbng_pd_options *o, const pbng_pd_rest *rest, const double F[9], double N[9], double M[9])
{
  double Pp[9], Pm[9], Finv[9], PK[9], Ft[9], FFt[9], FFtinv[9];
  const double J = mat3_inverse(F, Finv);
  if (!(J > 0) || !isfinite(J)) return -1;
  pbng_pd_stress_split(&o->mat, F, Pp, Pm);
  mat3_mul(Pp, rest->K_inv, PK);
  mat3_mul(PK, Finv, N);
  mat3_transpose(F, Ft);
  mat3_mul(F, Ft, FFt);
  mat3_inverse(FFt, FFtinv);
  for (int k = 0; k < 9; ++k) N[k] *= rest->volume;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) M[3 * a + b] = 0.5 * (N[3 * a + b] + N[3 * b + a]) + rest->volume * o->k_b * FFtinv[3 * a + b];
  return 0;
}

/* The seed's semi-implicit gradient of ring r (Eq. 21-22, 43): bond j gets omega_j (N_r + V k_b (F F^T)^-1) eta_j
 * + V omega_j (P- K^-1 - k_b F^-T) xi_j, the centre minus their sum; D's parts omega_j M_r (the centre sum_j). */
static void ring_seed_slots(const pbng_pd_options *o, const pbng_pd_rest *rest, const double F[9], const double y_i[3], const double (*y_ring)[3],
                            double *slot)
{
  double Pp[9], Pm[9], PmK[9], FinvT[9], Finv[9], neg[9], N[9], M[9], Ft[9], FFt[9], FFtinv[9], pos[9];
  ring_springs(o, rest, F, N, M);
  pbng_pd_stress_split(&o->mat, F, Pp, Pm);
  mat3_mul(Pm, rest->K_inv, PmK);
  mat3_inverse(F, Finv);
  mat3_transpose(Finv, FinvT);
  mat3_transpose(F, Ft);
  mat3_mul(F, Ft, FFt);
  mat3_inverse(FFt, FFtinv);
  for (int k = 0; k < 9; ++k) neg[k] = rest->volume * (PmK[k] - o->k_b * FinvT[k]), pos[k] = N[k] + rest->volume * o->k_b * FFtinv[k];
  double *centre = &slot[SLOT_STEP], wsum = 0;
  centre[0] = centre[1] = centre[2] = 0;
  for (int j = 0; j < rest->n; ++j) {
    double eta[3], a[3], b[3], *g = &slot[SLOT_W * (j + 1) + SLOT_STEP];
    vec3_sub(y_ring[j], y_i, eta);
    mat3_vec(pos, eta, a);
    mat3_vec(neg, rest->bond[j], b);
    for (int c = 0; c < 3; ++c) {
      g[c] = rest->omega[j] * (a[c] + b[c]);
      centre[c] -= g[c];
    }
    wsum += rest->omega[j];
  }
  for (int s = 0; s <= rest->n; ++s) {
    double *d = &slot[SLOT_W * s + SLOT_D];
    const double w = s == 0 ? wsum : rest->omega[s - 1];
    d[0] = w * M[0], d[1] = w * M[4], d[2] = w * M[8], d[3] = w * M[1], d[4] = w * M[2], d[5] = w * M[5];
  }
}

/* The exact form's D parts: each row's absolute sum of ring r's Hessian (elastic + bending, y_perp held fixed;
 * core/peridynamics_hessian.h), so that sum_r diag(row sums) - H is diagonally dominant: D >= H, and the
 * Jacobi iteration cannot overshoot where H is positive (Gershgorin). */
static void ring_exact_slots(const pbng_pd_options *o, const pbng_pd_rest *rest, const double y_i[3], const double (*y_ring)[3], double *slot)
{
  const int N = 3 * (rest->n + 1);
  double H[9 * (PBNG_PD_MAX_RING + 1) * (PBNG_PD_MAX_RING + 1)], Hb[9 * (PBNG_PD_MAX_RING + 1) * (PBNG_PD_MAX_RING + 1)];
  pbng_pd_vertex_hessian(&o->mat, rest, y_i, y_ring, NULL, H);
  if (o->k_b > 0) {
    pbng_pd_bending_hessian(o->k_b, rest, y_i, y_ring, NULL, Hb);
    for (int k = 0; k < N * N; ++k) H[k] += Hb[k];
  }
  for (int s = 0; s <= rest->n; ++s) {
    double *d = &slot[SLOT_W * s + SLOT_D];
    for (int c = 0; c < 3; ++c) {
      const double *row = &H[(3 * s + c) * N];
      double sum = 0;
      for (int k = 0; k < N; ++k) sum += fabs(row[k]);
      d[c] = sum;
    }
    d[3] = d[4] = d[5] = 0;
  }
}

/* Ring r's slots: exact gradient, the step's gradient (the exact one, or the seed's), D's parts and the
 * ring's energy. A non-finite ring poisons its slots. d_cache (exact form; NULL: D built here): [slots][3] D's
 * parts of an earlier iteration, taken instead of building the ring's Hessian. */
static void ring_slots(const pbng_pd_terms *pd, int form, int32_t r, const double *x, const double *d_cache, double *slot)
{
  const pbng_pd_rest *rest = &pd->rest[r];
  const int n = rest->n;
  double g[PBNG_PD_MAX_RING + 1][3], F[9], y_i[3], y_ring[PBNG_PD_MAX_RING][3];
  const double E = pbng_pd_ring_energy(pd, r, x, g);
  pbng_pd_ring_positions(pd, r, x, y_i, y_ring);
  if (!isfinite(E) || pbng_pd_deformation_gradient(rest, y_i, (const double(*)[3])y_ring, F, NULL) || !(mat3_det(F) > 0)) {
    for (int k = 0; k < SLOT_W * (n + 1); ++k) slot[k] = NAN;
    return;
  }
  for (int s = 0; s <= n; ++s) {
    double *o = &slot[SLOT_W * s];
    for (int c = 0; c < 3; ++c) o[SLOT_G + c] = o[SLOT_STEP + c] = g[s][c];
    o[SLOT_E] = E, o[SLOT_E + 1] = o[SLOT_E + 2] = 0;
  }
  if (form == SISSM_FORM_SEED) ring_seed_slots(&pd->opt, rest, F, y_i, (const double(*)[3])y_ring, slot);
  else if (!d_cache) ring_exact_slots(&pd->opt, rest, y_i, (const double(*)[3])y_ring, slot);
  else
    for (int s = 0; s <= n; ++s) {
      double *d = &slot[SLOT_W * s + SLOT_D];
      d[0] = d_cache[3 * s], d[1] = d_cache[3 * s + 1], d[2] = d_cache[3 * s + 2], d[3] = d[4] = d[5] = 0;
    }
}

/* Whether this iteration builds D: always without -sissm_d_every N > 1 (no cache), else the frame's first
 * iteration (or the first after a restart) and every N-th. */
static int rebuilds_d(const pbng_solver *s, const sissm_data *d, int l) { return !d->slot_d || !d->d_valid || l % s->opt.sissm.d_every == 0; }

/* ---- the vertex step ---------------------------------------------------------------------------- */

/* Eq. 33: the step length from the vertex energy E, its exact gradient g and the step dy. */
static double step_length(double E, const double g[3], const double dy[3])
{
  const double den = vec3_dot(g, dy);
  if (!(den < -1e-12 * vec3_norm(g) * vec3_norm(dy))) return 1.0;
  const double alpha = -E / den;
  return alpha < 1.0 ? (alpha > 0 ? alpha : 0.0) : 1.0;
}

/* Owned free node i's new position from the gathered sums v (the rings' parts) and the inertia term. */
static int vertex_step(const pbng_problem *pb, const sissm_data *d, int step_len, int32_t i, const double *v, double y[3])
{
  const double w = pb->mass[i] / (d->h * d->h), *x = &pb->x[3 * (int64_t)i], *xt = &d->x_tilde[3 * (int64_t)i];
  double g[3], gs[3], D[9], Dinv[9], dy[3], r[3];
  vec3_sub(x, xt, r);
  for (int c = 0; c < 3; ++c) g[c] = v[SLOT_G + c] + w * r[c], gs[c] = v[SLOT_STEP + c] + w * r[c];
  D[0] = v[SLOT_D] + w, D[4] = v[SLOT_D + 1] + w, D[8] = v[SLOT_D + 2] + w;
  D[1] = D[3] = v[SLOT_D + 3], D[2] = D[6] = v[SLOT_D + 4], D[5] = D[7] = v[SLOT_D + 5];
  mat3_inverse(D, Dinv);
  mat3_vec(Dinv, gs, dy);
  for (int c = 0; c < 3; ++c) dy[c] = -dy[c];
  const double E = v[SLOT_E] + 0.5 * w * vec3_dot(r, r);
  const double alpha = step_len ? step_length(E, g, dy) : 1.0;
  for (int c = 0; c < 3; ++c) y[c] = x[c] + alpha * dy[c];
  return alpha < 1.0;
}

/* -sissm_check_energy: E_i at x with node i moved to y (others held), from the rings around i; NaN when one of
 * them lives on another rank (not checked). Serial: moves x_i for the evaluation and puts it back. */
static double vertex_energy(const pbng_problem *pb, const sissm_data *d, int32_t i, const double y[3])
{
  const pbng_pd_terms *pd = pb->pd;
  double *x = &pb->x[3 * (int64_t)i], keep[3], r[3], E = 0;
  const double w = pb->mass[i] / (d->h * d->h);
  memcpy(keep, x, sizeof(keep));
  memcpy(x, y, sizeof(keep));
  int rings = 0;
  for (int32_t k = pd->inc_start[i]; k < pd->inc_start[i + 1]; ++k) E += pbng_pd_ring_energy(pd, d->slot_ring[pd->inc[k]], pb->x, NULL), ++rings;
  memcpy(x, keep, sizeof(keep));
  int32_t r0 = -1; /* i's own ring: its neighbours' rings must all be here */
  for (int32_t k = pd->inc_start[i]; k < pd->inc_start[i + 1]; ++k)
    if (pd->slot_start[d->slot_ring[pd->inc[k]]] == pd->inc[k]) r0 = d->slot_ring[pd->inc[k]];
  if (r0 < 0 || rings != pd->rest[r0].n + 1) return NAN;
  vec3_sub(y, &d->x_tilde[3 * (int64_t)i], r);
  return E + 0.5 * w * vec3_dot(r, r);
}

/* -sissm_check_energy: counts the vertex steps x_i -> y_i that raise E_i (others held; beyond round-off). */
static long long count_increases(const pbng_problem *pb, const sissm_data *d, const double *ynew)
{
  long long n = 0;
  for (int32_t i = 0; i < pb->dm->nfree; ++i) {
    const double E0 = vertex_energy(pb, d, i, &pb->x[3 * (int64_t)i]), E1 = vertex_energy(pb, d, i, &ynew[3 * (int64_t)i]);
    if (!isnan(E0) && E1 > E0 + 1e-9 * fabs(E0)) ++n; /* the ring energies' round-off: Psi of a small strain is a difference of O(s0) terms */
  }
  return n;
}

/* ---- the barrier in the frame's energy (-pd_contact_kappa) -------------------------------------------------- */

/* The problem's term (pbng_problem_term): the barrier's gradient and energy, so that the residual the run checks and
 * writes is the gradient of the elastic incremental potential plus kappa sum_c B (docs/peridynamics.md). */
static PetscErrorCode barrier_term(void *ctx, const double *x, double *grad, pbng_exact_sum *energy)
{
  return pbng_pd_contact_barrier((pbng_pd_contact *)ctx, x, grad, NULL, NULL, energy);
}

/* The barrier at the iterate added to the owned free nodes' gathered sums: its gradient to g (both the exact and the
 * step's), the Gershgorin row sums of its curvature to D's diagonal, its energy to E_i (Eq. 25, 26, 33 with the
 * barrier a term of the vertex energy). Collective. */
static PetscErrorCode add_barrier(sissm_data *d, const pbng_problem *pb)
{
  const int32_t nfree = pb->dm->nfree;

  PetscFunctionBeginUser;
  memset(d->barrier_grad, 0, sizeof(double) * 3 * (size_t)pb->dm->nlocal);
  memset(d->barrier_diag, 0, sizeof(double) * 3 * (size_t)pb->dm->nlocal);
  memset(d->barrier_energy, 0, sizeof(double) * (size_t)pb->dm->nlocal);
  PetscCall(pbng_pd_contact_barrier(d->contact, pb->x, d->barrier_grad, d->barrier_diag, d->barrier_energy, NULL));
  for (int32_t i = 0; i < nfree; ++i) {
    double *v = &d->node[SLOT_W * (int64_t)i];
    for (int c = 0; c < 3; ++c) {
      v[SLOT_G + c] += d->barrier_grad[3 * (int64_t)i + c];
      v[SLOT_STEP + c] += d->barrier_grad[3 * (int64_t)i + c];
      v[SLOT_D + c] += d->barrier_diag[3 * (int64_t)i + c];
    }
    v[SLOT_E] += d->barrier_energy[i];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode sissm_iterate(pbng_solver *s, int l)
{
  sissm_data *d = s->data;
  pbng_problem *pb = s->pb;
  pbng_pd_terms *pd = pb->pd;
  const pbng_dmesh *dm = pb->dm;
  const int form = s->opt.sissm.form, step_len = s->opt.sissm.step_length;
  const int64_t n3 = 3 * (int64_t)dm->nfree;
  double *ynew = &d->slot[0]; /* reused below only after the gather */
  long long shortened = 0;

  PetscFunctionBeginUser;
  const int rebuild = rebuilds_d(s, d, l);
#pragma omp parallel for schedule(static)
  for (int32_t r = 0; r < pd->nrings; ++r) {
    const int64_t at = pd->slot_start[r];
    ring_slots(pd, form, r, pb->x, rebuild ? NULL : &d->slot_d[3 * at], &d->slot[SLOT_W * at]);
    if (rebuild && d->slot_d)
      for (int64_t k = at; k < pd->slot_start[r + 1]; ++k) memcpy(&d->slot_d[3 * k], &d->slot[SLOT_W * k + SLOT_D], 3 * sizeof(double));
  }
  if (rebuild && d->slot_d) d->d_valid = 1;
  PetscCall(pbng_pd_terms_gather(pd, SLOT_W, d->slot, d->node, dm->nlocal));
  if (d->barrier_grad) PetscCall(add_barrier(d, pb));
#pragma omp parallel for schedule(static) reduction(+ : shortened)
  for (int32_t i = 0; i < dm->nfree; ++i) shortened += vertex_step(pb, d, step_len, i, &d->node[SLOT_W * (int64_t)i], &ynew[3 * (int64_t)i]);
  d->shortened = shortened;
  if (s->opt.sissm.check_energy) d->increases = count_increases(pb, d, ynew);
  if (s->opt.sissm.chebyshev) {
    const double w = pbng_chebyshev_omega(l, s->opt.sissm.rho, d->omega_prev); /* PBNG's Eq. 39 */
    if (l == 0) memcpy(d->y_prev, pb->x, sizeof(double) * (size_t)n3);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n3; ++k) {
      const double y = w * (ynew[k] - d->y_prev[k]) + d->y_prev[k]; /* Eq. 39 with gamma = 1 */
      d->y_prev[k] = pb->x[k];
      ynew[k] = y;
    }
    d->omega_prev = w;
  }
  memcpy(pb->x, ynew, sizeof(double) * (size_t)n3);
  PetscCall(pbng_problem_update_ghosts(pb));
  if (d->contact) PetscCall(pbng_pd_contact_project(d->contact, pb->x, &d->contact_stats)); /* Alg. 1 line 11: ghosts included */
  PetscFunctionReturn(0);
}

/* ---- frames, set-up --------------------------------------------------------------------------- */

/* x~ = x_hat + h^2 f_ext / m (gravity's load weight and the point load's share). */
static PetscErrorCode sissm_begin_frame(pbng_solver *s)
{
  sissm_data *d = s->data;
  const pbng_problem *pb = s->pb;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < pb->dm->nfree; ++i)
    for (int c = 0; c < 3; ++c) {
      const double f = pb->load_mass[i] * pb->gravity[c] + (pb->node_load ? pb->node_load[3 * i + c] : 0.0);
      d->x_tilde[3 * i + c] = pb->x_hat[3 * i + c] + d->h * d->h * f / pb->mass[i];
    }
  d->omega_prev = 1.0;
  d->d_valid = 0; /* -sissm_d_every: a frame starts with a rebuild */
  if (d->contact) PetscCall(pbng_pd_contact_reset(d->contact, pb->x_prev)); /* Alg. 1 line 3: z <- y^t */
  PetscFunctionReturn(0);
}

static PetscErrorCode check_setting(const pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  unsigned kinds;

  PetscFunctionBeginUser;
  PetscCheck(pb->pd, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-solver sissm solves peridynamic membranes: give -sheet_model peridynamic (docs/peridynamics.md)");
  PetscCheck(pb->mode == PBNG_MODE_DYNAMIC, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-solver sissm takes backward-Euler steps (-mode dynamic): its step length (Eq. 33) needs the non-negative incremental potential");
  PetscCall(pbng_constraint_mesh_kinds(pb->dm, &kinds));
  if (kinds & ~PBNG_SHEET_KINDS_MASK) {
    char label[128];
    pbng_element_kinds_label(kinds, label, sizeof(label));
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-solver sissm works on sheets (tri3; bend4 rows are ignored); this mesh has %s elements", label);
  }
  PetscCheck(pb->dm->nglobal_weak == 0 && !pb->contacts, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-solver sissm: weak constraints and contacts are not handled yet (docs/peridynamics.md)");
  for (int32_t i = 0; i < pb->dm->nfree; ++i)
    PetscCheck(pb->mass[i] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-solver sissm: free node %" PRId64 " has no mass (no triangle around it)",
               pb->dm->global_node[i]);
  PetscFunctionReturn(0);
}

static PetscErrorCode sissm_create(pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  sissm_data *d;
  const int64_t nslots = pb->pd ? pb->pd->slot_start[pb->pd->nrings] : 0;

  PetscFunctionBeginUser;
  PetscCall(check_setting(s));
  PetscCall(PetscNew(&d));
  s->data = d;
  d->h = pb->dt;
  PetscCall(PetscMalloc1(SLOT_W * (nslots > dm->nfree ? nslots : dm->nfree) + SLOT_W, &d->slot));
  PetscCall(PetscMalloc1(SLOT_W * (int64_t)dm->nlocal + SLOT_W, &d->node));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nfree + 3, &d->y_prev));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nowned + 3, &d->x_tilde));
  const pbng_pd_contact_options *co = &pb->pd->opt.contact;
  if (co->on) {
    const double xi = pbng_pd_contact_thickness(&pb->pd->opt, pb->sheet.membrane.thickness);
    pbng_pd_contact_options o = *co;
    o.dhat = pbng_pd_contact_dhat(co, xi);
    PetscCall(pbng_pd_contact_create(dm, &o, xi, &d->contact));
    if (o.kappa > 0) {
      PetscCall(PetscMalloc3(3 * (int64_t)dm->nlocal + 3, &d->barrier_grad, 3 * (int64_t)dm->nlocal + 3, &d->barrier_diag, (int64_t)dm->nlocal + 1, &d->barrier_energy));
      s->pb->term = (pbng_problem_term){.fn = barrier_term, .ctx = d->contact};
    }
  }
  if (s->opt.sissm.d_every > 1 && s->opt.sissm.form == SISSM_FORM_EXACT) PetscCall(PetscMalloc1(3 * (int64_t)nslots + 3, &d->slot_d));
  if (s->opt.sissm.check_energy) {
    PetscCall(PetscMalloc1(nslots + 1, &d->slot_ring));
    for (int32_t r = 0; r < pb->pd->nrings; ++r)
      for (int32_t k = pb->pd->slot_start[r]; k < pb->pd->slot_start[r + 1]; ++k) d->slot_ring[k] = r;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode sissm_destroy(pbng_solver *s)
{
  sissm_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(PetscFree(d->slot));
    PetscCall(PetscFree(d->node));
    PetscCall(PetscFree(d->y_prev));
    PetscCall(PetscFree(d->x_tilde));
    PetscCall(PetscFree(d->slot_ring));
    PetscCall(PetscFree(d->slot_d));
    PetscCall(pbng_pd_contact_destroy(&d->contact));
    PetscCall(PetscFree3(d->barrier_grad, d->barrier_diag, d->barrier_energy));
    if (s->pb->term.fn == barrier_term) s->pb->term = (pbng_problem_term){0};
  }
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* -monitor suffix: "  shortened N" the vertex steps Eq. 33 cut (alpha < 1) in the last iteration; with
 * -sissm_check_energy also "  increases K", the vertex steps that raised their E_i; with the contact local step
 * its last projection's figures (pbng_pd_contact_stats). Collective. */
static PetscErrorCode sissm_monitor(pbng_solver *s, char *buf, size_t len)
{
  sissm_data *d = s->data;
  long long mine[2] = {d->shortened, d->increases}, all[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, s->pb->dm->comm));
  int used = s->opt.sissm.check_energy ? snprintf(buf, len, "  shortened %lld  increases %lld", all[0], all[1]) : snprintf(buf, len, "  shortened %lld", all[0]);
  if (d->contact && used > 0 && (size_t)used < len) {
    const pbng_pd_contact_stats *c = &d->contact_stats;
    snprintf(buf + used, len - (size_t)used, "  contact pairs %" PRId64 " clamped %" PRId64 " reverted %" PRId64 " steps %d min_distance %.3e halo %" PRId64 "/%" PRId64,
             c->pairs, c->clamped, c->reverted, c->steps, c->min_distance, c->active_max, c->surface);
  }
  PetscFunctionReturn(0);
}

/* Checkpoint state: the frame's x~, Chebyshev's previous iterate and weight. */
static PetscErrorCode sissm_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  sissm_data *d = s->data;
  const int32_t nfree = s->pb->dm->nfree;

  PetscFunctionBeginUser;
  pbng_state_add(fields, n, "sissm_x_tilde", PBNG_FIELD_NODES, 3, nfree, nfree, d->x_tilde);
  pbng_state_add(fields, n, "sissm_y_prev", PBNG_FIELD_NODES, 3, nfree, nfree, d->y_prev);
  pbng_state_add(fields, n, "sissm_omega", PBNG_FIELD_SCALARS, 1, 1, 1, &d->omega_prev);
  PetscFunctionReturn(0);
}

/* After a restart: the contact step's safe state is the positions read back (every iteration ends with a
 * projection, so they are the last projection's result). */
static PetscErrorCode sissm_restored(pbng_solver *s)
{
  sissm_data *d = s->data;

  PetscFunctionBeginUser;
  if (d->contact && d->barrier_grad) PetscCall(pbng_pd_contact_restart(d->contact, s->pb->x)); /* the barrier's pairs at x */
  else if (d->contact) PetscCall(pbng_pd_contact_reset(d->contact, s->pb->x));
  d->d_valid = 0; /* -sissm_d_every: D is not in the checkpoint; built again at the next iteration */
  PetscFunctionReturn(0);
}

/* ---- options ------------------------------------------------------------------------------------ */

static PetscErrorCode pbng_sissm_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  PetscInt d_every = o->sissm.d_every > 0 ? o->sissm.d_every : 1;
  PetscBool set_form, set_len, set_cheb, set_rho, set_check, set_every, check = o->sissm.check_energy ? PETSC_TRUE : PETSC_FALSE, len = o->sissm.step_length ? PETSC_TRUE : PETSC_FALSE, cheb = o->sissm.chebyshev ? PETSC_TRUE : PETSC_FALSE;
  const int mine = !strcmp(selected, pbng_solver_sissm_ops.name);

  PetscFunctionBeginUser;
  if (o->sissm.rho == 0) o->sissm.rho = 0.95, len = PETSC_TRUE; /* not read yet: the defaults */
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-sissm_form",
                                      "exact (the exact gradient, preconditioned by Eq. 25's D) | seed (Eq. 25 as printed: fixed point exact only for affine rings)",
                                      "form ", form_names, 2, &o->sissm.form, &set_form));
  PetscCall(PetscOptionsBool("-sissm_step_length", "Eq. 33's per-vertex step length (0: alpha = 1)", NULL, len, &len, &set_len));
  PetscCall(PetscOptionsBool("-sissm_chebyshev", "Chebyshev acceleration of the iterates (PBNG's Eq. 39, gamma = 1)", NULL, cheb, &cheb, &set_cheb));
  PetscCall(PetscOptionsReal("-sissm_rho", "-sissm_chebyshev: spectral radius estimate in (0, 1)", NULL, o->sissm.rho, &o->sissm.rho, &set_rho));
  PetscCall(PetscOptionsBool("-sissm_check_energy",
                             "count the vertex steps that raise their vertex energy E_i, others held (-monitor shows them; serial work, for tests)", NULL, check,
                             &check, &set_check));
  PetscCall(PetscOptionsInt("-sissm_d_every", "exact form: build D (the rings' Hessians) every N iterations of a frame, reusing it between (1: every iteration)",
                            NULL, d_every, &d_every, &set_every));
  PetscCheck(mine || !(set_form || set_len || set_cheb || set_rho || set_check || set_every), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-sissm_form, -sissm_step_length, -sissm_chebyshev, -sissm_rho, -sissm_check_energy and -sissm_d_every are for -solver sissm");
  PetscCheck(d_every >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sissm_d_every %d: must be >= 1", (int)d_every);
  PetscCheck(d_every == 1 || o->sissm.form == SISSM_FORM_EXACT, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-sissm_d_every is for -sissm_form exact (the seed form's D is its springs')");
  o->sissm.d_every = (int)d_every;
  PetscCheck(o->sissm.rho > 0 && o->sissm.rho < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sissm_rho %g: must be in (0, 1)", o->sissm.rho);
  o->sissm.step_length = len ? 1 : 0;
  o->sissm.chebyshev = cheb ? 1 : 0;
  o->sissm.check_energy = check ? 1 : 0;
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_sissm_ops = {
  .name = "sissm",
  .kind = {.selectable = 1, .chosen_by = "-solver sissm", .help = "projective peridynamics' SISSM (Lu et al.; -sheet_model peridynamic, -mode dynamic)",
           .peridynamics = 1, .barrier_contact = 1, .set_from_options = pbng_sissm_set_from_options},
  .create = sissm_create, .begin_frame = sissm_begin_frame, .iterate = sissm_iterate, .destroy = sissm_destroy, .monitor = sissm_monitor,
  .state = sissm_state, .restored = sissm_restored};
