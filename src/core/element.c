/* The element kinds' table: reference nodes in Gmsh's order, faces, Gmsh and XDMF identities and the
 * quadrature rules' sizes (docs/high_order.md). Shapes: element_shape.c; rules: element_quadrature.c. */
#include "core/element.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/mat3.h"

/* Reference coordinates, Gmsh's node ordering. Tetrahedra: vertices (0,0,0), (1,0,0), (0,1,0),
 * (0,0,1); edges (0,1), (1,2), (2,0), (3,0), (3,2), (3,1), their nodes from the first vertex of the
 * pair; tet20's face centres in the face order (0,2,1), (0,1,3), (0,3,2), (3,1,2). Hexahedra:
 * [-1,1]^3, edges (0,1), (0,3), (0,4), (1,2), (1,5), (2,3), (2,6), (3,7), (4,5), (4,7), (5,6), (6,7),
 * faces z=-1, y=-1, x=-1, x=1, y=1, z=1, then the centre. Prism: triangle (0,0), (1,0), (0,1) times
 * z in [-1,1]. Pyramid: base [-1,1]^2 at z = 0, apex (0,0,1). */
static const double tet4_nodes[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
static const double tet10_nodes[10][3] = {{0, 0, 0},   {1, 0, 0},     {0, 1, 0},   {0, 0, 1},     {0.5, 0, 0},
                                          {0.5, 0.5, 0}, {0, 0.5, 0}, {0, 0, 0.5}, {0, 0.5, 0.5}, {0.5, 0, 0.5}};
static const double tet20_nodes[20][3] = {
  {0, 0, 0},           {1, 0, 0},           {0, 1, 0},           {0, 0, 1},           {1.0 / 3, 0, 0},
  {2.0 / 3, 0, 0},     {2.0 / 3, 1.0 / 3, 0}, {1.0 / 3, 2.0 / 3, 0}, {0, 2.0 / 3, 0},     {0, 1.0 / 3, 0},
  {0, 0, 2.0 / 3},     {0, 0, 1.0 / 3},     {0, 1.0 / 3, 2.0 / 3}, {0, 2.0 / 3, 1.0 / 3}, {1.0 / 3, 0, 2.0 / 3},
  {2.0 / 3, 0, 1.0 / 3}, {1.0 / 3, 1.0 / 3, 0}, {1.0 / 3, 0, 1.0 / 3}, {0, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3}};
static const double hex8_nodes[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}, {-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1}};
static const double hex27_nodes[27][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}, {-1, -1, 1}, {1, -1, 1}, {1, 1, 1},
                                          {-1, 1, 1},   {0, -1, -1}, {-1, 0, -1}, {-1, -1, 0}, {1, 0, -1},  {1, -1, 0}, {0, 1, -1},
                                          {1, 1, 0},    {-1, 1, 0},  {0, -1, 1},  {-1, 0, 1},  {1, 0, 1},   {0, 1, 1},  {0, 0, -1},
                                          {0, -1, 0},   {-1, 0, 0},  {1, 0, 0},   {0, 1, 0},   {0, 0, 1},   {0, 0, 0}};
static const double prism6_nodes[6][3] = {{0, 0, -1}, {1, 0, -1}, {0, 1, -1}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}};
static const double pyramid5_nodes[5][3] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {0, 0, 1}};
/* Sheet kinds: the triangle (0,0), (1,0), (0,1) in the plane t = 0; a stencil's corners x0 x1 (the shared
 * edge), x2 and x3 (the two opposite corners) drawn as the unit square's (its nodes carry no shape
 * functions: the bending energy is written on the positions directly, core/bending.h). */
