/* Strains of GPBD's force terms (issue 19; seed generalized-position-based-dynamics.txt, Sec. 3.2, 4):
 * a term i has a few nodes x (3n unknowns), a k-dimensional strain s_i(x) and its Jacobian
 * S_i = ds_i/dx (k x 3n, row-major S[r][3a + j] = ds_r / dx_aj); its energy is U_i(x) = U^_i(s_i(x))
 * (Sec. 3, "reduced energy") and its force -S_i^T dU^/ds (Eq. 17).
 *  - tetrahedron (n = 4, k = 6): the entries of the Green strain E = (F^T F - I) / 2, F = Ds Dm^-1, in the
 *    order (E_xx, E_yy, E_zz, E_yz, E_xz, E_xy), the off-diagonal entries as they are (NOT doubled,
 *    not engineering shears) (Sec. 4.1);
 *  - cloth triangle (n = 6, k = 6): the triangle x0 x1 x2 and, for each edge i (the edge opposite corner
 *    i, from x_{i+1} to x_{i+2}, indices mod 3), the vertex x_{3+i} of the triangle across it (Sec. 4.2):
 *      s = (s_x, s_a, s_y, l^2 (II_xx - II0_xx), l^2 (II_xy - II0_xy), l^2 (II_yy - II0_yy)),
 *      s_x = sqrt(I_xx) - 1, s_a = I_xy / sqrt(I_xx I_yy), s_y = sqrt(I_yy) - 1 (Eq. 22),
 *    I = F^T F the first fundamental form (F 3 x 2 from the rest shape in the triangle's own plane,
 *    core/membrane.h), II the discrete second fundamental form of mid-edge normals below, II0 its rest
 *    value and l the mean rest edge length of the triangle (the seed's l^2 scaling, Sec. 4.2).
 * Discrete II (mid-edge normals, after Chen et al. 2018, which the seed cites for HYLC's II, and Grinspun et
 * al. 2006): m_i = (n + n_i) / |n + n_i| the unit normal at the midpoint of edge i, n the triangle's unit
 * normal and n_i that of the triangle across edge i (x_{i+2}, x_{i+1}, x_{3+i}: the same orientation on a
 * consistently oriented mesh); with the normal field interpolated by the Crouzeix-Raviart functions
 * 1 - 2 N_i and II = -sym(F^T dn/dX),
 *      II = 2 sum_i c_i g_i g_i^T,   c_i = (x_i - x_{i+1}) . m_i,
 * g_i = dN_i/dX the rest shape gradient of corner i (exact, not an approximation of the formula: m_i is
 * normal to edge i, so x_{i+1} and x_{i+2} have the same m_i component). c_i = h_i sin(theta_i / 2),
 * h_i the height of corner i over edge i and theta_i the dihedral angle at edge i (0 flat), so that
 * II ~ sum_i theta_i |e_i| / (2 A) t_i t_i^T (Grinspun et al.'s shape operator). An edge without a
 * neighbour (a free boundary) contributes c_i = 0 (its mid-edge normal is the face normal: no bending
 * there); so does an edge folded completely (|n + n_i| < 1e-12). A flat sheet has II = 0 for every rigid
 * motion; the rest II0 is subtracted, so a curved rest shape is stress free too.
 * Pure functions, no allocation. Derivations and checks: docs/gpbd.md. */
#ifndef PBNG_CORE_GPBD_STRAIN_H
#define PBNG_CORE_GPBD_STRAIN_H

enum { PBNG_GPBD_TET_NODES = 4, PBNG_GPBD_CLOTH_NODES = 6, PBNG_GPBD_STRAIN_DIM = 6 };

/* ---- tetrahedron ---- */

typedef struct {
  double B[9];   /* Dm^-1 (core/element.h pbng_tet_rest_shape: F = Ds B) */
  double volume; /* rest volume (positive) */
} pbng_gpbd_tet_rest;

/* Returns 0, or -1 for a degenerate or negatively oriented rest tetrahedron (6 V below 1e-12 times its
 * longest edge cubed); *r is then zeroed. */
