/* The joint projection of a cluster of inverted tetrahedra (src/core/gpbd_untangle.c, Eq. (U1)-(U2); issue 43 item 2,
 * docs/gpbd_solver.md#inversion), on an octahedron of eight tetrahedra around a centre node:
 *  - a node's part of (U1) against central differences of it (its gradient), with delta = 0 on untangled states and
 *    delta > 0 on tangled ones (the check can fail: a gradient with the cofactor term dropped misses it);
 *  - a fold untangled: the centre pushed through a face (tetrahedra inverted), then moved alone by the projection until
 *    every tetrahedron has det F > 0; with no sweeps allowed the fold stays (so the check can fail);
 *  - two tangled nodes moved together (the centre and a corner), none left inverted;
 *  - deterministic (the same input gives bitwise the same output); (U1) and its gradient invariant under a rigid motion,
 *    and the moved fold untangled too;
 *  - an untangled cluster is left where it is;
 *  - the joint step (U3): a tetrahedron's Hessian of (U1) in its node positions against central differences of its
 *    gradient (delta = 0 untangled, delta > 0 tangled; the check can fail: the Hessian with the second derivative of det F
 *    dropped misses it), and the PSD one positive semidefinite;
 *  - a stalled fold (tests/data/gpbd_stalled_fold.txt: a cluster the solver gathered on the clamped 10^3 cube, Jacobi,
 *    mirrored start, frame 3; 6 movable nodes, 64 tetrahedra): node-wise sweeps alone (joint_steps 0) leave a tetrahedron
 *    inverted, with the joint step none are; bitwise the same twice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dense.h"
#include "core/gpbd_untangle.h"
#include "core/mat3.h"
#include "test_check.h"

enum { NODES = 7, TETS = 8 };

typedef struct {
  double x[NODES][3];
  uint8_t movable[NODES];
  int32_t tet[TETS][4];
  pbng_gpbd_tet_rest rest[TETS];
  int32_t adj_start[NODES + 1], adj[4 * TETS];
} octahedron;

/* Node 0 the centre, 1..6 the corners +-e_x, +-e_y, +-e_z; a tetrahedron per face, positively oriented at rest. */
static void octahedron_make(octahedron *o)
{
  static const double X[NODES][3] = {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  memcpy(o->x, X, sizeof(X));
  memset(o->movable, 0, sizeof(o->movable));
  int t = 0;
  for (int i = 1; i <= 2; ++i)
    for (int j = 3; j <= 4; ++j)
      for (int k = 5; k <= 6; ++k, ++t) {
        int32_t n[4] = {0, i, j, k};
        double Xe[4][3];
        for (int a = 0; a < 4; ++a) memcpy(Xe[a], X[n[a]], sizeof(Xe[a]));
        if (pbng_gpbd_tet_rest_shape((const double(*)[3])Xe, &o->rest[t]) != 0) { /* the other orientation */
          const int32_t swap = n[1];
          n[1] = n[2], n[2] = swap;
          for (int a = 0; a < 4; ++a) memcpy(Xe[a], X[n[a]], sizeof(Xe[a]));
          (void)pbng_gpbd_tet_rest_shape((const double(*)[3])Xe, &o->rest[t]);
        }
        memcpy(o->tet[t], n, sizeof(n));
      }
}

/* The cluster view with the given nodes movable (adjacency of the movable nodes only, as methods/gpbd/gpbd_cluster.c). */
static pbng_gpbd_cluster octahedron_cluster(octahedron *o, const int *movable, int nmovable)
{
  memset(o->movable, 0, sizeof(o->movable));
  for (int m = 0; m < nmovable; ++m) o->movable[movable[m]] = 1;
  int32_t k = 0;
  for (int32_t a = 0; a < NODES; ++a) {
    o->adj_start[a] = k;
    for (int t = 0; t < TETS && o->movable[a]; ++t)
      for (int s = 0; s < 4; ++s)
        if (o->tet[t][s] == a) o->adj[k++] = 4 * t + s;
  }
  o->adj_start[NODES] = k;
  return (pbng_gpbd_cluster){.nnodes = NODES, .ntets = TETS, .x = &o->x[0][0], .movable = o->movable, .tet = (const int32_t(*)[4])o->tet,
                             .rest = o->rest, .adj_start = o->adj_start, .adj = o->adj};
}

static int inverted(const octahedron *o)
{
  int n = 0;
  for (int t = 0; t < TETS; ++t) {
    double xe[4][3], F[9];
    for (int a = 0; a < 4; ++a) memcpy(xe[a], o->x[o->tet[t][a]], sizeof(xe[a]));
    pbng_gpbd_tet_deformation(&o->rest[t], (const double(*)[3])xe, F);
    n += !(mat3_det(F) > 0);
  }
  return n;
}

/* Relative error of node a's gradient against central differences of its objective (h = 1e-6). */
static double gradient_error(const pbng_gpbd_cluster *c, int32_t a, double delta2)
{
  const double z0[3] = {0, 0, 0};
  double g[3], err = 0, norm = 0;
  pbng_gpbd_untangle_node_objective(c, a, z0, delta2, g);
  for (int k = 0; k < 3; ++k) {
    double z[3] = {0, 0, 0};
    z[k] = 1e-6;
    const double up = pbng_gpbd_untangle_node_objective(c, a, z, delta2, NULL);
    z[k] = -1e-6;
    const double down = pbng_gpbd_untangle_node_objective(c, a, z, delta2, NULL);
    err = fmax(err, fabs((up - down) / 2e-6 - g[k]));
    norm = fmax(norm, fabs(g[k]));
  }
  return err / fmax(norm, 1e-12);
}

static void check_gradients(void)
{
  uint64_t seed = 12345;
  double worst_smooth = 0, worst_tangled = 0;
  for (int trial = 0; trial < 20; ++trial) {
    octahedron o;
    octahedron_make(&o);
    const int centre = 0;
    const pbng_gpbd_cluster c = octahedron_cluster(&o, &centre, 1);
    for (int a = 0; a < NODES; ++a)
      for (int k = 0; k < 3; ++k) o.x[a][k] += 0.2 * (2 * next_random(&seed) - 1);
    worst_smooth = fmax(worst_smooth, gradient_error(&c, 0, inverted(&o) ? 1e-2 : 0.0));
    o.x[0][0] = 1.3 + 0.2 * next_random(&seed); /* through the +x faces: four tetrahedra inverted */
    worst_tangled = fmax(worst_tangled, gradient_error(&c, 0, 1e-2));
  }
  printf("untangle: gradient against central differences %.2e (untangled), %.2e (tangled, delta > 0)\n", worst_smooth, worst_tangled);
  check(worst_smooth < 1e-6, "(U1)'s gradient, untangled states", worst_smooth, 1e-6);
  check(worst_tangled < 1e-6, "(U1)'s gradient, tangled states", worst_tangled, 1e-6);
}

/* The fold: the centre pushed through the +x faces; returns the inverted count after the projection. */
static int untangle_fold(int sweeps, double out[NODES][3])
{
  octahedron o;
  octahedron_make(&o);
  const int centre = 0;
  const pbng_gpbd_cluster c = octahedron_cluster(&o, &centre, 1);
  o.x[0][0] = 1.4, o.x[0][1] = 0.1, o.x[0][2] = -0.05;
  const pbng_gpbd_untangle_options opt = {.eps = 1e-3, .sweeps = sweeps, .max_rings = 0};
  const int left = pbng_gpbd_untangle(&c, &opt);
  check(left == inverted(&o), "the count returned is the cluster's", left, inverted(&o));
  memcpy(out, o.x, sizeof(o.x));
  return left;
}

static void check_fold(void)
{
  double x1[NODES][3], x2[NODES][3], x0[NODES][3];
  const int before = untangle_fold(0, x0), after = untangle_fold(50, x1);
  (void)untangle_fold(50, x2);
  printf("untangle: fold, inverted %d -> %d; centre at (%.3f, %.3f, %.3f)\n", before, after, x1[0][0], x1[0][1], x1[0][2]);
  check(before >= 4, "the fold inverts the tetrahedra of the +x faces (no sweeps: it stays)", before, 4);
  check(after == 0, "the fold untangled", after, 0);
  check(fabs(x1[0][0]) < 1 && fabs(x1[0][1]) < 1 && fabs(x1[0][2]) < 1, "the centre back inside", x1[0][0], 0);
  check(memcmp(x1, x2, sizeof(x1)) == 0, "deterministic: bitwise the same twice", 0, 0);
  for (int a = 1; a < NODES; ++a)
    check(memcmp(x1[a], x0[a], sizeof(x1[a])) == 0, "only the movable node moves", a, 0);
}

/* (U1) is invariant under a rigid motion of the positions (F -> R F: |F| and det F kept), its gradient turns with it,
 * and the moved fold is untangled too. (The projection's path is not exactly equivariant: a node's Hessian comes from
 * differences of its gradient along the frame's axes, so the untangled positions may differ between frames by round-off
 * and what it leads to; both have no inverted tetrahedron.) */
static void check_rigid_motion(void)
{
  double R[3][3];
  uint64_t seed = 99;
  random_rotation_matrix(&seed, R);
  octahedron o, m;
  octahedron_make(&o);
  octahedron_make(&m);
  const int centre = 0;
  const pbng_gpbd_cluster c = octahedron_cluster(&o, &centre, 1), cm = octahedron_cluster(&m, &centre, 1);
  o.x[0][0] = 1.4, o.x[0][1] = 0.1, o.x[0][2] = -0.05;
  const double shift[3] = {3, -2, 5}, z[3] = {0, 0, 0};
  for (int a = 0; a < NODES; ++a)
    for (int i = 0; i < 3; ++i) m.x[a][i] = R[i][0] * o.x[a][0] + R[i][1] * o.x[a][1] + R[i][2] * o.x[a][2] + shift[i];
  double g[3], gm[3], worst_g = 0;
  const double K = pbng_gpbd_untangle_node_objective(&c, 0, z, 1e-2, g), Km = pbng_gpbd_untangle_node_objective(&cm, 0, z, 1e-2, gm);
  for (int i = 0; i < 3; ++i) worst_g = fmax(worst_g, fabs(gm[i] - (R[i][0] * g[0] + R[i][1] * g[1] + R[i][2] * g[2])) / fabs(K));
  printf("untangle: rigid motion, (U1) %.3e against %.3e, its gradient turned within %.1e\n", K, Km, worst_g);
  check(fabs(K - Km) <= 1e-12 * fabs(K), "(U1) invariant under a rigid motion", K, Km);
  check(worst_g < 1e-12, "(U1)'s gradient turns with a rigid motion", worst_g, 1e-12);
  const pbng_gpbd_untangle_options opt = {.eps = 1e-3, .sweeps = 50, .max_rings = 0};
  check(pbng_gpbd_untangle(&cm, &opt) == 0 && inverted(&m) == 0, "the moved fold untangled", inverted(&m), 0);
}

static void check_two_nodes_and_rest(void)
{
  octahedron o;
  octahedron_make(&o);
  const int both[2] = {0, 1};
  const pbng_gpbd_cluster c = octahedron_cluster(&o, both, 2);
  o.x[1][0] = -0.6; /* corner +x pulled through the centre */
  o.x[0][0] = 0.3;
  const pbng_gpbd_untangle_options opt = {.eps = 1e-3, .sweeps = 50, .max_rings = 0};
  const int before = inverted(&o), left = pbng_gpbd_untangle(&c, &opt);
  printf("untangle: two nodes, inverted %d -> %d\n", before, left);
  check(before > 0 && left == 0, "two tangled nodes untangled together", before, left);

  octahedron r;
  octahedron_make(&r);
  const pbng_gpbd_cluster cr = octahedron_cluster(&r, both, 2);
  double x0[NODES][3];
  memcpy(x0, r.x, sizeof(x0));
  check(pbng_gpbd_untangle(&cr, &opt) == 0 && memcmp(x0, r.x, sizeof(x0)) == 0, "an untangled cluster is left as it is", 0, 0);
}

/* A random tetrahedron's rest shape (positively oriented) and positions near it (tangled: a node pushed through). */
static void random_tet(uint64_t *seed, int tangled, pbng_gpbd_tet_rest *rest, double x[4][3])
{
  double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) X[a][k] += 0.2 * (2 * next_random(seed) - 1);
  (void)pbng_gpbd_tet_rest_shape((const double(*)[3])X, rest);
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) x[a][k] = X[a][k] + 0.3 * (2 * next_random(seed) - 1);
  if (tangled) x[0][0] = x[0][1] = x[0][2] = 0.6 + 0.2 * next_random(seed); /* through the opposite face */
}