static const double tri3_nodes[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
static const double bend4_nodes[4][3] = {{0, 0, 0}, {1, 1, 0}, {1, 0, 0}, {0, 1, 0}};
/* the triangle's corners, then the vertex across edge i (opposite corner i) */
static const double cloth6_nodes[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {-1, 1, 0}, {1, -1, 0}};

/* Faces: corners outward first, then the face's other nodes. */
static const pbng_element_face tet4_faces[4] = {{3, 3, {0, 2, 1}}, {3, 3, {0, 1, 3}}, {3, 3, {0, 3, 2}}, {3, 3, {1, 2, 3}}};
static const pbng_element_face tet10_faces[4] = {
  {3, 6, {0, 2, 1, 4, 5, 6}}, {3, 6, {0, 1, 3, 4, 7, 9}}, {3, 6, {0, 3, 2, 6, 7, 8}}, {3, 6, {1, 2, 3, 5, 8, 9}}};
static const pbng_element_face tet20_faces[4] = {{3, 10, {0, 2, 1, 4, 5, 6, 7, 8, 9, 16}},
                                                 {3, 10, {0, 1, 3, 4, 5, 10, 11, 14, 15, 17}},
                                                 {3, 10, {0, 3, 2, 8, 9, 10, 11, 12, 13, 18}},
                                                 {3, 10, {1, 2, 3, 6, 7, 12, 13, 14, 15, 19}}};
static const pbng_element_face hex8_faces[6] = {{4, 4, {0, 3, 2, 1}}, {4, 4, {0, 1, 5, 4}}, {4, 4, {0, 4, 7, 3}},
                                                {4, 4, {1, 2, 6, 5}}, {4, 4, {2, 3, 7, 6}}, {4, 4, {4, 5, 6, 7}}};
static const pbng_element_face hex27_faces[6] = {
  {4, 9, {0, 3, 2, 1, 8, 9, 11, 13, 20}},   {4, 9, {0, 1, 5, 4, 8, 10, 12, 16, 21}},  {4, 9, {0, 4, 7, 3, 9, 10, 15, 17, 22}},
  {4, 9, {1, 2, 6, 5, 11, 12, 14, 18, 23}}, {4, 9, {2, 3, 7, 6, 13, 14, 15, 19, 24}}, {4, 9, {4, 5, 6, 7, 16, 17, 18, 19, 25}}};
static const pbng_element_face prism6_faces[5] = {{3, 3, {0, 2, 1}}, {3, 3, {3, 4, 5}}, {4, 4, {0, 1, 4, 3}}, {4, 4, {1, 2, 5, 4}},
                                                  {4, 4, {0, 3, 5, 2}}};
static const pbng_element_face pyramid5_faces[5] = {{4, 4, {0, 3, 2, 1}}, {3, 3, {0, 1, 4}}, {3, 3, {1, 2, 4}}, {3, 3, {2, 3, 4}},
                                                    {3, 3, {3, 0, 4}}};

/* XDMF (VTK) node orders where they differ from Gmsh's: the quadratic tetrahedron's last two edges
 * (VTK: (1,3) then (2,3)); the triquadratic hexahedron's edges ((0,1), (1,2), (2,3), (3,0), the top
 * four, then the verticals) and faces (x=-1, x=1, y=-1, y=1, z=-1, z=1). */
static const int tet10_xdmf[10] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8};
/* VTK's wedge lists its base (0,1,2) with the normal pointing away from the top (3,4,5): the
 * reverse of Gmsh's counter-clockwise triangles (as meshio maps them). */
static const int prism6_xdmf[6] = {0, 2, 1, 3, 5, 4};
static const int hex27_xdmf[27] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15, 22, 23, 21, 24, 20, 25, 26};

