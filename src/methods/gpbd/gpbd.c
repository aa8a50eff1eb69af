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
 * One iteration of the run is one GPBD sweep over every term (elements, then weak constraints). Linear tetrahedra are
 * updated by the closed form of core/gpbd_tet4.h (several at once, on SIMD lanes), sheet terms by the general path
 * (methods/gpbd/gpbd_step.h); a thread takes chunks of at least GPBD_CHUNK elements (chunk_parts) in both forms. */
#include "methods/gpbd/gpbd_step.h"
#include "methods/gpbd/gpbd_layout.h"
#include "core/gpbd_tet4.h"
#include "methods/gpbd/gpbd_cluster.h"
#include <math.h>
#include <omp.h>
#include <string.h>
#include "core/element.h"
#include "core/inversion.h"
#include "core/mat3.h"
#include "methods/pbd/constraint_sweep.h"
#include "parallel/reduce.h"

enum { GPBD_FORM_JACOBI = 0, GPBD_FORM_GS = 1 };
enum { GPBD_CHUNK = 128 }; /* the fewest elements a thread takes at a time (the closed form solves them PBNG_GPBD_LANES at once) */
enum { GPBD_PARTS_PER_THREAD = 4 }; /* chunks per thread of a list shared by several threads (their costs vary) */

/* How many chunks a list of elements is split into (chunks of at least GPBD_CHUNK): one on one thread, since each
 * chunk's last rounds run the SIMD lanes part empty (every element's update is the same in any chunk: the closed form's
 * lanes are independent, and a color's elements share no node); GPBD_PARTS_PER_THREAD per thread on several. */
static int32_t chunk_parts(void)
{
  const int threads = omp_get_max_threads();
  return threads > 1 ? GPBD_PARTS_PER_THREAD * threads : 1;
}

/* Elements per chunk of a list of n (chunk_parts chunks of at least GPBD_CHUNK). */
static int32_t chunk_size(int32_t n)
{
  const int32_t parts = chunk_parts(), even = (n + parts - 1) / parts;
  return even > GPBD_CHUNK ? even : GPBD_CHUNK;
}
#define PBNG_GPBD_UNINVERT_MIN 0.1 /* default s_min of the inverted-element projection: also lifts flat elements */
#define PBNG_GPBD_UNINVERT_PASSES 10 /* default passes of the projection over the elements a sweep left inverted, at most */
#define PBNG_GPBD_UNINVERT_JOINT_STEPS 100 /* default: Newton steps on the whole cluster after a stalled node-wise sweep */
#define PBNG_GPBD_UNINVERT_JOINT 4096 /* default: the inverted tetrahedra left after the passes projected jointly when at most this many */

static const char *const form_names[] = {"jacobi", "gs"};
static const char *const fix_names[] = {"qr_gershgorin", "eigen_clamp", "qr_when_indefinite"};
static const pbng_gpbd_hessian_fix fix_kinds[] = {PBNG_GPBD_FIX_QR_GERSHGORIN, PBNG_GPBD_FIX_EIGEN_CLAMP, PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE};

typedef struct {
  int form;
  pbng_gpbd_step_options tet_opt;   /* a tetrahedron's update: the local Newton, -gpbd_subspace_projection, -gpbd_uninvert_min */
  pbng_gpbd_step_options sheet_opt; /* a sheet term's: -gpbd_sheet_projection */
  double h;                 /* the (pseudo) step: W = h^2 M^-1 */
  pbng_constraint_sweep cs; /* inverse masses, x~, the step's start, colors, weak projection (XPBD's) */
  double *d;                /* [nelems or nowned_elems][stride] each element's displacement d_i (Eq. 6) */
  double *dd;               /* [nterms][stride] this sweep's dd_i */
  double *pre;              /* [nterms][stride] this sweep's un-inversion moves (not part of d_i) */
  pbng_gpbd_tet4_element *tet4; /* [nterms] each tetrahedron's nodes and rest shape, for the closed-form path */
  const int32_t *order;     /* GS on tetrahedra: row k of d, dd, pre and rows is owned element order[k] (cs.elem.item: each
                               color's elements contiguous, in sweep order; methods/gpbd/gpbd_layout.h); NULL: row e is e */
  pbng_gpbd_tet4_element *rows; /* tet4 in the rows' order (tet4 itself where order is NULL) */
  double *d_elements;       /* with order: d_i by element number, the checkpoint's */
  int sheets;               /* this rank's elements include sheet terms (the general path) */
  double *coef;             /* Jacobi: [nlocal] omega / n_a (0 where the node does not move) */
  int uninvert_passes;      /* after each sweep, passes of the inverted-element projection at most (0: none, the seed's rule) */
  long long inverted_count; /* inverted or flat after the last iteration's projections, or at the frame's start (-1: not counted) */
  long long inverted_swept, inverted_left; /* tetrahedra inverted or flat after the last sweep, and after its passes (all ranks) */
  int passes_used;          /* passes after the last sweep */
  int uninvert_joint_steps; /* the joint projection's Newton steps on all its nodes at once after a stalled sweep (0: none) */
  long long uninvert_joint; /* the inverted tetrahedra left after the passes are projected jointly when at most this many (0: never) */
  long long joint_left;     /* after the last sweep's joint projection, inverted tetrahedra of its cluster (-1: none ran) */
  int uninvert_body;        /* more inverted tetrahedra than uninvert_joint at a sweep's start: the body lift first */
  int lifted;               /* the body lift ran before the last sweep */
  int32_t nterms;           /* elements with a d_i on this rank */
  int stride;               /* values per element in d, dd, pre: 3 per node of an element row (3 nen) */
  long long newton_steps;   /* local Newton steps of the owned elements in the last sweep (this rank) */
} gpbd_data;

