#include "methods/pbd/constraint_sweep.h"
#include <stdio.h>
#include <string.h>

/* w_i = 1/m_i and the gravity scale (load weight / m_i) on every local node: ghosts get their owners'
 * lumped masses and load weights through the halo. */
static PetscErrorCode inverse_masses(const pbng_problem *pb, double *work, double *inv_mass, double *gravity_scale)
{
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  memset(work, 0, sizeof(double) * 3 * (size_t)dm->nlocal);
  for (int32_t i = 0; i < dm->nowned; ++i) work[3 * i] = pb->mass[i], work[3 * i + 1] = pb->load_mass[i];
  if (pb->halo) PetscCall(pbng_halo_exchange(pb->halo, -1, work));
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    const int moves = dm->node_bc[i] < 0 && work[3 * i] > 0;
    inv_mass[i] = moves ? 1.0 / work[3 * i] : 0.0;
    gravity_scale[i] = moves ? work[3 * i + 1] / work[3 * i] : 0.0;
  }
  PetscFunctionReturn(0);
}

/* w_i p_i on every local node (ghosts: their owners' loads through the halo). */
static PetscErrorCode load_accelerations(const pbng_problem *pb, pbng_constraint_sweep *cs)
{
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nlocal, &cs->load_accel));
  memcpy(cs->load_accel, pb->node_load, sizeof(double) * 3 * (size_t)dm->nowned);
  if (pb->halo) PetscCall(pbng_halo_exchange(pb->halo, -1, cs->load_accel));
  for (int64_t k = 0; k < 3 * (int64_t)dm->nlocal; ++k) cs->load_accel[k] *= cs->inv_mass[k / 3];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_create(const pbng_solver *s, double dt, int pbd, pbng_constraint_sweep *cs)
{
  const pbng_dmesh *dm = s->pb->dm;

  PetscFunctionBeginUser;
  PetscCheck(dm->elem_color, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-solver %s needs constraint colors, which this partitioned mesh file lacks: partition it again with "
             "pbng-partition (-partitioner ptscotch -pbd_colors for PT-Scotch)", s->ops->name);
  memset(cs, 0, sizeof(*cs));
  cs->dt = dt;
  cs->proj.mat = &s->pb->mat;
  cs->proj.inv_dt2 = pbd ? 0.0 : 1.0 / (dt * dt);
  PetscCall(PetscLogEventRegister("PBDProject", PETSC_OBJECT_CLASSID, &cs->ev_project));
  PetscCall(PetscLogEventRegister("PBDHaloExchange", PETSC_OBJECT_CLASSID, &cs->ev_halo));
  PetscCall(PetscMalloc2(dm->nlocal, &cs->inv_mass, dm->nlocal, &cs->gravity_scale));
  PetscCall(PetscCalloc1(dm->nlocal, &cs->touched));
  PetscCall(PetscMalloc3(3 * (int64_t)dm->nlocal, &cs->x_tilde, 3 * (int64_t)dm->nlocal, &cs->x_step, 3 * (int64_t)dm->nlocal, &cs->work));
  PetscCall(PetscCalloc1(PBNG_ELEMENT_MULTIPLIERS * (int64_t)dm->nowned_elems + 1, &cs->lambda_elem));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nowned_weak + 1, &cs->lambda_weak));
  memcpy(cs->x_step, s->pb->x, sizeof(double) * 3 * (size_t)dm->nlocal); /* defined before the first step (massless nodes keep it) */
  memcpy(cs->x_tilde, s->pb->x, sizeof(double) * 3 * (size_t)dm->nlocal);
  PetscCall(inverse_masses(s->pb, cs->work, cs->inv_mass, cs->gravity_scale));
  if (s->pb->handle) { /* released sets: their nodes' own inverse masses, for after the release */
    PetscCall(PetscMalloc1(dm->nlocal, &cs->handle_inv_mass));
    memcpy(cs->handle_inv_mass, cs->inv_mass, sizeof(double) * (size_t)dm->nlocal);
  }
  if (s->pb->node_load) PetscCall(load_accelerations(s->pb, cs));
  PetscCall(pbng_color_groups_build(dm->nelem_colors, dm->nowned_elems, dm->elem_color, &cs->elem));
  PetscCall(pbng_color_groups_build(dm->nweak_colors, dm->nowned_weak, dm->weak_color, &cs->weak));
  PetscCall(pbng_contact_projection_init(&cs->contact));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_destroy(pbng_constraint_sweep *cs)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(cs->inv_mass, cs->gravity_scale));
  PetscCall(PetscFree(cs->touched));
  PetscCall(PetscFree(cs->load_accel));
  PetscCall(PetscFree(cs->handle_inv_mass));
  PetscCall(PetscFree3(cs->x_tilde, cs->x_step, cs->work));
  PetscCall(PetscFree(cs->lambda_elem));
  PetscCall(PetscFree(cs->lambda_weak));
  PetscCall(pbng_color_groups_destroy(&cs->elem));
  PetscCall(pbng_color_groups_destroy(&cs->weak));
  PetscCall(pbng_contact_projection_destroy(&cs->contact));
  PetscFunctionReturn(0);
}

