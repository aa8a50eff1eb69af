/* Element kinds: one description per kind (nodes in Gmsh's order with their reference coordinates,
 * faces, Gmsh type id, XDMF cell type and node order, quadrature rule), shape functions and their
 * reference gradients at any point, the reference data tabulated at the quadrature points (shared
 * by every element of a kind), and per element the seed's Alg. 3 precomputation: V_q = w_q |det J_q|
 * and the physical shape gradients at each quadrature point. The linear tetrahedron keeps its own
 * specialised helpers below (constant dN/dX per element, Eq. 15), which the PBNG fast path uses.
 * Reference elements, orderings and rules: docs/high_order.md. */
#ifndef PBNG_CORE_ELEMENT_H
#define PBNG_CORE_ELEMENT_H

#include <stddef.h>
#include <stdint.h>
#include "core/mat3.h" /* PBNG_HOT_INLINE */

typedef enum {
  PBNG_ELEMENT_TET4 = 0, /* P1 tetrahedron, Gmsh type 4 */
  PBNG_ELEMENT_TET10,    /* P2 tetrahedron, Gmsh type 11 */
  PBNG_ELEMENT_TET20,    /* P3 tetrahedron, Gmsh type 29 */
  PBNG_ELEMENT_HEX8,     /* Q1 hexahedron, Gmsh type 5 */
  PBNG_ELEMENT_HEX27,    /* Q2 hexahedron, Gmsh type 12 */
  PBNG_ELEMENT_PRISM6,   /* linear prism (wedge), Gmsh type 6 */
  PBNG_ELEMENT_PYRAMID5, /* linear pyramid, Gmsh type 7 */
  PBNG_ELEMENT_TRI3,     /* sheet kinds (issue 18, docs/cloth.md): membrane triangle in 3-D, Gmsh type 2 */
  PBNG_ELEMENT_BEND4,    /* bending stencil: the two triangles at an interior edge (built, never read) */
  PBNG_ELEMENT_CLOTH6,   /* the GPBD seed's six-dimensional cloth stencil: a triangle and the vertex across each edge
                            (built from the triangles with -sheet_model cloth6, never read; core/cloth6.h) */
  PBNG_ELEMENT_KIND_COUNT
} pbng_element_kind;

/* Volume shapes first; the sheet kinds' shapes (a triangle in 3-D, a bending stencil) after them. */
typedef enum {
  PBNG_SHAPE_TETRAHEDRON,
  PBNG_SHAPE_HEXAHEDRON,
  PBNG_SHAPE_PRISM,
  PBNG_SHAPE_PYRAMID,
  PBNG_SHAPE_TRIANGLE,
  PBNG_SHAPE_STENCIL
} pbng_reference_shape;

#define PBNG_MAX_ELEMENT_NODES 27 /* the most nodes of any element kind (hex27) */
#define PBNG_MAX_QUAD_POINTS 27   /* the most quadrature points of any kind's rule (hex27) */
#define PBNG_MAX_FACES 6
#define PBNG_MAX_FACE_NODES 10    /* tet20's faces: 3 corners, 6 edge nodes, 1 centre */

/* A boundary face: its corners first, ordered so that (c1 - c0) x (c2 - c0) points out of the
 * element, then its other nodes (edge and face nodes, by increasing local index). */
typedef struct {
  int corners, nodes;
  int node[PBNG_MAX_FACE_NODES];
} pbng_element_face;

typedef struct {
  pbng_element_kind kind;
  const char *name;            /* "tet4", "tet10", ... (-element) */
  int nodes;                   /* nodes per element */
  int order;                   /* polynomial order of the shape functions */
  pbng_reference_shape shape;
  const double (*ref_nodes)[3]; /* [nodes]: reference coordinates, in Gmsh's node order */
  double ref_measure;          /* volume of the reference element */
  int gmsh_type;               /* Gmsh element type id */
  const char *xdmf_topology;   /* XDMF TopologyType, NULL where XDMF has none (tet20) */
  const int *xdmf_order;       /* XDMF node k is Gmsh node xdmf_order[k]; NULL: the same order */
  int quad_points, quad_degree; /* the quadrature rule: points, and the polynomial degree it integrates exactly */
  int nfaces;
  const pbng_element_face *faces;
} pbng_element_type;

const pbng_element_type *pbng_element_type_get(pbng_element_kind kind);
/* Whether t is a sheet kind (tri3, bend4, cloth6: terms of thin sheets with their own energies, core/membrane and
 * core/bending, and no volume, quadrature-point Jacobian or faces) rather than a volume element. */
