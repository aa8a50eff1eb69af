#include "app/run.h"
#include <malloc.h>
#include <signal.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app/signals.h"
#include "io/checkpoint.h"
#include "io/output.h"
#include "io/partfile.h"
#include "io/result_reader.h"
#include "io/weak_rows.h"
#include "mesh/generate.h"
#include "parallel/coloring.h"
#include "parallel/partition.h"

typedef struct {
  PetscLogEvent setup, iterate, residual, output;
} run_events;

typedef struct {
  MPI_Comm comm;
  int rank;
  const pbng_config *cfg;
  run_events ev;
  pbng_dmesh dm;
  pbng_problem pb;
  pbng_solver solver;
  pbng_output *out;
  pbng_halo halo;
  int64_t *node_rows;  /* owned nodes' global ids, increasing (the order node data is written in) */
  int32_t *node_order; /* the local index of each of them */
  double time0;        /* time of frame 0: 0, or the time of the -initial frame */
  PetscBool newton_options_checked; /* -newton_* options checked once the solver has set up */
  const char *command_line;
  char restart[PETSC_MAX_PATH_LEN]; /* the checkpoint this run continues from, or "" */
  pbng_checkpoint_counters resume;  /* its counters */
  int stopped_by;                   /* the signal that stopped the run (after a checkpoint), or 0 */
  int iterations_here;              /* iterations run by this process (-test_signal_after) */
  char diverged[160];               /* where the solution diverged (status attribute), or "" */
} run_state;

static double frame_time(const run_state *st, int frame) { return st->time0 + frame * st->cfg->dt; }

static PetscErrorCode register_events(run_events *ev)
{
  PetscClassId id;

  PetscFunctionBeginUser;
  PetscCall(PetscClassIdRegister("pbng", &id));
  PetscCall(PetscLogEventRegister("PBNGSetup", id, &ev->setup));
  PetscCall(PetscLogEventRegister("PBNGIterate", id, &ev->iterate));
  PetscCall(PetscLogEventRegister("PBNGResidual", id, &ev->residual));
  PetscCall(PetscLogEventRegister("PBNGOutput", id, &ev->output));
  PetscFunctionReturn(0);
}

/* Collective: an error of rank 0's (ierr) becomes an error on every rank, so that no rank waits in a
 * collective call for a rank that gave up. Rank 0 keeps its own error and message. */
static PetscErrorCode agree_on_rank0(MPI_Comm comm, PetscErrorCode ierr)
{
  int rank, code = (int)ierr;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, 0, comm));
  if (rank == 0) PetscCall(ierr);
  PetscCheck(code == 0, PETSC_COMM_SELF, PBNG_ERR_ON_RANK0, "setup failed on rank 0");
  PetscFunctionReturn(0);
}


/* What every rank knows of the global mesh before the pieces are distributed. */
typedef struct {
  int64_t nnodes, nelems;
  const pbng_element_type *etype;
  double extent; /* largest bounding-box extent (boundary boxes are matched relative to it) */
} mesh_header;

/* Rank 0 generates or reads the mesh (the others keep an empty one); every rank gets its header. */
static PetscErrorCode global_mesh_on_rank0(run_state *st, pbng_mesh *mesh, mesh_header *head)
{
  double sizes[4] = {0, 0, 0, 0};
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  if (st->rank == 0) {
    ierr = pbng_config_build_mesh(st->cfg, mesh);
    if (!ierr) sizes[0] = (double)mesh->nnodes, sizes[1] = (double)mesh->nelems, sizes[2] = mesh->etype->kind, sizes[3] = pbng_mesh_extent(mesh);
  }
  PetscCall(agree_on_rank0(st->comm, ierr));
  PetscCallMPI(MPI_Bcast(sizes, 4, MPI_DOUBLE, 0, st->comm));
  head->nnodes = (int64_t)sizes[0], head->nelems = (int64_t)sizes[1];
  head->etype = pbng_element_type_get((pbng_element_kind)sizes[2]);
  head->extent = sizes[3];
  PetscFunctionReturn(0);
}

/* Whether -mesh names a partitioned mesh file (rank 0 looks; every rank learns); an HDF5 file that is
 * not one pbng can read is an error saying what it is. */
static PetscErrorCode is_partitioned_input(run_state *st, int *partitioned)
{
  char why[256] = "";

  PetscFunctionBeginUser;
  *partitioned = 0;
  if (st->rank == 0 && st->cfg->mesh_source == PBNG_MESH_FILE) *partitioned = pbng_partfile_probe(st->cfg->mesh_file, why, sizeof(why));
  PetscCallMPI(MPI_Bcast(partitioned, 1, MPI_INT, 0, st->comm));
  PetscCallMPI(MPI_Bcast(why, (int)sizeof(why), MPI_CHAR, 0, st->comm));
  PetscCheck(!why[0], st->comm, PBNG_ERR_ON_RANK0, "-mesh %s: %s", st->cfg->mesh_file, why); /* the same on every rank: printed once */
  PetscFunctionReturn(0);
}

/* Every rank reads its own part of a partitioned mesh file (collective HDF5 reads). */
static PetscErrorCode read_partitioned_input(run_state *st, pbng_submesh *sub, mesh_header *head)
{
  PetscFunctionBeginUser;
  PetscCheck(!st->cfg->weak_file[0], st->comm, PETSC_ERR_ARG_INCOMP,
             "-weak with a partitioned mesh: give the weak constraints to pbng-partition (-weak FILE) instead");
  PetscCall(pbng_partfile_read(st->comm, st->cfg->mesh_file, sub, &head->extent));
  head->nnodes = sub->nglobal_nodes, head->nelems = sub->nglobal_elems, head->etype = sub->mesh.etype;
  PetscFunctionReturn(0);
}

