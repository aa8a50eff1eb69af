/* The mesh of the objects_dropping scene (paper Sec. 10.2.3, Fig. 12: 40 simple shapes dropped into a
 * glass box; docs/contact.md#scenes): boxes, balls, cylinders and tori (generate_shapes.h) of
 * deterministic sizes and orientations at the points of a jittered lattice, each a separate body
 * (a connected component of the mesh), none touching another or the container at rest. */
#ifndef PBNG_MESH_GENERATE_OBJECTS_H
#define PBNG_MESH_GENERATE_OBJECTS_H

#include "mesh/mesh.h"

typedef enum { PBNG_SOLID_BOX, PBNG_SOLID_BALL, PBNG_SOLID_CYLINDER, PBNG_SOLID_TORUS, PBNG_SOLID_KIND_COUNT } pbng_solid_kind;

/* One object: its shape in its own frame (centred at the origin) and where it is put, x = R X + c. */
typedef struct {
  pbng_solid_kind kind;
  double size[3];     /* box: sides; ball: radius; cylinder: radius, height (axis z); torus: major, minor radius (axis y) */
  double rotation[9]; /* R, row-major, a proper rotation */
  double center[3];   /* c */
} pbng_solid;

#define PBNG_OBJECTS_MAX 160       /* -objects: 1..160 (ten layers of the lattice) */
#define PBNG_OBJECTS_SPACING 1.3   /* the lattice's spacing: every object fits in a ball of radius 0.55 */
#define PBNG_OBJECTS_PER_ROW 4     /* a layer is 4 x 4 objects (x, z); layers go up along y */

/* Object i of the scene (0 <= i < PBNG_OBJECTS_MAX): kind (i + i / 4) mod 4 (box, ball, cylinder, torus:
 * each row of the lattice shifted by one, so that rows and columns mix the kinds), its
 * sizes, rotation and the jitter of its lattice point drawn from a hash of i (the same on every
 * machine); the lattice point of i is (i mod 4, i / 16, (i / 4) mod 4) times the spacing, plus half a
 * spacing (40 objects: two full layers and half a third). The layout of the first n objects does not
 * depend on n. */
void pbng_objects_solid(int i, pbng_solid *s);

/* The glass box: the container [0, 4a] x [0, 11a] x [0, 4a] (a the spacing), as lx,ly,lz,hx,hy,hz
 * (an obstacle "container:..."). Its lid is above the highest of the ten lattice layers. */
void pbng_objects_container(double box[6]);

/* The cell size of the objects at -scale s: 0.2 / s. */
double pbng_objects_cell_size(double scale);

/* Object s's mesh at cell size h (cells along its size: size / h rounded, at least 1, 2 across a disk
 * or ball), put in place. */
PetscErrorCode pbng_generate_solid(const pbng_solid *s, double h, pbng_mesh *mesh);

/* The first n objects at -scale `scale` in one mesh of linear tetrahedra, object by object; node sets
 * "boxes", "balls", "cylinders", "tori" name the nodes of each kind. */
PetscErrorCode pbng_generate_objects(int n, double scale, pbng_mesh *mesh);

#endif