/* Relative error of the exact 12 x 12 Hessian against central differences of the gradient (h = 1e-6). */
static double hessian_error(const pbng_gpbd_tet_rest *rest, double x[4][3], double delta2)
{
  double H[144], err = 0, norm = 0;
  pbng_gpbd_untangle_tet_hessian(rest, (const double(*)[3])x, delta2, 0, H);
  for (int q = 0; q < 12; ++q) {
    double gp[12], gm[12];
    const double keep = x[q / 3][q % 3];
    x[q / 3][q % 3] = keep + 1e-6;
    pbng_gpbd_untangle_tet_gradient(rest, (const double(*)[3])x, delta2, gp);
    x[q / 3][q % 3] = keep - 1e-6;
    pbng_gpbd_untangle_tet_gradient(rest, (const double(*)[3])x, delta2, gm);
    x[q / 3][q % 3] = keep;
    for (int p = 0; p < 12; ++p) {
      err = fmax(err, fabs((gp[p] - gm[p]) / 2e-6 - H[12 * p + q]));
      norm = fmax(norm, fabs(H[12 * p + q]));
    }
  }
  return err / norm;
}

/* The least eigenvalue of the PSD Hessian relative to its largest magnitude. */
static double psd_least_eigenvalue(const pbng_gpbd_tet_rest *rest, double x[4][3], double delta2)
{
  double H[144], w[12], V[144], least = INFINITY, most = 0;
  pbng_gpbd_untangle_tet_hessian(rest, (const double(*)[3])x, delta2, 1, H);
  dense_symmetric_eigen(12, H, w, V);
  for (int i = 0; i < 12; ++i) least = fmin(least, w[i]), most = fmax(most, fabs(w[i]));
  return least / most;
}