static PetscErrorCode open_output(run_state *st, const mesh_header *mesh, const char *command_line)
{
  const pbng_config *cfg = st->cfg;
  pbng_output_info info = {
    .material = pbng_material_kind_name(cfg->material), .youngs_modulus = cfg->youngs,
    .poisson_ratio = cfg->poisson, .density = cfg->density, .gravity = {cfg->gravity[0], cfg->gravity[1], cfg->gravity[2]},
    .solver = cfg->solver, .mode = cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic",
    .command_line = command_line, .xdmf_topology = mesh->etype->xdmf_topology, .nodes_per_element = mesh->etype->nodes,
    .frames = cfg->frames + 1};

  PetscFunctionBeginUser;
  PetscCall(pbng_output_open(st->comm, cfg->output, &info, mesh->nnodes, mesh->nelems, &st->out));
  PetscFunctionReturn(0);
}

/* Rank 0: coloring (Sec. 9) and the METIS partition over the ranks, for every global node; the
 * weak-constraint block colors, and the PBD/XPBD constraint colors when with_pbd. */
static PetscErrorCode plan_nodes(const pbng_mesh *mesh, int nranks, int32_t *color, int *ncolors, PetscBool with_pbd, pbng_constraint_colors *cc,
                                 int32_t *part)
{
  pbng_node_elements adj;

  PetscFunctionBeginUser;
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, ncolors));
  PetscCall(pbng_constraint_colors_compute(mesh, &adj, with_pbd, cc));
  PetscCall(pbng_partition_nodes(mesh, &adj, color, *ncolors, nranks, part));
  PetscCall(pbng_node_elements_destroy(&adj));
  PetscFunctionReturn(0);
}

/* Rank 0 plans, cuts the mesh into the ranks' pieces and sends them (freeing the global mesh once its
 * own piece is cut); every other rank receives its piece. */
static PetscErrorCode distribute_mesh(run_state *st, pbng_mesh *mesh, pbng_submesh *sub)
{
  int nranks, ncolors = 0;
  int32_t *color = NULL, *part = NULL;
  pbng_constraint_colors cc = {0};
  const int need_cc = pbng_solver_uses_constraint_colors(st->cfg->solver);
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(st->comm, &nranks));
  if (st->rank == 0) {
    ierr = PetscMalloc2(mesh->nnodes, &color, mesh->nnodes, &part);
    if (!ierr) ierr = plan_nodes(mesh, nranks, color, &ncolors, (PetscBool)need_cc, &cc, part);
  }
  PetscCall(agree_on_rank0(st->comm, ierr));
  if (st->rank != 0) {
    PetscCall(pbng_submesh_recv(st->comm, 0, PBNG_ERR_ON_RANK0, sub));
    PetscFunctionReturn(0);
  }
  for (int p = 1; p < nranks; ++p) {
    pbng_submesh piece;
    ierr = pbng_submesh_extract(mesh, color, ncolors, &cc, part, p, &piece);
    if (ierr) { /* release the ranks still waiting for their part, then report */
      for (int q = p; q < nranks; ++q) PetscCall(pbng_submesh_send_failure(st->comm, q));
      PetscCall(ierr);
    }
    PetscCall(pbng_submesh_send(st->comm, &piece, p));
    PetscCall(pbng_submesh_destroy(&piece));
  }
  PetscCall(pbng_submesh_extract(mesh, color, ncolors, &cc, part, 0, sub));
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_constraint_colors_destroy(&cc));
  PetscCall(pbng_mesh_destroy(mesh));
  PetscFunctionReturn(0);
}

/* Boundary-condition index of every local node; a set that selects no node anywhere is an error. */
static PetscErrorCode assign_boundary_conditions(run_state *st, const pbng_submesh *sub, double extent, int8_t *node_bc)
{
  const pbng_bc_list *bcs = &st->cfg->bcs;
  int64_t mine[PBNG_MAX_BC] = {0}, total[PBNG_MAX_BC];

  PetscFunctionBeginUser;
  PetscCall(pbng_bc_assign(bcs, &sub->mesh, extent, node_bc, mine));
  PetscCallMPI(MPI_Allreduce(mine, total, PBNG_MAX_BC, MPI_INT64_T, MPI_SUM, st->comm));
  for (int b = 0; b < bcs->count; ++b)
    PetscCheck(total[b] > 0, st->comm, PETSC_ERR_ARG_WRONG, "boundary condition %s selects no node of the mesh", bcs->bc[b].name);
  PetscFunctionReturn(0);
}

/* Every rank's piece (from rank 0's global mesh, or read from a partitioned file) -> boundary sets ->
 * subdomain and halo plan. */
static PetscErrorCode build_subdomain(run_state *st, pbng_mesh *mesh, const mesh_header *head, pbng_submesh *sub_in)
{
  pbng_submesh sub;
  int8_t *node_bc;

  PetscFunctionBeginUser;
  if (sub_in) sub = *sub_in;
  else PetscCall(distribute_mesh(st, mesh, &sub));
  malloc_trim(0);
  PetscCall(PetscMalloc1(sub.mesh.nnodes, &node_bc));
  PetscCall(assign_boundary_conditions(st, &sub, head->extent, node_bc));
  PetscCall(pbng_dmesh_create(st->comm, &sub, node_bc, &st->dm));
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(pbng_halo_create(&st->dm, &st->halo));
  PetscFunctionReturn(0);
}

/* /mesh/tetrahedra from the owned elements, passed in increasing global order so that the writer
 * needs no sorted copy of its own (the largest buffer of the setup). */
static PetscErrorCode write_elements_in_global_order(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  const int nen = dm->etype->nodes;
  const int32_t n = dm->nowned_elems;
  PetscInt64 *order; /* global id << 32 | local index, sorted */
  int64_t *conn, *rows;

  PetscFunctionBeginUser;
  PetscCheck(dm->nglobal_elems < ((int64_t)1 << 31), PETSC_COMM_SELF, PETSC_ERR_SUP, "more than 2^31 elements");
  PetscCall(PetscMalloc1(n + 1, &order));
  for (int32_t e = 0; e < n; ++e) order[e] = (dm->global_elem[e] << 32) | e;
  PetscCall(PetscSortInt64(n, order));
  PetscCall(PetscMalloc1((int64_t)n * nen + 1, &conn));
  rows = order; /* reused in place: each entry is read before it is overwritten */
  for (int32_t k = 0; k < n; ++k) {
    const int32_t e = (int32_t)(order[k] & 0xffffffff);
    for (int a = 0; a < nen; ++a) conn[(int64_t)k * nen + a] = dm->global_node[dm->elems[e * nen + a]];
    rows[k] = order[k] >> 32;
  }
  PetscCall(pbng_output_write_elements(st->out, n, rows, conn));
  PetscCall(PetscFree(conn));
  PetscCall(PetscFree(order));
  PetscFunctionReturn(0);
}