int pbng_gpbd_tet_rest_shape(const double X[4][3], pbng_gpbd_tet_rest *r);

/* F = Ds B (row-major 3 x 3). */
void pbng_gpbd_tet_deformation(const pbng_gpbd_tet_rest *r, const double x[4][3], double F[9]);

/* The strain entries' (p, q): s_r = E_pq in the order (E_xx, E_yy, E_zz, E_yz, E_xz, E_xy). */
extern const int pbng_gpbd_green_entry[6][2];

/* s = (E_xx, E_yy, E_zz, E_yz, E_xz, E_xy) of E = (F^T F - I)/2 and, when S is given, its Jacobian
 *   dE_pq / dx_aj = (g_ap F_jq + F_jp g_aq) / 2,   g_a = dN_a/dX   (6 x 12). */
void pbng_gpbd_tet_strain(const pbng_gpbd_tet_rest *r, const double x[4][3], double s[6], double S[6][12]);

/* ---- cloth triangle with its three neighbours ---- */

typedef struct {
  double g[3][2];   /* rest shape gradients of corners 0..2 in the triangle's local frame (x: the weft axis) */
  double area;      /* rest area */
  double l2;        /* l^2, l the mean of the three rest edge lengths */
  double II0[3];    /* rest II (xx, xy, yy) */
  int neighbour[3]; /* 1 when edge i has a triangle across it (then node 3 + i is its third vertex) */
} pbng_gpbd_cloth_rest;

/* Rest data from the rest positions X[6][3] (X[3 + i] read only where neighbour[i]) and the weft axis
 * (core/membrane.h pbng_membrane_rest_shape). Returns 0, or -1 for a degenerate rest triangle or weft
 * axis; *r is then zeroed. */
int pbng_gpbd_cloth_rest_shape(const double X[6][3], const int neighbour[3], const double weft[3], pbng_gpbd_cloth_rest *r);

/* first = I = F^T F as (I_xx, I_xy, I_yy) and second = II as (II_xx, II_xy, II_yy) (rest value not subtracted, not scaled). */
void pbng_gpbd_cloth_fundamental_forms(const pbng_gpbd_cloth_rest *r, const double x[6][3], double first[3], double second[3]);

/* Its membrane rows alone (s_x, s_a, s_y) and their Jacobian (3 x 9): reads the triangle x[0..2] only. */
void pbng_gpbd_cloth_membrane_strain(const pbng_gpbd_cloth_rest *r, const double (*x)[3], double s[3], double S[3][9]);

/* The strain s (module comment) and, when S is given, its Jacobian (6 x 18). */
void pbng_gpbd_cloth_strain(const pbng_gpbd_cloth_rest *r, const double x[6][3], double s[6], double S[6][18]);

/* Adds sum_{k < 3} c_k d^2 s_k / dx^2 (the membrane rows' own second derivatives, weighted by c, e.g.
 * c = dU^/ds) to H (18 x 18; only the triangle's 9 x 9 block is non-zero). The II rows' own: pbng_gpbd_cloth_bending_curvature
 * (the test energy of tests/gpbd_seed_energy.c leaves them out: Gauss-Newton for bending, docs/gpbd.md). */
void pbng_gpbd_cloth_membrane_curvature(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], double H[18][18]);

/* Its diagonal block of corner a (0..2): B (3 x 3 row-major) = the (a, a) block of sum_{k<3} c_k d^2 s_k / dx^2
 * (written, not added; PBNG's node visits need only this block). */
void pbng_gpbd_cloth_membrane_curvature_block(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], int a, double B[9]);

/* Adds sum_{k < 3} c_k d^2 s_{3+k} / dx^2 (the II rows' own second derivatives, weighted by c, e.g.
 * c = dU^/ds_{3..5}) to H (18 x 18), exact: the mid-edge coefficients' Hessians through the normalised
 * cross products (docs/gpbd.md). With pbng_gpbd_cloth_membrane_curvature, the whole of
 * d^2 U^(s(x)) / dx^2 = S^T d2U S + sum_k dU_k d^2 s_k. */
void pbng_gpbd_cloth_bending_curvature(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], double H[18][18]);

#endif
