/* Generalized PBD (issue 19; seed generalized-position-based-dynamics.txt, Chaudhary, Pokhariya, Narain):
 * backward Euler written through the displacement each force term causes, x = x~ + sum_i d_i (Eq. 6),
 * each term updated by the small Newton solve of Eq. 19 on its k-dimensional strain (core/gpbd_local.h),
 * on the same distributed mesh, problem and residual as every pbng solver. Terms: linear tetrahedra (k = 6,
 * the Green strain's entries; U_i = V Psi(F) with the problem's own material), sheets' membrane triangles
 * (k = 3, the membrane rows of the fundamental-form strain) and bending stencils (k = 3, the curvature
 * vector) with the problem's sheet energies (methods/gpbd/gpbd_terms.h), and weak constraints and contacts (k = 1,
 * projected as XPBD does: App. A; contacts last in each sweep, in key order on every rank alike).
 *   -gpbd_form jacobi  (default, the seed's preferred form) every element's dd_i from the same x, then per
 *                      node x_a += (omega / n_a) sum_{i at a} dd_i,a and d_i,a += (omega / n_a) dd_i,a
 *                      (n_a: the node's elements; the seed's averaging with over-relaxation omega in [1, 2)).
 *                      Every rank solves all its local elements (the owned ones and the others touching an
 *                      owned node), so it has every term of its owned nodes' sums and adds them in the
 *                      order of increasing global element: results bitwise independent of ranks and threads.
 *   -gpbd_form gs      Gauss-Seidel with the constraint colors (pbng_constraint_sweep_run; moved ghosts back
 *                      to their owners after each color, as XPBD).
 *   -mode dynamic      Alg. 1: x~ = x^n + dt v^n + dt^2 g, W = dt^2 M^-1, d_i = 0 at each frame start.
 *   -mode quasistatic  pseudo time: every -gpbd_substeps iterations start a pseudo step of -gpbd_dt (default
 *                      -dt), a backward-Euler step from rest at the current positions, warm-started with the
 *                      d_i (and weak multipliers) of the last one (next_pseudo_step); d_i = 0 at a frame start.
 * One iteration of the run is one GPBD sweep over every term (elements, then weak constraints). */
#include "methods/gpbd/gpbd_terms.h"
#include <math.h>
#include <string.h>
#include "core/dense.h"
#include "core/element.h"
#include "core/mat3.h"
#include "methods/pbd/constraint_sweep.h"

enum { GPBD_FORM_JACOBI = 0, GPBD_FORM_GS = 1 };
#define PBNG_GPBD_UNINVERT_MIN 0.1 /* default s_min of the inverted-element projection: also lifts flat elements */
#define PBNG_GPBD_GRADIENT_ROUNDOFF 2.2e-16 /* the local Newton's floor: this times max_r sum_j |S_rj| (|d_j| + w_j V s |g_a|_1), s = the stress scale */

static const char *const form_names[] = {"jacobi", "gs"};
static const char *const fix_names[] = {"qr_gershgorin", "eigen_clamp", "qr_when_indefinite"};
static const pbng_gpbd_hessian_fix fix_kinds[] = {PBNG_GPBD_FIX_QR_GERSHGORIN, PBNG_GPBD_FIX_EIGEN_CLAMP, PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE};

typedef struct {
  int form;
  int project;              /* -gpbd_subspace_projection: d_i projected on col(W S_i^T) before each local solve */
  int project_sheets;       /* -gpbd_sheet_projection: the same for sheet terms */
  double h;                 /* the (pseudo) step: W = h^2 M^-1 */
  pbng_gpbd_newton_options newton;
  pbng_constraint_sweep cs; /* inverse masses, x~, the step's start, colors, weak projection (XPBD's) */
  double *d;                /* [nelems or nowned_elems][stride] each element's displacement d_i (Eq. 6) */
  double *dd;               /* Jacobi: [nelems][stride] this sweep's dd_i */
  double *pre;              /* Jacobi: [nelems][stride] this sweep's un-inversion moves (not part of d_i) */
  double uninvert_min;      /* -gpbd_uninvert_min: s_min of the inverted-element projection (< 0: none) */
  double *coef;             /* Jacobi: [nlocal] omega / n_a (0 where the node does not move) */
  int32_t nterms;           /* elements with a d_i on this rank */
  int stride;               /* values per element in d, dd, pre: 3 per node of an element row (3 nen) */
  long long newton_steps;   /* local Newton steps of the owned elements in the last sweep (this rank) */
} gpbd_data;