/* Released sets, as the seed's direct manipulation: while a set holds, its nodes are placed at x_D(t) and
 * do not move in the step (w_i = 0); afterwards they get their inverse masses back. */
static void place_handles(pbng_constraint_sweep *cs, const pbng_problem *pb)
{
  for (int32_t i = 0; i < pb->dm->nlocal; ++i) {
    double xD[3];
    if (pb->handle[i] < 0) continue;
    const int holds = pbng_problem_handle_target(pb, i, xD);
    cs->inv_mass[i] = holds ? 0.0 : cs->handle_inv_mass[i];
    for (int k = 0; k < 3 && holds; ++k) {
      cs->x_step[3 * i + k] = pb->x[3 * i + k];
      pb->x[3 * i + k] = cs->x_tilde[3 * i + k] = xD[k];
    }
  }
}

PetscErrorCode pbng_constraint_sweep_start_step(pbng_constraint_sweep *cs, const pbng_problem *pb, const double *v)
{
  const pbng_dmesh *dm = pb->dm;
  double *x = pb->x;

  PetscFunctionBeginUser;
  if (pb->handle) place_handles(cs, pb);
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    if (cs->inv_mass[i] == 0.0) continue;
    for (int k = 0; k < 3; ++k) {
      cs->x_step[3 * i + k] = x[3 * i + k];
      x[3 * i + k] += (v ? cs->dt * v[3 * i + k] : 0.0) + cs->dt * cs->dt * (cs->gravity_scale[i] * pb->gravity[k] + (cs->load_accel ? cs->load_accel[3 * i + k] : 0.0));
      cs->x_tilde[3 * i + k] = x[3 * i + k];
    }
  }
  memset(cs->lambda_elem, 0, sizeof(double) * PBNG_ELEMENT_MULTIPLIERS * (size_t)dm->nowned_elems);
  memset(cs->lambda_weak, 0, sizeof(double) * 3 * (size_t)dm->nowned_weak);
  pbng_contact_projection_reset(&cs->contact);
  if (pb->contacts) PetscCall(pbng_contacts_exchange(pb->contacts, -1, x)); /* contact ghosts moved with their owners */
  PetscFunctionReturn(0);
}

void pbng_constraint_sweep_velocity(const pbng_constraint_sweep *cs, const pbng_problem *pb, double *v)
{
  for (int64_t k = 0; k < 3 * (int64_t)pb->dm->nlocal; ++k) v[k] = (pb->x[k] - cs->x_step[k]) / cs->dt;
}

/* Moved ghosts go back to their owners, then every ghost is refreshed. */
static PetscErrorCode exchange_moved(pbng_solver *s, pbng_constraint_sweep *cs)
{
  const pbng_dmesh *dm = s->pb->dm;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(cs->ev_halo, 0, 0, 0, 0));
  PetscCall(pbng_halo_reverse(s->pb->halo, PBNG_HALO_ASSIGN, cs->touched, s->pb->x));
  PetscCall(pbng_halo_exchange(s->pb->halo, -1, s->pb->x));
  memset(cs->touched + dm->nowned, 0, (size_t)(dm->nlocal - dm->nowned));
  PetscCall(PetscLogEventEnd(cs->ev_halo, 0, 0, 0, 0));
  s->halo_seconds += MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