static void check_hessian(void)
{
  uint64_t seed = 4242;
  double worst_smooth = 0, worst_tangled = 0, least = INFINITY;
  for (int trial = 0; trial < 20; ++trial) {
    pbng_gpbd_tet_rest rest;
    double x[4][3];
    random_tet(&seed, 0, &rest, x);
    worst_smooth = fmax(worst_smooth, hessian_error(&rest, x, 0.0));
    least = fmin(least, psd_least_eigenvalue(&rest, x, 0.0));
    random_tet(&seed, 1, &rest, x);
    worst_tangled = fmax(worst_tangled, hessian_error(&rest, x, 1e-2));
    least = fmin(least, psd_least_eigenvalue(&rest, x, 1e-2));
  }
  printf("untangle: Hessian against differences of the gradient %.2e (untangled), %.2e (tangled, delta > 0); PSD one's least eigenvalue %.1e\n",
         worst_smooth, worst_tangled, least);
  check(worst_smooth < 1e-6, "(U1)'s Hessian, untangled tetrahedra", worst_smooth, 1e-6);
  check(worst_tangled < 1e-6, "(U1)'s Hessian, tangled tetrahedra", worst_tangled, 1e-6);
  check(least > -1e-12, "the clamped Hessian positive semidefinite", least, -1e-12);
}

