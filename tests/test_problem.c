/* The discrete problem's derivatives: the nodal force of Eq. 35 (+ loads and inertia) equals minus
 * the gradient of the total energy (Eq. 17 / the incremental potential) by finite differences, and
 * the modified nodal Hessian (Eq. 37) is symmetric positive definite, for every generated element
 * kind; the patch test (a linear field has zero force at interior nodes) per kind; the lumped mass
 * sums to rho V; all of it also on a mesh mixing hexahedra, pyramids and prisms (tests/data/mixed_box.py,
 * stretched to the grids' 1.5 x 1 x 1 box: el NULL below). Also generator counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "test_check.h"
#include "core/mat3.h"
#include "mesh/generate.h"
#include "parallel/coloring.h"
#include "parallel/dmesh.h"
#include "problem/problem.h"

typedef struct {
  pbng_mesh mesh;
  pbng_dmesh dm;
  pbng_bc_list bcs;
  pbng_problem pb;
} fixture;

/* Weak constraints between random interpolated points: an element's barycentric point against a
 * node or an edge point, isotropic and anisotropic (Eq. 18-19). */
static PetscErrorCode add_random_weak_constraints(pbng_mesh *mesh, uint64_t *seed)
{
  pbng_weak_constraint c[6];

  PetscFunctionBeginUser;
  for (int k = 0; k < 6; ++k) {
    const int64_t e = (int64_t)(next_random(seed) * (double)mesh->nelems) % mesh->nelems;
    int64_t nodes0[4], nodes1[2] = {(int64_t)(next_random(seed) * (double)mesh->nnodes) % mesh->nnodes, (17 * k + 5) % mesh->nnodes};
    double w0[4], w1[2] = {0.3, 0.7}, sum = 0, normal[3] = {next_random(seed) - 0.5, 1.0, next_random(seed)};
    for (int a = 0; a < 4; ++a) nodes0[a] = mesh->elems[(int64_t)mesh->nen * e + a], w0[a] = 0.1 + next_random(seed), sum += w0[a];
    for (int a = 0; a < 4; ++a) w0[a] /= sum;
    w0[3] = 1.0 - w0[0] - w0[1] - w0[2];
    const char *err = pbng_weak_constraint_init(4, nodes0, w0, 1 + k % 2, nodes1, k % 2 ? w1 : (double[]){1.0}, 80.0 + 10 * k,
                                                k % 3 ? 20.0 : 80.0 + 10 * k, k % 3 ? normal : NULL, &c[k]);
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s", err);
  }
  PetscCall(pbng_mesh_add_weak_constraints(mesh, 6, c));
  PetscFunctionReturn(0);
}

/* Items sharing node `node`: their colors are distinct (1) or not (0). */
static int distinct_colors(const int32_t *items, int n, const int32_t *color)
{
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (color[items[a]] == color[items[b]]) return 0;
  return 1;
}

/* PBD/XPBD element and weak-constraint colors: items sharing a node differ; PBNG's weak blocks: no two
 * blocks of one color touch a common element or weak constraint. */
static PetscErrorCode check_constraint_colorings(const pbng_mesh *mesh, const pbng_node_elements *adj)
{
  pbng_constraint_colors cc;
  int32_t items[256];

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_colors_compute(mesh, adj, PETSC_TRUE, &cc));
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    int n = 0, nw = 0;
    for (int64_t k = adj->start[i]; k < adj->start[i + 1] && n < 256; ++k) items[n++] = adj->entry[k] / 4;
    check(distinct_colors(items, n, cc.elem), "elements around a node have distinct PBD colors", (double)i, n);
    for (int64_t c = 0; c < mesh->nweak; ++c)
      for (int j = 0; j < mesh->weak[c].nnodes; ++j)
        if (mesh->weak[c].node[j] == i) items[nw++] = (int32_t)c;
    check(distinct_colors(items, nw, cc.weak), "weak constraints around a node have distinct PBD colors", (double)i, nw);
  }
  /* blocks: mark, per color, the elements and constraints its blocks touch; a second block of that color
   * must not touch any of them */
  for (int b = 0; b < cc.nblock_colors; ++b) {
    int64_t *owner_e, *owner_w;
    PetscCall(PetscMalloc2(mesh->nelems, &owner_e, mesh->nweak, &owner_w));
    for (int64_t e = 0; e < mesh->nelems; ++e) owner_e[e] = -1;
    for (int64_t c = 0; c < mesh->nweak; ++c) owner_w[c] = -1;
    int ok = 1;
    for (int64_t c = 0; c < mesh->nweak; ++c) {
      if (cc.block[c] != b) continue;
      for (int j = 0; j < mesh->weak[c].nnodes; ++j) {
        const int64_t i = mesh->weak[c].node[j];
        for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k) {
          const int64_t e = adj->entry[k] / 4;
          ok &= owner_e[e] == -1 || owner_e[e] == c;
          owner_e[e] = c;
        }
        for (int64_t w = 0; w < mesh->nweak; ++w)
          for (int q = 0; q < mesh->weak[w].nnodes; ++q)
            if (mesh->weak[w].node[q] == i) {
              ok &= owner_w[w] == -1 || owner_w[w] == c;
              owner_w[w] = c;
            }
      }
    }
    check(ok, "weak-constraint blocks of one color touch no common element or constraint", b, cc.nblock_colors);
    PetscCall(PetscFree2(owner_e, owner_w));
  }
  PetscCall(pbng_constraint_colors_destroy(&cc));
  PetscFunctionReturn(0);
}