/* ---- one element's update ------------------------------------------------------------------------ */

/* Sheet element e's dd and pre (Eq. 18-19 around the subspace projection: methods/gpbd/gpbd_step.h, the general path)
 * at the current x with its d (g->stride values each: 3 per node of the row; the values past the element's nodes 0);
 * returns the local Newton steps taken. */
static int sheet_step(const pbng_problem *pb, const gpbd_data *g, int32_t e, int kind, double *dd, double *pre)
{
  pbng_gpbd_element_term t;
  const int32_t *node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
  pbng_gpbd_sheet_term_init(pbng_problem_sheet_material(pb, e), (pbng_element_kind)kind, &pb->geo.sheet[e], &t);
  double x[PBNG_GPBD_MAX_NODES][3], w[PBNG_GPBD_MAX_NODES];
  for (int a = 0; a < t.n; ++a) {
    w[a] = g->h * g->h * g->cs.inv_mass[node[a]];
    for (int c = 0; c < 3; ++c) x[a][c] = pb->x[3 * node[a] + c];
  }
  memset(dd, 0, sizeof(double) * (size_t)g->stride);
  memset(pre, 0, sizeof(double) * (size_t)g->stride);
  return pbng_gpbd_term_step(&t, &g->sheet_opt, x, w, &g->d[g->stride * (int64_t)e], dd, pre);
}

/* dd and pre of elements list[0..n) (list NULL: first, ..., first + n - 1) at the current x into their rows of g->dd
 * and g->pre: tetrahedra by the closed form (core/gpbd_tet4.h), sheet terms by the general path (GPBD_CHUNK elements at
 * a time). Returns the local Newton steps taken. */
static long long solve_elements(const pbng_problem *pb, const gpbd_data *g, const int32_t *list, int32_t first, int32_t n)
{
  const pbng_gpbd_tet4_sweep sw = {.mat = &pb->mat, .opt = &g->tet_opt, .h2 = g->h * g->h, .x = pb->x, .inv_mass = g->cs.inv_mass,
                                   .elem = g->rows, .d = g->d, .stride = g->stride};
  if (!g->sheets) return pbng_gpbd_tet4_steps(&sw, list, first, n, g->dd, g->pre);
  long long steps = 0;
  for (int32_t from = 0; from < n; from += GPBD_CHUNK) {
    int32_t tets[GPBD_CHUNK], ntets = 0;
    for (int32_t j = from; j < n && j < from + GPBD_CHUNK; ++j) {
      const int32_t e = list ? list[j] : first + j;
      const int kind = pbng_constraint_sheet_kind(pb, e);
      if (kind < 0) tets[ntets++] = e;
      else steps += sheet_step(pb, g, e, kind, &g->dd[g->stride * (int64_t)e], &g->pre[g->stride * (int64_t)e]);
    }
    steps += pbng_gpbd_tet4_steps(&sw, tets, 0, ntets, g->dd, g->pre);
  }
  return steps;
}

/* Gauss-Seidel: owned elements item[0..n) of one color (they share no node) move their nodes at once (with g->order,
 * item points into cs->elem.item, the rows' order: their rows are the consecutive ones from item - cs->elem.item). */
