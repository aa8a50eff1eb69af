/* Unit tests of the element layer (src/core/element*.c) for every kind: partition of unity, the
 * Kronecker property on the reference nodes (Gmsh's ordering agrees with the basis), reference
 * gradients against finite differences, quadrature exactness up to each rule's stated degree against
 * closed forms, the seed's Alg. 3 precomputation (volumes, a linear field's gradient reproduced at
 * every quadrature point: the element-level patch test), faces on the boundary and pointing out,
 * inverted and degenerate elements reported, lookups, the XDMF permutations and the linear sub-cells. */
#include "core/element.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  long checks, failures;
} tally;

static void check(tally *t, int ok, const char *kind, const char *what, double value)
{
  ++t->checks;
  if (!ok) {
    ++t->failures;
    if (t->failures <= 50) printf("FAIL: %s: %s (value %.6e)\n", kind, what, value);
  }
}

static double uniform(uint64_t *s)
{
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* A random point inside the reference element (away from the pyramid's apex). */
static void random_point(const pbng_element_type *t, uint64_t *s, double r[3])
{
  for (;;) {
    const double a = uniform(s), b = uniform(s), c = uniform(s);
    switch (t->shape) {
    case PBNG_SHAPE_TETRAHEDRON: r[0] = a, r[1] = b, r[2] = c; if (a + b + c < 1) return; break;
    case PBNG_SHAPE_HEXAHEDRON: r[0] = 2 * a - 1, r[1] = 2 * b - 1, r[2] = 2 * c - 1; return;
    case PBNG_SHAPE_PRISM: r[0] = a, r[1] = b, r[2] = 2 * c - 1; if (a + b < 1) return; break;
    case PBNG_SHAPE_PYRAMID: r[2] = 0.95 * c, r[0] = (2 * a - 1) * (1 - r[2]), r[1] = (2 * b - 1) * (1 - r[2]); return;
    default: r[0] = a, r[1] = b, r[2] = 0; if (a + b < 1) return; break; /* sheet kinds: not reached (test_sheet_kinds) */
    }
  }
}

static void test_partition_of_unity_and_gradients(tally *t, const pbng_element_type *e, uint64_t *s)
{
  double N[PBNG_MAX_ELEMENT_NODES], dN[PBNG_MAX_ELEMENT_NODES][3], Np[PBNG_MAX_ELEMENT_NODES], Nm[PBNG_MAX_ELEMENT_NODES],
    dd[PBNG_MAX_ELEMENT_NODES][3];
  for (int k = 0; k < 20; ++k) {
    double r[3], sum = 0, g[3] = {0, 0, 0}, err = 0, scale = 0;
    random_point(e, s, r);
    pbng_element_shape(e, r, N, dN);
    for (int a = 0; a < e->nodes; ++a) {
      sum += N[a];
      for (int i = 0; i < 3; ++i) g[i] += dN[a][i], scale = fmax(scale, fabs(dN[a][i]));
    }
    check(t, fabs(sum - 1) < 1e-12, e->name, "sum of N = 1", sum - 1);
    check(t, fabs(g[0]) + fabs(g[1]) + fabs(g[2]) < 1e-11 * (1 + scale), e->name, "sum of dN/dr = 0", fabs(g[0]) + fabs(g[1]) + fabs(g[2]));
    const double h = 1e-6;
    for (int i = 0; i < 3; ++i) {
      double rp[3] = {r[0], r[1], r[2]}, rm[3] = {r[0], r[1], r[2]};
      rp[i] += h, rm[i] -= h;
      pbng_element_shape(e, rp, Np, dd);
      pbng_element_shape(e, rm, Nm, dd);
      for (int a = 0; a < e->nodes; ++a) err = fmax(err, fabs((Np[a] - Nm[a]) / (2 * h) - dN[a][i]));
    }
    check(t, err < 1e-7 * (1 + scale), e->name, "dN/dr against central differences", err);
  }
}

static void test_kronecker(tally *t, const pbng_element_type *e)
{
  double N[PBNG_MAX_ELEMENT_NODES], dN[PBNG_MAX_ELEMENT_NODES][3];
  for (int b = 0; b < e->nodes; ++b) {
    double r[3] = {e->ref_nodes[b][0], e->ref_nodes[b][1], e->ref_nodes[b][2]}, err = 0;
    if (e->shape == PBNG_SHAPE_PYRAMID && r[2] == 1) r[2] = 1 - 1e-12; /* the apex: the rational basis's limit */
    pbng_element_shape(e, r, N, dN);
    for (int a = 0; a < e->nodes; ++a) err = fmax(err, fabs(N[a] - (a == b)));
    check(t, err < 1e-10, e->name, "N_a(X_b) = delta_ab", err);
  }
}

static double factorial(int n) { return n <= 1 ? 1.0 : n * factorial(n - 1); }
static double line_moment(int i) { return i % 2 ? 0.0 : 2.0 / (i + 1); } /* int_{-1}^{1} x^i */

/* The integral of r^i s^j t^k over the reference element. */
static double exact_moment(const pbng_element_type *e, int i, int j, int k)
{
  switch (e->shape) {
  case PBNG_SHAPE_TETRAHEDRON: return factorial(i) * factorial(j) * factorial(k) / factorial(i + j + k + 3);
  case PBNG_SHAPE_HEXAHEDRON: return line_moment(i) * line_moment(j) * line_moment(k);
  case PBNG_SHAPE_PRISM: return factorial(i) * factorial(j) / factorial(i + j + 2) * line_moment(k);
  case PBNG_SHAPE_PYRAMID: return line_moment(i) * line_moment(j) * factorial(k) * factorial(i + j + 2) / factorial(i + j + k + 3);
  default: break; /* sheet kinds: not integrated here */
  }
  return NAN;
}

static void test_quadrature(tally *t, const pbng_element_type *e)
{
  double wsum = 0;
  for (int q = 0; q < e->quad_points; ++q) {
    double r[3], w;
    pbng_element_quadrature(e, q, r, &w);
    wsum += w;
    check(t, w > 0, e->name, "positive weights", w);
  }
  check(t, fabs(wsum - e->ref_measure) < 1e-14, e->name, "weights sum to the reference volume", wsum - e->ref_measure);
  const int d = e->quad_degree;
  for (int i = 0; i <= d; ++i)
    for (int j = 0; i + j <= d; ++j)
      for (int k = 0; i + j + k <= d; ++k) {
        double sum = 0;
        for (int q = 0; q < e->quad_points; ++q) {
          double r[3], w;
          pbng_element_quadrature(e, q, r, &w);
          sum += w * pow(r[0], i) * pow(r[1], j) * pow(r[2], k);
        }
        const double exact = exact_moment(e, i, j, k);
        check(t, fabs(sum - exact) < 1e-14 * (1 + fabs(exact)) * 10, e->name, "monomial integrated exactly", sum - exact);
      }
}

/* X = A X_ref + b, plus (hexahedra) a smooth perturbation that keeps the element valid. */
static void mapped_element(const pbng_element_type *e, const double A[9], int perturb, double (*X)[3])
{
  for (int a = 0; a < e->nodes; ++a) {
    const double *R = e->ref_nodes[a];
    for (int i = 0; i < 3; ++i) X[a][i] = A[3 * i] * R[0] + A[3 * i + 1] * R[1] + A[3 * i + 2] * R[2] + 0.3 * i;
    if (perturb) X[a][0] += 0.05 * R[1] * R[2], X[a][2] += 0.04 * R[0] * R[1];
  }
}

static void test_precompute(tally *t, const pbng_element_type *e, uint64_t *s)
{
  pbng_element_reference ref;
  double X[PBNG_MAX_ELEMENT_NODES][3], V[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], det_min, det;
  pbng_element_reference_init(e, &ref);
  const double A[9] = {1.1 + 0.1 * uniform(s), 0.2, -0.1, 0.05, 0.9 + 0.1 * uniform(s), 0.1, -0.2, 0.1, 1.3};
  const double detA = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
  for (int perturb = 0; perturb <= (e->shape == PBNG_SHAPE_HEXAHEDRON); ++perturb) {
    mapped_element(e, A, perturb, X);
    check(t, pbng_element_precompute(&ref, (const double(*)[3])X, V, grad, &det_min) == 0, e->name, "a valid element is accepted", det_min);
    check(t, pbng_element_first_invalid_point(&ref, (const double(*)[3])X, &det) == -1, e->name, "the validation check accepts it too", det);
    double vol = 0;
    for (int q = 0; q < ref.nq; ++q) vol += V[q];
    double expected = detA * e->ref_measure;
    if (perturb) { /* the trilinear map's volume from the 27-point rule (det J has degree <= 2 per axis) */
      const pbng_element_type *h27 = pbng_element_type_get(PBNG_ELEMENT_HEX27);
      expected = 0;
      for (int q = 0; q < h27->quad_points; ++q) {
        double r[3], w, N[PBNG_MAX_ELEMENT_NODES], dN[PBNG_MAX_ELEMENT_NODES][3], J[9] = {0};
        pbng_element_quadrature(h27, q, r, &w);
        pbng_element_shape(e, r, N, dN);
        for (int a = 0; a < e->nodes; ++a)
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) J[3 * i + j] += X[a][i] * dN[a][j];
        expected += w * (J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) + J[2] * (J[3] * J[7] - J[4] * J[6]));
      }
    }
    check(t, fabs(vol - expected) < 1e-12 * expected, e->name, perturb ? "volume of a curved element" : "volume = det A x reference volume",
          vol - expected);
    const double G[9] = {0.3, -0.1, 0.2, 0.05, -0.4, 0.1, 0.2, 0.3, 0.15};
    double err = 0;
    for (int q = 0; q < ref.nq; ++q) { /* u = G X + c: sum_a u_a (x) grad N_a = G */
      double H[9] = {0};
      for (int a = 0; a < e->nodes; ++a)
        for (int i = 0; i < 3; ++i) {
          const double u = G[3 * i] * X[a][0] + G[3 * i + 1] * X[a][1] + G[3 * i + 2] * X[a][2] + 1.0;
          for (int j = 0; j < 3; ++j) H[3 * i + j] += u * grad[q][a][j];
        }
      for (int k = 0; k < 9; ++k) err = fmax(err, fabs(H[k] - G[k]));
    }
    check(t, err < 1e-11, e->name, "a linear field's gradient reproduced at every quadrature point", err);
  }
  mapped_element(e, A, 0, X);
  pbng_element_precompute(&ref, (const double(*)[3])X, V, grad, &det_min);
  double m[PBNG_MAX_ELEMENT_NODES], msum = 0, mmin = INFINITY, vol = 0, row_min = INFINITY;
  pbng_element_lumped_mass(&ref, V, 1000.0, m);
  for (int q = 0; q < ref.nq; ++q) vol += V[q];
  for (int a = 0; a < e->nodes; ++a) {
    msum += m[a], mmin = fmin(mmin, m[a]);
    double row = 0; /* row-sum lumping, for contrast: sum_q V_q N_a */
    for (int q = 0; q < ref.nq; ++q) row += V[q] * ref.N[q][a];
    row_min = fmin(row_min, row);
  }
  check(t, fabs(msum - 1000.0 * vol) < 1e-12 * msum, e->name, "HRZ masses sum to the element's mass", msum - 1000.0 * vol);
  check(t, mmin > 0, e->name, "every HRZ mass is positive", mmin);
  if (e->kind == PBNG_ELEMENT_TET4) check(t, fabs(mmin - 250.0 * vol) < 1e-12 * mmin, e->name, "HRZ on a linear tet is rho V / 4", mmin);
  if (e->kind == PBNG_ELEMENT_TET10) check(t, row_min <= 1e-15 * vol, e->name, "(row-sum lumping would give P2 corners no mass)", row_min);
  for (int a = 0; a < e->nodes; ++a) X[a][0] = -X[a][0]; /* mirrored: inverted */
  check(t, pbng_element_precompute(&ref, (const double(*)[3])X, V, grad, &det_min) == -1 && det_min < 0, e->name, "an inverted element is reported",
        det_min);
  check(t, pbng_element_first_invalid_point(&ref, (const double(*)[3])X, &det) == 0 && det < 0, e->name,
        "the validation check names quadrature point 0 of the inverted element", det);
  mapped_element(e, A, 0, X);
  for (int a = 0; a < e->nodes; ++a) X[a][2] = 0.5; /* flattened: degenerate */
  check(t, pbng_element_precompute(&ref, (const double(*)[3])X, V, grad, &det_min) == -1, e->name, "a flat element is reported", det_min);
  check(t, pbng_element_first_invalid_point(&ref, (const double(*)[3])X, &det) == 0 && fabs(det) <= 1e-12, e->name,
        "the validation check names quadrature point 0 of the flat element", det);
}