/* ---- one element as a GPBD term ----------------------------------------------------------------- */

/* Element e as the local solve sees it: its nodes, k and energy (methods/gpbd/gpbd_terms.h). Self-referential
 * (term.ctx points into it): filled in place, never copied. */
typedef struct {
  int n, k, sheet;               /* nodes, strain dimensions; sheet: a tri3 or bend4 */
  const int32_t *node;
  pbng_gpbd_tet_rest tet;        /* linear tetrahedron */
  pbng_gpbd_material_tet tet_ctx;
  pbng_gpbd_sheet_term sheet_ctx; /* sheet kinds */
  pbng_gpbd_term term;
} element_term;

static void element_term_init(const pbng_problem *pb, int32_t e, element_term *t)
{
  const int kind = pbng_constraint_sheet_kind(pb, e);
  t->sheet = kind >= 0;
  if (t->sheet) {
    t->node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
    t->n = kind == PBNG_ELEMENT_TRI3 ? 3 : 4;
    t->k = 3;
    t->sheet_ctx = (pbng_gpbd_sheet_term){pbng_problem_sheet_material(pb, e), (pbng_element_kind)kind, &pb->geo.sheet[e], {0, 0, 0}};
    t->term = (pbng_gpbd_term){.nnodes = t->n, .k = 3, .energy = pbng_gpbd_sheet_energy, .ctx = &t->sheet_ctx};
    return;
  }
  t->node = pbng_constraint_tet_shape(pb, e, t->tet.B, &t->tet.volume);
  t->n = 4;
  t->k = 6;
  t->tet_ctx = (pbng_gpbd_material_tet){&pb->mat, &t->tet};
  t->term = (pbng_gpbd_term){.nnodes = 4, .k = 6, .energy = pbng_gpbd_material_tet_energy, .ctx = &t->tet_ctx};
}

/* s and S = ds/dx (k x 3n, row-major) at x. */
static void element_strain(const element_term *t, const double (*x)[3], double *s, double *S)
{
  if (t->sheet) pbng_gpbd_sheet_strain(&t->sheet_ctx, x, s, S);
  else pbng_gpbd_tet_strain(&t->tet, x, s, (double(*)[12])S);
}

/* A scale of each node's force at x below which it is round-off (PBNG_GPBD_GRADIENT_ROUNDOFF's s |g_a|_1).
 * A tetrahedron: V |P|'s scale V (mu + |lambda|) max(1, |F|^2) times |g_a|_1 (P is a difference of terms of
 * the moduli's size, also near rest), |F|^2 = tr(2E + I) from its strain s. */
static void node_force_scales(const pbng_problem *pb, const element_term *t, const double (*x)[3], const double *s, double *fa)
{
  if (t->sheet) {
    pbng_gpbd_sheet_force_scales(&t->sheet_ctx, x, fa);
    return;
  }
  const double F2 = 3.0 + 2.0 * (s[0] + s[1] + s[2]);
  const double pscale = t->tet.volume * (pb->mat.k_shear + fabs(pb->mat.k_volume)) * fmax(1.0, F2);
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(t->tet.B, a, g);
    fa[a] = pscale * (fabs(g[0]) + fabs(g[1]) + fabs(g[2]));
  }
}

/* ---- one element's local solve ------------------------------------------------------------------ */

/* dp = W S^T mu with S W S^T mu = S d: the W^-1-orthogonal projection of d on col(W S^T) (its complement is
 * null(S), the element's infinitesimal rigid motions). S W S^T is singular when nodes are fixed (w = 0):
 * then its pseudo-inverse (eigenvalues below 1e-12 of the largest dropped; S d lies in its range). */