/* fixture_create's `curved`: every rest position moved by a smooth map, so that no element is
 * affine (the general per-quadrature-point geometry instead of the affine one). */
static void curve_rest_positions(pbng_mesh *mesh)
{
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    double *X = &mesh->X[3 * i];
    const double d[3] = {0.04 * sin(2.0 * X[1] + X[2]), 0.03 * sin(3.0 * X[0]), 0.05 * sin(X[0] + 2.0 * X[1])};
    for (int k = 0; k < 3; ++k) X[k] += d[k];
  }
}

/* The mixed mesh (tests/data/mixed_box_v41_binary.msh: hex8, pyramid5, prism6) stretched to 1.5 x 1 x 1. */
static PetscErrorCode read_mixed_box(pbng_mesh *mesh)
{
  char path[PETSC_MAX_PATH_LEN];
  const char *env = getenv("PBNG_TEST_DATA");

  PetscFunctionBeginUser;
  if (env && env[0]) snprintf(path, sizeof(path), "%s/mixed_box_v41_binary.msh", env);
  else {
    snprintf(path, sizeof(path), "%s", __FILE__);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0), "data/mixed_box_v41_binary.msh");
  }
  PetscCall(pbng_mesh_read(path, mesh));
  for (int64_t i = 0; i < mesh->nnodes; ++i) mesh->X[3 * i] *= 1.5;
  PetscFunctionReturn(0);
}

/* The kind's name, or "mixed". */
static const char *kinds_name(const pbng_mesh *mesh) { return mesh->etype ? mesh->etype->name : "mixed"; }

/* el: a generated grid of that kind, or NULL for the mixed mesh; released: the x = 1.5 face a released
 * set (-bcK_release) twisting about x until t = 1. */
static PetscErrorCode fixture_create_released(fixture *fx, pbng_material_kind kind, pbng_mode mode, int weak, const pbng_grid_elements *el, int curved,
                                              int released)
{
  const int64_t n[3] = {4, 3, 3};
  const double lo[3] = {0, 0, 0}, hi[3] = {1.5, 1, 1}, clamp[6] = {0, 0, 0, 0, 1, 1}, g[3] = {0.3, -9.8, 0.1}, end[6] = {1.5, 0, 0, 1.5, 1, 1};
  const pbng_motion twist = {.axis = {1, 0, 0}, .center = {1.5, 0.5, 0.5}, .rotation_rate = 0.4, .velocity = {0.05, 0, 0}};
  pbng_node_elements adj;
  int32_t *color, *part;
  int8_t *node_bc;
  int ncolors;
  int64_t selected[PBNG_MAX_BC];
  pbng_submesh sub;
  pbng_material mat;

  PetscFunctionBeginUser;
  if (el) PetscCall(pbng_generate_grid(n, lo, hi, el, &fx->mesh));
  else PetscCall(read_mixed_box(&fx->mesh));
  if (curved) curve_rest_positions(&fx->mesh);
  if (weak) {
    uint64_t seed = 0x5eedull + (uint64_t)kind;
    PetscCall(add_random_weak_constraints(&fx->mesh, &seed));
  }
  PetscCall(PetscMemzero(&fx->bcs, sizeof(fx->bcs)));
  PetscCall(pbng_bc_add_box(&fx->bcs, "clamp", clamp, NULL));
  if (released) {
    PetscCall(pbng_bc_add_box(&fx->bcs, "twisted", end, &twist));
    PetscCall(pbng_bc_set_release(&fx->bcs, 1, 1.0));
  }
  PetscCall(PetscMalloc3(fx->mesh.nnodes, &color, fx->mesh.nnodes, &node_bc, fx->mesh.nnodes, &part));
  PetscCall(pbng_node_elements_build(&fx->mesh, &adj));
  PetscCall(pbng_color_nodes(&fx->mesh, &adj, color, &ncolors));
  check(pbng_coloring_is_valid(&fx->mesh, color), "coloring separates the nodes of every element and weak constraint", ncolors, 0);
  if (weak && el && el->kind == PBNG_ELEMENT_TET4) PetscCall(check_constraint_colorings(&fx->mesh, &adj));
  PetscCall(pbng_node_elements_destroy(&adj));
  for (int64_t i = 0; i < fx->mesh.nnodes; ++i) part[i] = 0;
  PetscCall(pbng_submesh_extract(&fx->mesh, color, ncolors, NULL, part, 0, &sub));
  PetscCall(pbng_bc_assign(&fx->bcs, &sub.mesh, pbng_mesh_extent(&sub.mesh), node_bc, selected));
  PetscCall(pbng_dmesh_create(PETSC_COMM_SELF, &sub, node_bc, &fx->dm));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(PetscFree3(color, node_bc, part));
  pbng_material_init(&mat, kind, 1e3, 0.3);
  PetscCall(pbng_problem_create(&fx->dm, &fx->bcs, &mat, NULL, 10.0, g, mode, 0.05, &fx->pb));
  PetscCall(pbng_problem_begin_frame(&fx->pb, 0.05));
  PetscFunctionReturn(0);
}