static void project_elements(pbng_solver *s, pbng_constraint_sweep *cs, const int32_t *item, int32_t n)
{
  gpbd_data *g = s->data;
  const pbng_problem *pb = s->pb;
  const int32_t first = g->order ? (int32_t)(item - cs->elem.item) : 0;
  const long long steps = g->order ? solve_elements(pb, g, NULL, first, n) : solve_elements(pb, g, item, 0, n);
#pragma omp atomic
  g->newton_steps += steps;
  for (int32_t j = 0; j < n; ++j) {
    const int32_t e = item[j], row = g->order ? first + j : e;
    const int32_t *node = g->order ? g->rows[row].node : &pb->dm->elems[(int64_t)pb->dm->nen * e];
    const double *dd = &g->dd[g->stride * (int64_t)row], *pre = &g->pre[g->stride * (int64_t)row];
    double *d = &g->d[g->stride * (int64_t)row];
    for (int a = 0; a < (g->order ? 4 : pbng_dmesh_element_type(pb->dm, e)->nodes); ++a) {
      if (cs->inv_mass[node[a]] == 0.0) continue;
      for (int k = 0; k < 3; ++k) {
        pb->x[3 * node[a] + k] += pre[3 * a + k] + dd[3 * a + k];
        d[3 * a + k] += dd[3 * a + k];
      }
      cs->touched[node[a]] = 1;
    }
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
  const int32_t owned = chunk_size(dm->nowned_elems), others = chunk_size(dm->nelems - dm->nowned_elems);
  const int32_t owned_chunks = (dm->nowned_elems + owned - 1) / owned;
  const int32_t chunks = owned_chunks + (dm->nelems - dm->nowned_elems + others - 1) / others;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : steps)
  for (int32_t c = 0; c < chunks; ++c) { /* chunks of owned elements, then of the others (their steps not counted) */
    const int32_t size = c < owned_chunks ? owned : others;
    const int32_t first = c < owned_chunks ? owned * c : dm->nowned_elems + others * (c - owned_chunks);
    const int32_t end = c < owned_chunks ? dm->nowned_elems : dm->nelems;
    const long long n = solve_elements(pb, g, NULL, first, first + size < end ? size : end - first);
    if (c < owned_chunks) steps += n;
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

/* ---- the non-inversion constraint after the sweep ----------------------------------------------- */

/* Sec. 4.1 treats an element as "a non-inversion constraint |F| > 0, and an elastic energy": the constraint is a
 * hard one, "handled by vertex projection in the classic PBD manner", which projects every constraint in each
 * iteration of the solver loop (Mueller et al. 2007, Alg. 1 lines 9-11; the seed's Alg. 1 projects it only
 * just before the element's own update). The updates of an element's neighbours after its own (Gauss-Seidel) or
 * together with it (Jacobi's averages) can invert it again, and the log barrier (Eq. 20) keeps only the solved
 * element's J > 0: so after the sweep the constraint of every element left inverted or flat is projected once
 * more, the same projection (pbng_gpbd_tet_uninvert_moving, not part of d_i), over the element colors as
 * Gauss-Seidel projects (elements of a color share no node); repeated while elements are inverted, at most
 * -gpbd_uninvert_passes times (docs/gpbd_solver.md#inversion). */

/* Whether tetrahedron e (a row of g->tet4) is inverted or flat at x: det F <= 0 (NaN positions: not). */
static int tet_inverted(const gpbd_data *g, const double *x, int32_t e)
{
  const pbng_gpbd_tet4_element *el = &g->tet4[e];
  double xe[4][3], F[9];
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) xe[a][k] = x[3 * el->node[a] + k];
  pbng_gpbd_tet_deformation(&el->rest, (const double(*)[3])xe, F);
  return mat3_det(F) <= 0.0;
}

/* The owned tetrahedra inverted or flat at the current x, over all ranks. Collective. */
static PetscErrorCode count_inverted(const pbng_solver *s, long long *n)
{
  const gpbd_data *g = s->data;
  const pbng_problem *pb = s->pb;
  long long mine = 0;

  PetscFunctionBeginUser;
#pragma omp parallel for schedule(static) reduction(+ : mine)
  for (int32_t e = 0; e < pb->dm->nowned_elems; ++e)
    if (pbng_constraint_sheet_kind(pb, e) < 0) mine += tet_inverted(g, pb->x, e);
  PetscCallMPI(MPI_Allreduce(&mine, n, 1, MPI_LONG_LONG, MPI_SUM, pb->dm->comm));
  PetscFunctionReturn(0);
}

/* Owned elements item[0..n) of one color (no shared node): each inverted tetrahedron's free nodes moved to the
 * projection's positions (Sec. 4.1). */
static void uninvert_color(pbng_solver *s, pbng_constraint_sweep *cs, const int32_t *item, int32_t n)
{
  const gpbd_data *g = s->data;
  const pbng_problem *pb = s->pb;
  for (int32_t j = 0; j < n; ++j) {
    const int32_t e = item[j];
    if (pbng_constraint_sheet_kind(pb, e) >= 0 || !tet_inverted(g, pb->x, e)) continue;
    const pbng_gpbd_tet4_element *el = &g->tet4[e];
    double xe[4][3], w[4], pre[12] = {0};
    for (int a = 0; a < 4; ++a) {
      w[a] = cs->inv_mass[el->node[a]];
      for (int k = 0; k < 3; ++k) xe[a][k] = pb->x[3 * el->node[a] + k];
    }
    pbng_gpbd_tet_uninvert_moving(&el->rest, g->tet_opt.uninvert_min, w, xe, pre);
    for (int a = 0; a < 4; ++a) {
      if (w[a] == 0.0) continue;
      for (int k = 0; k < 3; ++k) pb->x[3 * el->node[a] + k] = xe[a][k];
      cs->touched[el->node[a]] = 1;
    }
  }
}

/* The tetrahedra the passes left inverted (their folds undo the per-element projections), projected together: their
 * nodes moved until every tetrahedron touching them has det F > 0 (methods/gpbd/gpbd_cluster.h, core/gpbd_untangle.h;
 * up to two rings of nodes around them also when needed), then counted again. Collective. */
static PetscErrorCode project_jointly(pbng_solver *s)
{
  gpbd_data *g = s->data;
  const pbng_gpbd_cluster_mesh m = {.dm = s->pb->dm, .tet = g->tet4, .n = g->nterms, .inv_mass = g->cs.inv_mass};
  const pbng_gpbd_untangle_options o = {.eps = 1e-3, .sweeps = 50, .max_rings = 2, .joint_steps = g->uninvert_joint_steps};
  long long inverted;

  PetscFunctionBeginUser;
  PetscCall(pbng_gpbd_project_clusters(&m, &o, g->uninvert_joint, s->pb->x, &inverted, &g->joint_left));
  PetscCall(count_inverted(s, &g->inverted_left));
  PetscFunctionReturn(0);
}

/* The body lift (issue 43 item 2; docs/gpbd_solver.md#inversion): the seed's projection of one inverted element
 * (Sec. 4.1: its smallest singular value negated, at least s_min, its centroid kept) applied to the set of all inverted
 * tetrahedra as one body, so that its elements all turn the same way. Per element the projection picks the element's own
 * orientation (a mirrored element flips against its still-mirrored neighbours; a flat one, sigma_3 = 0, rises along its
 * own third singular vector, whose sign the SVD does not tie to the neighbours'): from a mirrored or flattened start the
 * body ends in a patchwork of the two orientations. Here with Fb = sum_e V_e F_e / sum_e V_e over the inverted
 * tetrahedra = U diag(s) V^T (signed: s_2 <= 0 carries a reflection) and Xb = sum_e V_e X_e / sum_e V_e (their rest
 * centroids), every free node a of an inverted tetrahedron moves by
 *     x_a += (max(|s_2|, s_min) - s_2) u_2 v_2^T (X_a - Xb),                                                     (L1)
 * the affine move that turns Fb into U diag(s_0, s_1, max(|s_2|, s_min)) V^T and keeps the (rest) centroid: a uniformly
 * mirrored body is mapped back onto its rest shape, a flattened one lifted to s_min along one normal. Only when s_2 <
 * s_min. Sums exact (parallel/reduce.h): every rank computes the same Fb, Xb, so results do not depend on the
 * partition. Collective. */

/* Whether local tetrahedron e (not a sheet term) is inverted or flat at x: det F <= 0; its F into F. */
static int local_tet_inverted(const pbng_problem *pb, int32_t e, double F[9], double *V)
{
  double B[9], xe[4][3];
  const int32_t *node = pbng_constraint_tet_shape(pb, e, B, V);
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) xe[a][k] = pb->x[3 * node[a] + k];
  pbng_tet_deformation_gradient(xe[0], xe[1], xe[2], xe[3], B, F);
  return mat3_det(F) <= 0.0;
}