enum { FOLD_NODES = 64, FOLD_TETS = 128 };

typedef struct {
  int32_t nnodes, ntets;
  double x[FOLD_NODES][3];
  uint8_t movable[FOLD_NODES];
  int32_t tet[FOLD_TETS][4];
  pbng_gpbd_tet_rest rest[FOLD_TETS];
  int32_t adj_start[FOLD_NODES + 1], adj[4 * FOLD_TETS];
} fold_cluster;

/* Reads the stalled fold: "nnodes ntets", per node "movable x y z", per tetrahedron "4 nodes, rest volume, B (9)". */
static int fold_read(const char *path, fold_cluster *f)
{
  FILE *in = fopen(path, "r");
  if (!in) return -1;
  int ok = fscanf(in, "%d %d", &f->nnodes, &f->ntets) == 2 && f->nnodes <= FOLD_NODES && f->ntets <= FOLD_TETS;
  for (int32_t a = 0; ok && a < f->nnodes; ++a) {
    int m;
    ok = fscanf(in, "%d %lf %lf %lf", &m, &f->x[a][0], &f->x[a][1], &f->x[a][2]) == 4;
    f->movable[a] = (uint8_t)m;
  }
  for (int32_t t = 0; ok && t < f->ntets; ++t) {
    ok = fscanf(in, "%d %d %d %d %lf", &f->tet[t][0], &f->tet[t][1], &f->tet[t][2], &f->tet[t][3], &f->rest[t].volume) == 5;
    for (int i = 0; ok && i < 9; ++i) ok = fscanf(in, "%lf", &f->rest[t].B[i]) == 1;
  }
  fclose(in);
  int32_t k = 0;
  for (int32_t a = 0; ok && a < f->nnodes; ++a) {
    f->adj_start[a] = k;
    for (int32_t t = 0; t < f->ntets && f->movable[a]; ++t)
      for (int s = 0; s < 4; ++s)
        if (f->tet[t][s] == a) f->adj[k++] = 4 * t + s;
  }
  f->adj_start[f->nnodes] = k;
  return ok ? 0 : -1;
}

