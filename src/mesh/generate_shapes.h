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
#include "mesh/sheet.h"

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

/* An open cylindrical sheet (issue 20, -scene cylinder_twist): `around` >= 3 vertices on each ring and
 * `along` >= 2 rings, the axis along x from x = 0 to x = length, radius `radius` about the x axis:
 *   X(i, j) = (length j / (along - 1), radius cos(2 pi i / around), radius sin(2 pi i / around)),
 * node i + around j; the grid of pbng_sheet_grid wrapped around (u = the angle, v = the axis), its last
 * column of cells joining the first (no node repeated at the seam), each cell split along the diagonal
 * alternating with the cell parity (i + j) (an even `around` keeps the alternation across the seam).
 * Triangles counter-clockwise seen from outside (their normals point away from the axis). Stencils are
 * built (pbng_sheet_build_stencils: one per interior edge). Errors: too few vertices, a size not positive. */
PetscErrorCode pbng_sheet_cylinder(double radius, double length, int64_t around, int64_t along, pbng_sheet *sheet);

/* A closed spherical shell (issue 20, -scene projectile_sheet): the icosahedron inscribed in the sphere of radius
 * `radius` about `center`, each triangle split `level` >= 0 times into four (edge midpoints pushed onto the
 * sphere): 10 4^level + 2 vertices, 20 4^level triangles, every vertex exactly on the sphere (to round-off),
 * triangles counter-clockwise seen from outside (outward normals), every edge shared by exactly two triangles.
 * Stencils are built (one per edge). Errors: level outside 0..8, a radius not positive. */
PetscErrorCode pbng_sheet_icosphere(double radius, const double center[3], int level, pbng_sheet *sheet);

/* out <- a's vertices and triangles followed by b's (b's corners shifted by a's vertex count), stencils rebuilt:
 * two bodies as one sheet (their triangles share no vertex). out must not be a or b. */
PetscErrorCode pbng_sheet_merge(const pbng_sheet *a, const pbng_sheet *b, pbng_sheet *out);

/* One mesh of linear tetrahedra from n separate ones (each its own body), parts[i]'s nodes at [first[i], first[i + 1])
 * (first: n + 1 entries, filled here); the parts are destroyed. `what` names the mesh in the error when it would exceed
 * 2^31 - 1 nodes or tetrahedra (the objects of objects_dropping, the muscles' arm). */
PetscErrorCode pbng_mesh_join_bodies(int n, pbng_mesh *parts, const char *what, int64_t *first, pbng_mesh *mesh);

/* Cells across a disk or ball: `cells` rounded up to even, at least 2. */
int pbng_shape_even_cells(int cells);

#endif