static void project_weak_color(pbng_solver *s, pbng_constraint_sweep *cs, int c)
{
  const pbng_dmesh *dm = s->pb->dm;
#pragma omp parallel for schedule(static)
  for (int32_t k = cs->weak.start[c]; k < cs->weak.start[c + 1]; ++k) {
    const int32_t w = cs->weak.item[k];
    pbng_project_weak(&cs->proj, &dm->weak[w], cs->inv_mass, &cs->lambda_weak[3 * w], s->pb->x);
    for (int j = 0; j < dm->weak[w].nnodes; ++j) cs->touched[dm->weak[w].node[j]] = 1;
  }
}

/* How a color's elements are projected: one at a time, or in chunks. */
typedef struct {
  pbng_project_element_fn one;
  pbng_project_elements_fn chunk;
  int32_t size;  /* elements per chunk (the fewest, with parts) */
  int32_t parts; /* > 0: a color's elements in at most this many chunks of at least size */
} element_projection;

static void project_element_color(pbng_solver *s, pbng_constraint_sweep *cs, int c, const element_projection *p)
{
  const int32_t start = cs->elem.start[c], n = cs->elem.start[c + 1] - start;
  if (p->chunk) {
    const int32_t even = p->parts > 0 ? (n + p->parts - 1) / p->parts : 0, size = even > p->size ? even : p->size;
    const int32_t nchunks = (n + size - 1) / size;
#pragma omp parallel for schedule(dynamic, 1)
    for (int32_t k = 0; k < nchunks; ++k) p->chunk(s, cs, &cs->elem.item[start + k * size], k + 1 < nchunks ? size : n - k * size);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int32_t k = start; k < start + n; ++k) p->one(s, cs, cs->elem.item[k]);
}