static void test_faces(tally *t, const pbng_element_type *e)
{
  double c[3] = {0, 0, 0};
  for (int a = 0; a < e->nodes; ++a)
    for (int i = 0; i < 3; ++i) c[i] += e->ref_nodes[a][i] / e->nodes;
  int seen_corner[PBNG_MAX_ELEMENT_NODES] = {0};
  for (int f = 0; f < e->nfaces; ++f) {
    const pbng_element_face *F = &e->faces[f];
    const double *p0 = e->ref_nodes[F->node[0]], *p1 = e->ref_nodes[F->node[1]], *p2 = e->ref_nodes[F->node[2]];
    const double u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]}, v[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
    const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    check(t, n[0] * (p0[0] - c[0]) + n[1] * (p0[1] - c[1]) + n[2] * (p0[2] - c[2]) > 0, e->name, "face normal points out", f);
    double off = 0;
    int ok = 1;
    for (int k = 0; k < F->nodes; ++k) {
      const int a = F->node[k];
      ok &= a >= 0 && a < e->nodes;
      for (int m = 0; m < k; ++m) ok &= F->node[m] != a;
      if (k < F->corners && a >= 0 && a < e->nodes) seen_corner[a] = 1;
      const double *p = e->ref_nodes[a];
      off = fmax(off, fabs(n[0] * (p[0] - p0[0]) + n[1] * (p[1] - p0[1]) + n[2] * (p[2] - p0[2])));
    }
    check(t, ok, e->name, "face nodes distinct and in range", f);
    check(t, off < 1e-14, e->name, "face nodes on the face's plane", off);
  }
  int corners = 0;
  for (int a = 0; a < e->nodes; ++a) corners += seen_corner[a];
  const int expected = e->shape == PBNG_SHAPE_TETRAHEDRON ? 4 : e->shape == PBNG_SHAPE_HEXAHEDRON ? 8 : e->shape == PBNG_SHAPE_PRISM ? 6 : 5;
  check(t, corners == expected, e->name, "every vertex is a corner of some face", corners);
}

