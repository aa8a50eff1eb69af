/* Position-Based Nonlinear Gauss-Seidel (Sec. 7): each free node in turn takes one modified-Newton
 * step on its own 3x3 system (Eq. 31-33) with the SPD modified Hessian (Eq. 36-37); nodes of one
 * color (Sec. 9) are updated in parallel. Optional SOR (Eq. 40) or Chebyshev (Eq. 39) acceleration.
 * With weak constraints, each iteration ends with one joint step per weak constraint on all its
 * nodes (-weak_blocks, on by default; off is the paper's node-only PBNG): see weak_block_step. */
#include <string.h>
#include "core/dense.h"
#include "core/mat3.h"
#include "solvers/solver.h"

/* Prefetch distance of a sweep: positions PBNG_PREFETCH_AHEAD nodes ahead, element records twice as far. */
#define PBNG_PREFETCH_AHEAD 4

typedef struct {
  PetscLogEvent ev_update, ev_halo; /* -log_view: node updates vs halo exchange */
  double *x_curr;    /* x^{l}   of the owned free nodes (acceleration) */
  double *x_prev;    /* x^{l-1} */
  double omega_prev; /* Chebyshev omega_l */
  pbng_color_groups blocks; /* counted weak constraints by block color (-weak_blocks; ncolors 0: none) */
} pbng_data;

/* Eq. 31-33: x_i <- x_i + A^{-1} (f_i(x) + f_ext_i), A the modified nodal Hessian (Eq. 37). */
static inline void pbng_node_step(const pbng_problem *pb, int32_t i, double *x)
{
  double f[3], A[9], dx[3];
  pbng_node_force(pb, i, x, f, A, 1);
  mat3_spd_solve(A, f, dx);
  x[3 * i + 0] += dx[0];
  x[3 * i + 1] += dx[1];
  x[3 * i + 2] += dx[2];
}

