/* Where a run starts: a frame of an earlier result (-initial), a flattened or inverted shape
 * (-initial_state), or a checkpoint (-restart); and the checkpoints it writes. */
#include "app/run_state.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "io/result_reader.h"

/* A dynamic run continued from frame K >= 1 of a dynamic result: the velocity the uninterrupted run had after
 * frame K, (x_K - x_{K-1}) / dt (pbng_problem_end_frame's), from frame K - 1's positions; the result's step
 * must be -dt. */
static PetscErrorCode load_initial_velocity(run_state *st, const double *rest, const double *x, const pbng_result_frame *info)
{
  const pbng_dmesh *dm = &st->dm;
  pbng_result_frame before;
  double *xp;

  PetscFunctionBeginUser;
  PetscCheck(info->frame >= 1, st->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-initial %s -initial_frame 0: a dynamic run continues from a frame >= 1 (the velocity is taken from the frame before; frame 0 is the "
             "scene's own start)", st->cfg->initial);
  PetscCall(PetscMalloc1(3 * dm->nowned + 1, &xp));
  PetscCall(pbng_result_read_frame(st->comm, st->cfg->initial, info->frame - 1, dm->nglobal_nodes, dm->nowned, st->node_rows, rest, xp, &before));
  const double step = info->time - before.time;
  PetscCheck(fabs(step - st->pb.dt) <= 1e-9 * st->pb.dt, st->comm, PETSC_ERR_ARG_INCOMP,
             "-initial %s: its frames %d and %d are %g apart, not -dt %g (a dynamic run continues with the result's step)", st->cfg->initial,
             before.frame, info->frame, step, st->pb.dt);
  for (int32_t k = 0; k < dm->nowned; ++k)
    for (int d = 0; d < 3; ++d) st->pb.velocity[3 * st->node_order[k] + d] = (x[3 * k + d] - xp[3 * k + d]) / st->pb.dt;
  PetscCall(PetscFree(xp));
  PetscFunctionReturn(0);
}

/* -initial: the owned nodes' positions (and the start time) from a frame of an earlier result of the same mode;
 * in dynamic mode their velocity too (load_initial_velocity). */
PetscErrorCode run_load_initial_state(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  const int dynamic = st->pb.mode == PBNG_MODE_DYNAMIC;
  double *rest, *x;
  pbng_result_frame info;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(3 * dm->nowned + 1, &rest, 3 * dm->nowned + 1, &x));
  for (int32_t k = 0; k < dm->nowned; ++k)
    for (int d = 0; d < 3; ++d) rest[3 * k + d] = dm->X[3 * st->node_order[k] + d];
  PetscCall(pbng_result_read_frame(st->comm, st->cfg->initial, st->cfg->initial_frame, dm->nglobal_nodes, dm->nowned, st->node_rows, rest, x, &info));
  PetscCheck(!strcmp(info.mode, dynamic ? "dynamic" : "quasistatic"), st->comm, PETSC_ERR_ARG_INCOMP,
             "-initial %s: a %s result, and this run is %s (a run continues a result of its own mode)", st->cfg->initial, info.mode,
             dynamic ? "dynamic" : "quasistatic");
  for (int32_t k = 0; k < dm->nowned; ++k)
    for (int d = 0; d < 3; ++d) st->pb.x[3 * st->node_order[k] + d] = x[3 * k + d];
  if (dynamic) PetscCall(load_initial_velocity(st, rest, x, &info));
  PetscCall(PetscFree2(rest, x));
  PetscCall(pbng_problem_update_ghosts(&st->pb));
  if (st->pb.plastic_strain) /* the plastic state frame info.frame was solved with: every local element's copy */
    PetscCall(pbng_result_read_frame_field(st->comm, st->cfg->initial, info.frame, "plastic_strain", dm->nglobal_elems, 6, dm->nelems, dm->global_elem,
                                           st->pb.plastic_strain));
  st->time0 = info.time;
  PetscCall(PetscPrintf(st->comm, "initial state: frame %d (time %g) of %s\n", info.frame, info.time, st->cfg->initial));
  PetscFunctionReturn(0);
}

/* -initial_state flat | inverted (the seeds' recovery tests): the free nodes squashed onto the plane
 * y = centre of the mesh, or mirrored in x about its centre (every element inverted). Every rank
 * moves its owned and ghost copies alike. First, a scene's initial velocity (cfg->initial_velocity_on,
 * -scene projectile_sheet): the owned free nodes whose rest position lies in cfg->initial_velocity_box start
 * with cfg->initial_velocity (a restart then reads the checkpoint's velocities over it; -initial has set them). */
PetscErrorCode run_apply_initial_state(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};

  PetscFunctionBeginUser;
  if (st->cfg->initial_velocity_on && st->pb.mode == PBNG_MODE_DYNAMIC && !st->cfg->initial[0]) { /* a scene's projectile (projectile_sheet): owned free
                                                                                                   nodes in the box (-initial: the result's velocity) */
    const double *b = st->cfg->initial_velocity_box;
    for (int32_t i = 0; i < dm->nowned; ++i) {
      const double *X = &dm->X[3 * i];
      if (dm->node_bc[i] >= 0 || X[0] < b[0] || X[1] < b[1] || X[2] < b[2] || X[0] > b[3] || X[1] > b[4] || X[2] > b[5]) continue;
      for (int d = 0; d < 3; ++d) st->pb.velocity[3 * i + d] = st->cfg->initial_velocity[d];
    }
  }
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

/* The problem's state: positions (and the dynamic state) and the corotated warm starts (as doubles in
 * rotation[]). */
