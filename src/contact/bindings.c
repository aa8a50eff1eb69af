#include "contact/bindings.h"
#include <math.h>
#include "contact/contact_detect.h"
#include "core/grow.h"
#include "parallel/coloring.h"
#include "parallel/dmesh.h"
#include "parallel/submesh.h"

/* The whole mesh as one subdomain on this process (PETSC_COMM_SELF): what the detector works on. */
static PetscErrorCode whole_mesh_subdomain(const pbng_mesh *mesh, pbng_dmesh *dm)
{
  pbng_node_elements adj;
  pbng_submesh sub;
  int32_t *color, *part;
  int8_t *node_bc;
  int ncolors;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(mesh->nnodes + 1, &color, mesh->nnodes + 1, &part));
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, &ncolors));
  PetscCall(pbng_node_elements_destroy(&adj));
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = 0;
  PetscCall(pbng_submesh_extract(mesh, color, ncolors, NULL, part, 0, &sub));
  PetscCall(PetscMalloc1(sub.mesh.nnodes + 1, &node_bc));
  for (int64_t i = 0; i < sub.mesh.nnodes; ++i) node_bc[i] = -1; /* nothing held: every surface vertex may bind */
  PetscCall(pbng_dmesh_create(PETSC_COMM_SELF, &sub, node_bc, dm));
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(PetscFree2(color, part));
  PetscFunctionReturn(0);
}

/* The binding of a vertex-triangle record: the vertex on one side, the closest point's corners of non-zero weight on
 * the other, its target the rest offset between them (X: the rest positions), so that the binding holds the surfaces
 * as they are at rest rather than pulling them together. */
static PetscErrorCode binding_of(const pbng_contact_record *r, const pbng_binding_options *o, const double *X, pbng_weak_constraint *c)
{
  const double one = 1.0;
  int64_t corner[3];
  double w[3];
  int n = 0;

  PetscFunctionBeginUser;
  for (int a = 0; a < 3; ++a)
    if (r->w[a] > 0) corner[n] = r->tri_gid[a], w[n++] = r->w[a];
  const char *why = pbng_weak_constraint_init(1, &r->vertex_gid, &one, n, corner, w, o->k_n, o->k_t, o->k_n == o->k_t ? NULL : r->normal, c);
  PetscCheck(!why, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-bind_distance: the binding of node %" PRId64 ": %s", r->vertex_gid, why);
  pbng_weak_constraint_violation(c, X, c->target); /* the rest offset t = X_v - sum_j w_j X_j: C = 0 at rest */
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_bind_bodies(pbng_mesh *mesh, const pbng_binding_options *o, int64_t *nbound)
{
  const pbng_contact_detect_options det_opt = {.distance = o->distance, .sheet_offset = 0, .self = 0, .nobstacles = 0};
  pbng_contact_detector *det;
  pbng_contact_record *rec;
  pbng_weak_constraint *bind = NULL;
  int64_t n = 0, cap = 0;
  int32_t nrec;
  pbng_dmesh dm;

  PetscFunctionBeginUser;
  PetscCheck(o->distance > 0 && isfinite(o->distance), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-bind_distance %g: must be > 0", o->distance);
  PetscCheck(o->k_n >= 0 && o->k_t >= 0 && o->k_n + o->k_t > 0 && isfinite(o->k_n) && isfinite(o->k_t), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-bind_stiffness %g,%g: need k_n, k_t >= 0, finite, not both 0", o->k_n, o->k_t);
  PetscCall(whole_mesh_subdomain(mesh, &dm));
  PetscCall(pbng_contact_detector_create(&dm, &det_opt, &det));
  PetscCall(pbng_contact_detect(det, dm.X, &nrec, &rec)); /* at rest; records by (vertex, kind, key) */
  for (int32_t k = 0; k < nrec; ++k) {
    if (rec[k].kind != PBNG_CONTACT_TRIANGLE) continue;
    PetscCall(pbng_grow(&bind, sizeof(*bind), n + 1, &cap));
    PetscCall(binding_of(&rec[k], o, mesh->X, &bind[n++]));
  }
  PetscCall(PetscFree(rec));
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscCall(pbng_dmesh_destroy(&dm));
  PetscCall(pbng_mesh_add_weak_constraints(mesh, n, bind));
  PetscCall(PetscFree(bind));
  *nbound = n;
  PetscFunctionReturn(0);
}