/* The owned nodes in increasing global order: node data is passed to the writer in that order, so
 * that it writes from our buffer instead of sorting a copy. */
static PetscErrorCode build_node_output_order(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  PetscInt64 *order;

  PetscFunctionBeginUser;
  PetscCheck(dm->nglobal_nodes < ((int64_t)1 << 31), PETSC_COMM_SELF, PETSC_ERR_SUP, "more than 2^31 nodes");
  PetscCall(PetscMalloc1(dm->nowned + 1, &order));
  for (int32_t i = 0; i < dm->nowned; ++i) order[i] = (dm->global_node[i] << 32) | i;
  PetscCall(PetscSortInt64(dm->nowned, order));
  PetscCall(PetscMalloc1(dm->nowned + 1, &st->node_order));
  for (int32_t k = 0; k < dm->nowned; ++k) st->node_order[k] = (int32_t)(order[k] & 0xffffffff);
  for (int32_t k = 0; k < dm->nowned; ++k) order[k] >>= 32;
  st->node_rows = order;
  PetscFunctionReturn(0);
}

/* ncomp values per owned node, from local order to the output order. */
static PetscErrorCode gather_for_output(const run_state *st, int ncomp, const double *local, double **out)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((int64_t)ncomp * st->dm.nowned + 1, out));
  for (int32_t k = 0; k < st->dm.nowned; ++k)
    for (int c = 0; c < ncomp; ++c) (*out)[(int64_t)ncomp * k + c] = local[(int64_t)ncomp * st->node_order[k] + c];
  PetscFunctionReturn(0);
}

/* /constraints/weak/: the constraints this rank counts, in global node numbering. */
static PetscErrorCode write_weak_constraints(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  pbng_weak_rows rows;

  PetscFunctionBeginUser;
  if (dm->nglobal_weak == 0) PetscFunctionReturn(0);
  PetscCall(pbng_weak_rows_pack(dm->nowned_weak, dm->weak, dm->global_node, &rows));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/nodes", PBNG_OUTPUT_INT64, dm->nglobal_weak, PBNG_WC_MAX_NODES,
                                    dm->nowned_weak, dm->global_weak, rows.nodes));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/weights", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, PBNG_WC_MAX_NODES,
                                    dm->nowned_weak, dm->global_weak, rows.weights));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/stiffness", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, 9, dm->nowned_weak,
                                    dm->global_weak, rows.stiffness));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/spring", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, 5, dm->nowned_weak,
                                    dm->global_weak, rows.spring));
  PetscCall(pbng_weak_rows_free(&rows));
  PetscFunctionReturn(0);
}

static PetscErrorCode write_mesh_output(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  int64_t *fixed, nfixed = 0;
  int32_t *part;

  PetscFunctionBeginUser;
  double *rest;
  PetscCall(build_node_output_order(st));
  PetscCall(gather_for_output(st, 3, dm->X, &rest));
  PetscCall(pbng_output_write_nodes_double(st->out, "/mesh/rest_positions", 3, dm->nowned, st->node_rows, rest));
  PetscCall(PetscFree(rest));
  PetscCall(PetscMalloc1(dm->nowned + 1, &part));
  for (int32_t k = 0; k < dm->nowned; ++k) part[k] = dm->color[st->node_order[k]];
  PetscCall(pbng_output_write_nodes_int32(st->out, "/mesh/color", dm->nowned, st->node_rows, part));
  for (int32_t k = 0; k < dm->nowned; ++k) part[k] = dm->rank;
  PetscCall(pbng_output_write_nodes_int32(st->out, "/mesh/partition", dm->nowned, st->node_rows, part));
  PetscCall(PetscFree(part));
  PetscCall(write_elements_in_global_order(st));
  PetscCall(PetscMalloc1(dm->nowned - dm->nfree + 1, &fixed));
  for (int32_t i = dm->nfree; i < dm->nowned; ++i)
    if (dm->node_bc[i] >= 0) fixed[nfixed++] = dm->global_node[i];
  PetscCall(pbng_output_write_fixed_nodes(st->out, nfixed, fixed));
  PetscCall(PetscFree(fixed));
  PetscCall(write_weak_constraints(st));
  PetscFunctionReturn(0);
}

static PetscErrorCode evaluate_residual(run_state *st, double *r, double *energy)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.residual, 0, 0, 0, 0));
  PetscCall(pbng_problem_residual(&st->pb, r, energy));
  PetscCall(PetscLogEventEnd(st->ev.residual, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static double relative(double r, double r0) { return r0 > 0 ? r / r0 : 0.0; }

typedef struct {
  int iterations;
  long long linear_iterations; /* Krylov iterations in this frame (Newton) */
  double seconds, residual, relative_residual, energy, residual0;
} frame_result;

/* After the Newton solver's first step (all its SNES/KSP/PC options have been read by then), or at
 * the end of a run without any step: a -newton_* option nobody read is a misspelling. */
static PetscErrorCode check_newton_options(run_state *st)
{
  PetscFunctionBeginUser;
  if (st->newton_options_checked || strcmp(st->cfg->solver, "newton")) PetscFunctionReturn(0);
  st->newton_options_checked = PETSC_TRUE;
  PetscCall(pbng_config_reject_unused_newton_options());
  PetscFunctionReturn(0);
}

/* -time_budget: whether the frame's iterations have used it up, as the slowest rank measured (every
 * rank takes the same decision). */
static PetscErrorCode budget_spent(const run_state *st, double seconds, PetscBool *spent)
{
  double slowest;

  PetscFunctionBeginUser;
  *spent = PETSC_FALSE;
  if (st->cfg->time_budget <= 0) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, st->comm));
  *spent = slowest >= st->cfg->time_budget;
  PetscFunctionReturn(0);
}