static void problem_fields(run_state *st, double *rotation, pbng_state_field *f, int *n)
{
  pbng_problem *pb = &st->pb;
  const pbng_dmesh *dm = &st->dm;

  *n = 0;
  pbng_state_add(f, n, "positions", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x);
  if (pb->mode == PBNG_MODE_DYNAMIC) {
    pbng_state_add(f, n, "velocity", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->velocity);
    pbng_state_add(f, n, "x_prev", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x_prev);
    pbng_state_add(f, n, "x_hat", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, pb->x_hat);
  }
  if (pb->rotation) pbng_state_add(f, n, "rotation", PBNG_FIELD_ELEMENTS, 4, dm->nowned_elems, dm->nelems, rotation);
  if (pb->plastic_strain) pbng_state_add(f, n, "plastic_strain", PBNG_FIELD_ELEMENTS, 6, dm->nowned_elems, dm->nelems, pb->plastic_strain);
  if (st->x_last_frame) { /* -quasistatic_guess secant */
    pbng_state_add(f, n, "last_frame", PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, st->x_last_frame);
    pbng_state_add(f, n, "last_frame_known", PBNG_FIELD_SCALARS, 1, 1, 1, &st->have_last_frame);
  }
}

/* The solver's own fields appended to f (collective: the constraint solvers gather their contacts). */
static PetscErrorCode solver_fields(run_state *st, pbng_state_field *f, int *n)
{
  PetscFunctionBeginUser;
  if (st->solver.ops->state) PetscCall(st->solver.ops->state(&st->solver, f, n));
  PetscFunctionReturn(0);
}

PetscErrorCode run_write_checkpoint(run_state *st, const pbng_checkpoint_counters *c)
{
  pbng_state_field fields[PBNG_MAX_STATE_FIELDS];
  double *rotation = NULL;
  int n;
  const int64_t nrot = st->pb.rotation ? 4 * (int64_t)st->dm.nelems : 0;

  PetscFunctionBeginUser;
  double *contact_buf = NULL;
  PetscCall(PetscMalloc1(nrot + 1, &rotation));
  for (int64_t k = 0; k < nrot; ++k) rotation[k] = st->pb.rotation[k];
  problem_fields(st, rotation, fields, &n);
  PetscCall(solver_fields(st, fields, &n));
  PetscCall(run_contact_state_fields(st, fields, &n, &contact_buf));
  PetscCall(pbng_checkpoint_write(&st->dm, st->cfg->checkpoint, c, st->cfg->restart_key, st->command_line, n, fields));
  PetscCall(PetscFree(contact_buf));
  PetscCall(PetscFree(rotation));
  PetscCall(PetscPrintf(st->comm, "checkpoint: %s (frame %d, %d iterations done in it)\n", st->cfg->checkpoint, (int)c->next_frame,
                        (int)c->next_iteration));
  PetscFunctionReturn(0);
}

/* -restart: the state of st->restart (whose counters were read) into the problem, the contacts and the
 * solver, in that order (the constraint solvers' contact multipliers follow the restored contact set). */
PetscErrorCode run_load_checkpoint(run_state *st)
{
  pbng_state_field fields[PBNG_MAX_STATE_FIELDS];
  double *rotation;
  int n;
  const int64_t nrot = st->pb.rotation ? 4 * (int64_t)st->dm.nelems : 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nrot + 1, &rotation));
  problem_fields(st, rotation, fields, &n);
  PetscCall(pbng_checkpoint_read_fields(&st->dm, st->restart, n, fields));
  for (int64_t k = 0; k < nrot; ++k) st->pb.rotation[k] = (float)rotation[k];
  PetscCall(PetscFree(rotation));
  st->time0 = st->resume.time0;
  pbng_problem_set_time(&st->pb, run_frame_time(st, (int)st->resume.next_frame)); /* the frame being continued (its prescribed positions were read) */
  pbng_problem_prescribed_positions(&st->pb, st->pb.time, st->pb.x); /* their ghost copies too (the halo leaves them out) */
  PetscCall(pbng_problem_update_ghosts(&st->pb));
  PetscCall(run_load_contact_state(st));
  n = 0;
  PetscCall(solver_fields(st, fields, &n));
  PetscCall(pbng_checkpoint_read_fields(&st->dm, st->restart, n, fields));
  if (st->solver.ops->restored) PetscCall(st->solver.ops->restored(&st->solver));
  st->solver.linear_iterations = (long long)(st->resume.linear_iterations + st->resume.linear); /* the solver's running count */
  PetscCall(PetscPrintf(st->comm, "restart: %s, frame %d after %d of its iterations\n", st->restart, (int)st->resume.next_frame,
                        (int)st->resume.next_iteration));
  PetscFunctionReturn(0);
}

/* -restart FILE, or auto: the checkpoint file when it exists (rank 0 looks, every rank learns). */
PetscErrorCode run_resolve_restart(run_state *st)
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
PetscErrorCode run_resume_output(run_state *st, const mesh_header *mesh)
{
  pbng_output_info info = {.element = mesh->etype, .mixed_nen = mesh->etype ? 0 : mesh->nen, .kind_count = mesh->kind_count};

  PetscFunctionBeginUser;
  PetscCall(pbng_checkpoint_read_counters(&st->dm, st->restart, st->cfg->restart_key, &st->resume));
  PetscCall(pbng_output_resume(st->comm, st->cfg->output, &info, mesh->nnodes, mesh->nelems, (int)st->resume.next_frame, &st->out));
  PetscCall(run_build_node_output_order(st));
  PetscFunctionReturn(0);
}