static void test_identities(tally *t, const pbng_element_type *e)
{
  check(t, pbng_element_type_by_name(e->name) == e, e->name, "found by name", 0);
  check(t, pbng_element_type_by_gmsh(e->gmsh_type) == e, e->name, "found by Gmsh type", e->gmsh_type);
  if (e->xdmf_order) {
    int seen[PBNG_MAX_ELEMENT_NODES] = {0}, ok = 1;
    for (int k = 0; k < e->nodes; ++k) ok &= e->xdmf_order[k] >= 0 && e->xdmf_order[k] < e->nodes && !seen[e->xdmf_order[k]]++;
    check(t, ok, e->name, "the XDMF order is a permutation", 0);
  }
}

/* The linear sub-cells (pbng_element_linear_subcells) on the reference element: distinct nodes of the
 * element, each sub-cell valid by its own kind's Jacobian test (positive, not degenerate) with its
 * volume summed over its quadrature, the volumes summing to the element's; hex27's sub-cell
 * i + 2 j + 4 k is the octant (i, j, k) with its corners in hex8's order (the reference hexahedron
 * halved towards the octant's corner). */
static void test_subcells(tally *t, const pbng_element_type *e)
{
  static const int expected[PBNG_ELEMENT_KIND_COUNT] = {[PBNG_ELEMENT_TET10] = 8, [PBNG_ELEMENT_TET20] = 27, [PBNG_ELEMENT_HEX27] = 8};
  int cells[PBNG_MAX_SUBCELLS][PBNG_MAX_SUBCELL_NODES];
  const pbng_element_type *cell;
  const int n = pbng_element_linear_subcells(e, &cell, cells);
  pbng_element_reference ref;
  double total = 0, octant_err = 0;
  int valid = 1, distinct = 1;

  check(t, n == expected[e->kind], e->name, "number of linear sub-cells", n);
  if (n == 0) {
    check(t, cell == e, e->name, "no sub-cells: the cell kind is the element's", 0);
    return;
  }
  check(t, cell->order == 1 && cell->shape == e->shape, e->name, "sub-cells are linear cells of the element's shape", cell->kind);
  pbng_element_reference_init(cell, &ref);
  for (int k = 0; k < n; ++k) {
    double X[PBNG_MAX_ELEMENT_NODES][3], V[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], det_min;
    for (int a = 0; a < cell->nodes; ++a) {
      distinct &= cells[k][a] >= 0 && cells[k][a] < e->nodes;
      for (int b = 0; b < a; ++b) distinct &= cells[k][a] != cells[k][b];
      for (int d = 0; d < 3; ++d) X[a][d] = e->ref_nodes[cells[k][a] >= 0 ? cells[k][a] : 0][d];
      if (e->kind == PBNG_ELEMENT_HEX27)
        for (int d = 0; d < 3; ++d) octant_err = fmax(octant_err, fabs(X[a][d] - ((cell->ref_nodes[a][d] - 1) / 2 + ((k >> d) & 1))));
    }
    valid &= pbng_element_precompute(&ref, (const double(*)[3])X, V, grad, &det_min) == 0;
    for (int q = 0; q < ref.nq; ++q) total += V[q];
  }
  check(t, distinct, e->name, "sub-cell nodes distinct and in range", 0);
  check(t, valid, e->name, "every sub-cell positive (its kind's Jacobian test)", 0);
  check(t, fabs(total - e->ref_measure) < 1e-14 * e->ref_measure, e->name, "sub-cell volumes sum to the element's", total - e->ref_measure);
  check(t, octant_err == 0, e->name, "hex27 sub-cell i + 2j + 4k on octant (i, j, k), corners in hex8's order", octant_err);
}