static const pbng_element_type element_types[PBNG_ELEMENT_KIND_COUNT] = {
  {PBNG_ELEMENT_TET4, "tet4", 4, 1, PBNG_SHAPE_TETRAHEDRON, tet4_nodes, 1.0 / 6, 4, "Tetrahedron", NULL, 1, 1, 4, tet4_faces},
  {PBNG_ELEMENT_TET10, "tet10", 10, 2, PBNG_SHAPE_TETRAHEDRON, tet10_nodes, 1.0 / 6, 11, "Tetrahedron_10", tet10_xdmf, 4, 2, 4, tet10_faces},
  {PBNG_ELEMENT_TET20, "tet20", 20, 3, PBNG_SHAPE_TETRAHEDRON, tet20_nodes, 1.0 / 6, 29, NULL, NULL, 14, 5, 4, tet20_faces},
  {PBNG_ELEMENT_HEX8, "hex8", 8, 1, PBNG_SHAPE_HEXAHEDRON, hex8_nodes, 8.0, 5, "Hexahedron", NULL, 8, 3, 6, hex8_faces},
  {PBNG_ELEMENT_HEX27, "hex27", 27, 2, PBNG_SHAPE_HEXAHEDRON, hex27_nodes, 8.0, 12, "Hexahedron_27", hex27_xdmf, 27, 5, 6, hex27_faces},
  {PBNG_ELEMENT_PRISM6, "prism6", 6, 1, PBNG_SHAPE_PRISM, prism6_nodes, 1.0, 6, "Wedge", prism6_xdmf, 6, 2, 5, prism6_faces},
  {PBNG_ELEMENT_PYRAMID5, "pyramid5", 5, 1, PBNG_SHAPE_PYRAMID, pyramid5_nodes, 4.0 / 3, 7, "Pyramid", NULL, 12, 3, 5, pyramid5_faces},
  /* sheet kinds: no faces (a sheet's two sides are not a volume's boundary); the stencil has no Gmsh type
   * (-1: built from the triangles, pbng_mesh_add_bending_stencils), no XDMF cell and no quadrature */
  {PBNG_ELEMENT_TRI3, "tri3", 3, 1, PBNG_SHAPE_TRIANGLE, tri3_nodes, 0.5, 2, "Triangle", NULL, 1, 1, 0, NULL},
  {PBNG_ELEMENT_BEND4, "bend4", 4, 1, PBNG_SHAPE_STENCIL, bend4_nodes, 0.0, -1, NULL, NULL, 0, 0, 0, NULL},
  /* the six-dimensional cloth stencil: no Gmsh type (-2: built from the triangles, pbng_mesh_cloth_stencils), drawn
   * as its triangle (pbng_element_linear_subcells) */
  {PBNG_ELEMENT_CLOTH6, "cloth6", 6, 1, PBNG_SHAPE_STENCIL, cloth6_nodes, 0.0, -2, NULL, NULL, 0, 0, 0, NULL},
};

const pbng_element_type *pbng_element_type_get(pbng_element_kind kind)
{
  if (kind < 0 || kind >= PBNG_ELEMENT_KIND_COUNT) return 0;
  return &element_types[kind];
}

const pbng_element_type *pbng_element_type_by_name(const char *name)
{
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k)
    if (!strcmp(name, element_types[k].name)) return &element_types[k];
  return 0;
}

const pbng_element_type *pbng_element_type_by_gmsh(int type)
{
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k)
    if (element_types[k].gmsh_type == type) return &element_types[k];
  return 0;
}

const pbng_element_type *pbng_element_corner_type(const pbng_element_type *t)
{
  static const pbng_element_kind linear[] = {[PBNG_SHAPE_TETRAHEDRON] = PBNG_ELEMENT_TET4, [PBNG_SHAPE_HEXAHEDRON] = PBNG_ELEMENT_HEX8,
                                             [PBNG_SHAPE_PRISM] = PBNG_ELEMENT_PRISM6, [PBNG_SHAPE_PYRAMID] = PBNG_ELEMENT_PYRAMID5,
                                             [PBNG_SHAPE_TRIANGLE] = PBNG_ELEMENT_TRI3, [PBNG_SHAPE_STENCIL] = PBNG_ELEMENT_BEND4};
  return &element_types[linear[t->shape]];
}

unsigned pbng_element_kinds_mask(const pbng_element_type *etype, const uint8_t *kind, int64_t n)
{
  unsigned mask = 0;
  if (!kind) return etype ? 1u << etype->kind : 0u;
  for (int64_t e = 0; e < n; ++e) mask |= 1u << kind[e];
  return mask;
}

