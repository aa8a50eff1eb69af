/* Dirichlet boundary conditions (Eq. 2, 12): named node sets chosen by an axis-aligned box or a mesh
 * node set (Gmsh physical group), each with a prescribed motion
 *   x_D(X, t) = p + Rot(axis, rate t') diag(1 + s t') (X - p) + v t',  t' = min(t, until) (until > 0) or t
 * (scaling rate s about the point p, rotation rate in rad per unit time about the axis through p,
 * translation velocity v; a motion with `until` stops then and holds the set where it is). A set with
 * all rates zero is clamped at rest. */
#ifndef PBNG_MESH_BOUNDARY_H
#define PBNG_MESH_BOUNDARY_H

#include "mesh/mesh.h"

#define PBNG_MAX_BC 16

typedef struct {
  double velocity[3];
  double rotation_rate; /* rad per unit time */
  double axis[3];       /* unit rotation axis */
  double center[3];     /* point p of rotation and scaling */
  double scale_rate[3]; /* per-axis stretch (> 0) or squeeze (< 0) rate */
  double until;         /* > 0: the motion stops at this time and the set stays there; 0: it goes on */
} pbng_motion;

typedef struct {
  char name[64];
  int by_box;           /* 1: nodes inside box (inclusive, with a small tolerance); 0: node set `group` */
  double box[6];        /* x0 y0 z0 x1 y1 z1 */
  char group[64];
  pbng_motion motion;
  double release;       /* > 0: a released set (a "handle"): its nodes stay free and a stiff spring ties them to
                           x_D(X, t) while t <= release, then lets go (problem/problem.h); 0: held for the whole run */
} pbng_bc;

typedef struct {
  int count;
  pbng_bc bc[PBNG_MAX_BC];
} pbng_bc_list;

/* Prescribed position of a rest point X at time t. */
void pbng_motion_apply(const pbng_motion *m, const double X[3], double t, double x[3]);

/* Adds a clamp (zero motion) by box. */
PetscErrorCode pbng_bc_add_box(pbng_bc_list *list, const char *name, const double box[6], const pbng_motion *motion);
PetscErrorCode pbng_bc_add_group(pbng_bc_list *list, const char *name, const char *group, const pbng_motion *motion);

/* Makes set b (by box) a released set: free nodes driven by a spring until time release > 0. */
PetscErrorCode pbng_bc_set_release(pbng_bc_list *list, int b, double release);

/* For every node of mesh (the whole mesh or one rank's piece of it), the index of the boundary
 * condition that prescribes it, or -1 (free: released sets' nodes too, though counted in selected);
 * a node in several sets takes the last one. Boxes are
 * matched with a tolerance of 1e-9 extent (pass the whole mesh's extent, so that every rank decides
 * alike). selected[b] counts the nodes of set b (the caller checks that no set is empty overall).
 * Error: an unknown group. */
PetscErrorCode pbng_bc_assign(const pbng_bc_list *list, const pbng_mesh *mesh, double extent, int8_t *node_bc,
                              int64_t selected[PBNG_MAX_BC]);

/* Whether X is in box (x0 y0 z0 x1 y1 z1, inclusive) within tol (boundary boxes use 1e-9 extent, so that
 * the faces of a grid are caught). */
int pbng_box_contains(const double box[6], const double X[3], double tol);

/* The largest extent of the mesh's bounding box along an axis. */
double pbng_mesh_extent(const pbng_mesh *mesh);

#endif