/* Gmsh's own node placement (tests/data/element_order: gmsh 4.8 meshes of tet.geo at orders 2 and 3
 * and of hex.geo at order 2, Gmsh 2.2 ASCII) against the reference nodes: each element's nodes,
 * mapped back to the reference element by its vertices, must be the table's in the table's order. */
static void test_gmsh_order(tally *t, const char *file, const pbng_element_type *e)
{
  char path[1024], line[4096];
  const char *dir = getenv("PBNG_TEST_DATA");
  snprintf(path, sizeof(path), "%s/element_order/%s", dir ? dir : "tests/data", file);
  FILE *f = fopen(path, "r");
  check(t, f != NULL, e->name, "Gmsh mesh of the element order found (PBNG_TEST_DATA)", 0);
  if (!f) return;
  static double X[4096][3];
  int nn = 0, ne = 0, checked = 0;
  double worst = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "$Nodes", 6)) {
      if (!fgets(line, sizeof line, f)) break;
      nn = atoi(line);
      for (int k = 0; k < nn && k < 4096 && fgets(line, sizeof line, f); ++k) {
        int id = 0;
        double x[3];
        if (sscanf(line, "%d %lf %lf %lf", &id, &x[0], &x[1], &x[2]) == 4 && id >= 1 && id <= 4096)
          for (int i = 0; i < 3; ++i) X[id - 1][i] = x[i];
      }
    } else if (!strncmp(line, "$Elements", 9)) {
      if (!fgets(line, sizeof line, f)) break;
      ne = atoi(line);
      for (int k = 0; k < ne && fgets(line, sizeof line, f); ++k) {
        int v[64], n = 0, off = 0, used;
        while (n < 64 && sscanf(line + off, "%d%n", &v[n], &used) == 1) off += used, ++n;
        if (n < 3 || v[1] != e->gmsh_type) continue;
        const int *node = &v[3 + v[2]];
        double P[PBNG_MAX_ELEMENT_NODES][3];
        for (int a = 0; a < e->nodes; ++a)
          for (int i = 0; i < 3; ++i) P[a][i] = X[node[a] - 1][i];
        for (int a = 0; a < e->nodes; ++a) {
          double r[3];
          if (e->shape == PBNG_SHAPE_TETRAHEDRON) { /* solve [P1-P0 | P2-P0 | P3-P0] r = P_a - P0 (Cramer) */
            double c[3][3], b[3], det;
            for (int i = 0; i < 3; ++i) c[i][0] = P[1][i] - P[0][i], c[i][1] = P[2][i] - P[0][i], c[i][2] = P[3][i] - P[0][i], b[i] = P[a][i] - P[0][i];
            det = c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) - c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0]) +
                  c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0]);
            for (int j = 0; j < 3; ++j) {
              double m[3][3];
              for (int i = 0; i < 3; ++i)
                for (int l = 0; l < 3; ++l) m[i][l] = l == j ? b[i] : c[i][l];
              r[j] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                      m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) / det;
            }
          } else { /* an axis-aligned hexahedron: vertices 0 and 6 are opposite corners */
            for (int i = 0; i < 3; ++i) r[i] = 2 * (P[a][i] - P[0][i]) / (P[6][i] - P[0][i]) - 1;
          }
          for (int i = 0; i < 3; ++i) worst = fmax(worst, fabs(r[i] - e->ref_nodes[a][i]));
        }
        ++checked;
      }
    }
  }
  fclose(f);
  check(t, checked > 0, e->name, "Gmsh's mesh holds elements of the kind", checked);
  check(t, worst < 1e-9, e->name, "the reference nodes are Gmsh's, in Gmsh's order", worst);
}