static inline int pbng_element_is_sheet(const pbng_element_type *t) { return t->shape >= PBNG_SHAPE_TRIANGLE; }
/* The sheet kinds as a kind mask (pbng_element_kinds_mask's bits). */
#define PBNG_SHEET_KINDS_MASK ((1u << PBNG_ELEMENT_TRI3) | (1u << PBNG_ELEMENT_BEND4) | (1u << PBNG_ELEMENT_CLOTH6))
/* The kind named `name` ("tet4", ...) or with Gmsh type id `type`; NULL when there is none. */
const pbng_element_type *pbng_element_type_by_name(const char *name);
const pbng_element_type *pbng_element_type_by_gmsh(int type);
/* The linear kind of t's reference shape (tet4, hex8, prism6, pyramid5): its nodes are t's first ones,
 * the corners (Gmsh lists corners first), so that t's corners alone make an element of that kind. */
const pbng_element_type *pbng_element_corner_type(const pbng_element_type *t);

/* Element rows (pbng_mesh, pbng_submesh, pbng_dmesh, partitioned files): every element is a row of
 * `nen` node indices. A mesh of one kind has that kind's type (etype) and nen = its node count. A mesh
 * mixing kinds has etype NULL, each element's kind in kind[e] (pbng_element_kind values), nen the most
 * nodes of its kinds, and an element with fewer nodes ends its row with -1 (docs/architecture.md). */
/* Element e's type: the mesh's kind, or its own when kinds mix. */
static inline const pbng_element_type *pbng_row_type(const pbng_element_type *etype, const uint8_t *kind, int64_t e)
{
  return kind ? pbng_element_type_get((pbng_element_kind)kind[e]) : etype;
}
/* The number of nodes in a row of width nen (its padding of -1 left out). */
static inline int pbng_row_nodes(const int32_t *row, int nen)
{
  while (nen > 0 && row[nen - 1] < 0) --nen;
  return nen;
}
/* The kinds present among n elements, as a bit mask (bit k: kind k). */
unsigned pbng_element_kinds_mask(const pbng_element_type *etype, const uint8_t *kind, int64_t n);
/* Element visits of one sweep over elements counted by kind (counts[PBNG_ELEMENT_KIND_COUNT]): each
 * element once per node (*node_visits) and once per node and quadrature point (*point_visits). */
void pbng_element_kind_visits(const int64_t *counts, double *node_visits, double *point_visits);
/* The id pbng writes for a kind's cells in an XDMF Mixed topology (Tetrahedron 6, Pyramid 7, Wedge 8,
 * Hexahedron 9, Tetrahedron_10 38); -1 where it writes the kind's linear sub-cells instead: tet20 (XDMF
 * has no cubic tetrahedron) and hex27 (XDMF's Hexahedron_27 is 50, but ParaView 5.11's XDMF readers
 * take 24 nodes for it in a Mixed list and read no cells; docs/high_order.md#checked-in-paraview). */
int pbng_element_xdmf_id(const pbng_element_type *t);
/* "hex8", or for several kinds "mixed hex8+prism6+pyramid5" (by kind order), into buf. */
void pbng_element_kinds_label(unsigned mask, char *buf, size_t len);

/* Shape functions N[nodes] and reference gradients dN[nodes][3] (d/dr, d/ds, d/dt) at reference
 * point r. The pyramid's basis is rational; r must not be its apex. */
void pbng_element_shape(const pbng_element_type *t, const double r[3], double *N, double (*dN)[3]);

/* The quadrature rule: point q's reference coordinates and weight (weights sum to ref_measure). */
void pbng_element_quadrature(const pbng_element_type *t, int q, double r[3], double *w);

/* A kind's reference data at its quadrature points, computed once and shared by its elements. */
typedef struct {
  const pbng_element_type *type;
  int nq;
  double r[PBNG_MAX_QUAD_POINTS][3], w[PBNG_MAX_QUAD_POINTS];
  double N[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES];
  double dN[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3];
} pbng_element_reference;

void pbng_element_reference_init(const pbng_element_type *t, pbng_element_reference *ref);

/* Seed Alg. 3 for one element with rest node positions X[nodes][3]: at every quadrature point q,
 * V[q] = w_q |det J_q| and grad[q][a] = J_q^{-T} dN_a/dr (the physical gradient dN_a/dX), with
 * J_q = sum_a X_a (x) dN_a/dr(r_q). *det_min = min_q det J_q. Returns 0, or -1 when det J_q is not
 * positive at some quadrature point (inverted) or below 1e-12 d^3, d the diagonal of the nodes'
 * bounding box (degenerate). */
int pbng_element_precompute(const pbng_element_reference *ref, const double (*X)[3], double *V, double (*grad)[PBNG_MAX_ELEMENT_NODES][3],
                            double *det_min);

/* The Jacobian check of pbng_element_precompute alone (no gradients: what mesh validation needs):
 * the first quadrature point q at which det J_q is not above 1e-12 d^3 (not positive: inverted;
 * positive but that small: degenerate), with *det = det J_q there; -1 (and the last det J_q) when
 * the element is valid. pbng_element_precompute rejects exactly the elements for which this is >= 0. */
