/* Peridynamic membranes as the problem's sheet energy (problem/pd_terms.h; docs/peridynamics.md#in-a-run):
 *  - the rings: one per vertex of a generated sheet, closed fans inside and open ones on the border;
 *  - the force pbng_problem_residual sums (rings of a node and of its neighbours, exact gradient with the
 *    moving virtual bond) is minus the derivative of pbng_problem_energy: central differences per
 *    coordinate of chosen nodes and along random directions, for both materials, with and without bending,
 *    on a curved, stretched state;
 *  - a flat affinely stretched sheet has zero force inside (the peridynamic membrane is the FEM one there);
 *  - a sheet with a vertex of two fans (a bow tie) is refused, naming the vertex. */
#include <math.h>
#include <string.h>
#include "mesh/sheet.h"
#include "problem/problem.h"
#include "test_check.h"
#include "test_common.h"

#define PI 3.14159265358979323846

typedef struct {
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_bc_list bcs;
  pbng_problem pb;
} fixture;

static PetscErrorCode fixture_create(fixture *fx, pbng_mesh *mesh, const pbng_pd_options *o)
{
  const double g[3] = {0, 0, 0};
  pbng_sheet_material sheet = {.bending_stiffness = 0, .weft = {1, 0, 0}, .density = 200};
  pbng_material mat;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(fx, sizeof(*fx)));
  PetscCall(test_build_subdomain(PETSC_COMM_SELF, mesh, &fx->bcs, &fx->dm, &fx->halo));
  PetscCheck(!pbng_membrane_isotropic(1e6, 0.3, 1e-3, &sheet.membrane), PETSC_COMM_SELF, PETSC_ERR_PLIB, "membrane");
  pbng_material_init(&mat, PBNG_MATERIAL_NEOHOOKEAN, 1e3, 0.3);
  PetscCall(pbng_problem_create(&fx->dm, &fx->bcs, &mat, &sheet, 10.0, g, PBNG_MODE_QUASISTATIC, 0.05, &fx->pb));
  PetscCall(pbng_problem_set_peridynamics(&fx->pb, o));
  PetscFunctionReturn(0);
}

static PetscErrorCode fixture_destroy(fixture *fx)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_destroy(&fx->pb));
  PetscCall(pbng_halo_destroy(&fx->halo));
  PetscCall(pbng_dmesh_destroy(&fx->dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode sheet_mesh(int n, pbng_mesh *mesh)
{
  const double o[3] = {0, 0, 0}, eu[3] = {1, 0, 0}, ev[3] = {0, 1, 0};
  pbng_sheet sheet;

  PetscFunctionBeginUser;
  PetscCall(pbng_sheet_grid(n, n, 1.0, 1.0, o, eu, ev, &sheet));
  PetscCall(pbng_mesh_from_sheet(&sheet, 1, mesh));
  PetscCall(pbng_sheet_destroy(&sheet));
  PetscFunctionReturn(0);
}

/* A curved, stretched state: x = (1.2 X + 0.05 noise, 0.9 Y + noise, 0.15 sin(pi X) sin(pi Y) + noise). */
static void curved_state(const pbng_dmesh *dm, double *x, uint64_t *seed)
{
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    const double *X = &dm->X[3 * i];
    x[3 * i] = 1.2 * X[0] + 0.03 * (next_random(seed) - 0.5);
    x[3 * i + 1] = 0.9 * X[1] + 0.03 * (next_random(seed) - 0.5);
    x[3 * i + 2] = 0.15 * sin(PI * X[0]) * sin(PI * X[1]) + 0.03 * (next_random(seed) - 0.5);
  }
}

static PetscErrorCode energy_at(pbng_problem *pb, double *E)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_energy(pb, NULL, E));
  PetscFunctionReturn(0);
}

/* Force against central differences of the energy (per coordinate of every 5th node, and along random
 * directions). */