/* The sheet kinds: their identities (tri3 is Gmsh type 2 and XDMF's Triangle, 4 in a Mixed list; bend4
 * has neither), the triangle's linear shape functions (partition of unity, Kronecker at its corners,
 * no dependence on t), and the degeneracy check on each of their triangles. */
static void test_sheet_kinds(tally *t)
{
  const pbng_element_type *tri = pbng_element_type_get(PBNG_ELEMENT_TRI3), *bend = pbng_element_type_get(PBNG_ELEMENT_BEND4);
  check(t, pbng_element_is_sheet(tri) && pbng_element_is_sheet(bend) && !pbng_element_is_sheet(pbng_element_type_get(PBNG_ELEMENT_PYRAMID5)),
        "sheet kinds", "tri3 and bend4 are sheet kinds, the volume kinds are not", 0);
  check(t, pbng_element_type_by_gmsh(2) == tri && pbng_element_xdmf_id(tri) == 4 && !strcmp(tri->xdmf_topology, "Triangle"), "tri3",
        "Gmsh type 2, XDMF Triangle (Mixed id 4)", 0);
  check(t, bend->gmsh_type < 0 && !bend->xdmf_topology && pbng_element_xdmf_id(bend) < 0 && bend->nfaces == 0, "bend4",
        "no Gmsh type, no XDMF cell, no faces", 0);
  double N[PBNG_MAX_ELEMENT_NODES], dN[PBNG_MAX_ELEMENT_NODES][3], worst = 0;
  for (int a = 0; a < 3; ++a) {
    const double r[3] = {tri->ref_nodes[a][0], tri->ref_nodes[a][1], 0.7}; /* t is ignored */
    pbng_element_shape(tri, r, N, dN);
    for (int b = 0; b < 3; ++b) worst = fmax(worst, fabs(N[b] - (a == b)) + fabs(dN[b][2]));
  }
  const double r[3] = {0.2, 0.3, 0};
  pbng_element_shape(tri, r, N, dN);
  worst = fmax(worst, fabs(N[0] + N[1] + N[2] - 1) + fabs(N[1] - 0.2) + fabs(N[2] - 0.3) + fabs(dN[0][0] + 1) + fabs(dN[1][0] - 1) + fabs(dN[2][1] - 1));
  check(t, worst < 1e-14, "tri3", "linear shape functions (Kronecker, unity, gradients, no t)", worst);
  const double flat[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, line[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, 1, 0}, {2, 0, 0}};
  double ratio;
  check(t, pbng_element_sheet_first_degenerate(tri, flat, &ratio) == -1 && fabs(ratio - 0.5) < 1e-15, "tri3", "a right triangle is valid (twice its area over its longest edge squared: 1/2)", ratio);
  check(t, pbng_element_sheet_first_degenerate(bend, flat, &ratio) == -1, "bend4", "a flat stencil is valid", ratio);
  check(t, pbng_element_sheet_first_degenerate(bend, line, &ratio) == 1 && ratio == 0, "bend4", "a stencil with a collinear wing is reported", ratio);
  pbng_element_reference ref;
  pbng_element_reference_init(bend, &ref);
  double det;
  check(t, pbng_element_first_invalid_point(&ref, line, &det) == 1, "bend4", "the validation check reports it too", det);
}