/* Fb and Xb of (L1) over every rank's owned inverted tetrahedra; *volume their rest volume (0: none). Collective. */
static PetscErrorCode body_average(const pbng_solver *s, double Fb[9], double Xb[3], double *volume)
{
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  pbng_exact_sum sum[13];
  double total[13];

  PetscFunctionBeginUser;
  for (int k = 0; k < 13; ++k) pbng_exact_sum_zero(&sum[k]);
  for (int32_t e = 0; e < dm->nowned_elems; ++e) {
    double F[9], V;
    if (pbng_constraint_sheet_kind(pb, e) >= 0 || !local_tet_inverted(pb, e, F, &V)) continue;
    const int32_t *node = &dm->elems[(int64_t)dm->nen * e];
    for (int k = 0; k < 9; ++k) pbng_exact_sum_add(&sum[k], V * F[k]);
    for (int k = 0; k < 3; ++k)
      pbng_exact_sum_add(&sum[9 + k], 0.25 * V * (dm->X[3 * node[0] + k] + dm->X[3 * node[1] + k] + dm->X[3 * node[2] + k] + dm->X[3 * node[3] + k]));
    pbng_exact_sum_add(&sum[12], V);
  }
  PetscCall(pbng_exact_sums_allreduce(dm->comm, 13, sum, total));
  *volume = total[12];
  for (int k = 0; k < 9 && *volume > 0; ++k) Fb[k] = total[k] / *volume;
  for (int k = 0; k < 3 && *volume > 0; ++k) Xb[k] = total[9 + k] / *volume;
  PetscFunctionReturn(0);
}