/* "  linear N" after the Newton solver's lines (Krylov iterations so far in the frame), else "". */
static const char *linear_suffix(const run_state *st, long long linear, char *buf, size_t size)
{
  buf[0] = 0;
  if (!strcmp(st->cfg->solver, "newton")) snprintf(buf, size, "  linear %lld", linear);
  return buf;
}

static PetscErrorCode print_iteration(run_state *st, int frame, int l, double r, double r0, double energy, const frame_result *fr)
{
  char linear[48], seconds[32] = "", extra[96] = "";

  PetscFunctionBeginUser;
  if (l > 0) snprintf(seconds, sizeof(seconds), "  %.3f s", fr->seconds); /* iteration 0: the frame's start, no time yet */
  if (l > 0 && st->solver.ops->monitor) PetscCall(st->solver.ops->monitor(&st->solver, extra, sizeof(extra))); /* e.g. XPBD's residuals */
  PetscCall(PetscPrintf(st->comm, "    frame %d iter %4d  residual %.6e  relative %.6e  energy %.10e%s%s%s\n", frame, l, r, relative(r, r0), energy,
                        seconds, l > 0 ? linear_suffix(st, fr->linear_iterations, linear, sizeof(linear)) : "", extra));
  PetscFunctionReturn(0);
}

/* Whether a stop was requested (SIGTERM / SIGUSR1) on any rank: every rank takes the same decision. */
static PetscErrorCode stop_requested(run_state *st, PetscBool *stop)
{
  int mine = pbng_signals_received(), any;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, st->comm));
  st->stopped_by = any;
  *stop = any != 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode write_checkpoint(run_state *st, const pbng_checkpoint_counters *c);

/* -test_fail_rank R -test_fail_at WHERE: rank R fails alone here (tests of the failure handling). */
static PetscErrorCode test_failure(const run_state *st, const char *where)
{
  PetscFunctionBeginUser;
  PetscCheck(st->rank != st->cfg->test_fail_rank || strcmp(st->cfg->test_fail_at, where), PETSC_COMM_SELF, PETSC_ERR_LIB,
             "test failure on rank %d during %s (-test_fail_rank)", st->rank, where);
  PetscFunctionReturn(0);
}

/* No silent divergence: a non-finite residual, or a relative residual above -divergence_limit, stops
 * the run (every rank sees the same global residual). */
static PetscErrorCode check_divergence(run_state *st, int frame, int l, double r, double r0)
{
  const double rel = relative(r, r0);

  PetscFunctionBeginUser;
  if (isfinite(r) && rel <= st->cfg->divergence_limit) PetscFunctionReturn(0);
  snprintf(st->diverged, sizeof(st->diverged), "diverged at frame %d, iteration %d", frame, l);
  SETERRQ(st->comm, PBNG_ERR_DIVERGED,
          "frame %d, iteration %d: the solution diverged (%s); the output keeps frames 0..%d, its status attribute says where it stopped",
          frame, l, isfinite(r) ? "relative residual above -divergence_limit" : "non-finite positions or residual", frame - 1);
}

/* The frame's state at iteration l, as a checkpoint keeps it. */
static void frame_counters(const run_state *st, const pbng_run_summary *sum, int frame, int l, const frame_result *fr, double r,
                           double energy, int fresh, pbng_checkpoint_counters *c)
{
  *c = (pbng_checkpoint_counters){.next_frame = frame, .next_iteration = l, .time0 = st->time0, .residual0 = fr->residual0,
                                  .residual = r, .energy = energy, .fresh = fresh, .seconds = fr->seconds,
                                  .linear = (double)fr->linear_iterations, .iterations = sum->iterations,
                                  .linear_iterations = (double)sum->linear_iterations, .solver_seconds = sum->solver_seconds};
}

/* Iterates one frame: stops after cfg->iters iterations or when the relative residual reaches rtol.
 * With resume, continues a frame a checkpoint stopped in (its start is not repeated). When a stop is
 * requested, writes a checkpoint after the current iteration and sets *stopped. */