static void subspace_part(int n, int k, const double *w, const double *S, const double *d, double *dp)
{
  const int dof = 3 * n;
  double A[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K] = {0}, b[PBNG_GPBD_MAX_K] = {0}, mu[PBNG_GPBD_MAX_K] = {0};
  int all = 1;
  for (int a = 0; a < n; ++a) all &= w[a] > 0;
  for (int r = 0; r < k; ++r) {
    b[r] = 0.0;
    for (int j = 0; j < dof; ++j) b[r] += S[dof * r + j] * d[j];
    for (int c = 0; c <= r; ++c) {
      double v = 0.0;
      for (int j = 0; j < dof; ++j) v += S[dof * r + j] * w[j / 3] * S[dof * c + j];
      A[k * r + c] = A[k * c + r] = v;
    }
  }
  double L[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K];
  memcpy(L, A, sizeof(double) * (size_t)(k * k));
  memcpy(mu, b, sizeof(double) * (size_t)k);
  if (!all || dense_spd_solve(k, L, mu)) { /* pseudo-inverse */
    double lam[PBNG_GPBD_MAX_K], V[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K], top = 0.0;
    dense_symmetric_eigen(k, A, lam, V);
    for (int q = 0; q < k; ++q) top = fmax(top, fabs(lam[q]));
    for (int r = 0; r < k; ++r) mu[r] = 0.0;
    for (int q = 0; q < k; ++q) {
      if (!(lam[q] > 1e-12 * top)) continue;
      double c = 0.0;
      for (int r = 0; r < k; ++r) c += V[k * r + q] * b[r];
      c /= lam[q];
      for (int r = 0; r < k; ++r) mu[r] += c * V[k * r + q];
    }
  }
  for (int j = 0; j < dof; ++j) {
    double v = 0.0;
    for (int r = 0; r < k; ++r) v += S[dof * r + j] * mu[r];
    dp[j] = w[j / 3] * v;
  }
}

/* A tetrahedron with det F <= 0 is first projected (Sec. 4.1, PBD-style, not part of d_i): x and pre moved;
 * a prescribed node (w = 0) stays. */
static void uninvert(const element_term *t, double s_min, const double *w, double x[][3], double *pre)
{
  double F[9], xo[4][3];
  pbng_gpbd_tet_deformation(&t->tet, (const double(*)[3])x, F);
  if (!(mat3_det(F) <= 0.0 && pbng_gpbd_tet_uninvert(&t->tet, (const double(*)[3])x, s_min, xo))) return;
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3 && w[a] > 0; ++k) {
      pre[3 * a + k] = xo[a][k] - x[a][k];
      x[a][k] = xo[a][k];
    }
}

/* Element e's dd (Eq. 18-19) at the current x with its d (g->stride values each: 3 per node of the row);
 * returns the Newton steps taken. dd is 0 where the node does not move (w = 0) and everywhere when the
 * energy is not finite (diverged positions). */
