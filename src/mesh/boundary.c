#include "mesh/boundary.h"
#include <math.h>
#include <string.h>

/* Rodrigues' rotation of v by angle about the unit axis. */
static void rotate_about_axis(const double axis[3], double angle, const double v[3], double out[3])
{
  const double c = cos(angle), s = sin(angle);
  const double kv = axis[0] * v[0] + axis[1] * v[1] + axis[2] * v[2];
  const double kxv[3] = {axis[1] * v[2] - axis[2] * v[1], axis[2] * v[0] - axis[0] * v[2],
                         axis[0] * v[1] - axis[1] * v[0]};
  for (int d = 0; d < 3; ++d) out[d] = v[d] * c + kxv[d] * s + axis[d] * kv * (1 - c);
}

void pbng_motion_apply(const pbng_motion *m, const double X[3], double t, double x[3])
{
  double scaled[3], rotated[3];
  if (m->until > 0 && t > m->until) t = m->until; /* stopped: held where the motion ended */
  for (int d = 0; d < 3; ++d) scaled[d] = (1.0 + m->scale_rate[d] * t) * (X[d] - m->center[d]);
  if (m->rotation_rate != 0.0) rotate_about_axis(m->axis, m->rotation_rate * t, scaled, rotated);
  else memcpy(rotated, scaled, sizeof(rotated));
  for (int d = 0; d < 3; ++d) x[d] = m->center[d] + rotated[d] + m->velocity[d] * t;
}

static PetscErrorCode bc_append(pbng_bc_list *list, const char *name, const pbng_motion *motion, pbng_bc **bc)
{
  PetscFunctionBeginUser;
  PetscCheck(list->count < PBNG_MAX_BC, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "at most %d boundary conditions", PBNG_MAX_BC);
  *bc = &list->bc[list->count++];
  memset(*bc, 0, sizeof(**bc));
  PetscCall(PetscStrncpy((*bc)->name, name, sizeof((*bc)->name)));
  if (motion) (*bc)->motion = *motion;
  const double *a = (*bc)->motion.axis;
  const double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  PetscCheck((*bc)->motion.rotation_rate == 0.0 || len > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "boundary condition %s: rotation needs a non-zero axis", name);
  for (int d = 0; d < 3 && len > 0; ++d) (*bc)->motion.axis[d] /= len;
  PetscCheck((*bc)->motion.until >= 0 && isfinite((*bc)->motion.until), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "boundary condition %s: the motion's stop time %g must be >= 0 (0: it never stops)", name, (*bc)->motion.until);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_bc_add_box(pbng_bc_list *list, const char *name, const double box[6], const pbng_motion *motion)
{
  pbng_bc *bc;

  PetscFunctionBeginUser;
  for (int d = 0; d < 3; ++d)
    PetscCheck(box[d] <= box[d + 3], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "boundary condition %s: box has min > max along axis %d", name, d);
  PetscCall(bc_append(list, name, motion, &bc));
  bc->by_box = 1;
  memcpy(bc->box, box, sizeof(bc->box));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_bc_set_release(pbng_bc_list *list, int b, double release)
{
  pbng_bc *bc = &list->bc[b];

  PetscFunctionBeginUser;
  PetscCheck(release > 0 && isfinite(release), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "boundary condition %s: the release time %g must be positive and finite", bc->name, release);
  PetscCheck(bc->by_box, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "boundary condition %s: a released set (_release) must be chosen by box (_box)", bc->name);
  bc->release = release;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_bc_add_group(pbng_bc_list *list, const char *name, const char *group, const pbng_motion *motion)
{
  pbng_bc *bc;

  PetscFunctionBeginUser;
  PetscCall(bc_append(list, name, motion, &bc));
  PetscCall(PetscStrncpy(bc->group, group, sizeof(bc->group)));
  PetscFunctionReturn(0);
}

int pbng_box_contains(const double box[6], const double X[3], double tol)
{
  for (int d = 0; d < 3; ++d)
    if (X[d] < box[d] - tol || X[d] > box[d + 3] + tol) return 0;
  return 1;
}

double pbng_mesh_extent(const pbng_mesh *mesh)
{
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, ext = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], mesh->X[3 * i + d]);
      hi[d] = fmax(hi[d], mesh->X[3 * i + d]);
    }
  for (int d = 0; d < 3; ++d) ext = fmax(ext, hi[d] - lo[d]);
  return ext;
}

PetscErrorCode pbng_bc_assign(const pbng_bc_list *list, const pbng_mesh *mesh, double extent, int8_t *node_bc,
                              int64_t selected_per_bc[PBNG_MAX_BC])
{
  const double tol = 1e-9 * extent;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < mesh->nnodes; ++i) node_bc[i] = -1;
  for (int b = 0; b < list->count; ++b) {
    const pbng_bc *bc = &list->bc[b];
    int64_t selected = 0;
    if (bc->by_box) {
      for (int64_t i = 0; i < mesh->nnodes; ++i)
        if (pbng_box_contains(bc->box, &mesh->X[3 * i], tol)) {
          if (bc->release == 0.0) node_bc[i] = (int8_t)b;
          ++selected;
        }
    } else {
      const pbng_node_set *set = pbng_mesh_find_node_set(mesh, bc->group);
      PetscCheck(set, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "boundary condition %s: %s has no node set (physical group) named \"%s\"",
                 bc->name, mesh->source, bc->group);
      for (int64_t k = 0; k < set->count; ++k) node_bc[set->nodes[k]] = (int8_t)b, ++selected;
    }
    selected_per_bc[b] = selected;
  }
  PetscFunctionReturn(0);
}