static PetscErrorCode solve_frame(run_state *st, int frame, const pbng_checkpoint_counters *resume, const pbng_run_summary *sum,
                                  frame_result *fr, PetscBool *stopped)
{
  const pbng_config *cfg = st->cfg;
  double r = 0, energy = 0;
  int fresh = 1, l0 = 0; /* fresh: r and energy describe the current iterate */

  PetscFunctionBeginUser;
  memset(fr, 0, sizeof(*fr));
  *stopped = PETSC_FALSE;
  if (resume) {
    fr->residual0 = resume->residual0, fr->seconds = resume->seconds, fr->linear_iterations = (long long)resume->linear;
    r = resume->residual, energy = resume->energy, fresh = (int)resume->fresh;
    l0 = fr->iterations = (int)resume->next_iteration;
  } else {
    PetscCall(pbng_problem_begin_frame(&st->pb, frame_time(st, frame)));
    PetscCall(pbng_solver_begin_frame(&st->solver));
    PetscCall(evaluate_residual(st, &fr->residual0, &energy));
    r = fr->residual0;
    if (cfg->monitor) PetscCall(print_iteration(st, frame, 0, r, fr->residual0, energy, fr));
    PetscCall(check_divergence(st, frame, 0, r, r));
  }
  const long long linear0 = st->solver.linear_iterations - fr->linear_iterations;
  for (int l = l0; l < cfg->iters; ++l) {
    PetscBool spent, stop;
    if (cfg->rtol > 0 && fresh && relative(r, fr->residual0) <= cfg->rtol) break;
    PetscCall(budget_spent(st, fr->seconds, &spent));
    if (spent) break;
    PetscCall(PetscLogEventBegin(st->ev.iterate, 0, 0, 0, 0));
    const double t0 = MPI_Wtime();
    PetscCall(pbng_solver_iterate(&st->solver, l));
    PetscCall(test_failure(st, "iteration"));
    fr->seconds += MPI_Wtime() - t0;
    PetscCall(PetscLogEventEnd(st->ev.iterate, 0, 0, 0, 0));
    fr->iterations = l + 1;
    fr->linear_iterations = st->solver.linear_iterations - linear0;
    PetscCall(check_newton_options(st));
    fresh = 0;
    if (cfg->monitor || (cfg->rtol > 0 && (l + 1) % cfg->residual_every == 0)) {
      PetscCall(evaluate_residual(st, &r, &energy));
      fresh = 1;
      if (cfg->monitor) PetscCall(print_iteration(st, frame, l + 1, r, fr->residual0, energy, fr));
      PetscCall(check_divergence(st, frame, l + 1, r, fr->residual0));
    }
    if (cfg->test_signal_after > 0 && st->rank == 0 && ++st->iterations_here == cfg->test_signal_after) raise(SIGUSR1);
    PetscCall(stop_requested(st, &stop));
    if (stop) {
      pbng_checkpoint_counters c;
      frame_counters(st, sum, frame, l + 1, fr, r, energy, fresh, &c);
      PetscCall(write_checkpoint(st, &c));
      *stopped = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
  }
  if (!fresh) PetscCall(evaluate_residual(st, &r, &energy));
  PetscCall(check_divergence(st, frame, fr->iterations, r, fr->residual0));
  pbng_problem_end_frame(&st->pb);
  fr->residual = r;
  fr->relative_residual = relative(r, fr->residual0);
  fr->energy = energy;
  PetscFunctionReturn(0);
}

static PetscErrorCode write_frame(run_state *st, int frame, const frame_result *fr)
{
  const pbng_frame_info info = {frame_time(st, frame), fr->iterations, fr->residual, fr->relative_residual, fr->seconds, fr->energy};

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.output, 0, 0, 0, 0));
  double *positions;
  PetscCall(gather_for_output(st, 3, st->pb.x, &positions));
  PetscCall(pbng_output_write_frame(st->out, frame, st->dm.nowned, st->node_rows, positions, &info));
  PetscCall(PetscFree(positions));
  PetscCall(PetscLogEventEnd(st->ev.output, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode print_frame_line(run_state *st, int frame, int first, const frame_result *fr, double elapsed)
{
  const int F = st->cfg->frames;
  const double eta = elapsed / (frame - first + 1) * (F - frame); /* from this process's frames */

  PetscFunctionBeginUser;
  char linear[48];
  PetscCall(PetscPrintf(st->comm, "frame %4d/%-4d  iters %5d%s  rel.residual %.3e  residual %.3e  %8.3f s  ETA %8.1f s\n", frame, F,
                        fr->iterations, linear_suffix(st, fr->linear_iterations, linear, sizeof(linear)), fr->relative_residual, fr->residual,
                        fr->seconds, eta));
  PetscFunctionReturn(0);
}

/* A checkpoint at the start of frame `frame` (the previous ones done and written). */
static PetscErrorCode checkpoint_between_frames(run_state *st, const pbng_run_summary *sum, int frame)
{
  pbng_checkpoint_counters c;
  frame_result none;

  PetscFunctionBeginUser;
  memset(&none, 0, sizeof(none));
  frame_counters(st, sum, frame, 0, &none, 0, 0, 1, &c);
  PetscCall(pbng_output_flush(st->out)); /* the output's frames on disk match the checkpoint */
  PetscCall(write_checkpoint(st, &c));
  PetscFunctionReturn(0);
}

static PetscErrorCode frame_loop(run_state *st, pbng_run_summary *sum)
{
  frame_result fr;
  const double t0 = MPI_Wtime();
  const int restarting = st->restart[0] != 0;
  const int first = restarting ? (int)st->resume.next_frame : 1;

  PetscFunctionBeginUser;
  memset(&fr, 0, sizeof(fr));
  if (restarting) {
    sum->frames = first - 1, sum->iterations = (int)st->resume.iterations;
    sum->linear_iterations = (long long)st->resume.linear_iterations, sum->solver_seconds = st->resume.solver_seconds;
  } else { /* frame 0: the initial configuration */
    PetscCall(pbng_problem_begin_frame(&st->pb, frame_time(st, 0)));
    PetscCall(evaluate_residual(st, &fr.residual, &fr.energy));
    fr.relative_residual = 1.0;
    PetscCall(write_frame(st, 0, &fr));
  }
  for (int frame = first; frame <= st->cfg->frames; ++frame) {
    const int resume_mid_frame = restarting && frame == first && st->resume.next_iteration > 0;
    PetscBool stopped, stop;
    PetscCall(solve_frame(st, frame, resume_mid_frame ? &st->resume : NULL, sum, &fr, &stopped));
    if (stopped) PetscFunctionReturn(0);
    PetscCall(write_frame(st, frame, &fr));
    sum->frames = frame;
    sum->iterations += fr.iterations;
    sum->linear_iterations += fr.linear_iterations;
    sum->solver_seconds += fr.seconds;
    sum->final_residual = fr.residual;
    sum->final_relative_residual = fr.relative_residual;
    PetscCall(print_frame_line(st, frame, first, &fr, MPI_Wtime() - t0));
    if (frame == st->cfg->frames) break;
    PetscCall(stop_requested(st, &stop));
    if (stop || (st->cfg->checkpoint_every > 0 && frame % st->cfg->checkpoint_every == 0)) PetscCall(checkpoint_between_frames(st, sum, frame + 1));
    if (stop) PetscFunctionReturn(0);
  }
  PetscCall(check_newton_options(st));
  PetscFunctionReturn(0);
}

/* Owned and ghost nodes per rank (min/max), neighbours and halo volume, for the report. */
/* -initial: the owned nodes' positions (and the start time) from a frame of an earlier result. */
static PetscErrorCode load_initial_state(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  double *rest, *x;
  pbng_result_frame info;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(3 * dm->nowned + 1, &rest, 3 * dm->nowned + 1, &x));
  for (int32_t k = 0; k < dm->nowned; ++k)
    for (int d = 0; d < 3; ++d) rest[3 * k + d] = dm->X[3 * st->node_order[k] + d];
  PetscCall(pbng_result_read_frame(st->comm, st->cfg->initial, st->cfg->initial_frame, dm->nglobal_nodes, dm->nowned, st->node_rows, rest, x, &info));
  PetscCheck(!strcmp(info.mode, "quasistatic"), st->comm, PETSC_ERR_ARG_INCOMP, "-initial %s: a %s result (velocities are not stored)",
             st->cfg->initial, info.mode);
  for (int32_t k = 0; k < dm->nowned; ++k)
    for (int d = 0; d < 3; ++d) st->pb.x[3 * st->node_order[k] + d] = x[3 * k + d];
  PetscCall(PetscFree2(rest, x));
  PetscCall(pbng_problem_update_ghosts(&st->pb));
  st->time0 = info.time;
  PetscCall(PetscPrintf(st->comm, "initial state: frame %d (time %g) of %s\n", info.frame, info.time, st->cfg->initial));
  PetscFunctionReturn(0);
}

static PetscErrorCode summarize_partition(run_state *st, pbng_run_summary *sum)
{
  const int64_t mine[4] = {st->dm.nowned, st->dm.nlocal - st->dm.nowned, -(int64_t)st->dm.nowned,
                           -(int64_t)(st->dm.nlocal - st->dm.nowned)};
  int64_t mx[4], bytes = 24 * st->halo.nodes_per_iteration;
  int neighbors = st->halo.nneighbors;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, mx, 4, MPI_INT64_T, MPI_MAX, st->comm));
  PetscCallMPI(MPI_Allreduce(&bytes, &sum->halo_bytes_per_iteration, 1, MPI_INT64_T, MPI_SUM, st->comm));
  PetscCallMPI(MPI_Allreduce(&neighbors, &sum->halo_neighbors_max, 1, MPI_INT, MPI_MAX, st->comm));
  sum->owned_max = mx[0], sum->ghosts_max = mx[1], sum->owned_min = -mx[2], sum->ghosts_min = -mx[3];
  if (sum->ranks > 1)
    PetscCall(PetscPrintf(st->comm, "partition: %d ranks, owned nodes %" PRId64 "..%" PRId64 ", ghost nodes %" PRId64 "..%" PRId64
                                    " per rank, up to %d neighbours, halo %.3f MB per iteration\n",
                          sum->ranks, sum->owned_min, sum->owned_max, sum->ghosts_min, sum->ghosts_max, sum->halo_neighbors_max,
                          sum->halo_bytes_per_iteration / 1e6));
  PetscFunctionReturn(0);
}

