#include "methods/pbng/sweep.h"
#include "core/chebyshev.h"
#include <inttypes.h>
#include <string.h>
#include "core/dense.h"
#include "core/mat3.h"

/* Prefetch distance of a sweep: positions PBNG_PREFETCH_AHEAD nodes ahead, element records twice as far. */
#define PBNG_PREFETCH_AHEAD 4

static const char *const accel_names[] = {"none", "sor", "chebyshev"};

const char *pbng_accel_name(pbng_accel accel) { return accel_names[accel]; }

/* Eq. 31-33: x_i <- x_i + A^{-1} (f_i(x) + f_ext_i + b_i), A the modified nodal Hessian (Eq. 37):
 * one modified-Newton step on F_i(x) = b_i with F = -(f + f_ext) the energy gradient (b = 0 in the
 * paper; inside FAS, b is the tau-corrected right-hand side of the level). vbd (a constant: one
 * instantiation each, so that the paper's step keeps its code): the -vbd_* variants, VBD's node block
 * (pbng_node_exact_block) and its backtracking line search on the node's local potential (pbng_node_line_search). */
static inline __attribute__((always_inline)) void pbng_node_step(pbng_sweeper *sw, const pbng_problem *pb, int32_t i, const double *b, double *x, int vbd)
{
  double f[3], A[9], dx[3];
  const int exact = vbd && sw->opt.vbd_exact_block;
  pbng_node_force(pb, i, x, f, exact ? NULL : A, 1);
  if (exact) pbng_node_exact_block(pb, i, x, A);
  if (b) f[0] += b[3 * i + 0], f[1] += b[3 * i + 1], f[2] += b[3 * i + 2];
  mat3_spd_solve(A, f, dx);
  if (pb->contacts && pbng_node_contacts_activate(pb, i, x, dx, f, A)) mat3_spd_solve(A, f, dx); /* a unilateral contact acts after the step */
  if (vbd && sw->opt.vbd_line_search) {
    const int k = pbng_node_line_search(pb, i, x, b, dx);
    if (k > 0) {
#pragma omp atomic
      ++sw->ls_halved;
    } else if (k < 0) {
#pragma omp atomic
      ++sw->ls_kept;
    }
    return;
  }
  x[3 * i + 0] += dx[0];
  x[3 * i + 1] += dx[1];
  x[3 * i + 2] += dx[2];
}