/* Whether owned node i belongs to an inverted tetrahedron (dm->adj: all of them are on this rank). */
static int node_of_inverted(const pbng_problem *pb, int32_t i)
{
  const pbng_dmesh *dm = pb->dm;
  for (int32_t j = dm->adj_start[i]; j < dm->adj_start[i + 1]; ++j) {
    const int32_t e = dm->adj[j] / dm->nen;
    double F[9], V;
    if (pbng_constraint_sheet_kind(pb, e) < 0 && local_tet_inverted(pb, e, F, &V)) return 1;
  }
  return 0;
}

/* The frame's start re-posed by dx (every local node): x, and with it the step's x^n, x^ = x^n + dt v^n (the problem's,
 * owned nodes) and x~, the step's start (the sweep's, local nodes), so that the lift adds no velocity and x = x~ + sum d_i
 * (Eq. 6) holds: the step is the one from the lifted start (a repaired initial state, not a motion). */
static void repose_step(pbng_solver *s, const double *dx)
{
  gpbd_data *g = s->data;
  pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  for (int64_t k = 0; k < 3 * (int64_t)dm->nlocal; ++k) {
    pb->x[k] += dx[k];
    g->cs.x_tilde[k] += dx[k];
    g->cs.x_step[k] += dx[k];
  }
  for (int64_t k = 0; k < 3 * (int64_t)dm->nowned && pb->x_prev; ++k) {
    pb->x_prev[k] += dx[k];
    pb->x_hat[k] += dx[k];
  }
}

/* (L1) when the body's smallest signed singular value is below s_min; *lifted: whether it moved. Collective. */
static PetscErrorCode lift_body(pbng_solver *s, int *lifted)
{
  gpbd_data *g = s->data;
  pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  double Fb[9], Xb[3], volume, U[9], sv[3], V[9];

  PetscFunctionBeginUser;
  *lifted = 0;
  PetscCall(body_average(s, Fb, Xb, &volume));
  if (!(volume > 0)) PetscFunctionReturn(0);
  pbng_svd3_rotations(Fb, U, sv, V);
  const double lift = fmax(fabs(sv[2]), g->tet_opt.uninvert_min) - sv[2]; /* (L1)'s factor */
  if (!(lift > 0)) PetscFunctionReturn(0);
  double *dx = g->cs.work; /* the moves, decided from x before any node moves; ghosts' from their owners */
  memset(dx, 0, sizeof(double) * 3 * (size_t)dm->nlocal);
#pragma omp parallel for schedule(static)
  for (int32_t i = 0; i < dm->nfree; ++i) {
    double r = 0.0;
    if (g->cs.inv_mass[i] > 0 && node_of_inverted(pb, i))
      for (int k = 0; k < 3; ++k) r += V[3 * k + 2] * (dm->X[3 * i + k] - Xb[k]);
    for (int k = 0; k < 3; ++k) dx[3 * i + k] = lift * r * U[3 * k + 2];
  }
  if (pb->halo) PetscCall(pbng_halo_exchange(pb->halo, -1, dx));
  repose_step(s, dx);
  *lifted = 1;
  PetscFunctionReturn(0);
}

/* At a frame's first sweep: the body lift when more tetrahedra are inverted than the joint projection takes.
 * Collective. */
static PetscErrorCode lift_at_frame_start(pbng_solver *s, int l)
{
  gpbd_data *g = s->data;
  long long inverted;

  PetscFunctionBeginUser;
  g->lifted = 0;
  if (!g->uninvert_body || l > 0) PetscFunctionReturn(0);
  PetscCall(count_inverted(s, &inverted));
  if (inverted > g->uninvert_joint) PetscCall(lift_body(s, &g->lifted));
  PetscFunctionReturn(0);
}

/* The passes after a sweep, while an element is inverted or flat (at most g->uninvert_passes), with the counts before
 * and after them for -monitor. Without passes nothing is counted here (the monitor counts for itself). Collective. */
static PetscErrorCode project_inverted(pbng_solver *s)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  g->passes_used = 0;
  if (g->uninvert_passes == 0) PetscFunctionReturn(0); /* none (-gpbd_uninvert_passes 0 or -gpbd_uninvert_min < 0) */
  PetscCall(count_inverted(s, &g->inverted_swept));
  g->inverted_left = g->inverted_swept;
  while (g->inverted_left > 0 && g->passes_used < g->uninvert_passes) {
    PetscCall(pbng_constraint_sweep_run_element_colors(s, &g->cs, GPBD_CHUNK, uninvert_color));
    ++g->passes_used;
    PetscCall(count_inverted(s, &g->inverted_left));
  }
  g->joint_left = -1;
  if (g->inverted_left > 0 && g->inverted_left <= g->uninvert_joint) PetscCall(project_jointly(s));
  g->inverted_count = g->inverted_left;
  PetscFunctionReturn(0);
}