int main(void)
{
  tally t = {0, 0};
  uint64_t seed = 0x2545F4914F6CDD1DULL;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) {
    const pbng_element_type *e = pbng_element_type_get((pbng_element_kind)k);
    if (pbng_element_is_sheet(e)) continue; /* test_sheet_kinds */
    test_partition_of_unity_and_gradients(&t, e, &seed);
    test_kronecker(&t, e);
    test_quadrature(&t, e);
    test_precompute(&t, e, &seed);
    test_faces(&t, e);
    test_identities(&t, e);
    test_subcells(&t, e);
  }
  test_sheet_kinds(&t);
  test_gmsh_order(&t, "tet10.msh", pbng_element_type_get(PBNG_ELEMENT_TET10));
  test_gmsh_order(&t, "tet20.msh", pbng_element_type_get(PBNG_ELEMENT_TET20));
  test_gmsh_order(&t, "hex27.msh", pbng_element_type_get(PBNG_ELEMENT_HEX27));
  check(&t, pbng_element_type_by_name("tet11") == NULL && pbng_element_type_by_gmsh(3) == NULL, "lookups", "unknown kinds rejected", 0);
  if (t.failures) {
    printf("test_element: %ld of %ld checks FAILED\n", t.failures, t.checks);
    return 1;
  }
  printf("test_element: %ld checks passed\n", t.checks);
  return 0;
}
