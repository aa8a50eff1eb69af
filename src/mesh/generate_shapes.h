/* Structured linear-tetrahedron meshes of simple solids: box, ball, solid cylinder, solid torus (the
 * shapes of the objects_dropping scene, paper Sec. 10.2.3; docs/contact.md#scenes).
 *
 * Ball, cylinder and torus are mapped grids: a grid of cells in parameter space, each cell cut into
 * six tetrahedra by the Kuhn split along its main diagonal (the cube's diagonal 0-7, as
 * -tet_split six), and the grid points moved by a map onto the solid. Across a disk or ball the split
 * is mirrored about the grid's centre along those axes, so that every cell's diagonal starts at its
 * corner nearest the centre: every tetrahedron then has that corner, which lies strictly inside the
 * solid, and none has all four corners on the boundary (the map makes the boundary faces of a grid
 * corner or edge nearly coplanar, so such a tetrahedron would be a sliver). Mirrored Kuhn splits meet
 * conformingly on the mirror planes (a face's diagonal depends only on the two axes in its plane).
 * Tetrahedra are oriented positively in parameter space; every map here preserves orientation.
 * Each generator validates its mesh (pbng_mesh_validate). */
#ifndef PBNG_MESH_GENERATE_SHAPES_H
#define PBNG_MESH_GENERATE_SHAPES_H

#include "mesh/mesh.h"

/* A box of sides size[0..2] centred at the origin, `cells` cells along its longest side and
 * max(1, round(cells side / longest)) along the others, five tetrahedra per cell (pbng_generate_box). */
PetscErrorCode pbng_generate_shape_box(const double size[3], int cells, pbng_mesh *mesh);

/* A ball of radius r centred at the origin: the cube [-1,1]^3 of `cells` cells per axis (rounded up
 * to even, at least 2) mapped by u -> r u |u|_inf / |u|_2 (each cube shell |u|_inf = s onto the sphere
 * of radius r s). Its boundary is a polyhedron inscribed in the sphere. */
PetscErrorCode pbng_generate_ball(double radius, int cells, pbng_mesh *mesh);

/* A solid cylinder of radius r and height `height` about the z axis, centred at the origin: the square
 * [-1,1]^2 of `cells` cells per axis (even, at least 2) mapped onto the disk as the ball's cube, extruded
 * in max(1, round(cells height / (2 r))) layers. */
PetscErrorCode pbng_generate_cylinder(double radius, double height, int cells, pbng_mesh *mesh);

/* A solid torus about the y axis, centred at the origin: the disk of radius `minor` (the cylinder's
 * disk map, `cells` cells across, even, at least 2) swept around the circle of radius `major` > minor
 * in max(6, round(2 pi major / h)) segments, h = 2 minor / cells. The last segment joins the first
 * (periodic: no node is repeated at the seam). */
PetscErrorCode pbng_generate_torus(double major, double minor, int cells, pbng_mesh *mesh);

/* Segments of the torus sweep (as pbng_generate_torus makes them). */
int pbng_torus_segments(double major, double minor, int cells);

/* Cells across a disk or ball: `cells` rounded up to even, at least 2. */
int pbng_shape_even_cells(int cells);

#endif
