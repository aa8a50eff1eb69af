/* GPBD: the joint projection of the tetrahedra still inverted after the passes (issue 43 item 2;
 * docs/gpbd_solver.md#inversion): every rank gathers the same cluster (the inverted tetrahedra's nodes and every
 * tetrahedron touching them, in global order), projects it by core/gpbd_untangle.h and writes the moved nodes into its
 * own copies (owned and ghost): bitwise the same result on every partition and thread count. */
#ifndef PBNG_METHODS_GPBD_GPBD_CLUSTER_H
#define PBNG_METHODS_GPBD_GPBD_CLUSTER_H

#include <petscsys.h>
#include "core/gpbd_tet4.h"
#include "core/gpbd_untangle.h"
#include "parallel/dmesh.h"

/* The tetrahedra of the rank: rows [0, n) of tet (local element numbers; a row with rest.volume 0 is not a tetrahedron),
 * those [0, dm->nowned_elems) counted as its own. */
typedef struct {
  const pbng_dmesh *dm;
  const pbng_gpbd_tet4_element *tet;
  int32_t n;
  const double *inv_mass; /* [nlocal] */
} pbng_gpbd_cluster_mesh;

/* Projects the inverted or flat tetrahedra (det F <= 0 at x) of all ranks jointly (pbng_gpbd_untangle), when there are
 * 1 to max_inverted of them; x's local copies of the moved nodes updated on every rank. *inverted: how many there were
 * (all ranks), *left: how many tetrahedra of the gathered cluster are inverted after it (= *inverted when not run).
 * Collective. */
PetscErrorCode pbng_gpbd_project_clusters(const pbng_gpbd_cluster_mesh *m, const pbng_gpbd_untangle_options *o, long long max_inverted, double *x,
                                          long long *inverted, long long *left);

#endif