/* -initial_state flat | inverted (the seeds' recovery tests): the free nodes squashed onto the plane
 * y = centre of the mesh, or mirrored in x about its centre (every element inverted). Every rank
 * moves its owned and ghost copies alike. */
static PetscErrorCode apply_initial_state(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};

  PetscFunctionBeginUser;
  if (!strcmp(st->cfg->initial_state, "rest")) PetscFunctionReturn(0);
  for (int32_t i = 0; i < dm->nlocal; ++i)
    for (int d = 0; d < 3; ++d) lo[d] = fmin(lo[d], dm->X[3 * i + d]), hi[d] = fmax(hi[d], dm->X[3 * i + d]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, lo, 3, MPI_DOUBLE, MPI_MIN, st->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hi, 3, MPI_DOUBLE, MPI_MAX, st->comm));
  const int flat = !strcmp(st->cfg->initial_state, "flat");
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    if (dm->node_bc[i] >= 0) continue;
    if (flat) st->pb.x[3 * i + 1] = 0.5 * (lo[1] + hi[1]);
    else st->pb.x[3 * i] = lo[0] + hi[0] - st->pb.x[3 * i];
  }
  PetscFunctionReturn(0);
}

/* ---- checkpoints ------------------------------------------------------------------------------ */

/* The run's state: positions (and the dynamic state), the corotated warm starts (as doubles in
 * rotation[]) and the solver's own fields. */
static PetscErrorCode state_fields(run_state *st, double *rotation, pbng_state_field *f, int *n)
{
  pbng_problem *pb = &st->pb;
  const pbng_dmesh *dm = &st->dm;

  PetscFunctionBeginUser;
  *n = 0;
  pbng_state_add(f, n, "positions", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x);
  if (pb->mode == PBNG_MODE_DYNAMIC) {
    pbng_state_add(f, n, "velocity", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->velocity);
    pbng_state_add(f, n, "x_prev", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x_prev);
    pbng_state_add(f, n, "x_hat", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x_hat);
  }
  if (pb->rotation) pbng_state_add(f, n, "rotation", PBNG_FIELD_ELEMENTS, 4, dm->nowned_elems, dm->nelems, rotation);
  if (st->solver.ops->state) PetscCall(st->solver.ops->state(&st->solver, f, n)); /* appends to f */
  PetscFunctionReturn(0);
}

static PetscErrorCode write_checkpoint(run_state *st, const pbng_checkpoint_counters *c)
{
  pbng_state_field fields[PBNG_MAX_STATE_FIELDS];
  double *rotation = NULL;
  char key[2048];
  int n;
  const int64_t nrot = st->pb.rotation ? 4 * (int64_t)st->dm.nelems : 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nrot + 1, &rotation));
  for (int64_t k = 0; k < nrot; ++k) rotation[k] = st->pb.rotation[k];
  PetscCall(state_fields(st, rotation, fields, &n));
  pbng_config_restart_key(st->cfg, key, sizeof(key));
  PetscCall(pbng_checkpoint_write(&st->dm, st->cfg->checkpoint, c, key, st->command_line, n, fields));
  PetscCall(PetscFree(rotation));
  PetscCall(PetscPrintf(st->comm, "checkpoint: %s (frame %d, %d iterations done in it)\n", st->cfg->checkpoint, (int)c->next_frame,
                        (int)c->next_iteration));
  PetscFunctionReturn(0);
}