/* The stalled fold projected with at most `steps` joint steps; returns the tetrahedra left inverted, positions in out. */
static int untangle_stalled(const char *path, int steps, double out[FOLD_NODES][3])
{
  static fold_cluster f;
  static double work[200000];
  if (fold_read(path, &f) != 0) {
    check(0, "tests/data/gpbd_stalled_fold.txt read", 0, 0);
    return -1;
  }
  const pbng_gpbd_cluster c = {.nnodes = f.nnodes, .ntets = f.ntets, .x = &f.x[0][0], .movable = f.movable, .tet = (const int32_t(*)[4])f.tet,
                               .rest = f.rest, .adj_start = f.adj_start, .adj = f.adj, .work = work};
  check(pbng_gpbd_untangle_work_size(f.nnodes, f.ntets) <= sizeof(work) / sizeof(work[0]), "the work space fits", 0, 0);
  const pbng_gpbd_untangle_options opt = {.eps = 1e-3, .sweeps = 50, .max_rings = 0, .joint_steps = steps};
  const int left = pbng_gpbd_untangle(&c, &opt);
  memcpy(out, f.x, sizeof(f.x));
  return left;
}

static void check_stalled_fold(void)
{
  const char *data = getenv("PBNG_TEST_DATA");
  char path[1024];
  snprintf(path, sizeof(path), "%s/gpbd_stalled_fold.txt", data ? data : "tests/data");
  static double x0[FOLD_NODES][3], x1[FOLD_NODES][3], x2[FOLD_NODES][3];
  const int nodewise = untangle_stalled(path, 0, x0), joint = untangle_stalled(path, 100, x1);
  (void)untangle_stalled(path, 100, x2);
  printf("untangle: stalled fold, node-wise sweeps leave %d inverted, with the joint step %d\n", nodewise, joint);
  check(nodewise > 0, "node-wise sweeps alone stall on the fold", nodewise, 1);
  check(joint == 0, "the joint step untangles the fold", joint, 0);
  check(memcmp(x1, x2, sizeof(x1)) == 0, "the joint step deterministic: bitwise the same twice", 0, 0);
}

int main(void)
{
  check_gradients();
  check_fold();
  check_rigid_motion();
  check_two_nodes_and_rest();
  check_hessian();
  check_stalled_fold();
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