void pbng_element_kind_visits(const int64_t *counts, double *node_visits, double *point_visits)
{
  *node_visits = *point_visits = 0.0;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) {
    *node_visits += (double)counts[k] * element_types[k].nodes;
    *point_visits += (double)counts[k] * element_types[k].nodes * element_types[k].quad_points;
  }
}

int pbng_element_xdmf_id(const pbng_element_type *t)
{
  static const int id[PBNG_ELEMENT_KIND_COUNT] = {[PBNG_ELEMENT_TET4] = 6,  [PBNG_ELEMENT_TET10] = 38,  [PBNG_ELEMENT_TET20] = -1,
                                                  [PBNG_ELEMENT_HEX8] = 9,  [PBNG_ELEMENT_HEX27] = -1,  [PBNG_ELEMENT_PRISM6] = 8,
                                                  [PBNG_ELEMENT_PYRAMID5] = 7, [PBNG_ELEMENT_TRI3] = 4,   [PBNG_ELEMENT_BEND4] = -1,
                                                  [PBNG_ELEMENT_CLOTH6] = -1};
  return id[t->kind];
}

void pbng_element_kinds_label(unsigned mask, char *buf, size_t len)
{
  const int several = (mask & (mask - 1)) != 0;
  size_t used = 0;
  if (len) buf[0] = 0;
  if (several) used = (size_t)snprintf(buf, len, "mixed ");
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT && used < len; ++k)
    if (mask & (1u << k)) used += (size_t)snprintf(buf + used, len - used, "%s%s", used > (several ? 6u : 0u) ? "+" : "", element_types[k].name);
}

void pbng_element_reference_init(const pbng_element_type *t, pbng_element_reference *ref)
{
  memset(ref, 0, sizeof(*ref));
  ref->type = t;
  ref->nq = t->quad_points;
  for (int q = 0; q < t->quad_points; ++q) {
    pbng_element_quadrature(t, q, ref->r[q], &ref->w[q]);
    pbng_element_shape(t, ref->r[q], ref->N[q], ref->dN[q]);
  }
}

/* The diagonal of the nodes' bounding box: the element's length scale. */
static double bounding_diagonal(const double (*X)[3], int n)
{
  double lo[3] = {X[0][0], X[0][1], X[0][2]}, hi[3] = {X[0][0], X[0][1], X[0][2]}, d2 = 0;
  for (int a = 1; a < n; ++a)
    for (int k = 0; k < 3; ++k) lo[k] = X[a][k] < lo[k] ? X[a][k] : lo[k], hi[k] = X[a][k] > hi[k] ? X[a][k] : hi[k];
  for (int k = 0; k < 3; ++k) d2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
  return d2 > 0 ? sqrt(d2) : 0.0;
}

/* J_q = sum_a X_a (x) dN_a/dr(r_q) inverted into Jinv; returns det J_q. */
static double point_jacobian(const pbng_element_reference *ref, const double (*X)[3], int q, double Jinv[9])
{
  double J[9] = {0};
  for (int a = 0; a < ref->type->nodes; ++a) /* J_ij = sum_a X_a,i dN_a/dr_j */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) J[3 * i + j] += X[a][i] * ref->dN[q][a][j];
  return mat3_inverse(J, Jinv);
}

/* The one acceptance rule for det J_q (precompute and validation share it): positive and above
 * 1e-12 d^3, d the element's bounding-box diagonal, so a flat element is caught at any scale. */
static int jacobian_acceptable(double det, double d)
{
  return det > 1e-12 * d * d * d;
}

int pbng_element_precompute(const pbng_element_reference *ref, const double (*X)[3], double *V, double (*grad)[PBNG_MAX_ELEMENT_NODES][3],
                            double *det_min)
{
  const int n = ref->type->nodes;
  const double d = bounding_diagonal(X, n);
  int bad = 0;
  *det_min = INFINITY;
  for (int q = 0; q < ref->nq; ++q) {
    double Jinv[9];
    const double det = point_jacobian(ref, X, q, Jinv);
    *det_min = det < *det_min ? det : *det_min;
    if (!jacobian_acceptable(det, d)) bad = 1;
    V[q] = ref->w[q] * (det < 0 ? -det : det);
    for (int a = 0; a < n; ++a) /* grad_i = sum_j Jinv_ji dN/dr_j (J^{-T}) */
      for (int i = 0; i < 3; ++i)
        grad[q][a][i] = Jinv[i] * ref->dN[q][a][0] + Jinv[3 + i] * ref->dN[q][a][1] + Jinv[6 + i] * ref->dN[q][a][2];
  }
  return bad ? -1 : 0;
}