/* Updates the owned free nodes [begin, end) of the current color (inside a parallel region). */
static inline void update_range(const pbng_problem *pb, int32_t begin, int32_t end, double *x)
{
#pragma omp for schedule(static)
  for (int32_t i = begin; i < end; ++i) {
    if (i + 2 * PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_records(pb, i + 2 * PBNG_PREFETCH_AHEAD);
    if (i + PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_positions(pb, i + PBNG_PREFETCH_AHEAD, x);
    pbng_node_step(pb, i, x);
  }
}

/* One Gauss-Seidel sweep, color by color. Per color: update the interface nodes (those other ranks
 * hold as ghosts), start their halo messages, update the interior nodes while the messages travel,
 * then receive the color's ghosts so that the next colors read current positions. */
static PetscErrorCode pbng_sweep(pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  pbng_data *d = s->data;
  double *x = pb->x;
  PetscErrorCode ierr = 0;
  double t0 = 0;

  PetscFunctionBeginUser;
#pragma omp parallel
  for (int c = 0; c < dm->ncolors; ++c) {
#pragma omp master
    ierr = ierr ? ierr : PetscLogEventBegin(d->ev_update, 0, 0, 0, 0);
    update_range(pb, dm->color_start[c], dm->color_split[c], x); /* implicit barrier */
#pragma omp master
    if (pb->halo && !ierr) {
      t0 = MPI_Wtime();
      ierr = pbng_halo_begin(pb->halo, c, x);
      s->halo_seconds += MPI_Wtime() - t0;
    }
    update_range(pb, dm->color_split[c], dm->color_start[c + 1], x); /* implicit barrier */
#pragma omp master
    {
      ierr = ierr ? ierr : PetscLogEventEnd(d->ev_update, 0, 0, 0, 0);
      if (pb->halo && !ierr) {
        t0 = MPI_Wtime();
        ierr = PetscLogEventBegin(d->ev_halo, 0, 0, 0, 0);
        ierr = ierr ? ierr : pbng_halo_end(pb->halo, c, x);
        ierr = ierr ? ierr : PetscLogEventEnd(d->ev_halo, 0, 0, 0, 0);
        s->halo_seconds += MPI_Wtime() - t0;
      }
    }
#pragma omp barrier
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* One modified-Newton step on all free nodes of weak constraint c at once (an extension of Eq. 33 to
 * a block of nodes): H dx = f with H = blockdiag(A_j) + the constraint's exact coupling a_j a_k K_c
 * between its nodes (j != k; the diagonal a_j^2 K_c is already in A_j, Eq. 38). Node-by-node steps
 * move two nodes bound by a stiff constraint together only by a fraction e/k per sweep (e the
 * elastic stiffness around them); this step moves them with their combined elastic stiffness. */
static void weak_block_step(const pbng_problem *pb, const pbng_weak_constraint *c, double *x)
{
  enum { NMAX = 3 * PBNG_WC_MAX_NODES };
  int slot[PBNG_WC_MAX_NODES], n = 0;
  double H[NMAX * NMAX], f[NMAX], A[9];

  for (int j = 0; j < c->nnodes; ++j)
    if (c->node[j] < pb->dm->nfree) slot[n++] = j;
  if (n < 2) return; /* one free node: its nodal step was this step */
  const int N = 3 * n;
  for (int p = 0; p < n; ++p) {
    pbng_node_force(pb, (int32_t)c->node[slot[p]], x, &f[3 * p], A, 1);
    for (int q = 0; q < n; ++q) {
      const double w = p == q ? 0.0 : c->a[slot[p]] * c->a[slot[q]];
      for (int r = 0; r < 3; ++r)
        for (int t = 0; t < 3; ++t) H[N * (3 * p + r) + 3 * q + t] = p == q ? A[3 * r + t] : w * c->K[3 * r + t];
    }
  }
  if (dense_spd_solve(N, H, f)) return; /* not reached: H is SPD when every node has an element */
  for (int p = 0; p < n; ++p)
    for (int r = 0; r < 3; ++r) x[3 * c->node[slot[p]] + r] += f[3 * p + r];
}

/* Every counted weak constraint's block step, color by color (blocks of one color share no element or
 * constraint); their nodes are all owned here (the partition keeps them together), so only their
 * ghost copies elsewhere need refreshing after each color. */
static PetscErrorCode weak_block_sweep(pbng_solver *s)
{
  pbng_data *d = s->data;
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  for (int b = 0; b < d->blocks.ncolors; ++b) {
    PetscCall(PetscLogEventBegin(d->ev_update, 0, 0, 0, 0));
#pragma omp parallel for schedule(static)
    for (int32_t k = d->blocks.start[b]; k < d->blocks.start[b + 1]; ++k) weak_block_step(pb, &dm->weak[d->blocks.item[k]], pb->x);
    PetscCall(PetscLogEventEnd(d->ev_update, 0, 0, 0, 0));
    if (pb->halo) {
      const double t0 = MPI_Wtime();
      PetscCall(PetscLogEventBegin(d->ev_halo, 0, 0, 0, 0));
      PetscCall(pbng_halo_exchange(pb->halo, -1, pb->x));
      PetscCall(PetscLogEventEnd(d->ev_halo, 0, 0, 0, 0));
      s->halo_seconds += MPI_Wtime() - t0;
    }
  }
  PetscFunctionReturn(0);
}

/* -weak_blocks: the block colors' lists; every node of a counted constraint must be owned here.
 * Collective: every rank agrees on a failure. */
static PetscErrorCode setup_weak_blocks(pbng_solver *s)
{
  pbng_data *d = s->data;
  const pbng_dmesh *dm = s->pb->dm;
  int64_t spanning = -1, first; /* global index of a constraint with nodes on several ranks */

  PetscFunctionBeginUser;
  if (!s->opt.weak_blocks || dm->nglobal_weak == 0) PetscFunctionReturn(0);
  int missing = dm->block_color == NULL, any_missing;
  PetscCallMPI(MPI_Allreduce(&missing, &any_missing, 1, MPI_INT, MPI_MAX, dm->comm));
  PetscCheck(!any_missing, dm->comm, PETSC_ERR_ARG_WRONG,
             "-weak_blocks: this partitioned mesh file has no weak-constraint block colors: partition it again with pbng-partition");
  for (int32_t c = 0; c < dm->nowned_weak && spanning < 0; ++c)
    for (int j = 0; j < dm->weak[c].nnodes; ++j)
      if (dm->weak[c].node[j] >= dm->nowned) spanning = dm->global_weak[c];
  PetscCallMPI(MPI_Allreduce(&spanning, &first, 1, MPI_INT64_T, MPI_MAX, dm->comm));
  PetscCheck(first < 0, dm->comm, PETSC_ERR_ARG_WRONG,
             "-weak_blocks: weak constraint %" PRId64 " has nodes on several ranks: partition the mesh again with pbng-partition", first);
  PetscCall(pbng_color_groups_build(dm->nblock_colors, dm->nowned_weak, dm->block_color, &d->blocks));
  PetscFunctionReturn(0);
}

/* Chebyshev weight omega_{l+1} of Eq. 39. */
static double chebyshev_omega(int l, double rho, double omega_l)
{
  if (l < 2) return 1.0;
  if (l == 2) return 2.0 / (2.0 - rho * rho);
  return 4.0 / (4.0 - rho * rho * omega_l);
}

/* Eq. 39 / Eq. 40 applied to the owned free nodes after the sweep; x holds x_PBNG^{l+1}. */
static void accelerate(pbng_solver *s, int l)
{
  pbng_data *d = s->data;
  const int64_t n = 3 * (int64_t)s->pb->dm->nfree;
  double *x = s->pb->x;
  if (s->opt.accel == PBNG_ACCEL_SOR) {
    const double w = l == 0 ? 1.0 : s->opt.omega;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const double xnew = w * (x[k] - d->x_prev[k]) + d->x_prev[k]; /* Eq. 40 */
      d->x_prev[k] = d->x_curr[k];
      x[k] = xnew;
    }
  } else {
    const double w = chebyshev_omega(l, s->opt.rho, d->omega_prev), g = s->opt.gamma;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const double xnew = w * (g * (x[k] - d->x_curr[k]) + d->x_curr[k] - d->x_prev[k]) + d->x_prev[k]; /* Eq. 39 */
      d->x_prev[k] = d->x_curr[k];
      x[k] = xnew;
    }
    d->omega_prev = w;
  }
}

static PetscErrorCode pbng_create(pbng_solver *s)
{
  pbng_data *d;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&d));
  PetscCall(PetscLogEventRegister("PBNGNodeUpdate", PETSC_OBJECT_CLASSID, &d->ev_update));
  PetscCall(PetscLogEventRegister("PBNGHaloExchange", PETSC_OBJECT_CLASSID, &d->ev_halo));
  if (s->opt.accel != PBNG_ACCEL_NONE) {
    PetscCall(PetscMalloc1(3 * (int64_t)s->pb->dm->nfree + 1, &d->x_curr));
    PetscCall(PetscMalloc1(3 * (int64_t)s->pb->dm->nfree + 1, &d->x_prev));
  }
  s->data = d;
  PetscCall(setup_weak_blocks(s));
  PetscFunctionReturn(0);
}

