#include "problem/problem.h"
#include "core/adjacency.h"
#include <string.h>
#include "core/hugealloc.h"
#include "core/mat3.h"
#include "core/polar.h"
#include "parallel/reduce.h"
#include "problem/pd_terms.h"
#include "problem/sheet_terms.h"
#include "core/stress_derivative.h"

/* Node i's lumped mass m_i and load weight: sums over the elements around i of their lumped masses
 * (rho V_e / 4 for linear tetrahedra, HRZ: pbng_element_lumped_mass, for every other kind, each element by
 * its own kind when kinds mix) and, in
 * quasistatic mode, of their consistent load weights int rho N_a dV (pbng_element_load_weights), the
 * exact load of gravity on the interpolated body. Linear tetrahedra (whose load weights are their
 * lumped masses) and dynamic mode share one array: with a lumped mass matrix, the load m_i g makes a
 * free body fall rigidly, which the consistent load would not (its ratio to the HRZ mass varies from
 * node to node). */
static PetscErrorCode compute_node_masses(pbng_problem *pb)
{
  const pbng_dmesh *dm = pb->dm;
  const int nen = dm->nen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nowned, &pb->mass));
  if (pb->geo.ref && pb->mode == PBNG_MODE_QUASISTATIC) PetscCall(PetscMalloc1(dm->nowned, &pb->load_mass));
  else pb->load_mass = pb->mass;
  for (int32_t i = 0; i < dm->nowned; ++i) {
    double m = 0.0, w = 0.0;
    for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
      const int32_t e = pbng_adj_element(nen, dm->adj[k]);
      if (!pb->geo.ref) {
        m += pb->density * pbng_geometry_shape(&pb->geo, e)->V / 4.0;
        continue;
      }
      const pbng_element_reference *ref = pbng_geometry_ref(&pb->geo, e);
      if (pbng_element_is_sheet(ref->type)) { /* lumped, its own load weight */
        const double ms = pbng_sheet_corner_mass(pbng_problem_sheet_material(pb, e), ref->type->kind, &pb->geo.sheet[e], pbng_adj_local_node(nen, dm->adj[k]));
        m += ms, w += ms;
      } else {
        double me[PBNG_MAX_ELEMENT_NODES], we[PBNG_MAX_ELEMENT_NODES], V[PBNG_MAX_QUAD_POINTS];
        const int a = pbng_adj_local_node(nen, dm->adj[k]);
        for (int q = 0; q < ref->nq; ++q) V[q] = pbng_geometry_qp_volume(&pb->geo, ref, e, q);
        pbng_element_lumped_mass(ref, V, pb->density, me);
        pbng_element_load_weights(ref, V, pb->density, we);
        m += me[a], w += we[a];
      }
    }
    pb->mass[i] = m;
    if (pb->load_mass != pb->mass) pb->load_mass[i] = w;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_create(const pbng_dmesh *dm, const pbng_bc_list *bcs, const pbng_material *mat, const pbng_sheet_material *sheet,
                                   double density, const double gravity[3], pbng_mode mode, double dt, pbng_problem *pb)
{
  PetscFunctionBeginUser;
  memset(pb, 0, sizeof(*pb));
  pb->dm = dm;
  pb->bcs = bcs;
  pb->mat = *mat;
  if (sheet) pb->sheet = *sheet;
  pb->density = density;
  memcpy(pb->gravity, gravity, sizeof(pb->gravity));
  pb->mode = mode;
  pb->dt = dt;
  PetscCall(pbng_geometry_create(dm, sheet ? sheet->weft : NULL, &pb->geo));
  PetscCheck(!pb->geo.sheet || sheet, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "the mesh has sheet elements (tri3, bend4) but no sheet material was given");
  PetscCall(compute_node_masses(pb));
  pb->x_nodes = dm->nlocal;
  pb->x = pbng_huge_alloc(sizeof(double) * 3 * (size_t)dm->nlocal);
  PetscCheck(pb->x, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %d positions", (int)dm->nlocal);
  memcpy(pb->x, dm->X, sizeof(double) * 3 * (size_t)dm->nlocal);
  if (mode == PBNG_MODE_DYNAMIC) {
    PetscCall(PetscMalloc1(3 * (int64_t)dm->nowned + 3, &pb->x_prev)); /* + 3: none on a rank without a part of a level */
    PetscCall(PetscCalloc1(3 * (int64_t)dm->nowned + 3, &pb->velocity));
    PetscCall(PetscMalloc1(3 * (int64_t)dm->nowned + 3, &pb->x_hat));
    memcpy(pb->x_hat, dm->X, sizeof(double) * 3 * (size_t)dm->nowned);
  }
  if (mat->kind == PBNG_MATERIAL_COROTATED && !pb->geo.ref) { /* warm starts: linear tetrahedra only */
    pb->rotation = pbng_huge_alloc(sizeof(float) * 4 * (size_t)dm->nelems);
    PetscCheck(pb->rotation, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %d element rotations", (int)dm->nelems);
    for (int32_t e = 0; e < dm->nelems; ++e) {
      float *q = &pb->rotation[4 * e];
      q[0] = 1.0f, q[1] = q[2] = q[3] = 0.0f;
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_set_sheet_materials(pbng_problem *pb, int n, const pbng_sheet_material *table, const uint8_t *material)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(pb->sheet_table));
  PetscCall(PetscFree(pb->sheet_material));
  PetscCall(PetscMalloc1(n, &pb->sheet_table));
  memcpy(pb->sheet_table, table, sizeof(*table) * (size_t)n);
  PetscCall(PetscMalloc1(pb->dm->nelems + 1, &pb->sheet_material));
  memcpy(pb->sheet_material, material, (size_t)pb->dm->nelems);
  for (int32_t e = 0; e < pb->dm->nelems; ++e)
    PetscCheck(material[e] < n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "element %d: sheet material %d of %d", (int)e, (int)material[e], n);
  if (pb->load_mass != pb->mass) PetscCall(PetscFree(pb->load_mass));
  PetscCall(PetscFree(pb->mass));
  pb->load_mass = NULL;
  PetscCall(compute_node_masses(pb));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_destroy(pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (!pb->dm) PetscFunctionReturn(0); /* never created */
  PetscCall(pbng_geometry_destroy(&pb->geo));
  if (pb->load_mass != pb->mass) PetscCall(PetscFree(pb->load_mass));
  PetscCall(PetscFree(pb->mass));
  PetscCall(PetscFree(pb->node_load));
  pbng_huge_free(pb->x, sizeof(double) * 3 * (size_t)pb->x_nodes);
  PetscCall(PetscFree(pb->x_prev));
  PetscCall(PetscFree(pb->velocity));
  PetscCall(PetscFree(pb->x_hat));
  pbng_huge_free(pb->rotation, sizeof(float) * 4 * (size_t)pb->dm->nelems);
  PetscCall(PetscFree(pb->plastic_strain));
  PetscCall(PetscFree(pb->handle));
  PetscCall(PetscFree(pb->handle_k));
  PetscCall(PetscFree(pb->handle_held));
  PetscCall(PetscFree(pb->handle_xD));
  PetscCall(PetscFree(pb->sheet_table));
  PetscCall(PetscFree(pb->sheet_material));
  PetscCall(pbng_pd_terms_destroy(&pb->pd));
  memset(pb, 0, sizeof(*pb));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_attach_contacts(pbng_problem *pb, pbng_contacts *ct)
{
  const size_t nlocal = (size_t)pb->dm->nlocal;

  PetscFunctionBeginUser;
  PetscCheck(!pb->contacts, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "contacts attached twice");
  double *x = pbng_huge_alloc(sizeof(double) * 3 * (nlocal + (size_t)ct->ghost_capacity));
  PetscCheck(x, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %zu positions and %d contact ghosts", nlocal, (int)ct->ghost_capacity);
  memcpy(x, pb->x, sizeof(double) * 3 * nlocal);
  pbng_huge_free(pb->x, sizeof(double) * 3 * (size_t)pb->x_nodes);
  pb->x = x;
  pb->x_nodes = (int64_t)nlocal + ct->ghost_capacity;
  pb->contacts = ct;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_detach_contacts(pbng_problem *pb)
{
  PetscFunctionBeginUser;
  pb->contacts = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_update_contacts(pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (!pb->contacts) PetscFunctionReturn(0);
  pb->contacts->t_detect = pb->time;
  PetscCall(pbng_contacts_update(pb->contacts, pb->x));
  PetscFunctionReturn(0);
}

void pbng_problem_prescribed_positions(const pbng_problem *pb, double t, double *x)
{
  const pbng_dmesh *dm = pb->dm;
  for (int32_t i = 0; i < dm->nlocal; ++i)
    if (dm->node_bc[i] >= 0) pbng_motion_apply(&pb->bcs->bc[dm->node_bc[i]].motion, &dm->X[3 * i], t, &x[3 * i]);
}

PetscErrorCode pbng_problem_update_ghosts(pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (pb->halo) PetscCall(pbng_halo_exchange(pb->halo, -1, pb->x));
  if (pb->contacts) PetscCall(pbng_contacts_exchange(pb->contacts, -1, pb->x));
  PetscFunctionReturn(0);
}

void pbng_problem_place_held_handles(pbng_problem *pb)
{
  double xD[3];
  for (int32_t i = 0; pb->handle && i < pb->dm->nlocal; ++i)
    if (pbng_problem_handle_target(pb, i, xD)) memcpy(&pb->x[3 * i], xD, sizeof(xD));
}

PetscErrorCode pbng_problem_begin_frame(pbng_problem *pb, double t)
{
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  pbng_problem_set_time(pb, t);
  pbng_problem_prescribed_positions(pb, t, pb->x); /* Eq. 12: prescribed nodes (owned and ghost) follow their motion */
  if (pb->mode != PBNG_MODE_DYNAMIC) PetscFunctionReturn(0);
  for (int32_t i = 0; i < dm->nowned; ++i)
    for (int d = 0; d < 3; ++d) {
      pb->x_prev[3 * i + d] = pb->x[3 * i + d];
      if (i < dm->nfree) { /* free nodes only: prescribed ones were just moved to x_D(t) */
        pb->x_hat[3 * i + d] = pb->x[3 * i + d] + pb->dt * pb->velocity[3 * i + d];
        pb->x[3 * i + d] = pb->x_hat[3 * i + d];
      }
    }
  PetscCall(pbng_problem_update_ghosts(pb)); /* ghosts of free nodes moved to their owners' x_hat */
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_set_peridynamics(pbng_problem *pb, const pbng_pd_options *o)
{
  const pbng_dmesh *dm = pb->dm;
  double *thickness;

  PetscFunctionBeginUser;
  PetscCall(pbng_pd_terms_destroy(&pb->pd));
  if (o->model != PBNG_SHEET_MODEL_PERIDYNAMIC) PetscFunctionReturn(0);
  PetscCheck(pb->geo.sheet, dm->comm, PETSC_ERR_ARG_WRONG, "-sheet_model peridynamic: the mesh has no sheet triangles (tri3)");
  PetscCall(PetscMalloc1(dm->nelems + 1, &thickness));
  for (int32_t e = 0; e < dm->nelems; ++e)
    thickness[e] = pbng_dmesh_element_type(dm, e)->kind == PBNG_ELEMENT_TRI3 ? pbng_problem_sheet_material(pb, e)->membrane.thickness : 0.0;
  const PetscErrorCode ierr = pbng_pd_terms_create(dm, thickness, o, &pb->pd);
  PetscCall(PetscFree(thickness)); /* also when the rings were refused */
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_set_point_load(pbng_problem *pb, const pbng_point_load *load, double extent)
{
  const pbng_dmesh *dm = pb->dm;
  const double tol = 1e-9 * extent;
  int64_t mine = 0;

  PetscFunctionBeginUser;
  if (!load->active) PetscFunctionReturn(0);
  for (int32_t i = 0; i < dm->nowned; ++i) mine += pbng_box_contains(load->box, &dm->X[3 * i], tol);
  PetscCallMPI(MPI_Allreduce(&mine, &pb->loaded_nodes, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscCheck(pb->loaded_nodes > 0, dm->comm, PETSC_ERR_ARG_WRONG, "-load_box %g,%g,%g,%g,%g,%g holds no node of the mesh", load->box[0], load->box[1],
             load->box[2], load->box[3], load->box[4], load->box[5]);
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nowned + 1, &pb->node_load));
  for (int32_t i = 0; i < dm->nowned; ++i)
    if (pbng_box_contains(load->box, &dm->X[3 * i], tol))
      for (int d = 0; d < 3; ++d) pb->node_load[3 * i + d] = load->force[d] / (double)pb->loaded_nodes;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_add_free_fall(pbng_problem *pb)
{
  const pbng_dmesh *dm = pb->dm;
  const double dt2 = pb->dt * pb->dt;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < dm->nfree; ++i)
    if (pb->mass[i] > 0)
      for (int d = 0; d < 3; ++d) pb->x[3 * i + d] += dt2 * (pb->load_mass[i] * pb->gravity[d] + (pb->node_load ? pb->node_load[3 * i + d] : 0.0)) / pb->mass[i];
  PetscCall(pbng_problem_update_ghosts(pb));
  PetscFunctionReturn(0);
}

void pbng_problem_end_frame(pbng_problem *pb)
{
  if (pb->mode != PBNG_MODE_DYNAMIC) return;
  for (int32_t i = 0; i < pb->dm->nowned; ++i)
    for (int d = 0; d < 3; ++d) pb->velocity[3 * i + d] = (pb->x[3 * i + d] - pb->x_prev[3 * i + d]) / pb->dt;
}

/* What one element visit contributes to its node: -V P g (Eq. 35) and the lower triangle of
 * V (2 mu |g|^2 I + lambda c c^T) (Eq. 37: 00, 10, 11, 20, 21, 22). */
typedef struct {
  double f[3];
  double h[6];
} visit_terms;

/* StVK's point terms: -V P g = -V F (S g) and its node block (pbng_stvk_node_block_add_lower); with a
 * plastic strain ep (else NULL), S = C : (E - eps_p) (pbng_stvk_subtract_plastic). */
static inline __attribute__((always_inline)) visit_terms stvk_point_terms(const pbng_material *mat, const double F[9], const double g[3], double V,
                                                                         const double *ep)
{
  double S[9], Sg[3], FSg[3], w[3], H[9] = {0};
  visit_terms out;
  pbng_stvk_second_piola(mat, F, S);
  if (ep) pbng_stvk_subtract_plastic(mat, ep, S);
  mat3_vec(S, g, Sg);
  mat3_vec(F, Sg, FSg);
  mat3_vec(F, g, w);
  for (int d = 0; d < 3; ++d) out.f[d] = -V * FSg[d];
  pbng_stvk_node_block_add_lower(mat, F, g, Sg, w, V, H);
  out.h[0] = H[0], out.h[1] = H[3], out.h[2] = H[4], out.h[3] = H[6], out.h[4] = H[7], out.h[5] = H[8];
  return out;
}

/* What one point (deformation gradient F, node gradient g = dN_a/dX, weight V) contributes to its
 * node, c = cof(F) g. Uses P g = s F g + v c (- s R g for the corotated model), so P itself is never
 * formed. q: the corotated warm start, or NULL; ep: StVK's plastic strain, or NULL. */
static inline __attribute__((always_inline)) visit_terms point_terms(pbng_material_kind kind, const pbng_material *mat, const double F[9],
                                                                    const double g[3], double V, float *q, const double *ep)
{
  double cof[9], Fg[3], c[3], s, v;
  visit_terms out;
  if (kind == PBNG_MATERIAL_STVK) return stvk_point_terms(mat, F, g, V, ep);
  mat3_cofactor(F, cof);
  const double J = mat3_det_from_cofactor(F, cof);
  pbng_stress_scalars(kind, mat, F, J, &s, &v);
  mat3_vec(F, g, Fg);
  mat3_vec(cof, g, c);
  if (kind == PBNG_MATERIAL_COROTATED) {
    double R[9], Rg[3];
    pbng_polar_rotation(F, R, q);
    mat3_vec(R, g, Rg);
    for (int d = 0; d < 3; ++d) Fg[d] -= Rg[d];
  }
  for (int d = 0; d < 3; ++d) out.f[d] = -V * (s * Fg[d] + v * c[d]); /* Eq. 35 */
  double H[9] = {0};
  pbng_modified_hessian_add_lower_coef(mat, pbng_modified_hessian_lambda(kind, mat, J), c, g[0] * g[0] + g[1] * g[1] + g[2] * g[2], V,
                                       H); /* Eq. 37 (neohookean_log: its compression coefficient) */
  out.h[0] = H[0], out.h[1] = H[3], out.h[2] = H[4], out.h[3] = H[6], out.h[4] = H[7], out.h[5] = H[8];
  return out;
}

/* One linear-tetrahedron visit (element e seen from its vertex a): one point, F = Ds B (Eq. 15). plastic
 * (a constant): the element's plastic strain enters StVK's stress. */
static inline __attribute__((always_inline)) visit_terms element_visit(pbng_material_kind kind, int plastic, const pbng_problem *pb,
                                                                      int32_t e, int a, const double *x, int warm)
{
  const pbng_tet_record *rec = &pb->geo.records[e];
  const pbng_tet_shape *ge = &pb->geo.shapes[rec->shape];
  const int32_t *t = rec->node;
  double F[9], g[3];
  pbng_tet_deformation_gradient(&x[3 * t[0]], &x[3 * t[1]], &x[3 * t[2]], &x[3 * t[3]], ge->B, F);
  pbng_tet_shape_gradient(ge->B, a, g);
  return point_terms(kind, &pb->mat, F, g, ge->V, (pb->rotation && warm) ? &pb->rotation[4 * e] : NULL, plastic ? &pb->plastic_strain[6 * e] : NULL);
}

/* A sheet kind's visit (tri3 membrane, bend4 stencil): pbng_sheet_node_terms; nothing with peridynamic
 * membranes (their forces are not a node's own: pbng_problem_residual adds them). */
static visit_terms sheet_visit(const pbng_problem *pb, pbng_element_kind kind, int32_t e, int a, const int32_t *t, const double *x)
{
  visit_terms out = {{0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  double H[9];
  if (pb->pd) return out;
  pbng_sheet_node_terms(pbng_problem_sheet_material(pb, e), kind, &pb->geo.sheet[e], t, a, x, out.f, H);
  out.h[0] = H[0], out.h[1] = H[3], out.h[2] = H[4], out.h[3] = H[6], out.h[4] = H[7], out.h[5] = H[8];
  return out;
}

/* Any other kind's visit: the sum over the element's quadrature points q of the point terms with
 * g = dN_a/dX(X_q) and weight V_q (the per-quadrature-point Eq. 35-37; seed Alg. 3). mixed
 * (a constant): the element's kind is its own (geo->kind), else the mesh's one kind. With plasticity,
 * the element's one eps_p enters StVK's stress at every point (docs/cloth.md#plasticity-in-a-run). */
static inline __attribute__((always_inline)) visit_terms quadrature_visit(pbng_material_kind kind, int mixed, const pbng_problem *pb,
                                                                         int32_t e, int a, const double *x)
{
  const pbng_geometry *geo = &pb->geo;
  const pbng_element_reference *ref = mixed ? &geo->ref[geo->kind[e]] : geo->ref;
  const int32_t *t = &pb->dm->elems[(int64_t)geo->nen * e];
  visit_terms sum = {{0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  if (pbng_element_is_sheet(ref->type)) return sheet_visit(pb, ref->type->kind, e, a, t, x);
  const double *ep = kind == PBNG_MATERIAL_STVK && pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL;
  for (int q = 0; q < ref->nq; ++q) {
    double F[9], g[3];
    pbng_geometry_qp_F(geo, ref, e, q, t, x, F);
    pbng_geometry_qp_gradient(geo, ref, e, q, a, g);
    const visit_terms r = point_terms(kind, &pb->mat, F, g, pbng_geometry_qp_volume(geo, ref, e, q), NULL, ep);
    for (int d = 0; d < 3; ++d) sum.f[d] += r.f[d];
    for (int d = 0; d < 6; ++d) sum.h[d] += r.h[d];
  }
  return sum;
}

/* The weak constraints' terms of node i (entries start..end of adj into the constraints c): -a_i K_c C_c
 * in the force (Eq. 35) and a_i^2 K_c in the matrix (Eq. 38; lower triangle, as the element terms). The
 * static ones of the dmesh and the contacts alike. */
static void add_weak_constraint_terms(const pbng_weak_constraint *c, const int32_t *adj, int32_t start, int32_t end, const double *x, double f[3],
                                      double A[9])
{
  for (int32_t k = start; k < end; ++k) {
    double fc[3], Hc[9];
    pbng_weak_constraint_node_force(&c[adj[k] / PBNG_WC_MAX_NODES], x, adj[k] % PBNG_WC_MAX_NODES, fc, A ? Hc : NULL);
    if (f)
      for (int d = 0; d < 3; ++d) f[d] += fc[d];
    if (A)
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s <= r; ++s) A[3 * r + s] += Hc[3 * r + s];
  }
}

/* The node's terms beyond its elements' (f, A hold those): gravity (Eq. 16: the consistent load), the
 * point load, a released set's spring k_i (x_D - x_i) while it holds the node, weak constraints, inertia
 * in dynamic mode (the lumped mass); then A is made symmetric. f or A may be NULL (that part skipped). */
static inline void add_node_terms(const pbng_problem *pb, int32_t i, const double *x, double f[3], double A[9])
{
  const pbng_dmesh *dm = pb->dm;
  const double m = pb->mass[i];
  double xD[3];
  if (f) {
    for (int d = 0; d < 3; ++d) f[d] += pb->load_mass[i] * pb->gravity[d]; /* Eq. 16 */
    if (pb->node_load)
      for (int d = 0; d < 3; ++d) f[d] += pb->node_load[3 * i + d];
  }
  if (pb->handle_k && pbng_problem_handle_target(pb, i, xD)) {
    if (f)
      for (int d = 0; d < 3; ++d) f[d] += pb->handle_k[i] * (xD[d] - x[3 * i + d]);
    if (A) A[0] += pb->handle_k[i], A[4] += pb->handle_k[i], A[8] += pb->handle_k[i];
  }
  if (dm->wadj_start[i + 1] > dm->wadj_start[i]) add_weak_constraint_terms(dm->weak, dm->wadj, dm->wadj_start[i], dm->wadj_start[i + 1], x, f, A);
  const pbng_contacts *ct = pb->contacts;
  if (ct && ct->adj_start[i + 1] > ct->adj_start[i]) add_weak_constraint_terms(ct->term, ct->adj, ct->adj_start[i], ct->adj_start[i + 1], x, f, A);
  if (pb->mode == PBNG_MODE_DYNAMIC) { /* backward-Euler incremental potential */
    const double w = m / (pb->dt * pb->dt);
    if (f)
      for (int d = 0; d < 3; ++d) f[d] -= w * (x[3 * i + d] - pb->x_hat[3 * i + d]);
    if (A) A[0] += w, A[4] += w, A[8] += w;
  }
  if (A) pbng_symmetrize_lower(A);
}

/* Sum of the visits of node i's elements (a SIMD reduction where the material allows): the
 * linear-tetrahedron fast path. */
static inline __attribute__((always_inline)) void node_force_kind(pbng_material_kind kind, int plastic, const pbng_problem *pb, int32_t i,
                                                                   const double *x, double f[3], double A[9], int warm)
{
  const pbng_dmesh *dm = pb->dm;
  double f0 = 0, f1 = 0, f2 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0, h4 = 0, h5 = 0;

#pragma omp simd reduction(+ : f0, f1, f2, h0, h1, h2, h3, h4, h5)
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const visit_terms r = element_visit(kind, plastic, pb, pbng_tet4_adj_element(dm->adj[k]), pbng_tet4_adj_local_node(dm->adj[k]), x, warm);
    f0 += r.f[0], f1 += r.f[1], f2 += r.f[2];
    h0 += r.h[0], h1 += r.h[1], h2 += r.h[2], h3 += r.h[3], h4 += r.h[4], h5 += r.h[5];
  }
  f[0] = f0, f[1] = f1, f[2] = f2;
  if (A) {
    A[0] = h0, A[3] = h1, A[4] = h2, A[6] = h3, A[7] = h4, A[8] = h5;
  }
  add_node_terms(pb, i, x, f, A);
}

/* The corotated fast path for linear tetrahedra with warm starts, in batches of up to COROT_BATCH of a
 * node's elements: corotated_gather reads each element's edges, B, g, V and warm start into a structure of
 * arrays (scalar: the reads follow the element records), corotated_batch_terms then sums the visits' terms
 * in SIMD loops with unit-stride access (F = D_s B, and R from pbng_polar_warm_fixed, straight-line code),
 * and corotated_batch_finish writes the new warm starts and completes the visits the fixed steps declined. */
enum { COROT_BATCH = 32 };
typedef struct {
  double D[9][COROT_BATCH];  /* the edges x_j - x_0 (j = 1..3) by coordinate: D[3 r + j - 1] = (x_j - x_0)_r */
  double B[9][COROT_BATCH];  /* the rest shape's B = D_m^{-1} (F = D_s B, Eq. 15) */
  double g[3][COROT_BATCH], V[COROT_BATCH];
  double q[4][COROT_BATCH];  /* the warm starts */
  double qn[4][COROT_BATCH]; /* the new ones where ok */
  int64_t ok[COROT_BATCH];   /* 1: the fixed steps gave R; 0: the visit's force lacks its rotation term */
  /* (all 8 bytes wide: a narrower type would set the SIMD loop's width to 16 floats or ints, which its
   * 8 iterations cannot fill, and the compiler would fall back to half-width vectors) */
} corot_batch;

/* n rounded up to whole SIMD vectors of COROT_LANES doubles (AVX-512; two AVX2 vectors), so that no visit
 * runs in a scalar remainder, where the fixed steps cost several times a lane's share. */
enum { COROT_LANES = 8 };
static inline int corotated_padded(int n) { return (n + COROT_LANES - 1) / COROT_LANES * COROT_LANES; }

static inline __attribute__((always_inline)) void corotated_gather(const pbng_problem *pb, const int32_t *adj, int n, const double *x, corot_batch *b)
{
  for (int l = 0; l < n; ++l) {
    const int32_t e = pbng_tet4_adj_element(adj[l]);
    const pbng_tet_record *rec = &pb->geo.records[e];
    const pbng_tet_shape *ge = &pb->geo.shapes[rec->shape];
    const int32_t *t = rec->node;
    const float *q = &pb->rotation[4 * e];
    const double *x0 = &x[3 * t[0]], *x1 = &x[3 * t[1]], *x2 = &x[3 * t[2]], *x3 = &x[3 * t[3]];
    double g[3];
    for (int r = 0; r < 3; ++r) {
      b->D[3 * r][l] = x1[r] - x0[r];
      b->D[3 * r + 1][l] = x2[r] - x0[r];
      b->D[3 * r + 2][l] = x3[r] - x0[r];
    }
    for (int k = 0; k < 9; ++k) b->B[k][l] = ge->B[k];
    pbng_tet_shape_gradient(ge->B, pbng_tet4_adj_local_node(adj[l]), g);
    for (int k = 0; k < 3; ++k) b->g[k][l] = g[k];
    b->V[l] = ge->V;
    for (int k = 0; k < 4; ++k) b->q[k][l] = q[k];
  }
  for (int l = n; l < corotated_padded(n); ++l) { /* F = I at rest, V = 0: zero terms, an accepted step */
    for (int k = 0; k < 9; ++k) b->D[k][l] = b->B[k][l] = k % 4 == 0 ? 1.0 : 0.0;
    for (int k = 0; k < 3; ++k) b->g[k][l] = 0.0;
    b->V[l] = 0.0;
    for (int k = 0; k < 4; ++k) b->q[k][l] = k == 0 ? 1.0 : 0.0;
  }
}

/* F = D_s B of batch entry l (Eq. 15; the arithmetic of pbng_tet_deformation_gradient). */
static inline __attribute__((always_inline)) void corotated_batch_F(const corot_batch *b, int l, double F[9])
{
  for (int r = 0; r < 3; ++r) {
    const double d1 = b->D[3 * r][l], d2 = b->D[3 * r + 1][l], d3 = b->D[3 * r + 2][l];
    F[3 * r + 0] = d1 * b->B[0][l] + d2 * b->B[3][l] + d3 * b->B[6][l];
    F[3 * r + 1] = d1 * b->B[1][l] + d2 * b->B[4][l] + d3 * b->B[7][l];
    F[3 * r + 2] = d1 * b->B[2][l] + d2 * b->B[5][l] + d3 * b->B[8][l];
  }
}

/* Batch entry l's visit terms (point_terms: -V P g with P g = s (F g - R g) + v cof(F) g, Eq. 35, and
 * Eq. 37, which does not depend on R); where the fixed steps decline, the force lacks V s R g. Its own
 * function: locals whose address is taken directly in a `omp simd` loop become per-lane arrays that keep
 * the loop from vectorizing; it writes qn and ok unconditionally (a conditional store would as well). */
static inline __attribute__((always_inline)) visit_terms corotated_lane(const pbng_material *mat, corot_batch *b, int l)
{
  double F[9], g[3], cof[9], Fg[3], c[3], R[9], Rg[3], s, v, H[9] = {0}, q[4], qn[4];
  visit_terms out;
  corotated_batch_F(b, l, F);
  for (int k = 0; k < 3; ++k) g[k] = b->g[k][l];
  for (int k = 0; k < 4; ++k) q[k] = b->q[k][l];
  const double V = b->V[l];
  mat3_cofactor(F, cof);
  const double J = mat3_det_from_cofactor(F, cof);
  pbng_stress_scalars(PBNG_MATERIAL_COROTATED, mat, F, J, &s, &v);
  mat3_vec(F, g, Fg);
  mat3_vec(cof, g, c);
  const int ok = pbng_polar_warm_fixed(F, q, R, qn);
  mat3_vec(R, g, Rg);
  for (int d = 0; d < 3; ++d) out.f[d] = -V * (s * (Fg[d] - (ok ? Rg[d] : 0.0)) + v * c[d]);
  pbng_modified_hessian_add_lower_coef(mat, mat->hessian_lambda, c, g[0] * g[0] + g[1] * g[1] + g[2] * g[2], V, H);
  out.h[0] = H[0], out.h[1] = H[3], out.h[2] = H[4], out.h[3] = H[6], out.h[4] = H[7], out.h[5] = H[8];
  for (int k = 0; k < 4; ++k) b->qn[k][l] = qn[k];
  b->ok[l] = ok;
  return out;
}

/* The batch's visit terms (n of them, padding included: a multiple of COROT_LANES) summed into t, by
 * SIMD loops of COROT_LANES lanes: a constant trip count leaves the compiler no scalar remainder loop. */
static inline __attribute__((always_inline)) void corotated_batch_terms(const pbng_material *mat, int n, corot_batch *b, visit_terms *t)
{
  double f0 = 0, f1 = 0, f2 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0, h4 = 0, h5 = 0;
  for (int l0 = 0; l0 < n; l0 += COROT_LANES) {
#pragma omp simd reduction(+ : f0, f1, f2, h0, h1, h2, h3, h4, h5)
    for (int l = l0; l < l0 + COROT_LANES; ++l) {
      const visit_terms r = corotated_lane(mat, b, l);
      f0 += r.f[0], f1 += r.f[1], f2 += r.f[2];
      h0 += r.h[0], h1 += r.h[1], h2 += r.h[2], h3 += r.h[3], h4 += r.h[4], h5 += r.h[5];
    }
  }
  t->f[0] += f0, t->f[1] += f1, t->f[2] += f2;
  t->h[0] += h0, t->h[1] += h1, t->h[2] += h2, t->h[3] += h3, t->h[4] += h4, t->h[5] += h5;
}

/* For each declined visit, the rotation term V s R g (s = 2 mu, pbng_stress_scalars) with R from
 * pbng_polar_rotation (its robust iteration), which continues from the element's warm start; with store,
 * the new warm starts are written back (a sweep), else they are only read (a residual evaluation). */
static inline __attribute__((always_inline)) void corotated_batch_finish(const pbng_problem *pb, const int32_t *adj, int n, const corot_batch *b, int store,
                                                                          double f[3])
{
  for (int l = 0; l < n; ++l) {
    float *q = &pb->rotation[4 * pbng_tet4_adj_element(adj[l])];
    if (b->ok[l]) {
      if (store)
        for (int k = 0; k < 4; ++k) q[k] = (float)b->qn[k][l];
      continue;
    }
    double F[9], R[9];
    float qcopy[4] = {q[0], q[1], q[2], q[3]};
    corotated_batch_F(b, l, F);
    pbng_polar_rotation(F, R, store ? q : qcopy);
    const double sv = b->V[l] * 2.0 * pb->mat.k_shear;
    for (int d = 0; d < 3; ++d) f[d] += sv * (R[3 * d] * b->g[0][l] + R[3 * d + 1] * b->g[1][l] + R[3 * d + 2] * b->g[2][l]);
  }
}

/* The visits adj[0..n) (entries 4 e + a) in batches, their terms into sum; store: the new warm starts written. One
 * compiled copy (not inlined) for a node's visits and pbng_problem_refresh_rotations alike, so that both give the
 * same warm starts bit for bit. */
static __attribute__((noinline)) void corotated_visits(const pbng_problem *pb, const int32_t *adj, int32_t n, const double *x, int store, visit_terms *sum)
{
  corot_batch b;
  for (int32_t k0 = 0; k0 < n; k0 += COROT_BATCH) {
    const int m = n - k0 < COROT_BATCH ? (int)(n - k0) : COROT_BATCH;
    corotated_gather(pb, &adj[k0], m, x, &b);
    corotated_batch_terms(&pb->mat, corotated_padded(m), &b, sum);
    corotated_batch_finish(pb, &adj[k0], m, &b, store, sum->f);
  }
}

void pbng_problem_refresh_rotations(const pbng_problem *pb, const int32_t *entries, int32_t n, const double *x)
{
  visit_terms unused = {{0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  corotated_visits(pb, entries, n, x, 1, &unused);
}

/* node_force_kind for the corotated model with warm starts (the fast path above); store: whether the warm
 * starts are updated. Every visit's result depends only on its element and its warm start, and the batch
 * boundaries only on the adjacency, so the run stays independent of the thread count. */
static void node_force_corotated(const pbng_problem *pb, int32_t i, const double *x, double f[3], double A[9], int store)
{
  const pbng_dmesh *dm = pb->dm;
  visit_terms sum = {{0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  corotated_visits(pb, &dm->adj[dm->adj_start[i]], dm->adj_start[i + 1] - dm->adj_start[i], x, store, &sum);
  for (int d = 0; d < 3; ++d) f[d] = sum.f[d];
  if (A) {
    A[0] = sum.h[0], A[3] = sum.h[1], A[4] = sum.h[2], A[6] = sum.h[3], A[7] = sum.h[4], A[8] = sum.h[5];
  }
  add_node_terms(pb, i, x, f, A);
}

/* The same for every other element kind: its quadrature points' terms, in the adjacency's order
 * (mixed: each element by its own kind). */
static inline __attribute__((always_inline)) void node_force_quadrature_kind(pbng_material_kind kind, int mixed, const pbng_problem *pb,
                                                                              int32_t i, const double *x, double f[3], double A[9])
{
  const pbng_dmesh *dm = pb->dm;
  const int nen = pb->geo.nen;
  visit_terms sum = {{0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const visit_terms r = quadrature_visit(kind, mixed, pb, pbng_adj_element(nen, dm->adj[k]), pbng_adj_local_node(nen, dm->adj[k]), x);
    for (int d = 0; d < 3; ++d) sum.f[d] += r.f[d];
    for (int d = 0; d < 6; ++d) sum.h[d] += r.h[d];
  }
  for (int d = 0; d < 3; ++d) f[d] = sum.f[d];
  if (A) {
    A[0] = sum.h[0], A[3] = sum.h[1], A[4] = sum.h[2], A[6] = sum.h[3], A[7] = sum.h[4], A[8] = sum.h[5];
  }
  add_node_terms(pb, i, x, f, A);
}

void pbng_node_exact_block(const pbng_problem *pb, int32_t i, const double *x, double A[9])
{
  const pbng_dmesh *dm = pb->dm;
  for (int k = 0; k < 9; ++k) A[k] = 0.0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t e = pbng_tet4_adj_element(dm->adj[k]);
    const pbng_tet_record *rec = &pb->geo.records[e];
    const pbng_tet_shape *ge = &pb->geo.shapes[rec->shape];
    const int32_t *t = rec->node;
    double F[9], g[3], D[81], H[9];
    pbng_tet_deformation_gradient(&x[3 * t[0]], &x[3 * t[1]], &x[3 * t[2]], &x[3 * t[3]], ge->B, F);
    pbng_tet_shape_gradient(ge->B, pbng_tet4_adj_local_node(dm->adj[k]), g);
    pbng_stress_derivative_plastic(&pb->mat, F, pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL, D);
    pbng_tet_node_block(D, g, ge->V, H);
    for (int r = 0; r < 3; ++r) /* exactly symmetric before the eigendecomposition */
      for (int c = 0; c < r; ++c) H[3 * r + c] = H[3 * c + r] = 0.5 * (H[3 * r + c] + H[3 * c + r]);
    pbng_clamp_psd3(H);
    for (int q = 0; q < 9; ++q) A[q] += H[q];
  }
  add_node_terms(pb, i, x, NULL, A); /* the weak-constraint, contact, handle and inertia blocks, as pbng_node_force's */
}

int pbng_node_contacts_activate(const pbng_problem *pb, int32_t i, const double *x, const double dx[3], double f[3], double A[9])
{
  const pbng_contacts *ct = pb->contacts;
  int added = 0;
  if (!ct->opt.unilateral) return 0;
  for (int32_t k = ct->adj_start[i]; k < ct->adj_start[i + 1]; ++k) {
    const pbng_weak_constraint *c = &ct->term[ct->adj[k] / PBNG_WC_MAX_NODES];
    const double a = c->a[ct->adj[k] % PBNG_WC_MAX_NODES];
    double C[3];
    pbng_weak_constraint_violation(c, x, C);
    const double g = c->n[0] * C[0] + c->n[1] * C[1] + c->n[2] * C[2];
    if (g < 0 || g + a * (c->n[0] * dx[0] + c->n[1] * dx[1] + c->n[2] * dx[2]) >= 0) continue; /* acts already, or not after the step */
    for (int r = 0; r < 3; ++r) {
      f[r] -= a * (c->K[3 * r] * C[0] + c->K[3 * r + 1] * C[1] + c->K[3 * r + 2] * C[2]);
      for (int q = 0; q < 3; ++q) A[3 * r + q] += a * a * c->K[3 * r + q];
    }
    ++added;
  }
  return added;
}

void pbng_node_prefetch_records(const pbng_problem *pb, int32_t i)
{
  const pbng_dmesh *dm = pb->dm;
  if (!pb->geo.records) return; /* the linear-tetrahedron path only */
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t e = pbng_tet4_adj_element(dm->adj[k]);
    __builtin_prefetch(&pb->geo.records[e]);
    if (pb->rotation) __builtin_prefetch(&pb->rotation[4 * e]);
  }
}

void pbng_node_prefetch_positions(const pbng_problem *pb, int32_t i, const double *x)
{
  const pbng_dmesh *dm = pb->dm;
  if (!pb->geo.records) return;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t *t = pb->geo.records[pbng_tet4_adj_element(dm->adj[k])].node;
    for (int a = 0; a < 4; ++a) __builtin_prefetch(&x[3 * t[a]]);
  }
}

/* Any kind but the linear tetrahedron's fast path: one kernel per material and per mesh of one kind
 * or mixed kinds. */
static void node_force_quadrature(const pbng_problem *pb, int32_t i, const double *x, double f[3], double A[9])
{
  const int mixed = pb->geo.kind != NULL;
  switch (pb->mat.kind) {
  case PBNG_MATERIAL_COROTATED:
    if (mixed) node_force_quadrature_kind(PBNG_MATERIAL_COROTATED, 1, pb, i, x, f, A);
    else node_force_quadrature_kind(PBNG_MATERIAL_COROTATED, 0, pb, i, x, f, A);
    return;
  case PBNG_MATERIAL_NEOHOOKEAN:
    if (mixed) node_force_quadrature_kind(PBNG_MATERIAL_NEOHOOKEAN, 1, pb, i, x, f, A);
    else node_force_quadrature_kind(PBNG_MATERIAL_NEOHOOKEAN, 0, pb, i, x, f, A);
    return;
  case PBNG_MATERIAL_STABLE_NEOHOOKEAN:
    if (mixed) node_force_quadrature_kind(PBNG_MATERIAL_STABLE_NEOHOOKEAN, 1, pb, i, x, f, A);
    else node_force_quadrature_kind(PBNG_MATERIAL_STABLE_NEOHOOKEAN, 0, pb, i, x, f, A);
    return;
  case PBNG_MATERIAL_NEOHOOKEAN_LOG:
    if (mixed) node_force_quadrature_kind(PBNG_MATERIAL_NEOHOOKEAN_LOG, 1, pb, i, x, f, A);
    else node_force_quadrature_kind(PBNG_MATERIAL_NEOHOOKEAN_LOG, 0, pb, i, x, f, A);
    return;
  case PBNG_MATERIAL_STVK:
    if (mixed) node_force_quadrature_kind(PBNG_MATERIAL_STVK, 1, pb, i, x, f, A);
    else node_force_quadrature_kind(PBNG_MATERIAL_STVK, 0, pb, i, x, f, A);
    return;
  default: pbng_material_kind_invalid(pb->mat.kind);
  }
}

void pbng_node_force(const pbng_problem *pb, int32_t i, const double *x, double f[3], double A[9], int warm)
{
  if (pb->geo.ref) { /* any kind but the linear tetrahedron */
    node_force_quadrature(pb, i, x, f, A);
    return;
  }
  switch (pb->mat.kind) { /* one specialised kernel per material */
  case PBNG_MATERIAL_COROTATED: /* pb->rotation: every corotated linear-tetrahedron problem (pbng_problem_create) */
    if (pb->rotation) node_force_corotated(pb, i, x, f, A, warm);
    else node_force_kind(PBNG_MATERIAL_COROTATED, 0, pb, i, x, f, A, 0);
    break;
  case PBNG_MATERIAL_NEOHOOKEAN: node_force_kind(PBNG_MATERIAL_NEOHOOKEAN, 0, pb, i, x, f, A, warm); break;
  case PBNG_MATERIAL_STABLE_NEOHOOKEAN: node_force_kind(PBNG_MATERIAL_STABLE_NEOHOOKEAN, 0, pb, i, x, f, A, warm); break;
  case PBNG_MATERIAL_NEOHOOKEAN_LOG: node_force_kind(PBNG_MATERIAL_NEOHOOKEAN_LOG, 0, pb, i, x, f, A, warm); break;
  case PBNG_MATERIAL_STVK:
    if (pb->plastic_strain) node_force_kind(PBNG_MATERIAL_STVK, 1, pb, i, x, f, A, warm);
    else node_force_kind(PBNG_MATERIAL_STVK, 0, pb, i, x, f, A, warm);
    break;
  default: pbng_material_kind_invalid(pb->mat.kind);
  }
}

/* Element e's energy: V Psi(F) (Eq. 15), or sum_q V_q Psi(F_q) over its quadrature points; elastoplastic
 * StVK with the element's eps_p at every point; corotated linear tetrahedra from their warm starts (read
 * only). */
static double element_energy_at(const pbng_problem *pb, int32_t e, const double *x)
{
  const pbng_geometry *geo = &pb->geo;
  const int32_t *t = &pb->dm->elems[(int64_t)geo->nen * e];
  double F[9], E = 0.0;
  if (!geo->ref) {
    pbng_tet_deformation_gradient(&x[3 * t[0]], &x[3 * t[1]], &x[3 * t[2]], &x[3 * t[3]], pbng_geometry_shape(geo, e)->B, F);
    if (pb->plastic_strain) return pbng_geometry_shape(geo, e)->V * pbng_stvk_energy_density_plastic(&pb->mat, F, &pb->plastic_strain[6 * e]);
    return pbng_geometry_shape(geo, e)->V * pbng_energy_density_warm(&pb->mat, F, pb->rotation ? &pb->rotation[4 * e] : NULL);
  }
  const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
  if (pbng_element_is_sheet(ref->type))
    return pb->pd ? 0.0 : pbng_sheet_element_energy(pbng_problem_sheet_material(pb, e), ref->type->kind, &geo->sheet[e], t, x);
  const double *ep = pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL;
  for (int q = 0; q < ref->nq; ++q) {
    pbng_geometry_qp_F(geo, ref, e, q, t, x, F);
    E += pbng_geometry_qp_volume(geo, ref, e, q) * (ep ? pbng_stvk_energy_density_plastic(&pb->mat, F, ep) : pbng_energy_density(&pb->mat, F));
  }
  return E;
}

static double element_energy(const pbng_problem *pb, int32_t e) { return element_energy_at(pb, e, pb->x); }

/* The part of node i's local incremental potential g_i that is not linear or quadratic in x_i alone:
 * the energies of the elements around i and of the weak constraints and contacts touching i, at x (a
 * plain sum in the adjacency's order, as the node force). mag: the sum of the terms' magnitudes (the
 * scale of its round-off). */
static double node_coupled_energy(const pbng_problem *pb, int32_t i, const double *x, double *mag)
{
  const pbng_dmesh *dm = pb->dm;
  const pbng_contacts *ct = pb->contacts;
  double E = 0.0, M = 0.0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const double Ee = element_energy_at(pb, pbng_adj_element(dm->nen, dm->adj[k]), x);
    E += Ee, M += fabs(Ee);
  }
  for (int32_t k = dm->wadj_start[i]; k < dm->wadj_start[i + 1]; ++k) {
    const double Ec = pbng_weak_constraint_energy(&dm->weak[dm->wadj[k] / PBNG_WC_MAX_NODES], x);
    E += Ec, M += Ec;
  }
  for (int32_t k = ct ? ct->adj_start[i] : 0; ct && k < ct->adj_start[i + 1]; ++k) {
    const double Ec = pbng_weak_constraint_energy(&ct->term[ct->adj[k] / PBNG_WC_MAX_NODES], x);
    E += Ec, M += Ec;
  }
  *mag = M;
  return E;
}

/* g_i(x_i + d) - g_i(x_i) for node i's terms that depend on x_i alone, in closed form (no cancellation
 * of large offsets): inertia m_i / (2 dt^2) (|x_i + d - x_hat_i|^2 - |x_i - x_hat_i|^2) in dynamic mode,
 * the load's -w_i g.d and the point load's, a holding released set's spring, and -b_i.d. */
static double node_own_energy_change(const pbng_problem *pb, int32_t i, const double xi[3], const double *b, const double d[3])
{
  double dE = 0.0, xD[3];
  for (int r = 0; r < 3; ++r) dE -= (pb->load_mass[i] * pb->gravity[r] + (pb->node_load ? pb->node_load[3 * i + r] : 0.0) + (b ? b[3 * i + r] : 0.0)) * d[r];
  if (pb->handle_k && pbng_problem_handle_target(pb, i, xD))
    for (int r = 0; r < 3; ++r) dE += 0.5 * pb->handle_k[i] * d[r] * (2.0 * (xi[r] - xD[r]) + d[r]);
  if (pb->mode == PBNG_MODE_DYNAMIC) {
    const double w = pb->mass[i] / (pb->dt * pb->dt);
    for (int r = 0; r < 3; ++r) dE += 0.5 * w * d[r] * (2.0 * (xi[r] - pb->x_hat[3 * i + r]) + d[r]);
  }
  return dE;
}

int pbng_node_line_search(const pbng_problem *pb, int32_t i, double *x, const double *b, const double dx[3])
{
  double *xi = &x[3 * i], x0[3] = {xi[0], xi[1], xi[2]}, mag0, mag1, d[3];
  const double E0 = node_coupled_energy(pb, i, x, &mag0);
  double alpha = 1.0;
  if (!isfinite(E0)) { /* an inverted element of neohookean_log (+inf) around i: nothing to compare with, the whole step */
    for (int r = 0; r < 3; ++r) xi[r] = x0[r] + dx[r];
    return 0;
  }
  for (int k = 0; k <= PBNG_VBD_MAX_HALVINGS; ++k, alpha *= 0.5) {
    for (int r = 0; r < 3; ++r) d[r] = alpha * dx[r], xi[r] = x0[r] + d[r];
    const double E1 = node_coupled_energy(pb, i, x, &mag1);
    if (!isfinite(E1)) continue; /* an inverted element of neohookean_log (+inf), or a diverged one */
    const double dg = (E1 - E0) + node_own_energy_change(pb, i, x0, b, d);
    if (dg <= 0.0 || dg <= PBNG_VBD_ROUNDOFF * (mag0 + mag1)) return k; /* a decrease, or a change below the energy's round-off */
  }
  for (int r = 0; r < 3; ++r) xi[r] = x0[r];
  return -1;
}

PetscErrorCode pbng_problem_first_infinite_element(const pbng_problem *pb, int64_t *gid)
{
  const pbng_dmesh *dm = pb->dm;
  int64_t mine = INT64_MAX;

  PetscFunctionBeginUser;
  for (int32_t e = 0; e < dm->nowned_elems; ++e)
    if (element_energy(pb, e) == INFINITY && dm->global_elem[e] < mine) mine = dm->global_elem[e];
  PetscCallMPI(MPI_Allreduce(&mine, gid, 1, MPI_INT64_T, MPI_MIN, dm->comm));
  if (*gid == INT64_MAX) *gid = -1;
  PetscFunctionReturn(0);
}

/* Owned node i's energy: its load's potential -w_i g.x_i (Eq. 16, w_i the load weight), a released
 * set's spring k_i/2 |x_i - x_D|^2 while it holds the node and, in dynamic mode, the inertia
 * term m_i / (2 dt^2) |x_i - x_hat_i|^2 of the incremental potential; minus b_i.x_i for a free node
 * when b is given. */
static double node_energy(const pbng_problem *pb, int32_t i, const double *b)
{
  const double *x = &pb->x[3 * i];
  double E = 0.0, xD[3];
  if (pb->handle_k && pbng_problem_handle_target(pb, i, xD))
    E += 0.5 * pb->handle_k[i] * ((x[0] - xD[0]) * (x[0] - xD[0]) + (x[1] - xD[1]) * (x[1] - xD[1]) + (x[2] - xD[2]) * (x[2] - xD[2]));
  for (int d = 0; d < 3; ++d) E -= pb->load_mass[i] * pb->gravity[d] * x[d];
  if (pb->node_load) E -= pb->node_load[3 * i] * x[0] + pb->node_load[3 * i + 1] * x[1] + pb->node_load[3 * i + 2] * x[2];
  if (pb->mode == PBNG_MODE_DYNAMIC && i < pb->dm->nfree) {
    const double w = pb->mass[i] / (pb->dt * pb->dt);
    for (int d = 0; d < 3; ++d) E += 0.5 * w * (x[d] - pb->x_hat[3 * i + d]) * (x[d] - pb->x_hat[3 * i + d]);
  }
  if (b && i < pb->dm->nfree) E -= b[3 * i] * x[0] + b[3 * i + 1] * x[1] + b[3 * i + 2] * x[2];
  return E;
}

/* Batch entry l's corotated energy V (mu |F - R|^2 + lambda/2 (J - 1)^2) (Eq. 7) with R from the fixed warm
 * steps (pbng_polar_warm_fixed, whose R is the polar rotation to ~1e-13 rad; the energy is stationary in R, so its
 * error is second order); b->ok[l] = 0 where they declined (the caller takes the scalar path there). */
static inline __attribute__((always_inline)) double corotated_lane_energy(const pbng_material *mat, corot_batch *b, int l)
{
  double F[9], R[9], q[4], qn[4], D2 = 0.0;
  corotated_batch_F(b, l, F);
  for (int k = 0; k < 4; ++k) q[k] = b->q[k][l];
  const int ok = pbng_polar_warm_fixed(F, q, R, qn);
  for (int k = 0; k < 9; ++k) D2 += (F[k] - R[k]) * (F[k] - R[k]);
  const double v = mat3_det(F) - 1.0 - mat->j_rest;
  b->ok[l] = ok;
  return b->V[l] * (mat->k_shear * D2 + 0.5 * mat->k_volume * v * v);
}

/* The energies of the owned elements e0 .. e0 + n - 1 (n <= COROT_BATCH) of a corotated linear-tetrahedron
 * problem, by SIMD lanes as the node forces (node_force_corotated); the warm starts are only read. */
static void corotated_energies(const pbng_problem *pb, int32_t e0, int n, double *E)
{
  int32_t adj[COROT_BATCH];
  corot_batch b;
  for (int l = 0; l < n; ++l) adj[l] = 4 * (e0 + l); /* adjacency entries of the elements' first nodes */
  corotated_gather(pb, adj, n, pb->x, &b);
  const int padded = corotated_padded(n);
#pragma omp simd
  for (int l = 0; l < padded; ++l) E[l] = corotated_lane_energy(&pb->mat, &b, l);
  for (int l = 0; l < n; ++l)
    if (!b.ok[l]) E[l] = element_energy(pb, e0 + l);
}

/* The owned elements' energies (Eq. 15) added to sum: the corotated fast path in batches, else one by one. */
static void add_element_energies(const pbng_problem *pb, pbng_exact_sum *sum)
{
  const int32_t ne = pb->dm->nowned_elems;
  if (pb->rotation && !pb->geo.ref && !pb->plastic_strain) {
#pragma omp for schedule(static) nowait
    for (int32_t e0 = 0; e0 < ne; e0 += COROT_BATCH) {
      double E[COROT_BATCH];
      const int n = ne - e0 < COROT_BATCH ? (int)(ne - e0) : COROT_BATCH;
      corotated_energies(pb, e0, n, E);
      for (int l = 0; l < n; ++l) pbng_exact_sum_add(sum, E[l]);
    }
    return;
  }
#pragma omp for schedule(static) nowait
  for (int32_t e = 0; e < ne; ++e) pbng_exact_sum_add(sum, element_energy(pb, e));
}

/* The rank's share of the energy, summed exactly as each term is computed (no array of terms): its
 * owned elements (Eq. 15), its counted weak constraints (Eq. 18) and its owned nodes (node_energy). */
void pbng_problem_energy_local(const pbng_problem *pb, const double *b, pbng_exact_sum *sum)
{
  const pbng_dmesh *dm = pb->dm;
  pbng_exact_sum_zero(sum);
#pragma omp parallel
  {
    pbng_exact_sum mine;
    pbng_exact_sum_zero(&mine);
    add_element_energies(pb, &mine);
#pragma omp for schedule(static) nowait
    for (int32_t i = 0; i < dm->nowned; ++i) pbng_exact_sum_add(&mine, node_energy(pb, i, b));
#pragma omp critical(pbng_energy_sum)
    pbng_exact_sum_merge(sum, &mine);
  }
  for (int32_t c = 0; c < dm->nowned_weak; ++c) pbng_exact_sum_add(sum, pbng_weak_constraint_energy(&dm->weak[c], pb->x));
  if (pb->pd) pbng_pd_terms_energy(pb->pd, pb->x, sum);
  if (pb->contacts)
    for (int32_t c = 0; c < pb->contacts->n; ++c)
      if (pb->contacts->counted[c]) pbng_exact_sum_add(sum, pbng_weak_constraint_energy(&pb->contacts->term[c], pb->x));
}

PetscErrorCode pbng_problem_energy(const pbng_problem *pb, const double *b, double *energy)
{
  pbng_exact_sum sum;

  PetscFunctionBeginUser;
  pbng_problem_energy_local(pb, b, &sum);
  if (pb->term.fn) PetscCall(pb->term.fn(pb->term.ctx, pb->x, NULL, &sum));
  /* independent of the rank and thread counts; NaN if a term is NaN, +inf if one is +inf (neohookean_log, an inverted element) */
  PetscCall(pbng_exact_sum_allreduce(pb->dm->comm, &sum, energy));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_ring_forces(const pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (pb->pd) PetscCall(pbng_pd_terms_gradient(pb->pd, pb->x, pb->dm->nlocal));
  if (pb->pd && pb->term.fn) PetscCall(pb->term.fn(pb->term.ctx, pb->x, pb->pd->grad, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_residual(const pbng_problem *pb, double *residual, double *energy)
{
  const pbng_dmesh *dm = pb->dm;
  pbng_exact_sum sum;
  double r2;

  PetscFunctionBeginUser;
  pbng_exact_sum_zero(&sum);
  PetscCall(pbng_problem_ring_forces(pb));
#pragma omp parallel
  {
    pbng_exact_sum mine;
    pbng_exact_sum_zero(&mine);
#pragma omp for schedule(static) nowait
    for (int32_t i = 0; i < dm->nfree; ++i) {
      double f[3];
      pbng_node_force(pb, i, pb->x, f, NULL, 0);
      pbng_problem_add_ring_force(pb, i, f);
      pbng_exact_sum_add(&mine, f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    }
#pragma omp critical(pbng_residual_sum)
    pbng_exact_sum_merge(&sum, &mine);
  }
  PetscCall(pbng_exact_sum_allreduce(dm->comm, &sum, &r2)); /* NaN when a term is not finite: the positions diverged */
  *residual = sqrt(r2);
  if (energy) {
    PetscCall(pbng_problem_energy(pb, NULL, energy));
    if (isnan(*residual) || isnan(*energy)) *residual = *energy = NAN; /* both, on every rank alike */
  }
  PetscFunctionReturn(0);
}