static PetscErrorCode check_gradient(const pbng_pd_options *o, const char *what)
{
  fixture fx;
  pbng_mesh mesh;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  double r, err = 0, scale = 0;

  PetscFunctionBeginUser;
  PetscCall(sheet_mesh(6, &mesh));
  PetscCall(fixture_create(&fx, &mesh, o));
  pbng_problem *pb = &fx.pb;
  check(pb->pd->nrings == fx.dm.nowned, "a ring per vertex", pb->pd->nrings, fx.dm.nowned);
  int closed = 0;
  for (int32_t k = 0; k < pb->pd->nrings; ++k) closed += pb->pd->rest[k].closed;
  check(closed == 16, "the 4 x 4 inner vertices have closed fans", closed, 16);
  curved_state(&fx.dm, pb->x, &seed);
  PetscCall(pbng_problem_residual(pb, &r, NULL));
  double *g;
  PetscCall(PetscMalloc1(3 * fx.dm.nlocal, &g));
  memcpy(g, pb->pd->grad, sizeof(double) * 3 * fx.dm.nlocal);
  for (int32_t i = 0; i < fx.dm.nfree; i += 5)
    for (int c = 0; c < 3; ++c) {
      const double h = 1e-6, keep = pb->x[3 * i + c];
      double Ep, Em;
      pb->x[3 * i + c] = keep + h;
      PetscCall(energy_at(pb, &Ep));
      pb->x[3 * i + c] = keep - h;
      PetscCall(energy_at(pb, &Em));
      pb->x[3 * i + c] = keep;
      err = fmax(err, fabs((Ep - Em) / (2 * h) - g[3 * i + c]));
      scale = fmax(scale, fabs(g[3 * i + c]));
    }
  char label[160];
  snprintf(label, sizeof(label), "%s: node gradients = central differences of the energy", what);
  check(err <= 1e-6 * scale, label, err, scale);
  for (int t = 0; t < 4; ++t) { /* along a random direction over every free node */
    double *d, dot = 0, Ep, Em;
    const double h = 1e-6;
    PetscCall(PetscMalloc1(3 * fx.dm.nlocal, &d));
    for (int64_t k = 0; k < 3 * fx.dm.nlocal; ++k) d[k] = k < 3 * fx.dm.nfree ? next_random(&seed) - 0.5 : 0.0;
    for (int64_t k = 0; k < 3 * fx.dm.nfree; ++k) dot += g[k] * d[k], pb->x[k] += h * d[k];
    PetscCall(energy_at(pb, &Ep));
    for (int64_t k = 0; k < 3 * fx.dm.nfree; ++k) pb->x[k] -= 2 * h * d[k];
    PetscCall(energy_at(pb, &Em));
    for (int64_t k = 0; k < 3 * fx.dm.nfree; ++k) pb->x[k] += h * d[k];
    snprintf(label, sizeof(label), "%s: directional derivative", what);
    check(fabs((Ep - Em) / (2 * h) - dot) <= 1e-6 * fabs(dot) + 1e-9 * scale, label, (Ep - Em) / (2 * h), dot);
    PetscCall(PetscFree(d));
  }
  PetscCall(PetscFree(g));
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* Flat, affinely stretched: zero force on inner vertices (their rings and their neighbours' are affine). */
static PetscErrorCode check_affine(const pbng_pd_options *o)
{
  fixture fx;
  pbng_mesh mesh;
  double r, worst = 0, scale = 0;

  PetscFunctionBeginUser;
  PetscCall(sheet_mesh(7, &mesh));
  PetscCall(fixture_create(&fx, &mesh, o));
  pbng_problem *pb = &fx.pb;
  for (int32_t i = 0; i < fx.dm.nlocal; ++i) {
    const double *X = &fx.dm.X[3 * i];
    pb->x[3 * i] = 1.3 * X[0] + 0.2 * X[1], pb->x[3 * i + 1] = 0.1 * X[0] + 0.8 * X[1], pb->x[3 * i + 2] = 0;
  }
  PetscCall(pbng_problem_residual(pb, &r, NULL));
  for (int32_t i = 0; i < fx.dm.nfree; ++i) {
    const double *X = &fx.dm.X[3 * i], *gi = &pb->pd->grad[3 * i];
    const int inner2 = X[0] > 0.3 && X[0] < 0.7 && X[1] > 0.3 && X[1] < 0.7; /* two rings from the border */
    const double m = sqrt(gi[0] * gi[0] + gi[1] * gi[1] + gi[2] * gi[2]);
    scale = fmax(scale, m);
    if (inner2) worst = fmax(worst, m);
  }
  check(scale > 0 && worst <= 1e-10 * scale, "affine flat sheet: no force two rings inside the border", worst, scale);
  PetscCall(fixture_destroy(&fx));
  PetscFunctionReturn(0);
}

/* Two triangles meeting at one vertex only (a bow tie): refused, naming the vertex. */
static PetscErrorCode check_bow_tie(void)
{
  fixture fx;
  pbng_mesh mesh;
  const double X[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {-1, 0, 0}, {-1, -1, 0}};
  const int64_t tri[2][3] = {{0, 1, 2}, {0, 3, 4}};
  pbng_pd_options o = {.model = PBNG_SHEET_MODEL_PERIDYNAMIC, .mat = {PBNG_PD_STRETCHING, 1e5, 0}, .k_b = 0, .thickness = 1e-3};

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(&mesh, sizeof(mesh)));
  PetscCall(pbng_mesh_alloc(&mesh, PBNG_ELEMENT_TRI3, 5, 2));
  memcpy(mesh.X, X, sizeof(X));
  for (int e = 0; e < 2; ++e)
    for (int a = 0; a < 3; ++a) mesh.elems[3 * e + a] = tri[e][a];
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscErrorCode ierr = fixture_create(&fx, &mesh, &o);
  PetscCall(PetscPopErrorHandler());
  check(ierr != 0, "a bow-tie vertex is refused", ierr, 1);
  pbng_problem_destroy(&fx.pb);
  pbng_halo_destroy(&fx.halo);
  pbng_dmesh_destroy(&fx.dm);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  pbng_pd_options o = {.model = PBNG_SHEET_MODEL_PERIDYNAMIC, .mat = {PBNG_PD_STRETCHING, 4e5, 0}, .k_b = 0, .thickness = 2e-3};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(check_gradient(&o, "stretching"));
  o.k_b = 3e4;
  PetscCall(check_gradient(&o, "stretching + bending"));
  o.mat = (pbng_pd_material){PBNG_PD_NEOHOOKEAN, 4e5, 2e5};
  PetscCall(check_gradient(&o, "neo-Hookean + bending"));
  o.k_b = 0;
  PetscCall(check_affine(&o));
  o.mat = (pbng_pd_material){PBNG_PD_STRETCHING, 4e5, 0};
  PetscCall(check_affine(&o));
  PetscCall(check_bow_tie());
  printf("test_pd_terms: %d checks, %d failures\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