static inline __attribute__((always_inline)) int element_step_sized(const pbng_problem *pb, const gpbd_data *g, int32_t e, element_term *t, int n, int k,
                                                                    double *dd, double *pre)
{
  const int dof = 3 * n;
  double x[PBNG_GPBD_MAX_NODES][3], w[PBNG_GPBD_MAX_NODES], s[PBNG_GPBD_MAX_K], S[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_DOF], dl[PBNG_GPBD_MAX_K];
  int moving = 0;
  for (int a = 0; a < n; ++a) {
    const int32_t i = t->node[a];
    w[a] = g->h * g->h * g->cs.inv_mass[i];
    moving |= w[a] > 0;
    for (int c = 0; c < 3; ++c) x[a][c] = pb->x[3 * i + c];
  }
  memset(dd, 0, sizeof(double) * (size_t)g->stride);
  memset(pre, 0, sizeof(double) * (size_t)g->stride);
  if (!moving) return 0;
  if (!t->sheet && g->uninvert_min >= 0) uninvert(t, g->uninvert_min, w, x, pre);
  if (t->sheet) pbng_gpbd_sheet_reference_normal(&t->sheet_ctx, (const double(*)[3])x);
  element_strain(t, (const double(*)[3])x, s, S);
  const double *d = &g->d[g->stride * (int64_t)e];
  double dp[PBNG_GPBD_MAX_DOF], drift[PBNG_GPBD_MAX_DOF] = {0};
  memcpy(dp, d, sizeof(double) * (size_t)dof);
  if (t->sheet ? g->project_sheets : g->project) { /* d <- its part in col(W S^T), x moved by the rest (null(S):
                                                   infinitesimal rigid motions; a sheet's also holds the out-of-plane
                                                   motions of a flat sheet, hence -gpbd_sheet_projection apart) */
    subspace_part(n, k, w, S, d, dp);
    for (int j = 0; j < dof; ++j) {
      drift[j] = d[j] - dp[j];
      x[j / 3][j % 3] -= drift[j];
    }
  }
  /* |grad phi| = |S (d + W S^T dl + W dU/dx)| cannot be resolved below the round-off of its terms, which
   * cancel at the local minimiser (d ~ -W dU/dx), and the force's own (node_force_scales): the local Newton
   * stops there (else it spends its -gpbd_newton_max steps on round-off). */
  pbng_gpbd_newton_options opt = g->newton;
  double fa[PBNG_GPBD_MAX_NODES];
  node_force_scales(pb, t, (const double(*)[3])x, s, fa);
  for (int r = 0; r < k; ++r) {
    double v = 0.0;
    for (int j = 0; j < dof; ++j) v += fabs(S[dof * r + j]) * (fabs(dp[j]) + w[j / 3] * fa[j / 3]);
    opt.gtol = fmax(opt.gtol, PBNG_GPBD_GRADIENT_ROUNDOFF * v);
  }
  pbng_gpbd_local_result res;
  const pbng_gpbd_status st = pbng_gpbd_local_solve(&t->term, &x[0][0], w, dp, S, &opt, dl, dd, &res);
  if (st == PBNG_GPBD_INVALID_START) memset(dd, 0, sizeof(double) * (size_t)dof);
  for (int j = 0; j < dof; ++j) dd[j] -= drift[j];
  return res.iterations;
}

/* element_step_sized with the sizes as constants: the tetrahedron's (n 4, k 6) code is compiled for them. */
static int element_step(const pbng_problem *pb, const gpbd_data *g, int32_t e, double *dd, double *pre)
{
  element_term t;
  element_term_init(pb, e, &t);
  if (!t.sheet) return element_step_sized(pb, g, e, &t, 4, 6, dd, pre);
  return t.n == 3 ? element_step_sized(pb, g, e, &t, 3, 3, dd, pre) : element_step_sized(pb, g, e, &t, 4, 3, dd, pre);
}

/* Gauss-Seidel: owned element e (one color's elements share no node) moves its nodes at once. */
static void project_element(pbng_solver *s, pbng_constraint_sweep *cs, int32_t e)
{
  gpbd_data *g = s->data;
  const pbng_problem *pb = s->pb;
  const pbng_element_type *type = pbng_dmesh_element_type(pb->dm, e);
  const int32_t *node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
  double dd[PBNG_GPBD_MAX_DOF], pre[PBNG_GPBD_MAX_DOF];
  const int steps = element_step(pb, g, e, dd, pre);
#pragma omp atomic
  g->newton_steps += steps;
  double *d = &g->d[g->stride * (int64_t)e];
  for (int a = 0; a < type->nodes; ++a) {
    if (cs->inv_mass[node[a]] == 0.0) continue;
    for (int k = 0; k < 3; ++k) {
      pb->x[3 * node[a] + k] += pre[3 * a + k] + dd[3 * a + k];
      d[3 * a + k] += dd[3 * a + k];
    }
    cs->touched[node[a]] = 1;
  }
}

/* Jacobi: every local element from the same x; then d_i and the owned free nodes, each node's terms in
 * the order of increasing global element (dm->adj); ghosts from their owners. */
