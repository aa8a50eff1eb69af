#include "solvers/constraint_sweep.h"
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

PetscErrorCode pbng_constraint_sweep_create(const pbng_solver *s, double dt, int pbd, pbng_constraint_sweep *cs)
{
  const pbng_dmesh *dm = s->pb->dm;

  PetscFunctionBeginUser;
  PetscCheck(dm->elem_color, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-solver %s needs constraint colors, which this partitioned mesh file lacks: partition it again with pbng-partition", s->ops->name);
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
  PetscCall(PetscFree3(cs->x_tilde, cs->x_step, cs->work));
  PetscCall(PetscFree(cs->lambda_elem));
  PetscCall(PetscFree(cs->lambda_weak));
  PetscCall(pbng_color_groups_destroy(&cs->elem));
  PetscCall(pbng_color_groups_destroy(&cs->weak));
  PetscCall(pbng_contact_projection_destroy(&cs->contact));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_sweep_start_step(pbng_constraint_sweep *cs, const pbng_problem *pb, const double *v)
{
  const pbng_dmesh *dm = pb->dm;
  double *x = pb->x;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    if (cs->inv_mass[i] == 0.0) continue;
    for (int k = 0; k < 3; ++k) {
      cs->x_step[3 * i + k] = x[3 * i + k];
      x[3 * i + k] += (v ? cs->dt * v[3 * i + k] : 0.0) + cs->dt * cs->dt * cs->gravity_scale[i] * pb->gravity[k];
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

static void project_element_color(pbng_solver *s, pbng_constraint_sweep *cs, int c, pbng_project_element_fn project_element)
{
#pragma omp parallel for schedule(static)
  for (int32_t k = cs->elem.start[c]; k < cs->elem.start[c + 1]; ++k) project_element(s, cs, cs->elem.item[k]);
}

PetscErrorCode pbng_constraint_sweep_run(pbng_solver *s, pbng_constraint_sweep *cs, pbng_project_element_fn project_element)
{
  PetscFunctionBeginUser;
  for (int phase = 0; phase < 2; ++phase) {
    const int weak = (phase == 0) == (s->opt.weak_first != 0);
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

PetscErrorCode pbng_constraint_sweep_state(pbng_constraint_sweep *cs, const pbng_problem *pb, const char *prefix, pbng_state_field *fields, int *n)
{
  const pbng_dmesh *dm = pb->dm;
  char name[40];

  PetscFunctionBeginUser;  snprintf(name, sizeof(name), "%s_lambda", prefix);
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