/* -restart: the state of st->restart (whose counters were read) into the problem and solver. */
static PetscErrorCode load_checkpoint(run_state *st)
{
  pbng_state_field fields[PBNG_MAX_STATE_FIELDS];
  double *rotation;
  int n;
  const int64_t nrot = st->pb.rotation ? 4 * (int64_t)st->dm.nelems : 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nrot + 1, &rotation));
  PetscCall(state_fields(st, rotation, fields, &n));
  PetscCall(pbng_checkpoint_read_fields(&st->dm, st->restart, n, fields));
  for (int64_t k = 0; k < nrot; ++k) st->pb.rotation[k] = (float)rotation[k];
  PetscCall(PetscFree(rotation));
  PetscCall(pbng_problem_update_ghosts(&st->pb));
  if (st->solver.ops->restored) PetscCall(st->solver.ops->restored(&st->solver));
  st->time0 = st->resume.time0;
  st->solver.linear_iterations = (long long)(st->resume.linear_iterations + st->resume.linear); /* the solver's running count */
  PetscCall(PetscPrintf(st->comm, "restart: %s, frame %d after %d of its iterations\n", st->restart, (int)st->resume.next_frame,
                        (int)st->resume.next_iteration));
  PetscFunctionReturn(0);
}

/* -restart FILE, or auto: the checkpoint file when it exists (rank 0 looks, every rank learns). */
static PetscErrorCode resolve_restart(run_state *st)
{
  const char *want = st->cfg->restart;
  int use = 0;

  PetscFunctionBeginUser;
  st->restart[0] = 0;
  if (!want[0]) PetscFunctionReturn(0);
  const char *path = strcmp(want, "auto") ? want : st->cfg->checkpoint;
  if (st->rank == 0) use = strcmp(want, "auto") || access(path, R_OK) == 0;
  PetscCallMPI(MPI_Bcast(&use, 1, MPI_INT, 0, st->comm));
  if (use) PetscCall(PetscStrncpy(st->restart, path, sizeof(st->restart)));
  else PetscCall(PetscPrintf(st->comm, "restart: no checkpoint %s, starting from the beginning\n", path));
  PetscFunctionReturn(0);
}

/* The output of a restarted run: the earlier run's "<output>.partial", frames after the checkpoint
 * dropped. */
static PetscErrorCode resume_output(run_state *st, const mesh_header *mesh)
{
  char key[2048];
  pbng_output_info info = {.xdmf_topology = mesh->etype->xdmf_topology, .nodes_per_element = mesh->etype->nodes};

  PetscFunctionBeginUser;
  pbng_config_restart_key(st->cfg, key, sizeof(key));
  PetscCall(pbng_checkpoint_read_counters(&st->dm, st->restart, key, &st->resume));
  PetscCall(pbng_output_resume(st->comm, st->cfg->output, &info, mesh->nnodes, mesh->nelems, (int)st->resume.next_frame, &st->out));
  PetscCall(build_node_output_order(st));
  PetscFunctionReturn(0);
}

static PetscErrorCode setup(run_state *st, const char *command_line, pbng_run_summary *sum)
{
  const pbng_config *cfg = st->cfg;
  pbng_mesh mesh;
  pbng_submesh sub;
  mesh_header head = {0};
  pbng_material mat;
  int partitioned;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.setup, 0, 0, 0, 0));
  PetscCall(is_partitioned_input(st, &partitioned));
  if (partitioned) PetscCall(read_partitioned_input(st, &sub, &head));
  else PetscCall(global_mesh_on_rank0(st, &mesh, &head));
  sum->nodes = head.nnodes;
  sum->elements = head.nelems;
  PetscCall(resolve_restart(st));
  if (!st->restart[0]) PetscCall(open_output(st, &head, command_line)); /* an unwritable output fails before any work */
  PetscCall(build_subdomain(st, &mesh, &head, partitioned ? &sub : NULL));
  malloc_trim(0); /* hand the setup's freed memory back (Open MPI keeps malloc from doing it) */
  PetscCall(test_failure(st, "setup"));
  if (st->restart[0]) PetscCall(resume_output(st, &head));
  else PetscCall(write_mesh_output(st)); /* before the problem's arrays exist: its buffers do not add to the peak */
  malloc_trim(0);
  pbng_material_init(&mat, cfg->material, cfg->youngs, cfg->poisson);
  PetscCall(pbng_problem_create(&st->dm, &cfg->bcs, &mat, cfg->density, cfg->gravity, cfg->mode, cfg->dt, &st->pb));
  st->pb.halo = &st->halo;
  if (cfg->initial[0]) PetscCall(load_initial_state(st));
  PetscCall(apply_initial_state(st));
  PetscCall(pbng_solver_create(cfg->solver, &st->pb, &cfg->solver_opt, &st->solver));
  if (st->restart[0]) PetscCall(load_checkpoint(st));
  sum->ncolors = st->dm.ncolors;
  const int64_t mine = st->dm.adj_start[st->dm.nfree] - st->dm.adj_start[0];
  PetscCallMPI(MPI_Allreduce(&mine, &sum->free_visits_per_iteration, 1, MPI_INT64_T, MPI_SUM, st->comm));
  PetscCall(PetscLogEventEnd(st->ev.setup, 0, 0, 0, 0));
  PetscCall(summarize_partition(st, sum));
  char weak[64] = "", colors[96] = "";
  if (st->dm.nglobal_weak > 0) snprintf(weak, sizeof(weak), ", %" PRId64 " weak constraints", st->dm.nglobal_weak);
  sum->constraint_colors = st->dm.elem_color ? st->dm.nelem_colors + st->dm.nweak_colors : 0;
  if (st->dm.elem_color)
    snprintf(colors, sizeof(colors), " (PBNG node colors), %d constraint colors (%d element + %d weak)", sum->constraint_colors,
             st->dm.nelem_colors, st->dm.nweak_colors);
  PetscCall(PetscPrintf(st->comm, "pbng: %s, %" PRId64 " nodes, %" PRId64 " tetrahedra%s, %d colors%s, %s, %s, E %g, nu %g, %s, %d rank(s) x %d thread(s)\n",
                        cfg->scene, sum->nodes, sum->elements, weak, sum->ncolors, colors, cfg->solver, pbng_material_kind_name(cfg->material), cfg->youngs,
                        cfg->poisson, cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic", sum->ranks, sum->threads));
  PetscFunctionReturn(0);
}

static PetscErrorCode teardown(run_state *st)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_solver_destroy(&st->solver));
  PetscCall(pbng_problem_destroy(&st->pb));
  PetscCall(pbng_halo_destroy(&st->halo));
  PetscCall(pbng_dmesh_destroy(&st->dm));
  PetscCall(PetscFree(st->node_rows));
  PetscCall(PetscFree(st->node_order));
  PetscFunctionReturn(0);
}