static PetscErrorCode fixture_create(fixture *fx, pbng_material_kind kind, pbng_mode mode, int weak, const pbng_grid_elements *el, int curved)
{
  return fixture_create_released(fx, kind, mode, weak, el, curved, 0);
}

static PetscErrorCode fixture_destroy(fixture *fx)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_destroy(&fx->pb));
  PetscCall(pbng_dmesh_destroy(&fx->dm));
  PetscCall(pbng_mesh_destroy(&fx->mesh));
  PetscFunctionReturn(0);
}

static PetscErrorCode energy_at(fixture *fx, double *E)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_energy(&fx->pb, NULL, E)); /* the total energy alone: no forces computed */
  PetscFunctionReturn(0);
}

static int is_spd(const double A[9])
{
  const double m1 = A[0], m2 = A[0] * A[4] - A[1] * A[3], m3 = mat3_det(A);
  const double asym = fabs(A[1] - A[3]) + fabs(A[2] - A[6]) + fabs(A[5] - A[7]);
  return m1 > 0 && m2 > 0 && m3 > 0 && asym <= 1e-12 * (fabs(A[0]) + fabs(A[4]) + fabs(A[8]));
}

/* Node i's force and SPD block at the fixture's positions against central differences of the energy;
 * label names the case in the messages. */
static PetscErrorCode check_node_against_energy(fixture *fx, int32_t i, const char *label)
{
  double f[3], A[9];
  char what[200];

  PetscFunctionBeginUser;
  pbng_node_force(&fx->pb, i, fx->pb.x, f, A, 0);
  snprintf(what, sizeof(what), "node block SPD (%s, node %d)", label, (int)i);
  check(is_spd(A), what, A[0], A[4]);
  for (int d = 0; d < 3; ++d) {
    const double h = 1e-6, x0 = fx->pb.x[3 * i + d];
    double Ep, Em;
    fx->pb.x[3 * i + d] = x0 + h;
    PetscCall(energy_at(fx, &Ep));
    fx->pb.x[3 * i + d] = x0 - h;
    PetscCall(energy_at(fx, &Em));
    fx->pb.x[3 * i + d] = x0;
    const double fd = -(Ep - Em) / (2 * h);
    snprintf(what, sizeof(what), "force = -dE/dx (%s, node %d, dof %d)", label, (int)i, d);
    check(fabs(fd - f[d]) <= 1e-5 * (1 + fabs(f[d])), what, f[d], fd);
  }
  PetscFunctionReturn(0);
}

/* f_i = -dE/dx_i by central differences, at a randomly perturbed (partly inverted) state; with weak
 * constraints, every node of theirs is checked. */