static PetscErrorCode jacobi_sweep(pbng_solver *s)
{
  gpbd_data *g = s->data;
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  long long steps = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(g->cs.ev_project, 0, 0, 0, 0));
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : steps)
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int n = element_step(pb, g, e, &g->dd[g->stride * (int64_t)e], &g->pre[g->stride * (int64_t)e]);
    if (e < dm->nowned_elems) steps += n;
  }
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int32_t *node = &dm->elems[(int64_t)dm->nen * e];
    double *d = &g->d[g->stride * (int64_t)e];
    const double *dd = &g->dd[g->stride * (int64_t)e];
    for (int a = 0; a < pbng_dmesh_element_type(dm, e)->nodes; ++a)
      for (int k = 0; k < 3; ++k) d[3 * a + k] += g->coef[node[a]] * dd[3 * a + k];
  }
#pragma omp parallel for schedule(static)
  for (int32_t i = 0; i < dm->nfree; ++i) {
    if (g->coef[i] == 0.0) continue;
    double sum[3] = {0, 0, 0};
    for (int32_t j = dm->adj_start[i]; j < dm->adj_start[i + 1]; ++j) {
      const int32_t e = dm->adj[j] / dm->nen, a = dm->adj[j] % dm->nen;
      for (int k = 0; k < 3; ++k) sum[k] += g->pre[g->stride * (int64_t)e + 3 * a + k] + g->dd[g->stride * (int64_t)e + 3 * a + k];
    }
    for (int k = 0; k < 3; ++k) pb->x[3 * i + k] += g->coef[i] * sum[k];
  }
  PetscCall(PetscLogEventEnd(g->cs.ev_project, 0, 0, 0, 0));
  g->newton_steps = steps;
  if (pb->halo) {
    const double t0 = MPI_Wtime();
    PetscCall(PetscLogEventBegin(g->cs.ev_halo, 0, 0, 0, 0));
    PetscCall(pbng_halo_exchange(pb->halo, -1, pb->x));
    PetscCall(PetscLogEventEnd(g->cs.ev_halo, 0, 0, 0, 0));
    s->halo_seconds += MPI_Wtime() - t0;
  }
  PetscFunctionReturn(0);
}

/* ---- set-up ------------------------------------------------------------------------------------- */

/* What this increment handles: linear tetrahedra and sheets (tri3, bend4), mixed or not (plasticity is
 * refused by the registry's flags), the options of the mode given. Collective. */
static PetscErrorCode check_setting(const pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  unsigned kinds;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_mesh_kinds(pb->dm, &kinds));
  if (kinds & ~((1u << PBNG_ELEMENT_TET4) | PBNG_SHEET_KINDS_MASK)) {
    char label[128];
    pbng_element_kinds_label(kinds, label, sizeof(label));
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP,
            "-solver gpbd works on linear tetrahedra (tet4), sheets (tri3, bend4) and weak constraints; this mesh has %s elements (docs/gpbd_solver.md)",
            label);
  }
  PetscCheck(pb->mode == PBNG_MODE_QUASISTATIC || (s->opt.gpbd.dt == 0 && s->opt.gpbd.substeps == 0), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-gpbd_dt and -gpbd_substeps are for -mode quasistatic (pseudo time); a dynamic frame is one backward-Euler step of -dt");
  PetscFunctionReturn(0);
}