/* Updates the owned free nodes [begin, end) of the current color (inside a parallel region). */
static inline __attribute__((always_inline)) void range_loop(pbng_sweeper *sw, int32_t begin, int32_t end, const double *b, double *x, int vbd)
{
  const pbng_problem *pb = sw->pb;
#pragma omp for schedule(static)
  for (int32_t i = begin; i < end; ++i) {
    if (i + 2 * PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_records(pb, i + 2 * PBNG_PREFETCH_AHEAD);
    if (i + PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_positions(pb, i + PBNG_PREFETCH_AHEAD, x);
    pbng_node_step(sw, pb, i, b, x, vbd);
  }
}

static inline void update_range(pbng_sweeper *sw, int32_t begin, int32_t end, const double *b, double *x)
{
  if (sw->opt.vbd_line_search || sw->opt.vbd_exact_block) range_loop(sw, begin, end, b, x, 1); /* the branch outside the node loop */
  else range_loop(sw, begin, end, b, x, 0);
}

/* The same for the nodes node[begin .. end) of a schedule (contacts: colors that changed during the run). */
static inline __attribute__((always_inline)) void list_loop(pbng_sweeper *sw, const int32_t *node, int32_t begin, int32_t end, const double *b,
                                                           double *x, int vbd)
{
  const pbng_problem *pb = sw->pb;
#pragma omp for schedule(static)
  for (int32_t k = begin; k < end; ++k) {
    if (k + 2 * PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_records(pb, node[k + 2 * PBNG_PREFETCH_AHEAD]);
    if (k + PBNG_PREFETCH_AHEAD < end) pbng_node_prefetch_positions(pb, node[k + PBNG_PREFETCH_AHEAD], x);
    pbng_node_step(sw, pb, node[k], b, x, vbd);
  }
}

static inline void update_list(pbng_sweeper *sw, const int32_t *node, int32_t begin, int32_t end, const double *b, double *x)
{
  if (sw->opt.vbd_line_search || sw->opt.vbd_exact_block) list_loop(sw, node, begin, end, b, x, 1);
  else list_loop(sw, node, begin, end, b, x, 0);
}

/* Color c's interface (part 0) or interior (part 1) nodes: the dmesh's static ranges, or with contacts
 * the contacts' schedule. */
static inline void update_part(pbng_sweeper *sw, int c, int part, const double *b, double *x)
{
  const pbng_problem *pb = sw->pb;
  const pbng_contacts *ct = pb->contacts;
  if (pbng_contacts_active(ct)) {
    const int32_t lo = part ? ct->sched_split[c] : ct->sched_start[c], hi = part ? ct->sched_start[c + 1] : ct->sched_split[c];
    update_list(sw, ct->sched_node, lo, hi, b, x);
  } else {
    const pbng_dmesh *dm = pb->dm;
    update_range(sw, part ? dm->color_split[c] : dm->color_start[c], part ? dm->color_start[c + 1] : dm->color_split[c], b, x);
  }
}

/* Starts (begin) or completes the exchange of color c's ghosts: the static halo's (colors the dmesh
 * has) and the contacts' dynamic halo. */
static PetscErrorCode exchange_color(const pbng_problem *pb, int c, int begin, double *x)
{
  PetscFunctionBeginUser;
  if (pb->halo && c < pb->dm->ncolors) PetscCall(begin ? pbng_halo_begin(pb->halo, c, x) : pbng_halo_end(pb->halo, c, x));
  if (pbng_contacts_active(pb->contacts)) PetscCall(begin ? pbng_contacts_exchange_begin(pb->contacts, c, x) : pbng_contacts_exchange_end(pb->contacts, c, x));
  PetscFunctionReturn(0);
}

/* The corotated warm starts' refresh lists for the current colors (sweeper's refresh_*): every rank holding an element
 * moves its copy of the element's warm start at each of its visits, its own and (here) other ranks', so that the copies
 * stay the same on every partition and the sweep's results bitwise (before: ~1e-15 per cycle apart between partitions,
 * which the muscles' bindings and contacts amplified to different equilibria). Only elements at a partition's
 * boundary have such visits. */
static PetscErrorCode build_rotation_refresh(pbng_sweeper *sw)
{
  const pbng_problem *pb = sw->pb;
  const pbng_dmesh *dm = pb->dm;
  const pbng_contacts *ct = pb->contacts;
  const int active = pbng_contacts_active(ct), ncolors = active ? ct->ncolors : dm->ncolors;
  const int32_t *color = active ? ct->color : dm->color;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(sw->refresh_start));
  PetscCall(PetscFree(sw->refresh_entry));
  sw->refresh_ncolors = ncolors;
  sw->refresh_version = active ? ct->version : -1;
  PetscCall(PetscCalloc1(ncolors + 1, &sw->refresh_start));
  for (int pass = 0; pass < 2; ++pass) { /* 0: count per color; 1: fill, each color's visits by increasing entry */
    for (int32_t e = 0; e < dm->nelems; ++e)
      for (int a = 0; a < 4; ++a) {
        const int32_t v = dm->elems[4 * (int64_t)e + a];
        if (v < dm->nowned || dm->node_bc[v] >= 0) continue; /* an own node (its visit is this rank's), or a held one */
        if (pass == 0) ++sw->refresh_start[color[v] + 1];
        else sw->refresh_entry[sw->refresh_start[color[v]]++] = 4 * e + a;
      }
    if (pass == 0) {
      for (int c = 0; c < ncolors; ++c) sw->refresh_start[c + 1] += sw->refresh_start[c];
      PetscCall(PetscMalloc1(sw->refresh_start[ncolors] + 1, &sw->refresh_entry));
    }
  }
  for (int c = ncolors; c > 0; --c) sw->refresh_start[c] = sw->refresh_start[c - 1]; /* the fill moved each start to the next */
  sw->refresh_start[0] = 0;
  PetscFunctionReturn(0);
}

/* Whether the sweep keeps the warm starts alike (corotated linear tetrahedra), its lists current. */
static PetscErrorCode refresh_lists_current(pbng_sweeper *sw, int *refresh)
{
  const pbng_problem *pb = sw->pb;
  const pbng_contacts *ct = pb->contacts;
  const int version = pbng_contacts_active(ct) ? ct->version : -1;

  PetscFunctionBeginUser;
  *refresh = pb->rotation != NULL && pb->dm->size > 1;
  if (*refresh && (!sw->refresh_start || sw->refresh_version != version)) PetscCall(build_rotation_refresh(sw));
  PetscFunctionReturn(0);
}

enum { REFRESH_CHUNK = 32 }; /* visits per call (a thread's share comes in such chunks) */

/* Color c's other-rank visits of local elements (their warm starts moved, inside a parallel region: the color's own
 * nodes touch none of these elements, whose color-c node is a ghost). */
static inline void refresh_color(const pbng_sweeper *sw, int c, const double *x)
{
  const int32_t begin = sw->refresh_start[c], end = sw->refresh_start[c + 1];
#pragma omp for schedule(static)
  for (int32_t k = begin; k < end; k += REFRESH_CHUNK) pbng_problem_refresh_rotations(sw->pb, &sw->refresh_entry[k], PetscMin(REFRESH_CHUNK, end - k), x);
}

/* One Gauss-Seidel sweep, color by color. Per color: update the interface nodes (those other ranks
 * hold as ghosts), start their halo messages, update the interior nodes while the messages travel,
 * then receive the color's ghosts so that the next colors read current positions. */
static PetscErrorCode color_sweep(pbng_sweeper *sw, const double *b)
{
  const pbng_problem *pb = sw->pb;
  const pbng_dmesh *dm = pb->dm;
  double *x = pb->x;
  PetscErrorCode ierr = 0;
  double t0 = 0;

  const int ncolors = pbng_contacts_active(pb->contacts) ? pb->contacts->ncolors : dm->ncolors;
  int refresh;

  PetscFunctionBeginUser;
  PetscCall(refresh_lists_current(sw, &refresh));
#pragma omp parallel
  for (int c = 0; c < ncolors; ++c) {
#pragma omp master
    ierr = ierr ? ierr : PetscLogEventBegin(sw->ev_update, 0, 0, 0, 0);
    if (refresh) refresh_color(sw, c, x); /* implicit barrier */
    update_part(sw, c, 0, b, x); /* implicit barrier */
#pragma omp master
    if (!ierr) {
      t0 = MPI_Wtime();
      ierr = exchange_color(pb, c, 1, x);
      sw->halo_seconds += MPI_Wtime() - t0;
    }
    update_part(sw, c, 1, b, x); /* implicit barrier */
#pragma omp master
    {
      ierr = ierr ? ierr : PetscLogEventEnd(sw->ev_update, 0, 0, 0, 0);
      if (!ierr) {
        t0 = MPI_Wtime();
        ierr = PetscLogEventBegin(sw->ev_halo, 0, 0, 0, 0);
        ierr = ierr ? ierr : exchange_color(pb, c, 0, x);
        ierr = ierr ? ierr : PetscLogEventEnd(sw->ev_halo, 0, 0, 0, 0);
        sw->halo_seconds += MPI_Wtime() - t0;
      }
    }
#pragma omp barrier
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* One modified-Newton step on all free nodes of weak constraint c at once (an extension of Eq. 33 to
 * a block of nodes): H dx = f + b with H = blockdiag(A_j) + the constraint's exact coupling
 * a_j a_k K_c between its nodes (j != k; the diagonal a_j^2 K_c is already in A_j, Eq. 38). Node-by-node
 * steps move two nodes bound by a stiff constraint together only by a fraction e/k per sweep (e the
 * elastic stiffness around them); this step moves them with their combined elastic stiffness. */
static void weak_block_step(const pbng_problem *pb, const pbng_weak_constraint *c, const double *b, double *x)
{
  enum { NMAX = 3 * PBNG_WC_MAX_NODES };
  int slot[PBNG_WC_MAX_NODES], n = 0;
  double H[NMAX * NMAX], f[NMAX], A[9];

  for (int j = 0; j < c->nnodes; ++j)
    if (c->node[j] < pb->dm->nfree) slot[n++] = j;
  if (n < 2) return; /* one free node: its nodal step was this step */
  const int N = 3 * n;
  for (int p = 0; p < n; ++p) {
    const int64_t i = c->node[slot[p]];
    pbng_node_force(pb, (int32_t)i, x, &f[3 * p], A, 0); /* warm starts read only: the color sweep alone moves them (alike on every rank) */
    if (b)
      for (int r = 0; r < 3; ++r) f[3 * p + r] += b[3 * i + r];
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
static PetscErrorCode weak_block_sweep(pbng_sweeper *sw, const double *b)
{
  const pbng_problem *pb = sw->pb;
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  for (int k = 0; k < sw->blocks.ncolors; ++k) {
    PetscCall(PetscLogEventBegin(sw->ev_update, 0, 0, 0, 0));
    /* blocks of one color share no element or weak constraint, but a contact may join two of them: with
     * contacts they are stepped in order by one thread */
#pragma omp parallel for schedule(static) if (!pb->contacts)
    for (int32_t j = sw->blocks.start[k]; j < sw->blocks.start[k + 1]; ++j) weak_block_step(pb, &dm->weak[sw->blocks.item[j]], b, pb->x);
    PetscCall(PetscLogEventEnd(sw->ev_update, 0, 0, 0, 0));
    if (pb->halo || pb->contacts) {
      const double t0 = MPI_Wtime();
      PetscCall(PetscLogEventBegin(sw->ev_halo, 0, 0, 0, 0));
      PetscCall(pbng_problem_update_ghosts(sw->pb));
      PetscCall(PetscLogEventEnd(sw->ev_halo, 0, 0, 0, 0));
      sw->halo_seconds += MPI_Wtime() - t0;
    }
  }
  PetscFunctionReturn(0);
}

/* -weak_blocks: the block colors' lists; every node of a counted constraint must be owned here.
 * Collective: every rank agrees on a failure. */
static PetscErrorCode setup_weak_blocks(pbng_sweeper *sw)
{
  const pbng_dmesh *dm = sw->pb->dm;
  int64_t spanning = -1, first; /* global index of a constraint with nodes on several ranks */

  PetscFunctionBeginUser;
  if (!sw->opt.weak_blocks || dm->nglobal_weak == 0) PetscFunctionReturn(0);
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
  PetscCall(pbng_color_groups_build(dm->nblock_colors, dm->nowned_weak, dm->block_color, &sw->blocks));
  PetscFunctionReturn(0);
}

/* Eq. 39 / Eq. 40 applied to the owned free nodes after the sweep; x holds x_PBNG^{l+1}. */
static void accelerate(pbng_sweeper *sw, int l)
{
  const int64_t n = 3 * (int64_t)sw->pb->dm->nfree;
  double *x = sw->pb->x, *x_prev = sw->x_prev, *x_curr = sw->x_curr;
  if (sw->opt.accel == PBNG_ACCEL_SOR) {
    const double w = l == 0 ? 1.0 : sw->opt.omega;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const double xnew = w * (x[k] - x_prev[k]) + x_prev[k]; /* Eq. 40 */
      x_prev[k] = x_curr[k];
      x[k] = xnew;
    }
  } else {
    const double w = pbng_chebyshev_omega(l, sw->opt.rho, sw->omega_prev), g = sw->opt.gamma;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const double xnew = w * (g * (x[k] - x_curr[k]) + x_curr[k] - x_prev[k]) + x_prev[k]; /* Eq. 39 */
      x_prev[k] = x_curr[k];
      x[k] = xnew;
    }
    sw->omega_prev = w;
  }
}

PetscErrorCode pbng_sweeper_create(pbng_problem *pb, const pbng_sweep_options *opt, pbng_sweeper *sw)
{
  PetscFunctionBeginUser;
  memset(sw, 0, sizeof(*sw));
  sw->pb = pb;
  sw->opt = *opt;
  sw->omega_prev = 1.0;
  PetscCall(PetscLogEventRegister("PBNGNodeUpdate", PETSC_OBJECT_CLASSID, &sw->ev_update));
  PetscCall(PetscLogEventRegister("PBNGHaloExchange", PETSC_OBJECT_CLASSID, &sw->ev_halo));
  if (opt->accel != PBNG_ACCEL_NONE) {
    PetscCall(PetscMalloc1(3 * (int64_t)pb->dm->nfree + 1, &sw->x_curr));
    PetscCall(PetscMalloc1(3 * (int64_t)pb->dm->nfree + 1, &sw->x_prev));
  }
  PetscCheck(!opt->vbd_exact_block || !pb->geo.ref, pb->dm->comm, PETSC_ERR_SUP,
             "-vbd_exact_block: linear tetrahedra only (this mesh has %s elements)", pb->geo.ref ? pb->geo.ref->type->name : "tet4");
  PetscCheck(!opt->vbd_exact_block || pb->mode == PBNG_MODE_DYNAMIC, pb->dm->comm, PETSC_ERR_ARG_INCOMP,
             "-vbd_exact_block needs -mode dynamic (without the inertia term a node's projected block can be singular)");
  PetscCall(setup_weak_blocks(sw));
  PetscCall(pbng_contact_patch_init(&sw->contact_patch));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sweeper_destroy(pbng_sweeper *sw)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(sw->x_curr));
  PetscCall(PetscFree(sw->x_prev));
  PetscCall(pbng_color_groups_destroy(&sw->blocks));
  PetscCall(pbng_contact_patch_destroy(&sw->contact_patch));
  PetscCall(PetscFree(sw->refresh_start));
  PetscCall(PetscFree(sw->refresh_entry));
  memset(sw, 0, sizeof(*sw));
  PetscFunctionReturn(0);
}

void pbng_sweeper_restart(pbng_sweeper *sw)
{
  sw->omega_prev = 1.0;
  if (sw->x_prev) memcpy(sw->x_prev, sw->pb->x, sizeof(double) * 3 * (size_t)sw->pb->dm->nfree); /* x^{-1} = x^0 */
}

PetscErrorCode pbng_sweeper_iterate(pbng_sweeper *sw, int l, const double *b)
{
  PetscFunctionBeginUser;
  if (sw->x_curr) memcpy(sw->x_curr, sw->pb->x, sizeof(double) * 3 * (size_t)sw->pb->dm->nfree);
  PetscCall(color_sweep(sw, b));
  if (sw->blocks.ncolors > 0) PetscCall(weak_block_sweep(sw, b));
  if (sw->opt.weak_blocks && pbng_contacts_active(sw->pb->contacts)) PetscCall(pbng_contact_patch_step(&sw->contact_patch, sw->pb, b));
  if (sw->opt.accel != PBNG_ACCEL_NONE) {
    accelerate(sw, l);
    PetscCall(pbng_problem_update_ghosts(sw->pb)); /* Eq. 39/40 moved every owned free node */
  }
  PetscFunctionReturn(0);
}