/* Twice the area of triangle (A, B, C) over its longest edge squared (0 for coincident corners). */
static double triangle_shape_ratio(const double A[3], const double B[3], const double C[3])
{
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) u[k] = B[k] - A[k], v[k] = C[k] - A[k], w[k] = C[k] - B[k];
  const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  const double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const double ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  const double longest = fmax(uu, fmax(vv, ww));
  return longest > 0 ? sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) / longest : 0.0;
}

int pbng_element_sheet_first_degenerate(const pbng_element_type *t, const double (*X)[3], double *ratio)
{
  static const int tri[2][3] = {{0, 1, 2}, {1, 0, 3}};
  const int n = t->shape == PBNG_SHAPE_STENCIL ? 2 : 1;
  for (int k = 0; k < n; ++k) {
    *ratio = triangle_shape_ratio(X[tri[k][0]], X[tri[k][1]], X[tri[k][2]]);
    if (!(*ratio > 1e-12)) return k;
  }
  return -1;
}

int pbng_element_first_invalid_point(const pbng_element_reference *ref, const double (*X)[3], double *det)
{
  if (pbng_element_is_sheet(ref->type)) return pbng_element_sheet_first_degenerate(ref->type, X, det);
  const double d = bounding_diagonal(X, ref->type->nodes);
  for (int q = 0; q < ref->nq; ++q) {
    double Jinv[9];
    *det = point_jacobian(ref, X, q, Jinv);
    if (!jacobian_acceptable(*det, d)) return q;
  }
  return -1;
}

void pbng_element_lumped_mass(const pbng_element_reference *ref, const double *V, double density, double *m)
{
  const int n = ref->type->nodes;
  double total = 0, diagonal = 0;
  for (int a = 0; a < n; ++a) m[a] = 0;
  for (int q = 0; q < ref->nq; ++q) {
    total += density * V[q];
    for (int a = 0; a < n; ++a) m[a] += density * V[q] * ref->N[q][a] * ref->N[q][a];
  }
  for (int a = 0; a < n; ++a) diagonal += m[a];
  for (int a = 0; a < n; ++a) m[a] *= total / diagonal;
}

void pbng_element_load_weights(const pbng_element_reference *ref, const double *V, double density, double *w)
{
  const int n = ref->type->nodes;
  for (int a = 0; a < n; ++a) w[a] = 0;
  for (int q = 0; q < ref->nq; ++q)
    for (int a = 0; a < n; ++a) w[a] += density * V[q] * ref->N[q][a];
}

static void tet_edge_matrix(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                            double D[9])
{
  for (int r = 0; r < 3; ++r) {
    D[3 * r + 0] = X1[r] - X0[r];
    D[3 * r + 1] = X2[r] - X0[r];
    D[3 * r + 2] = X3[r] - X0[r];
  }
}

double pbng_tet_signed_volume(const double X0[3], const double X1[3], const double X2[3], const double X3[3])
{
  double D[9];
  tet_edge_matrix(X0, X1, X2, X3, D);
  return mat3_det(D) / 6.0;
}

double pbng_tet_rest_shape(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                           double B[9])
{
  double D[9];
  tet_edge_matrix(X0, X1, X2, X3, D);
  return mat3_inverse(D, B) / 6.0;
}

/* Lattice coordinates (u, v, w) = p (r + s + t, s + t, t) of a tetrahedron's reference node: the
 * reference tetrahedron becomes the Kuhn simplex 0 <= w <= v <= u <= p, whose Freudenthal subdivision
 * is the set of unit-cube Kuhn simplices inside it. */