/* Jacobi: omega / n_a on every local node that moves (n_a its elements, all ranks'; ghosts from their owners). */
static PetscErrorCode jacobi_coefficients(pbng_solver *s, gpbd_data *g)
{
  const pbng_dmesh *dm = s->pb->dm;
  double *work = g->cs.work;

  PetscFunctionBeginUser;
  memset(work, 0, sizeof(double) * 3 * (size_t)dm->nlocal);
  for (int32_t i = 0; i < dm->nowned; ++i) work[3 * i] = (double)(dm->adj_start[i + 1] - dm->adj_start[i]);
  if (s->pb->halo) PetscCall(pbng_halo_exchange(s->pb->halo, -1, work));
  for (int32_t i = 0; i < dm->nlocal; ++i) g->coef[i] = g->cs.inv_mass[i] > 0 && work[3 * i] > 0 ? s->opt.gpbd.omega / work[3 * i] : 0.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode gpbd_create(pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  gpbd_data *g;

  PetscFunctionBeginUser;
  PetscCall(check_setting(s));
  PetscCall(PetscNew(&g));
  s->data = g;
  g->form = s->opt.gpbd.form;
  g->h = pb->mode == PBNG_MODE_DYNAMIC ? pb->dt : (s->opt.gpbd.dt > 0 ? s->opt.gpbd.dt : pb->dt);
  pbng_gpbd_newton_defaults(&g->newton);
  g->newton.newton_max = s->opt.gpbd.newton_max;
  g->newton.fix = fix_kinds[s->opt.gpbd.hessian_fix];
  g->newton.gtol = 1e-14; /* |grad phi| is a strain: below this, round-off (the relative 1e-10 is out of reach near the fixed point) */
  g->project = s->opt.gpbd.seed_drift == 0;
  g->project_sheets = !s->opt.gpbd.sheet_projection_off;
  g->uninvert_min = s->opt.gpbd.uninvert_min;
  PetscCall(pbng_constraint_sweep_create(s, g->h, 0, &g->cs));
  g->stride = 3 * dm->nen;
  g->nterms = g->form == GPBD_FORM_JACOBI ? dm->nelems : dm->nowned_elems;
  PetscCall(PetscCalloc1(g->stride * (int64_t)g->nterms + 1, &g->d));
  if (g->form == GPBD_FORM_JACOBI) {
    PetscCall(PetscMalloc1(g->stride * (int64_t)dm->nelems + 1, &g->dd));
    PetscCall(PetscMalloc1(g->stride * (int64_t)dm->nelems + 1, &g->pre));
    PetscCall(PetscMalloc1(dm->nlocal + 1, &g->coef));
    PetscCall(jacobi_coefficients(s, g));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode gpbd_destroy(pbng_solver *s)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  if (g) {
    PetscCall(pbng_constraint_sweep_destroy(&g->cs));
    PetscCall(PetscFree(g->d));
    PetscCall(PetscFree(g->dd));
    PetscCall(PetscFree(g->pre));
    PetscCall(PetscFree(g->coef));
  }
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* ---- steps and iterations ----------------------------------------------------------------------- */

/* A (pseudo) step from the current positions with velocity v (NULL: 0): x~, x = x~, d_i = 0, multipliers 0. */
static PetscErrorCode start_step(pbng_solver *s, const double *v)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_start_step(&g->cs, s->pb, v));
  memset(g->d, 0, sizeof(double) * (size_t)g->stride * (size_t)g->nterms);
  PetscFunctionReturn(0);
}

/* Frame start: the problem moved the prescribed nodes and (dynamic) set x = x^n + dt v^n; x~ adds dt^2 g.
 * Quasistatic: the frame's first pseudo step starts at rest. */
static PetscErrorCode gpbd_begin_frame(pbng_solver *s) { return start_step(s, NULL); }

/* Quasistatic: the next pseudo step, a backward-Euler step from rest at the current positions x_k
 * (x~ = x_k + h^2 M^-1 f), warm-started: the terms' d_i and the weak constraints' multipliers are kept, and
 * x = x~ + sum_i d_i = x_k + (x_k - x~_prev) keeps Eq. 6's invariant. (Resetting them, as XPBD-QS does, has
 * fixed points short of the equilibrium when a pseudo step's sweeps do not converge; with them kept, a state
 * no sweep changes satisfies every term's Eq. 7, so sum_i grad U_i = f: docs/gpbd_solver.md.) */
static PetscErrorCode next_pseudo_step(pbng_solver *s)
{
  gpbd_data *g = s->data;
  const pbng_dmesh *dm = s->pb->dm;
  const size_t nweak = 3 * (size_t)dm->nowned_weak;
  double *x = s->pb->x, *sum_d = g->cs.work, *lambda_weak;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < 3 * (int64_t)dm->nlocal; ++k) sum_d[k] = x[k] - g->cs.x_tilde[k]; /* sum_i d_i (Eq. 6) */
  PetscCall(PetscMalloc1(nweak + 1, &lambda_weak));
  memcpy(lambda_weak, g->cs.lambda_weak, nweak * sizeof(double));
  PetscCall(pbng_constraint_sweep_start_step(&g->cs, s->pb, NULL)); /* x_step = x_k, x = x~ = x_k + h^2 g, multipliers 0 */
  memcpy(g->cs.lambda_weak, lambda_weak, nweak * sizeof(double));
  PetscCall(PetscFree(lambda_weak));
  for (int32_t i = 0; i < dm->nlocal; ++i)
    if (g->cs.inv_mass[i] > 0)
      for (int k = 0; k < 3; ++k) x[3 * i + k] += sum_d[3 * i + k];
  PetscFunctionReturn(0);
}