/* ---- set-up ------------------------------------------------------------------------------------- */

/* What this increment handles: linear tetrahedra and sheets (tri3, bend4, cloth6), mixed or not (plasticity is
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
            "-solver gpbd works on linear tetrahedra (tet4), sheets (tri3, bend4) or cloth6 stencils, and weak constraints; this mesh has %s elements (docs/gpbd_solver.md)",
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
  g->inverted_count = -1;
  g->form = s->opt.gpbd.form;
  g->h = pb->mode == PBNG_MODE_DYNAMIC ? pb->dt : (s->opt.gpbd.dt > 0 ? s->opt.gpbd.dt : pb->dt);
  pbng_gpbd_newton_defaults(&g->tet_opt.newton);
  g->tet_opt.newton.newton_max = s->opt.gpbd.newton_max;
  g->tet_opt.newton.fix = fix_kinds[s->opt.gpbd.hessian_fix];
  g->tet_opt.newton.gtol = 1e-14; /* |grad phi| is a strain: below this, round-off (the relative 1e-10 is out of reach near the fixed point) */
  g->tet_opt.project = s->opt.gpbd.seed_drift == 0;
  g->tet_opt.uninvert_min = s->opt.gpbd.uninvert_min;
  g->uninvert_passes = s->opt.gpbd.uninvert_min >= 0 && s->opt.gpbd.uninvert_passes > 0 ? s->opt.gpbd.uninvert_passes : 0;
  g->uninvert_joint = g->uninvert_passes > 0 && s->opt.gpbd.uninvert_joint > 0 ? s->opt.gpbd.uninvert_joint : 0;
  g->uninvert_body = g->uninvert_passes > 0 && s->opt.gpbd.uninvert_body > 0;
  g->uninvert_joint_steps = s->opt.gpbd.uninvert_joint_steps > 0 ? s->opt.gpbd.uninvert_joint_steps : s->opt.gpbd.uninvert_joint_steps < 0 ? 0 : PBNG_GPBD_UNINVERT_JOINT_STEPS;
  g->sheet_opt = g->tet_opt;
  g->sheet_opt.project = !s->opt.gpbd.sheet_projection_off;
  PetscCall(pbng_constraint_sweep_create(s, g->h, 0, &g->cs));
  g->stride = 3 * dm->nen;
  g->nterms = g->form == GPBD_FORM_JACOBI ? dm->nelems : dm->nowned_elems;
  PetscCall(PetscCalloc1(g->stride * (int64_t)g->nterms + 1, &g->d));
  PetscCall(PetscMalloc1(g->stride * (int64_t)g->nterms + 1, &g->dd));
  PetscCall(PetscMalloc1(g->stride * (int64_t)g->nterms + 1, &g->pre));
  PetscCall(PetscCalloc1(g->nterms + 1, &g->tet4));
  for (int32_t e = 0; e < g->nterms; ++e) { /* the closed form's element data, contiguous */
    if (pbng_constraint_sheet_kind(pb, e) >= 0) {
      g->sheets = 1;
      continue;
    }
    double B[9];
    memcpy(g->tet4[e].node, pbng_constraint_tet_shape(pb, e, B, &g->tet4[e].rest.volume), sizeof(g->tet4[e].node));
    memcpy(g->tet4[e].rest.B, B, sizeof(B));
  }
  g->rows = g->tet4;
  if (g->form == GPBD_FORM_GS && !g->sheets) { /* the rows in sweep order */
    g->order = g->cs.elem.item;
    PetscCall(PetscMalloc1(g->nterms + 1, &g->rows));
    PetscCall(PetscCalloc1(g->stride * (int64_t)g->nterms + 1, &g->d_elements));
    pbng_gpbd_rows_to_sweep(g->order, g->nterms, sizeof(*g->rows), g->tet4, g->rows);
  }
  if (g->form == GPBD_FORM_JACOBI) {
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
    if (g->order) PetscCall(PetscFree(g->rows));
    PetscCall(PetscFree(g->d_elements));
    PetscCall(PetscFree(g->tet4));
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
static PetscErrorCode gpbd_begin_frame(pbng_solver *s)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  PetscCall(start_step(s, NULL));
  g->inverted_count = -1;
  if (g->uninvert_passes > 0) PetscCall(count_inverted(s, &g->inverted_count)); /* the start's, for the divergence check */
  PetscFunctionReturn(0);
}