static PetscErrorCode pbng_begin_frame(pbng_solver *s)
{
  pbng_data *d = s->data;

  PetscFunctionBeginUser;
  d->omega_prev = 1.0;
  if (d->x_prev) memcpy(d->x_prev, s->pb->x, sizeof(double) * 3 * (size_t)s->pb->dm->nfree); /* x^{-1} = x^0 */
  PetscFunctionReturn(0);
}

static PetscErrorCode pbng_iterate(pbng_solver *s, int l)
{
  pbng_data *d = s->data;

  PetscFunctionBeginUser;
  if (d->x_curr) memcpy(d->x_curr, s->pb->x, sizeof(double) * 3 * (size_t)s->pb->dm->nfree);
  PetscCall(pbng_sweep(s));
  if (d->blocks.ncolors > 0) PetscCall(weak_block_sweep(s));
  if (s->opt.accel != PBNG_ACCEL_NONE) {
    accelerate(s, l);
    PetscCall(pbng_problem_update_ghosts(s->pb)); /* Eq. 39/40 moved every owned free node */
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode pbng_destroy(pbng_solver *s)
{
  pbng_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(PetscFree(d->x_curr));
    PetscCall(PetscFree(d->x_prev));
    PetscCall(pbng_color_groups_destroy(&d->blocks));
  }
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: the acceleration history x^{l-1} and omega_l (Eq. 39/40). */
static PetscErrorCode pbng_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  pbng_data *d = s->data;
  const int32_t nfree = s->pb->dm->nfree;

  PetscFunctionBeginUser;
  if (d->x_prev) pbng_state_add(fields, n, "pbng_x_prev", PBNG_FIELD_NODES, 3, nfree, nfree, d->x_prev);
  pbng_state_add(fields, n, "pbng_omega", PBNG_FIELD_SCALARS, 1, 1, 1, &d->omega_prev);
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_pbng_ops = {.name = "pbng", .create = pbng_create, .begin_frame = pbng_begin_frame, .iterate = pbng_iterate,
                                              .destroy = pbng_destroy, .state = pbng_state};