static PetscErrorCode memory_usage(MPI_Comm comm, pbng_run_summary *sum)
{
  struct rusage ru;
  double mine;

  PetscFunctionBeginUser;
  getrusage(RUSAGE_SELF, &ru);
  mine = (double)ru.ru_maxrss * 1024.0; /* Linux reports KiB */
  PetscCallMPI(MPI_Allreduce(&mine, &sum->peak_rss_bytes_max, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&mine, &sum->peak_rss_bytes_sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

/* -threads N, else OMP_NUM_THREADS, else the node's cores shared among the ranks on the node. */
static PetscErrorCode choose_thread_count(MPI_Comm comm, int requested)
{
  MPI_Comm node;
  int local_ranks;

  PetscFunctionBeginUser;
  if (requested > 0) {
    omp_set_num_threads(requested);
    PetscFunctionReturn(0);
  }
  if (getenv("OMP_NUM_THREADS")) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &local_ranks));
  PetscCallMPI(MPI_Comm_free(&node));
  const int threads = omp_get_num_procs() / local_ranks;
  omp_set_num_threads(threads > 0 ? threads : 1);
  PetscFunctionReturn(0);
}

/* After an error: whether every rank reached its error path within `timeout` seconds (then the error
 * is collective and the ranks clean up together). A rank that failed alone would otherwise wait in the
 * cleanup's collective calls, and the others in theirs, forever. */
static int all_ranks_failed(MPI_Comm comm, double timeout)
{
  MPI_Request req;
  int done = 0;
  const double t0 = MPI_Wtime();

  if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) return 0;
  while (!done && MPI_Wtime() - t0 < timeout) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return 0;
    if (!done) nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  return done;
}

/* A rank that failed alone: says why, removes a fresh run's partial output and aborts every rank. */
static void abort_alone(const run_state *st, PetscErrorCode ierr)
{
  const char *text = NULL;
  char *specific = NULL, partial[PETSC_MAX_PATH_LEN + 16];
  PetscErrorMessage(ierr, &text, &specific);
  snprintf(partial, sizeof(partial), "%s.partial", st->cfg->output);
  if (!st->restart[0]) remove(partial); /* a restarted run's .partial holds the earlier frames: kept */
  fprintf(stderr, "pbng: error on rank %d: %s\npbng: the other ranks did not stop within %g s (-failure_timeout): aborting the run\n", st->rank,
          specific && specific[0] ? specific : (text ? text : "unknown error"), st->cfg->failure_timeout);
  fflush(stderr);
  MPI_Abort(st->comm, 1);
}

PetscErrorCode pbng_run(MPI_Comm comm, const pbng_config *cfg, const char *command_line, pbng_run_summary *sum)
{
  run_state st;
  PetscErrorCode ierr;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  memset(&st, 0, sizeof(st));
  memset(sum, 0, sizeof(*sum));
  st.comm = comm;
  st.cfg = cfg;
  st.command_line = command_line;
  pbng_signals_install();
  PetscCallMPI(MPI_Comm_rank(comm, &st.rank));
  PetscCallMPI(MPI_Comm_size(comm, &sum->ranks));
  PetscCall(choose_thread_count(comm, cfg->threads));
  sum->threads = omp_get_max_threads();
  PetscCall(register_events(&st.ev));
  MPI_Comm failure_comm;
  PetscCallMPI(MPI_Comm_dup(comm, &failure_comm)); /* only for the agreement after an error */
  ierr = setup(&st, command_line, sum);
  if (!ierr) ierr = frame_loop(&st, sum);
  if (ierr && !all_ranks_failed(failure_comm, cfg->failure_timeout)) abort_alone(&st, ierr);
  PetscCallMPI(MPI_Comm_free(&failure_comm));
  if (ierr) {
    if (st.out && st.diverged[0]) { /* keep the frames before the divergence, saying where it stopped */
      pbng_output_root_string(st.out, "status", st.diverged);
      pbng_output_close(&st.out, PETSC_TRUE);
    }
    if (st.out) pbng_output_close(&st.out, PETSC_FALSE); /* leave no partial output under the requested name */
    teardown(&st);
    return ierr;
  }
  PetscCallMPI(MPI_Allreduce(&st.solver.halo_seconds, &sum->halo_seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum->solver_seconds, 1, MPI_DOUBLE, MPI_MAX, comm)); /* the slowest rank's */
  sum->stopped_by_signal = st.stopped_by;
  if (st.stopped_by) PetscCall(pbng_output_suspend(&st.out)); /* kept as <output>.partial for -restart */
  else {
    PetscCall(pbng_output_root_string(st.out, "status", "complete"));
    PetscCall(pbng_output_close(&st.out, PETSC_TRUE));
    if (st.rank == 0 && access(cfg->checkpoint, F_OK) == 0) remove(cfg->checkpoint); /* the run is complete: nothing to continue */
  }
  PetscCall(teardown(&st));
  sum->total_seconds = MPI_Wtime() - t0;
  sum->visits_per_second = sum->solver_seconds > 0 ? 4.0 * (double)sum->elements * sum->iterations / sum->solver_seconds : 0;
  PetscCall(memory_usage(comm, sum));
  PetscFunctionReturn(0);
}