static void kuhn_lattice(const double r[3], int p, int L[3])
{
  L[0] = (int)lround(p * (r[0] + r[1] + r[2]));
  L[1] = (int)lround(p * (r[1] + r[2]));
  L[2] = (int)lround(p * r[2]);
}

/* The tetrahedra's sub-cells: the Freudenthal subdivision (pbng_element_linear_subcells). */
static int tetrahedron_subcells(const pbng_element_type *t, int (*cells)[PBNG_MAX_SUBCELL_NODES])
{
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int node_at[4][4][4], n = 0;
  const int p = t->order;

  for (int i = 0; i < 64; ++i) (&node_at[0][0][0])[i] = -1;
  for (int a = 0; a < t->nodes; ++a) {
    int L[3];
    kuhn_lattice(t->ref_nodes[a], p, L);
    node_at[L[0]][L[1]][L[2]] = a;
  }
  for (int c = 0; c < p * p * p; ++c) /* unit cubes with lower corner (c0, c1, c2) */
    for (int k = 0; k < 6; ++k) {
      int L[3] = {c % p, (c / p) % p, c / (p * p)}, v[4], inside = 1;
      for (int j = 0; j < 4; ++j) {
        if (j > 0) ++L[perm[k][j - 1]];
        inside &= L[2] <= L[1] && L[1] <= L[0] && L[0] <= p;
        v[j] = inside ? node_at[L[0]][L[1]][L[2]] : -1;
        inside &= v[j] >= 0;
      }
      if (!inside) continue;
      if (pbng_tet_signed_volume(t->ref_nodes[v[0]], t->ref_nodes[v[1]], t->ref_nodes[v[2]], t->ref_nodes[v[3]]) < 0) {
        const int tmp = v[2];
        v[2] = v[3], v[3] = tmp;
      }
      for (int j = 0; j < 4; ++j) cells[n][j] = v[j];
      ++n;
    }
  return n;
}

/* The local node of t at reference point r (the lattice's points are exact), -1 if none. */
static int reference_node_at(const pbng_element_type *t, const double r[3])
{
  for (int a = 0; a < t->nodes; ++a)
    if (t->ref_nodes[a][0] == r[0] && t->ref_nodes[a][1] == r[1] && t->ref_nodes[a][2] == r[2]) return a;
  return -1;
}

/* hex27's sub-cells: octant o = i + 2 j + 4 k spans [-1 + i, i] x [-1 + j, j] x [-1 + k, k], its
 * corner c at hex8's corner c scaled into it. */
static int hexahedron_subcells(const pbng_element_type *t, int (*cells)[PBNG_MAX_SUBCELL_NODES])
{
  for (int o = 0; o < 8; ++o)
    for (int c = 0; c < 8; ++c) {
      double r[3];
      for (int d = 0; d < 3; ++d) r[d] = (hex8_nodes[c][d] + 1) / 2 + ((o >> d) & 1) - 1;
      cells[o][c] = reference_node_at(t, r);
    }
  return 8;
}

int pbng_element_linear_subcells(const pbng_element_type *t, const pbng_element_type **cell, int (*cells)[PBNG_MAX_SUBCELL_NODES])
{
  *cell = t;
  if (t->kind == PBNG_ELEMENT_CLOTH6) { /* its triangle */
    *cell = &element_types[PBNG_ELEMENT_TRI3];
    for (int j = 0; j < 3; ++j) cells[0][j] = j;
    return 1;
  }
  if (t->order < 2 || t->order > 3) return 0;
  if (t->shape == PBNG_SHAPE_TETRAHEDRON) {
    *cell = &element_types[PBNG_ELEMENT_TET4];
    return tetrahedron_subcells(t, cells);
  }
  if (t->shape == PBNG_SHAPE_HEXAHEDRON && t->order == 2) {
    *cell = &element_types[PBNG_ELEMENT_HEX8];
    return hexahedron_subcells(t, cells);
  }
  return 0;
}