static PetscErrorCode check_force_gradient(pbng_material_kind kind, pbng_mode mode, int weak, const pbng_grid_elements *el, int curved)
{
  fixture fx;
  uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)kind * 77 + (uint64_t)mode;
  double amplitude = el ? 0.25 / pbng_element_type_get(el->kind)->order : 0.2; /* a quarter of the node spacing (mixed: 1/5 of 1/4) */
  char what[160];

  PetscFunctionBeginUser;
  PetscCall(fixture_create(&fx, kind, mode, weak, el, curved));
  if (!el || el->kind != PBNG_ELEMENT_TET4) {
    snprintf(what, sizeof(what), "geometry stored %s (%s, curved %d)", curved ? "per quadrature point" : "as affine", kinds_name(&fx.mesh), curved);
    check(fx.pb.geo.affine == !curved, what, fx.pb.geo.affine, !curved);
  }
  if (kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* no point inverted (its energy has no value there): the largest amplitude 2^-k of the others' that keeps E finite */
    double E = INFINITY;
    uint64_t trial_seed = seed;
    for (int k = 0; k < 12 && !isfinite(E); ++k) {
      trial_seed = seed;
      if (k) amplitude *= 0.5;
      for (int32_t i = 0; i < fx.dm.nfree; ++i)
        for (int d = 0; d < 3; ++d) fx.pb.x[3 * i + d] = fx.dm.X[3 * i + d] + amplitude * (next_random(&trial_seed) - 0.5);
      PetscCall(energy_at(&fx, &E));
    }
    snprintf(what, sizeof(what), "neohookean_log: a perturbed state with a finite energy (%s, amplitude %g)", kinds_name(&fx.mesh), amplitude);
    check(isfinite(E) && amplitude >= 0.02 / (el ? pbng_element_type_get(el->kind)->order : 1), what, E, amplitude);
    for (int32_t i = 0; i < fx.dm.nfree; ++i)
      for (int d = 0; d < 3; ++d) fx.pb.x[3 * i + d] = fx.dm.X[3 * i + d];
  }
  for (int32_t i = 0; i < fx.dm.nfree; ++i)
    for (int d = 0; d < 3; ++d) fx.pb.x[3 * i + d] += amplitude * (next_random(&seed) - 0.5);
  for (int32_t i = 0; i < fx.dm.nfree; ++i) {
    const int has_weak = fx.dm.wadj_start[i + 1] > fx.dm.wadj_start[i];
    if (weak ? !has_weak : i % 3) continue;
    snprintf(what, sizeof(what), "%s, material %d, mode %d, weak %d", kinds_name(&fx.mesh), kind, mode, weak);
    PetscCall(check_node_against_energy(&fx, i, what));
  }
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* Elastoplastic StVK (random plastic strains, one per element, constant over its quadrature points)
 * with a released set holding its nodes on springs, on the element kind el (NULL: the mixed mesh;
 * curved: no element affine, and the x = 1.5 face moved out of the set's box: no spring): f_i = -dE/dx_i by central differences, the node blocks SPD; then, after
 * the release, no spring is left (the handle nodes' forces are the elements' alone) and an update at
 * rest with eps_p = 0 leaves eps_p 0 below the yield. */
static PetscErrorCode check_plastic_force_gradient(pbng_mode mode, const pbng_grid_elements *el, int curved)
{
  fixture fx;
  uint64_t seed = 0xfeedull + (uint64_t)mode;
  const pbng_plasticity p = {.yield = 0.01, .creep = 1.0, .max = 0.5};
  const double amplitude = el ? 0.1 / pbng_element_type_get(el->kind)->order : 0.08; /* a fifth of the node spacing (mixed: of 1/4) */
  char what[200];
  int handles = 0;

  PetscFunctionBeginUser;
  PetscCall(fixture_create_released(&fx, PBNG_MATERIAL_STVK, mode, 0, el, curved, 1));
  PetscCall(pbng_problem_set_plasticity(&fx.pb, &p, 0.05));
  int64_t changed;
  PetscCall(pbng_problem_plastic_update(&fx.pb, 0.05, &changed));
  check(changed == 0, "no plastic flow at rest", (double)changed, 0);
  PetscCall(pbng_problem_set_handles(&fx.pb, 1.5, 1e2));
  for (int32_t e = 0; e < fx.dm.nelems; ++e)
    for (int c = 0; c < 6; ++c) fx.pb.plastic_strain[6 * e + c] = 0.08 * (next_random(&seed) - 0.5);
  for (int32_t i = 0; i < fx.dm.nfree; ++i)
    for (int d = 0; d < 3; ++d) fx.pb.x[3 * i + d] += amplitude * (next_random(&seed) - 0.5);
  for (int32_t i = 0; i < fx.dm.nfree; ++i) {
    double xD[3];
    const int held = pbng_problem_handle_target(&fx.pb, i, xD);
    handles += held;
    if (!held && i % 2) continue;
    snprintf(what, sizeof(what), "plastic StVK on %s (curved %d), released set, mode %d, handle %d", kinds_name(&fx.mesh), curved, mode, held);
    PetscCall(check_node_against_energy(&fx, i, what));
  }
  snprintf(what, sizeof(what), "the released set's nodes are free nodes held by springs (%s, curved %d)", kinds_name(&fx.mesh), curved);
  check(handles == (int)fx.pb.handle_nodes && (handles > 0 || curved), what, handles, (double)fx.pb.handle_nodes); /* curved: the end face left the box */
  pbng_problem_set_time(&fx.pb, 1.2); /* released */
  check(!pbng_problem_handles_active(&fx.pb), "released after t = 1", 1, 0);
  for (int32_t i = 0; i < fx.dm.nfree; ++i) {
    double xD[3];
    check(!pbng_problem_handle_target(&fx.pb, i, xD), "no node held after the release", i, 0);
  }
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* The flow on any kind is driven by the element's volume-mean Green strain: under a homogeneous
 * deformation x = A X + b (E the same at every quadrature point, the mean E itself) every element's
 * update from eps_p = 0 equals the single-point one at F = A (pbng_plastic_update_at) to round-off,
 * the flow counted in every element; and pbng_problem_mean_green_strain is the V_q-weighted mean of
 * the points' strains under a random deformation (computed here point by point). */
static PetscErrorCode check_plastic_mean_strain_flow(const pbng_grid_elements *el, int curved)
{
  const double A[9] = {1.12, 0.05, 0.0, 0.02, 0.93, 0.04, 0.0, -0.03, 1.01}, b[3] = {0.1, -0.2, 0.05};
  const pbng_plasticity p = {.yield = 0.01, .creep = 2.0, .max = 0.5};
  fixture fx;
  char what[200];
  uint64_t seed = 0xabcdull;
  double ref[6] = {0}, err = 0.0, mean_err = 0.0;
  int64_t changed;

  PetscFunctionBeginUser;
  PetscCall(fixture_create(&fx, PBNG_MATERIAL_STVK, PBNG_MODE_QUASISTATIC, 0, el, curved));
  PetscCall(pbng_problem_set_plasticity(&fx.pb, &p, 0.1));
  for (int32_t i = 0; i < fx.dm.nlocal; ++i)
    for (int r = 0; r < 3; ++r) fx.pb.x[3 * i + r] = b[r] + A[3 * r] * fx.dm.X[3 * i] + A[3 * r + 1] * fx.dm.X[3 * i + 1] + A[3 * r + 2] * fx.dm.X[3 * i + 2];
  PetscCall(pbng_problem_plastic_update(&fx.pb, 0.1, &changed));
  check(pbng_plastic_update_at(&p, 0.1, A, ref) == 1, "the homogeneous strain flows", ref[0], 0);
  for (int32_t e = 0; e < fx.dm.nelems; ++e)
    for (int c = 0; c < 6; ++c) err = PetscMax(err, fabs(fx.pb.plastic_strain[6 * e + c] - ref[c]));
  snprintf(what, sizeof(what), "homogeneous flow: every element's eps_p is the single-point update's (%s, curved %d)", kinds_name(&fx.mesh), curved);
  check(err <= 1e-13 && changed == fx.dm.nelems, what, err, (double)changed);
  for (int32_t i = 0; i < fx.dm.nlocal; ++i)
    for (int d = 0; d < 3; ++d) fx.pb.x[3 * i + d] += 0.05 * (next_random(&seed) - 0.5);
  for (int32_t e = 0; e < fx.dm.nelems; ++e) {
    const pbng_element_reference *r = pbng_geometry_ref(&fx.pb.geo, e);
    const int32_t *t = &fx.dm.elems[(int64_t)fx.pb.geo.nen * e];
    double E[9], sum[9] = {0}, V = 0.0;
    pbng_problem_mean_green_strain(&fx.pb, e, E);
    for (int q = 0; q < r->nq; ++q) {
      double F[9], C[9];
      const double Vq = pbng_geometry_qp_volume(&fx.pb.geo, r, e, q);
      pbng_geometry_qp_F(&fx.pb.geo, r, e, q, t, fx.pb.x, F);
      mat3_mul((double[9]){F[0], F[3], F[6], F[1], F[4], F[7], F[2], F[5], F[8]}, F, C);
      for (int k = 0; k < 9; ++k) sum[k] += Vq * 0.5 * (C[k] - (k % 4 == 0));
      V += Vq;
    }
    for (int k = 0; k < 9; ++k) mean_err = PetscMax(mean_err, fabs(E[k] - sum[k] / V));
  }
  snprintf(what, sizeof(what), "mean Green strain is sum_q V_q E_q / sum_q V_q (%s, curved %d)", kinds_name(&fx.mesh), curved);
  check(mean_err <= 1e-14, what, mean_err, 0);
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* Patch test: every node on x = A X + b (a linear field) makes the internal force of each node off
 * the box's surface zero (the quadrature integrates dN_a/dX exactly), and the lumped masses sum to
 * rho V (HRZ keeps the element mass). */
static PetscErrorCode check_patch_and_mass(const pbng_grid_elements *el)
{
  const double A[9] = {1.1, 0.2, -0.1, 0.05, 0.9, 0.15, -0.2, 0.1, 1.2}, b[3] = {0.3, -0.2, 0.5};
  fixture fx;
  char what[160];
  double fmax = 0.0, scale = 0.0, mass = 0.0;

  PetscFunctionBeginUser;
  PetscCall(fixture_create(&fx, PBNG_MATERIAL_STABLE_NEOHOOKEAN, PBNG_MODE_QUASISTATIC, 0, el, 0));
  for (int d = 0; d < 3; ++d) fx.pb.gravity[d] = 0.0;
  for (int32_t i = 0; i < fx.dm.nlocal; ++i)
    for (int r = 0; r < 3; ++r) {
      fx.pb.x[3 * i + r] = b[r];
      for (int s = 0; s < 3; ++s) fx.pb.x[3 * i + r] += A[3 * r + s] * fx.dm.X[3 * i + s];
    }
  for (int32_t i = 0; i < fx.dm.nowned; ++i) {
    const double *X = &fx.dm.X[3 * i];
    const int inside = X[0] > 1e-9 && X[0] < 1.5 - 1e-9 && X[1] > 1e-9 && X[1] < 1 - 1e-9 && X[2] > 1e-9 && X[2] < 1 - 1e-9;
    double f[3], Af[9];
    mass += fx.pb.mass[i];
    if (i >= fx.dm.nfree) continue;
    pbng_node_force(&fx.pb, i, fx.pb.x, f, Af, 0);
    scale = PetscMax(scale, fabs(Af[0]));
    if (inside) fmax = PetscMax(fmax, sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]));
  }
  snprintf(what, sizeof(what), "patch test: a linear field has zero interior force (%s, relative to the node stiffness)", kinds_name(&fx.mesh));
  check(fmax <= 1e-12 * scale, what, fmax, scale);
  snprintf(what, sizeof(what), "lumped masses sum to rho V (%s)", kinds_name(&fx.mesh));
  check(fabs(mass - 10.0 * 1.5) <= 1e-12 * 15.0, what, mass, 15.0);
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* High-order grids: node and element counts, no two nodes at one point (the edge and face nodes of
 * neighbouring elements are shared, so the mesh is conforming), total volume. */
static PetscErrorCode check_grid_kinds(void)
{
  const int64_t n[3] = {4, 3, 3}; /* 3 x 2 x 2 cells */
  const double lo[3] = {0, 0, 0}, hi[3] = {1.5, 1, 1};
  const struct {
    pbng_grid_elements el;
    int64_t nodes, elems;
  } cases[] = {
    {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE}, 36, 60},   {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_SIX}, 36, 72},
    {{PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_FIVE}, 7 * 5 * 5 - 12, 60}, /* the 12 cell centres are on no edge */
    {{PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_SIX}, 7 * 5 * 5, 72}, {{PBNG_ELEMENT_TET20, PBNG_TET_SPLIT_FIVE}, -1, 60},
    {{PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE}, 36, 12},    {{PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE}, 7 * 5 * 5, 12},
  };
  char what[160];

  PetscFunctionBeginUser;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    pbng_mesh m;
    pbng_element_reference ref;
    PetscCall(pbng_generate_grid(n, lo, hi, &cases[c].el, &m));
    snprintf(what, sizeof(what), "grid counts (%s, split %d)", m.etype->name, (int)cases[c].el.split);
    check((cases[c].nodes < 0 || m.nnodes == cases[c].nodes) && m.nelems == cases[c].elems, what, (double)m.nnodes, (double)cases[c].nodes);
    int64_t coincide = 0; /* nodes at the same point (a hanging, unshared edge or face node) */
    for (int64_t i = 0; i < m.nnodes; ++i)
      for (int64_t j = i + 1; j < m.nnodes; ++j)
        coincide += fabs(m.X[3 * i] - m.X[3 * j]) + fabs(m.X[3 * i + 1] - m.X[3 * j + 1]) + fabs(m.X[3 * i + 2] - m.X[3 * j + 2]) < 1e-12;
    snprintf(what, sizeof(what), "grid nodes are distinct points (%s)", m.etype->name);
    check(coincide == 0, what, (double)coincide, 0);
    pbng_element_reference_init(m.etype, &ref);
    double V = 0.0;
    for (int64_t e = 0; e < m.nelems; ++e) {
      double X[PBNG_MAX_ELEMENT_NODES][3], Vq[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], det;
      for (int a = 0; a < m.etype->nodes; ++a)
        for (int d = 0; d < 3; ++d) X[a][d] = m.X[3 * m.elems[(int64_t)m.etype->nodes * e + a] + d];
      check(pbng_element_precompute(&ref, (const double(*)[3])X, Vq, grad, &det) == 0, "generated elements are valid", det, 0);
      for (int q = 0; q < ref.nq; ++q) V += Vq[q];
    }
    snprintf(what, sizeof(what), "grid volume (%s)", m.etype->name);
    check(fabs(V - 1.5) < 1e-12, what, V, 1.5);
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode check_generator_counts(void)
{
  const int res[4] = {2, 16, 32, 64};
  const int64_t nodes[4] = {8, 4096, 32768, 262144}, tets[4] = {5, 16875, 148955, 1250235};

  PetscFunctionBeginUser;
  for (int k = 0; k < 4; ++k) {
    pbng_mesh m;
    PetscCall(pbng_generate_res_box(res[k], NULL, &m));
    check(m.nnodes == nodes[k] && m.nelems == tets[k], "Res-N counts", (double)m.nelems, (double)tets[k]);
    double V = 0;
    for (int64_t e = 0; e < m.nelems; ++e) {
      const int32_t *t = &m.elems[4 * e];
      const double v = pbng_tet_signed_volume(&m.X[3 * t[0]], &m.X[3 * t[1]], &m.X[3 * t[2]], &m.X[3 * t[3]]);
      if (v <= 0) check(0, "positive volume", v, 0);
      V += v;
    }
    check(fabs(V - 1.0) < 1e-10, "Res-N box volume is 1", V, 1.0);
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

/* More than 64 colors (the coloring's first set width): weak constraints joining every pair of K = 70
 * nodes make a clique, which needs K colors; the coloring must still be valid (no element or weak
 * constraint with two nodes of one color) and use at least K colors. The weak-block coloring of the same
 * clique: every two constraints share or touch a constraint, so each block takes its own color. */
static PetscErrorCode check_many_colors(void)
{
  enum { K = 70 };
  const int64_t n[3] = {6, 6, 6};
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, one = 1.0;
  const pbng_grid_elements tet4 = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};
  pbng_weak_constraint *c;
  pbng_node_elements adj;
  pbng_mesh m;
  int32_t *color, *block;
  int ncolors, nblock_colors, nc = 0;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(n, lo, hi, &tet4, &m));
  PetscCall(PetscMalloc1(K * (K - 1) / 2, &c));
  for (int64_t a = 0; a < K; ++a)
    for (int64_t b = a + 1; b < K; ++b) {
      const int64_t na = 3 * a, nb = 3 * b; /* spread over the grid's 343 nodes */
      const char *err = pbng_weak_constraint_init(1, &na, &one, 1, &nb, &one, 10.0, 10.0, NULL, &c[nc++]);
      PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s", err);
    }
  PetscCall(pbng_mesh_add_weak_constraints(&m, nc, c));
  PetscCall(PetscMalloc2(m.nnodes, &color, m.nweak, &block));
  PetscCall(pbng_node_elements_build(&m, &adj));
  PetscCall(pbng_color_nodes(&m, &adj, color, &ncolors));
  check(pbng_coloring_is_valid(&m, color), "a 70-node weak-constraint clique is colored validly", ncolors, K);
  check(ncolors >= K && ncolors <= 128, "a 70-node clique takes at least 70 colors (beyond one 64-bit set)", ncolors, K);
  PetscCall(pbng_color_weak_blocks(&m, &adj, block, &nblock_colors));
  int distinct = 1;
  for (int64_t a = 0; a < m.nweak && distinct; ++a)
    for (int64_t b = a + 1; b < m.nweak; ++b)
      if (block[a] == block[b]) {
        distinct = 0;
        break;
      }
  check(distinct && nblock_colors == nc, "every weak block of a clique has its own color (2415 colors)", nblock_colors, nc);
  PetscCall(pbng_node_elements_destroy(&adj));
  PetscCall(PetscFree2(color, block));
  PetscCall(PetscFree(c));
  PetscCall(pbng_mesh_destroy(&m));
  PetscFunctionReturn(0);
}

/* Conformity: every interior triangular face is shared by exactly two tetrahedra (no hanging faces),
 * so the face count is 4M = 2 F_interior + F_boundary with F_boundary = 2 faces per boundary quad. */
static PetscErrorCode check_generator_conforming(void)
{
  const int N = 5;
  pbng_mesh m;
  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(N, NULL, &m));
  /* the surface of a conforming split cube has 6 (N-1)^2 quads, each split in 2 triangles */
  int64_t boundary_faces = 0;
  for (int64_t e = 0; e < m.nelems; ++e)
    for (int f = 0; f < 4; ++f) {
      int on_plane[6] = {1, 1, 1, 1, 1, 1}; /* all three face nodes on x=0, x=1, y=0, ... */
      for (int a = 0; a < 4; ++a) {
        if (a == f) continue;
        const double *X = &m.X[3 * m.elems[4 * e + a]];
        for (int d = 0; d < 3; ++d) {
          on_plane[2 * d] &= fabs(X[d]) < 1e-12;
          on_plane[2 * d + 1] &= fabs(X[d] - 1) < 1e-12;
        }
      }
      for (int p = 0; p < 6; ++p) boundary_faces += on_plane[p];
    }
  check(boundary_faces == 12 * (N - 1) * (N - 1), "boundary faces of a conforming box", (double)boundary_faces, 12.0 * (N - 1) * (N - 1));
  PetscCall(pbng_mesh_destroy(&m));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const pbng_grid_elements tet4 = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (int k = 0; k < PBNG_MATERIAL_COUNT; ++k) {
    PetscCall(check_force_gradient((pbng_material_kind)k, PBNG_MODE_QUASISTATIC, 0, &tet4, 0));
    PetscCall(check_force_gradient((pbng_material_kind)k, PBNG_MODE_DYNAMIC, 0, &tet4, 0));
    PetscCall(check_force_gradient((pbng_material_kind)k, PBNG_MODE_QUASISTATIC, 1, &tet4, 0));
  }
  for (int kind = PBNG_ELEMENT_TET10; kind <= PBNG_ELEMENT_HEX27; ++kind) {
    const pbng_grid_elements el = {(pbng_element_kind)kind, kind == PBNG_ELEMENT_TET10 ? PBNG_TET_SPLIT_SIX : PBNG_TET_SPLIT_FIVE};
    for (int k = 0; k < PBNG_MATERIAL_COUNT; ++k) PetscCall(check_force_gradient((pbng_material_kind)k, PBNG_MODE_QUASISTATIC, 0, &el, 0));
    PetscCall(check_force_gradient(PBNG_MATERIAL_NEOHOOKEAN, PBNG_MODE_DYNAMIC, 1, &el, 0));
    PetscCall(check_force_gradient(PBNG_MATERIAL_STABLE_NEOHOOKEAN, PBNG_MODE_QUASISTATIC, 0, &el, 1)); /* curved elements */
  }
  for (int kind = PBNG_ELEMENT_TET4; kind <= PBNG_ELEMENT_HEX27; ++kind) {
    const pbng_grid_elements el = {(pbng_element_kind)kind, PBNG_TET_SPLIT_FIVE};
    PetscCall(check_patch_and_mass(&el));
  }
  for (int k = 0; k < PBNG_MATERIAL_COUNT; ++k) PetscCall(check_force_gradient((pbng_material_kind)k, PBNG_MODE_QUASISTATIC, 0, NULL, 0));
  PetscCall(check_force_gradient(PBNG_MATERIAL_NEOHOOKEAN, PBNG_MODE_DYNAMIC, 1, NULL, 0));
  PetscCall(check_force_gradient(PBNG_MATERIAL_STABLE_NEOHOOKEAN, PBNG_MODE_QUASISTATIC, 0, NULL, 1)); /* curved: stored per quadrature point */
  PetscCall(check_patch_and_mass(NULL));
  PetscCall(check_plastic_force_gradient(PBNG_MODE_QUASISTATIC, &tet4, 0));
  PetscCall(check_plastic_force_gradient(PBNG_MODE_DYNAMIC, &tet4, 0));
  { /* plasticity on the other kinds: one eps_p per element at every quadrature point */
    const pbng_grid_elements tet10 = {PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_SIX}, hex8 = {PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE},
                             hex27 = {PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE};
    PetscCall(check_plastic_force_gradient(PBNG_MODE_QUASISTATIC, &tet10, 0));
    PetscCall(check_plastic_force_gradient(PBNG_MODE_QUASISTATIC, &hex8, 0));
    PetscCall(check_plastic_force_gradient(PBNG_MODE_DYNAMIC, &hex8, 1));
    PetscCall(check_plastic_force_gradient(PBNG_MODE_QUASISTATIC, &hex27, 0));
    PetscCall(check_plastic_force_gradient(PBNG_MODE_QUASISTATIC, NULL, 0));
    PetscCall(check_plastic_mean_strain_flow(&tet10, 0));
    PetscCall(check_plastic_mean_strain_flow(&hex8, 1));
    PetscCall(check_plastic_mean_strain_flow(NULL, 0));
  }
  PetscCall(check_grid_kinds());
  PetscCall(check_generator_counts());
  PetscCall(check_generator_conforming());
  PetscCall(check_many_colors());
  printf("test_problem: %d checks, %d failed\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures != 0;
}