/* The tetrahedra the last iteration's projections left inverted or flat (or the frame start's); -1: not counted. */
static long long gpbd_inverted(const pbng_solver *s) { return ((const gpbd_data *)s->data)->inverted_count; }

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
  PetscCall(lift_at_frame_start(s, l));
  if (g->form == GPBD_FORM_GS) {
    g->newton_steps = 0;
    PetscCall(pbng_constraint_sweep_run_chunks(s, &g->cs, GPBD_CHUNK, chunk_parts(), project_elements));
  } else {
    PetscCall(jacobi_sweep(s));
    const int ncolors = g->cs.elem.ncolors; /* the weak constraints' colors alone, XPBD's projection */
    g->cs.elem.ncolors = 0;
    const PetscErrorCode ierr = pbng_constraint_sweep_run_chunks(s, &g->cs, GPBD_CHUNK, chunk_parts(), project_elements);
    g->cs.elem.ncolors = ncolors;
    PetscCall(ierr);
  }
  PetscCall(project_inverted(s));
  PetscFunctionReturn(0);
}

/* -monitor suffix: "  newton N" the mean local Newton steps per element in the last sweep; with the inverted-element
 * projection on, "  inverted A -> B (P passes)": the tetrahedra inverted or flat after the sweep, after its P passes.
 * Collective. */
static PetscErrorCode gpbd_monitor(pbng_solver *s, char *buf, size_t len)
{
  gpbd_data *g = s->data;
  long long mine[2] = {g->newton_steps, s->pb->dm->nowned_elems}, all[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, s->pb->dm->comm));
  const int n = snprintf(buf, len, "  newton %.3f", all[1] ? (double)all[0] / (double)all[1] : 0.0);
  if (g->tet_opt.uninvert_min >= 0 && g->uninvert_passes == 0) { /* no passes: the sweep's count, taken now (x as the sweep left it) */
    PetscCall(count_inverted(s, &g->inverted_swept));
    g->inverted_left = g->inverted_swept;
  }
  if (g->tet_opt.uninvert_min >= 0 && n > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "  inverted %lld -> %lld (%s%d passes%s)", g->inverted_swept, g->inverted_left, g->lifted ? "lifted, " : "",
             g->passes_used, g->uninvert_passes > 0 && g->joint_left >= 0 ? ", joint" : "");
  PetscFunctionReturn(0);
}

/* Checkpoint state: the step's (x~, its start, the weak multipliers) and each element's d_i (Jacobi: every
 * local element's, read back by global element), by element number (with g->order: copied out of the rows' order,
 * and back in by gpbd_restored). */
static PetscErrorCode gpbd_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  gpbd_data *g = s->data;
  const pbng_dmesh *dm = s->pb->dm;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_state(&g->cs, s->pb, "gpbd", fields, n));
  if (g->order) pbng_gpbd_rows_to_elements(g->order, g->nterms, sizeof(double) * (size_t)g->stride, g->d, g->d_elements);
  pbng_state_add(fields, n, "gpbd_d", PBNG_FIELD_ELEMENTS, g->stride, dm->nowned_elems, g->nterms, g->order ? g->d_elements : g->d);
  PetscFunctionReturn(0);
}

static PetscErrorCode gpbd_restored(pbng_solver *s)
{
  gpbd_data *g = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_restored(&g->cs, s->pb));
  g->inverted_count = -1; /* not kept: counted again by the next iteration */
  if (g->order) pbng_gpbd_rows_to_sweep(g->order, g->nterms, sizeof(double) * (size_t)g->stride, g->d_elements, g->d);
  PetscFunctionReturn(0);
}

/* ---- options ------------------------------------------------------------------------------------ */