int pbng_element_first_invalid_point(const pbng_element_reference *ref, const double (*X)[3], double *det);
/* The sheet kinds' validity check (pbng_element_first_invalid_point for them): each of the element's
 * triangles (tri3: itself; bend4: (0, 1, 2) and (1, 0, 3)) must have twice its area above 1e-12 times its
 * longest edge squared. Returns the first degenerate triangle (0 or 1), *ratio its twice-area / longest
 * edge^2; -1 when valid. */
int pbng_element_sheet_first_degenerate(const pbng_element_type *t, const double (*X)[3], double *ratio);

/* Lumped (diagonal) mass of one element by HRZ (Hinton, Rock and Zienkiewicz 1976): the consistent
 * mass matrix's diagonal M_aa = rho sum_q V_q N_a(r_q)^2, scaled so that the masses sum to the
 * element's mass rho sum_q V_q. Every mass is positive for every kind (row-sum lumping gives zero or
 * negative corner masses for P2/P3 tetrahedra); for linear tetrahedra it is rho V / 4 per node. */
void pbng_element_lumped_mass(const pbng_element_reference *ref, const double *V, double density, double *m);

/* The consistent load weights of one element: w_a = rho sum_q V_q N_a(r_q) = int rho N_a dV (the rules
 * integrate N_a exactly), so that a uniform body force g puts w_a g on node a and the load's potential
 * -sum_a w_a g.x_a is exactly -int rho g.x dV of the interpolated positions. They sum to the element's
 * mass; P2 and P3 corner weights are negative (P2: -rho V / 20). For linear tetrahedra w_a = rho V / 4,
 * the lumped mass; for the other kinds they differ from it (HRZ), and using the lumped masses as the
 * load costs a static solution O(h^2) accuracy (P2 and P3 converge at h^2 instead of h^3, h^4). */
void pbng_element_load_weights(const pbng_element_reference *ref, const double *V, double density, double *w);

/* Linear sub-cells tiling an element of order p > 1 on its own nodes, for visualisation where XDMF
 * or ParaView has no cell for the kind (the output's choice, docs/output.md): for the tetrahedra
 * the Freudenthal subdivision of the reference tetrahedron on the order-p lattice of its nodes (p^3
 * tetrahedra: 8 for tet10, 27 for tet20), each with positive volume; for hex27 the 8 linear
 * hexahedra on the octants of [-1,1]^3, octant (i, j, k) (0: the half towards -1, 1: towards +1)
 * the sub-cell i + 2 j + 4 k, its corners in the hexahedron's order (Gmsh's and VTK's) on the
 * octant's axes, so each has its parent's orientation. cells[k][0 .. (*cell)->nodes - 1] are local
 * node indices, *cell the sub-cells' kind (tet4 or hex8). Returns the number of sub-cells, 0 for
 * the linear kinds (*cell is then t); 1 for the cloth stencil cloth6 (its triangle, a tri3 cell). */
#define PBNG_MAX_SUBCELLS 27
#define PBNG_MAX_SUBCELL_NODES 8
int pbng_element_linear_subcells(const pbng_element_type *t, const pbng_element_type **cell, int (*cells)[PBNG_MAX_SUBCELL_NODES]);

/* Linear tetrahedron rest shape: Dm = [X1-X0 | X2-X0 | X3-X0] (columns). Writes B = Dm^{-1} (row-major),
 * so that F = Ds B and dN_j/dX = row j-1 of B for j = 1..3, dN_0/dX = -(sum of the rows).
 * Returns the signed rest volume det(Dm)/6. */
double pbng_tet_rest_shape(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                           double B[9]);

/* Signed volume of a tetrahedron (positive when X1-X0, X2-X0, X3-X0 is right-handed). */
double pbng_tet_signed_volume(const double X0[3], const double X1[3], const double X2[3], const double X3[3]);

/* dN_a/dX of node a (0..3) from B (see pbng_tet_rest_shape). */
PBNG_HOT_INLINE void pbng_tet_shape_gradient(const double B[9], int a, double g[3])
{
  if (a == 0) {
    for (int k = 0; k < 3; ++k) g[k] = -(B[k] + B[3 + k] + B[6 + k]);
  } else {
    for (int k = 0; k < 3; ++k) g[k] = B[3 * (a - 1) + k];
  }
}

/* F = Ds B with Ds = [x1-x0 | x2-x0 | x3-x0]. */
PBNG_HOT_INLINE void pbng_tet_deformation_gradient(const double *x0, const double *x1, const double *x2,
                                                 const double *x3, const double B[9], double F[9])
{
  for (int r = 0; r < 3; ++r) {
    const double d1 = x1[r] - x0[r], d2 = x2[r] - x0[r], d3 = x3[r] - x0[r];
    F[3 * r + 0] = d1 * B[0] + d2 * B[3] + d3 * B[6];
    F[3 * r + 1] = d1 * B[1] + d2 * B[4] + d3 * B[7];
    F[3 * r + 2] = d1 * B[2] + d2 * B[5] + d3 * B[8];
  }
}

#endif