static PetscErrorCode sweep_run(pbng_solver *s, pbng_constraint_sweep *cs, const element_projection *project_element)
{
  PetscFunctionBeginUser;
  for (int phase = 0; phase < 2; ++phase) {
    const int weak = (phase == 0) == (s->opt.xpbd.weak_first != 0);
    const pbng_color_groups *cl = weak ? &cs->weak : &cs->elem;
    for (int c = 0; c < cl->ncolors; ++c) {
      PetscCall(PetscLogEventBegin(cs->ev_project, 0, 0, 0, 0));
      if (weak) project_weak_color(s, cs, c);
      else project_element_color(s, cs, c, project_element);
      PetscCall(PetscLogEventEnd(cs->ev_project, 0, 0, 0, 0));
      if (s->pb->halo) PetscCall(exchange_moved(s, cs));
    }
  }
  if (s->pb->contacts) { /* last, after every color: in key order, on every rank alike */
    PetscCall(pbng_contact_projection_sync(&cs->contact, s->pb, cs->inv_mass));
    PetscCall(pbng_contact_projection_sweep(&cs->contact, &cs->proj, s->pb));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_run_element_colors(pbng_solver *s, pbng_constraint_sweep *cs, int32_t chunk, pbng_project_elements_fn project_elements)
{
  const element_projection p = {.chunk = project_elements, .size = chunk};

  PetscFunctionBeginUser;
  for (int c = 0; c < cs->elem.ncolors; ++c) {
    PetscCall(PetscLogEventBegin(cs->ev_project, 0, 0, 0, 0));
    project_element_color(s, cs, c, &p);
    PetscCall(PetscLogEventEnd(cs->ev_project, 0, 0, 0, 0));
    if (s->pb->halo) PetscCall(exchange_moved(s, cs));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_run(pbng_solver *s, pbng_constraint_sweep *cs, pbng_project_element_fn project_element)
{
  const element_projection p = {.one = project_element};
  return sweep_run(s, cs, &p);
}

PetscErrorCode pbng_constraint_sweep_run_chunks(pbng_solver *s, pbng_constraint_sweep *cs, int32_t chunk, int32_t parts,
                                                pbng_project_elements_fn project_elements)
{
  const element_projection p = {.chunk = project_elements, .size = chunk, .parts = parts};
  return sweep_run(s, cs, &p);
}

PetscErrorCode pbng_constraint_sweep_state(pbng_constraint_sweep *cs, const pbng_problem *pb, const char *prefix, pbng_state_field *fields, int *n)
{
  const pbng_dmesh *dm = pb->dm;
  char name[40];

  PetscFunctionBeginUser;
  snprintf(name, sizeof(name), "%s_lambda", prefix);
  pbng_state_add(fields, n, name, PBNG_FIELD_ELEMENTS, PBNG_ELEMENT_MULTIPLIERS, dm->nowned_elems, dm->nowned_elems, cs->lambda_elem);
  snprintf(name, sizeof(name), "%s_lambda_weak", prefix);
  pbng_state_add(fields, n, name, PBNG_FIELD_WEAK, 3, dm->nowned_weak, dm->nowned_weak, cs->lambda_weak);
  snprintf(name, sizeof(name), "%s_x_tilde", prefix);
  pbng_state_add(fields, n, name, PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, cs->x_tilde);
  snprintf(name, sizeof(name), "%s_x_step", prefix);
  pbng_state_add(fields, n, name, PBNG_FIELD_NODES, 3, dm->nowned, dm->nowned, cs->x_step);
  if (pb->contacts) PetscCall(pbng_contact_projection_state(&cs->contact, pb, cs->inv_mass, prefix, fields, n));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_restored(pbng_constraint_sweep *cs, const pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (pb->halo) {
    PetscCall(pbng_halo_exchange(pb->halo, -1, cs->x_step));
    PetscCall(pbng_halo_exchange(pb->halo, -1, cs->x_tilde));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_substepper_create(const pbng_solver *s, int substeps, int iterations, double h, int pbd, pbng_substepper *st)
{
  PetscFunctionBeginUser;
  memset(st, 0, sizeof(*st));
  st->substeps = substeps, st->iterations = iterations;
  PetscCall(pbng_constraint_sweep_create(s, h, pbd, &st->cs));
  if (substeps) PetscCall(PetscCalloc1(3 * (int64_t)s->pb->dm->nlocal, &st->velocity));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_substepper_destroy(pbng_substepper *st)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_destroy(&st->cs));
  PetscCall(PetscFree(st->velocity));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_substepper_begin_frame(pbng_substepper *st, pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (!st->substeps) PetscFunctionReturn(0);
  memcpy(pb->x, pb->x_prev, sizeof(double) * 3 * (size_t)pb->dm->nfree);
  PetscCall(pbng_problem_update_ghosts(pb));
  PetscFunctionReturn(0);
}

/* Substep k of the frame ending at pb->time: prescribed nodes (owned and ghost) at x_D(t_n + (k+1) h). */
static void move_prescribed(const pbng_problem *pb, int k, int substeps)
{
  const pbng_dmesh *dm = pb->dm;
  const double t = k + 1 == substeps ? pb->time : pb->time - pb->dt + (k + 1) * (pb->dt / substeps);
  for (int32_t i = 0; i < dm->nlocal; ++i)
    if (dm->node_bc[i] >= 0) pbng_motion_apply(&pb->bcs->bc[dm->node_bc[i]].motion, &dm->X[3 * i], t, &pb->x[3 * i]);
}

PetscErrorCode pbng_substepper_iterate(pbng_substepper *st, pbng_solver *s, int l, pbng_project_element_fn project_element, int *step_done)
{
  const int step = l / st->iterations, i = l % st->iterations;

  PetscFunctionBeginUser;
  *step_done = 0;
  if (i == 0) {
    if (st->substeps) move_prescribed(s->pb, step, st->substeps);
    PetscCall(pbng_constraint_sweep_start_step(&st->cs, s->pb, st->velocity));
  }
  PetscCall(pbng_constraint_sweep_run(s, &st->cs, project_element));
  if (i + 1 < st->iterations || !st->substeps) PetscFunctionReturn(0);
  pbng_constraint_sweep_velocity(&st->cs, s->pb, st->velocity);
  *step_done = 1;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_substepper_state(pbng_substepper *st, const pbng_problem *pb, const char *prefix, pbng_state_field *fields, int *n)
{
  char name[40];

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_state(&st->cs, pb, prefix, fields, n));
  snprintf(name, sizeof(name), "%s_velocity", prefix);
  if (st->velocity) pbng_state_add(fields, n, name, PBNG_FIELD_NODES, 3, pb->dm->nowned, pb->dm->nowned, st->velocity);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_substepper_restored(pbng_substepper *st, const pbng_problem *pb)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_restored(&st->cs, pb));
  if (st->velocity && pb->halo) PetscCall(pbng_halo_exchange(pb->halo, -1, st->velocity));
  PetscFunctionReturn(0);
}

int pbng_substep_iterations(int substeps, int iterations, int iters)
{
  if (substeps <= 0) substeps = (iters + iterations - 1) / iterations;
  return substeps * iterations;
}

void pbng_constraint_element_points(const pbng_problem *pb, int32_t e, double *V, double *grad, pbng_element_points *el)
{
  const pbng_geometry *geo = &pb->geo;
  if (!geo->ref) {
    const pbng_tet_shape *sh = pbng_geometry_shape(geo, e);
    *el = (pbng_element_points){.nen = 4, .nq = 1, .node = geo->records[e].node, .V = V, .grad = grad};
    V[0] = sh->V;
    for (int a = 0; a < 4; ++a) pbng_tet_shape_gradient(sh->B, a, &grad[3 * a]);
    return;
  }
  const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
  const int nen = ref->type->nodes;
  *el = (pbng_element_points){.nen = nen, .nq = ref->nq, .node = &pb->dm->elems[(int64_t)geo->nen * e], .V = V, .grad = grad};
  if (!geo->affine) {
    el->V = pbng_geometry_volumes(geo, e);
    el->grad = pbng_geometry_gradients(geo, e);
    return;
  }
  for (int q = 0; q < ref->nq; ++q) {
    V[q] = pbng_geometry_qp_volume(geo, ref, e, q);
    pbng_geometry_qp_gradients(geo, ref, e, q, &grad[3 * nen * q]);
  }
}

PetscErrorCode pbng_constraint_mesh_kinds(const pbng_dmesh *dm, unsigned *mask)
{
  unsigned mine = pbng_element_kinds_mask(dm->etype, dm->kind, dm->nelems);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, mask, 1, MPI_UNSIGNED, MPI_BOR, dm->comm));
  PetscFunctionReturn(0);
}

int pbng_constraint_sheet_kind(const pbng_problem *pb, int32_t e)
{
  if (!pb->geo.sheet) return -1; /* no sheet kinds: the solids' path costs one test */
  const pbng_element_type *t = pbng_dmesh_element_type(pb->dm, e);
  return pbng_element_is_sheet(t) ? (int)t->kind : -1;
}

/* Linear tetrahedron e's nodes, B = Dm^{-1} and V: its record (a mesh of linear tetrahedra only), or
 * from its quadrature data when kinds mix (one point: V_0 = V, dN_a/dX the rows of B for a = 1..3). */
const int32_t *pbng_constraint_tet_shape(const pbng_problem *pb, int32_t e, double B[9], double *V)
{
  if (pb->geo.records) {
    const pbng_tet_record *rec = &pb->geo.records[e];
    const pbng_tet_shape *sh = &pb->geo.shapes[rec->shape];
    memcpy(B, sh->B, sizeof(sh->B));
    *V = sh->V;
    return rec->node;
  }
  double Vq[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS * PBNG_MAX_ELEMENT_NODES * 3];
  pbng_element_points el;
  pbng_constraint_element_points(pb, e, Vq, grad, &el);
  memcpy(B, &el.grad[3], 9 * sizeof(double));
  *V = el.V[0];
  return el.node;
}