static PetscErrorCode gpbd_iterate(pbng_solver *s, int l)
{
  gpbd_data *g = s->data;
  const int substeps = s->opt.gpbd.substeps > 0 ? s->opt.gpbd.substeps : 1;

  PetscFunctionBeginUser;
  if (s->pb->mode == PBNG_MODE_QUASISTATIC && l > 0 && l % substeps == 0) PetscCall(next_pseudo_step(s));
  if (g->form == GPBD_FORM_GS) {
    g->newton_steps = 0;
    PetscCall(pbng_constraint_sweep_run(s, &g->cs, project_element));
    PetscFunctionReturn(0);
  }
  PetscCall(jacobi_sweep(s));
  const int ncolors = g->cs.elem.ncolors; /* the weak constraints' colors alone, XPBD's projection */
  g->cs.elem.ncolors = 0;
  const PetscErrorCode ierr = pbng_constraint_sweep_run(s, &g->cs, project_element);
  g->cs.elem.ncolors = ncolors;
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* -monitor suffix: "  newton N" the mean local Newton steps per element in the last sweep. Collective. */
static PetscErrorCode gpbd_monitor(pbng_solver *s, char *buf, size_t len)
{
  gpbd_data *g = s->data;
  long long mine[2] = {g->newton_steps, s->pb->dm->nowned_elems}, all[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, s->pb->dm->comm));
  snprintf(buf, len, "  newton %.3f", all[1] ? (double)all[0] / (double)all[1] : 0.0);
  PetscFunctionReturn(0);
}

/* Checkpoint state: the step's (x~, its start, the weak multipliers) and each element's d_i (Jacobi: every
 * local element's, read back by global element). */
static PetscErrorCode gpbd_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  gpbd_data *g = s->data;
  const pbng_dmesh *dm = s->pb->dm;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_state(&g->cs, s->pb, "gpbd", fields, n));
  pbng_state_add(fields, n, "gpbd_d", PBNG_FIELD_ELEMENTS, g->stride, dm->nowned_elems, g->nterms, g->d);
  PetscFunctionReturn(0);
}

static PetscErrorCode gpbd_restored(pbng_solver *s)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_restored(&g->cs, s->pb));
  PetscFunctionReturn(0);
}

/* ---- options ------------------------------------------------------------------------------------ */