static PetscErrorCode pbng_gpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  PetscBool set_form, set_omega, set_newton, set_fix, set_dt, set_sub, set_proj, set_sproj, set_uninv, set_passes, set_joint, set_steps, set_body, project = o->gpbd.seed_drift ? PETSC_FALSE : PETSC_TRUE,
            project_sheets = o->gpbd.sheet_projection_off ? PETSC_FALSE : PETSC_TRUE;
  const int mine = !strcmp(selected, pbng_solver_gpbd_ops.name);
  PetscInt newton_max = o->gpbd.newton_max > 0 ? o->gpbd.newton_max : 20, substeps = o->gpbd.substeps > 0 ? o->gpbd.substeps : 1;
  PetscInt passes = o->gpbd.uninvert_passes > 0 ? o->gpbd.uninvert_passes : o->gpbd.uninvert_passes < 0 ? 0 : PBNG_GPBD_UNINVERT_PASSES;
  PetscInt steps = o->gpbd.uninvert_joint_steps > 0 ? o->gpbd.uninvert_joint_steps : o->gpbd.uninvert_joint_steps < 0 ? 0 : PBNG_GPBD_UNINVERT_JOINT_STEPS;
  PetscBool body = o->gpbd.uninvert_body > 0 ? PETSC_TRUE : PETSC_FALSE; /* off unless asked for */
  PetscInt joint = o->gpbd.uninvert_joint > 0 ? o->gpbd.uninvert_joint : o->gpbd.uninvert_joint < 0 ? 0 : PBNG_GPBD_UNINVERT_JOINT;

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
  PetscCall(PetscOptionsInt("-gpbd_uninvert_passes",
                             "after each sweep, passes of that projection over the elements left inverted or flat, while any is, at most this many (0: none, the seed's rule)",
                             NULL, passes, &passes, &set_passes));
  PetscCall(PetscOptionsInt("-gpbd_uninvert_joint",
                             "after the passes, when 1 to this many tetrahedra are still inverted, their nodes are moved together until every tetrahedron around them has det F > 0 (a joint projection of the cluster; 0: never)",
                             NULL, joint, &joint, &set_joint));
  PetscCall(PetscOptionsInt("-gpbd_uninvert_joint_steps",
                             "the joint projection: after a node-wise sweep that leaves as many inverted as before, Newton steps on all the cluster's nodes at once, at most this many (0: node-wise only)",
                             NULL, steps, &steps, &set_steps));
  PetscCall(PetscOptionsBool("-gpbd_uninvert_body",
                             "before a sweep, when more tetrahedra are inverted than -gpbd_uninvert_joint, they are lifted as one body (the projection of their volume-averaged F, so that all turn the same way; 0: not)",
                             NULL, body, &body, &set_body));
  PetscCall(PetscOptionsReal("-gpbd_dt", "quasistatic: pseudo-time step (default: -dt)", NULL, o->gpbd.dt, &o->gpbd.dt, &set_dt));
  PetscCall(PetscOptionsInt("-gpbd_substeps", "quasistatic: iterations (sweeps) per pseudo-time step", NULL, substeps, &substeps, &set_sub));
  PetscCheck(mine || !(set_form || set_omega || set_newton || set_fix || set_dt || set_sub || set_proj || set_sproj || set_uninv || set_passes || set_joint || set_steps || set_body), PETSC_COMM_WORLD,
             PETSC_ERR_ARG_INCOMP,
             "-gpbd_form, -gpbd_omega, -gpbd_newton_max, -gpbd_hessian_fix, -gpbd_subspace_projection, -gpbd_sheet_projection, -gpbd_uninvert_min, "
             "-gpbd_uninvert_passes, -gpbd_uninvert_joint, -gpbd_uninvert_joint_steps, -gpbd_uninvert_body, -gpbd_dt and -gpbd_substeps are for -solver gpbd");
  o->gpbd.seed_drift = !project;
  o->gpbd.sheet_projection_off = project_sheets ? 0 : 1;
  PetscCheck(o->gpbd.omega >= 1.0 && o->gpbd.omega < 2.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-gpbd_omega %g: must be in [1, 2) (the seed's over-relaxation range)", o->gpbd.omega);
  PetscCheck(!set_omega || o->gpbd.form == GPBD_FORM_JACOBI, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-gpbd_omega is for -gpbd_form jacobi");
  PetscCheck(newton_max >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_newton_max %d: must be >= 1", (int)newton_max);
  PetscCheck(!set_dt || (o->gpbd.dt > 0 && isfinite(o->gpbd.dt)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_dt %g: must be > 0", o->gpbd.dt);
  PetscCheck(isfinite(o->gpbd.uninvert_min), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_uninvert_min: must be a finite number");
  PetscCheck(substeps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_substeps %d: must be >= 1", (int)substeps);
  PetscCheck(passes >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_uninvert_passes %d: must be >= 0 (0: no passes after the sweep)", (int)passes);
  o->gpbd.uninvert_passes = passes > 0 ? (int)passes : -1;
  PetscCheck(joint >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_uninvert_joint %d: must be >= 0 (0: no joint projection)", (int)joint);
  o->gpbd.uninvert_joint = joint > 0 ? (int)joint : -1;
  PetscCheck(steps >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gpbd_uninvert_joint_steps %d: must be >= 0 (0: node-wise only)", (int)steps);
  o->gpbd.uninvert_joint_steps = steps > 0 ? (int)steps : -1;
  o->gpbd.uninvert_body = body ? 1 : -1;
  o->gpbd.newton_max = (int)newton_max;
  o->gpbd.substeps = set_sub ? (int)substeps : 0; /* 0: not given (1) */
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_gpbd_ops = {
  .name = "gpbd",
  .kind = {.cloth_stencils = 1, .selectable = 1, .chosen_by = "-solver gpbd", .help = "generalized PBD: per-element Newton on the strain (Chaudhary et al.; tet4, sheets, weak constraints, contacts)",
           .constraint_colors = 1, .own_guess = 1, .contacts = 1, .plasticity = 0, .contact_every = 10,
           .set_from_options = pbng_gpbd_set_from_options},
  .create = gpbd_create, .begin_frame = gpbd_begin_frame, .iterate = gpbd_iterate, .destroy = gpbd_destroy, .monitor = gpbd_monitor,
  .state = gpbd_state, .restored = gpbd_restored, .inverted = gpbd_inverted};
