/* Transfer operators between two levels' free unknowns, for nested or non-nested meshes:
 *   interpolation P (fine x coarse): each free fine node takes the linear interpolation of the coarse
 *     correction in the coarse element containing it (or the nearest one, within the search radius):
 *     P_ia = N_a(X_i), the barycentric coordinate of X_i for coarse vertex a. Prescribed coarse
 *     vertices are left out (their correction is zero), so prescribed nodes get no correction;
 *   injection Q (coarse x fine): each free coarse node takes the fine solution interpolated at its
 *     rest position from the free vertices of the fine element containing it (weights renormalised to
 *     sum to one when a vertex is prescribed, so that a position stays a position).
 * Both are scalar (one weight per node pair) parallel AIJ matrices with the levels' DOF-map
 * numbering (rows and columns distributed as each level's partition); the solver applies them to the
 * three coordinates with MatCreateMAIJ. */
#ifndef PBNG_PARALLEL_TRANSFER_H
#define PBNG_PARALLEL_TRANSFER_H

#include <petscmat.h>
#include "parallel/dofs.h"

/* Default search radius, in units of an element's longest edge: how far outside the other mesh a
 * node may lie (curved boundaries of non-nested meshes) and still be matched. */
#define PBNG_TRANSFER_RADIUS 0.5

/* Collective. A fine free node farther than radius x the nearest coarse element's longest edge from
 * the coarse mesh (the coarse mesh does not cover it), or a coarse free node that lies among
 * prescribed fine nodes only, is an error naming the levels (fine_name, coarse_name), the node and
 * where it is. */
PetscErrorCode pbng_transfer_create(const pbng_dmesh *fine, const pbng_dof_map *fmap, const char *fine_name, const pbng_dmesh *coarse,
                                    const pbng_dof_map *cmap, const char *coarse_name, double radius, Mat *P, Mat *Q);

#endif