static PetscErrorCode pbng_gpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  PetscBool set_form, set_omega, set_newton, set_fix, set_dt, set_sub, set_proj, set_sproj, set_uninv, project = o->gpbd.seed_drift ? PETSC_FALSE : PETSC_TRUE,
            project_sheets = o->gpbd.sheet_projection_off ? PETSC_FALSE : PETSC_TRUE;
  const int mine = !strcmp(selected, pbng_solver_gpbd_ops.name);
  PetscInt newton_max = o->gpbd.newton_max > 0 ? o->gpbd.newton_max : 20, substeps = o->gpbd.substeps > 0 ? o->gpbd.substeps : 1;

  PetscFunctionBeginUser;
  if (o->gpbd.omega == 0) o->gpbd.omega = 1.0;
  if (o->gpbd.uninvert_min == 0) o->gpbd.uninvert_min = PBNG_GPBD_UNINVERT_MIN; /* not read yet (an explicit 0 is the seed's rule) */
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-gpbd_form", "jacobi (every element from the same x, averaged per node, x omega) | gs (Gauss-Seidel over the constraint colors)",
                                      "form ", form_names, 2, &o->gpbd.form, &set_form));
  PetscCall(PetscOptionsReal("-gpbd_omega", "jacobi: over-relaxation omega in [1, 2) of the per-node average", NULL, o->gpbd.omega, &o->gpbd.omega, &set_omega));
  PetscCall(PetscOptionsInt("-gpbd_newton_max", "local Newton steps per term at most (the seed's i_N)", NULL, newton_max, &newton_max, &set_newton));
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-gpbd_hessian_fix",
                                      "qr_gershgorin (the seed's Eq. 23) | eigen_clamp (exact) | qr_when_indefinite (the seed's shift only when needed)",
                                      "Hessian fix ", fix_names, 3, &o->gpbd.hessian_fix, &set_fix));
  PetscCall(PetscOptionsBool("-gpbd_subspace_projection",
                             "project each d_i on its strain subspace col(W S_i^T) before the local solve: the fixed point is then the exact backward-Euler step (0: the seed's rule, Sec. 3.2, which stalls short of it)",
                             NULL, project, &project, &set_proj));
  PetscCall(PetscOptionsBool("-gpbd_sheet_projection",
                             "the same projection for sheet terms (tri3, bend4): converges fully where the seed's rule stalls, but diverges on a stretched sheet with large steps (docs/gpbd_solver.md#sheets)",
                             NULL, project_sheets, &project_sheets, &set_sproj));
  PetscCall(PetscOptionsReal("-gpbd_uninvert_min",
                             "an element with det F <= 0 is first projected to det F > 0 (Sec. 4.1: smallest singular value negated, at least this; < 0: never)",
                             NULL, o->gpbd.uninvert_min, &o->gpbd.uninvert_min, &set_uninv));
  PetscCall(PetscOptionsReal("-gpbd_dt", "quasistatic: pseudo-time step (default: -dt)", NULL, o->gpbd.dt, &o->gpbd.dt, &set_dt));
  PetscCall(PetscOptionsInt("-gpbd_substeps", "quasistatic: iterations (sweeps) per pseudo-time step", NULL, substeps, &substeps, &set_sub));
  PetscCheck(mine || !(set_form || set_omega || set_newton || set_fix || set_dt || set_sub || set_proj || set_sproj || set_uninv), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-gpbd_form, -gpbd_omega, -gpbd_newton_max, -gpbd_hessian_fix, -gpbd_subspace_projection, -gpbd_sheet_projection, -gpbd_uninvert_min, -gpbd_dt and -gpbd_substeps are for -solver gpbd");
  o->gpbd.seed_drift = !project;
  o->gpbd.sheet_projection_off = project_sheets ? 0 : 1;
  PetscCheck(o->gpbd.omega >= 1.0 && o->gpbd.omega < 2.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-gpbd_omega %g: must be in [1, 2) (the seed's over-relaxation range)", o->gpbd.omega);
  PetscCheck(!set_omega || o->gpbd.form == GPBD_FORM_JACOBI, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-gpbd_omega is for -gpbd_form jacobi");
  PetscCheck(newton_max >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_newton_max %d: must be >= 1", (int)newton_max);
  PetscCheck(!set_dt || (o->gpbd.dt > 0 && isfinite(o->gpbd.dt)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_dt %g: must be > 0", o->gpbd.dt);
  PetscCheck(isfinite(o->gpbd.uninvert_min), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_uninvert_min: must be a finite number");
  PetscCheck(substeps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_substeps %d: must be >= 1", (int)substeps);
  o->gpbd.newton_max = (int)newton_max;
  o->gpbd.substeps = set_sub ? (int)substeps : 0; /* 0: not given (1) */
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_gpbd_ops = {
  .name = "gpbd",
  .kind = {.selectable = 1, .chosen_by = "-solver gpbd", .help = "generalized PBD: per-element Newton on the strain (Chaudhary et al.; tet4, sheets, weak constraints, contacts)",
           .constraint_colors = 1, .own_guess = 1, .contacts = 1, .plasticity = 0, .contact_every = 10,
           .set_from_options = pbng_gpbd_set_from_options},
  .create = gpbd_create, .begin_frame = gpbd_begin_frame, .iterate = gpbd_iterate, .destroy = gpbd_destroy, .monitor = gpbd_monitor,
  .state = gpbd_state, .restored = gpbd_restored};
