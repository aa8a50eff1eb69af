/* Connective tissue (issue 41; the PBNG paper's Sec. 10.2.2, Fig. 1): at rest, weak constraints (Eq. 18-19) binding
 * the surfaces of different bodies where they lie within a distance d of each other. Each surface vertex within d of
 * a surface triangle of another body (a connected component of the elements: pbng_body_labels) is bound to the
 * triangle's closest point, found as the contact detector finds contacts (contact/contact_detect.h: vertex-triangle,
 * barycentric weights, the facing rules, no self-contact), a constraint of zero rest length: C = x_v - sum_a w_a x_a.
 * Bindings are found on the global mesh before it is partitioned, so they are the same on any number of ranks, and
 * join the mesh's weak constraints (the output's /constraints/weak, the coarse levels, the colorings). A vertex of
 * each facing surface binds to the other, so touching surfaces are bound both ways. */
#ifndef PBNG_CONTACT_BINDINGS_H
#define PBNG_CONTACT_BINDINGS_H

#include "mesh/mesh.h"

typedef struct {
  double distance; /* d > 0 */
  double k_n, k_t; /* isotropic K = k I when k_n == k_t, else k_n along the triangle's outward normal, k_t across it */
} pbng_binding_options;

/* Serial (one process, on the whole mesh): appends the bindings to mesh->weak; *nbound how many. Errors name the
 * problem (d not positive and finite, a negative stiffness). */
PetscErrorCode pbng_mesh_bind_bodies(pbng_mesh *mesh, const pbng_binding_options *o, int64_t *nbound);

#endif
