#include "problem/assembly.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include "problem/sheet_terms.h"
#include "core/adjacency.h"
#include "core/sorted_ids.h"
#include "core/mat3.h"
#include "core/peridynamics_hessian.h"
#include "core/stress_derivative.h"
#include "problem/psd_projection.h"

/* node_neighbours' part for weak constraints (static ones or contacts: entries start..end of adj). */
static int constraint_neighbours(const pbng_weak_constraint *c, const int32_t *adj, int32_t start, int32_t end, const pbng_dof_map *map, int32_t i,
                                 int64_t *mark, int32_t *list, int n)
{
  for (int32_t k = start; k < end; ++k) {
    const pbng_weak_constraint *w = &c[adj[k] / PBNG_WC_MAX_NODES];
    for (int a = 0; a < w->nnodes; ++a) {
      const int32_t j = (int32_t)w->node[a];
      if (map->node_dof[j] < 0 || mark[j] == i) continue;
      mark[j] = i;
      list[n++] = j;
    }
  }
  return n;
}

/* The distinct free neighbours (itself included) of owned free node i through its elements, weak
 * constraints and contacts into list (room: every node of those); returns how many. */
static int node_neighbours(const pbng_problem *pb, const pbng_dof_map *map, int32_t i, int64_t *mark, int32_t *list)
{
  const pbng_dmesh *dm = pb->dm;
  const int nen = dm->nen;
  int n = 0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t *t = &dm->elems[(int64_t)nen * pbng_adj_element(nen, dm->adj[k])];
    for (int a = 0, m = pbng_row_nodes(t, nen); a < m; ++a) {
      const int32_t j = t[a];
      if (map->node_dof[j] < 0 || mark[j] == i) continue;
      mark[j] = i;
      list[n++] = j;
    }
  }
  n = constraint_neighbours(dm->weak, dm->wadj, dm->wadj_start[i], dm->wadj_start[i + 1], map, i, mark, list, n);
  const pbng_contacts *ct = pb->contacts;
  if (ct) n = constraint_neighbours(ct->term, ct->adj, ct->adj_start[i], ct->adj_start[i + 1], map, i, mark, list, n);
  return n;
}

/* Room node_neighbours needs for node i: the nodes of its elements, weak constraints and contacts. */
static int64_t neighbour_room(const pbng_problem *pb, int32_t i)
{
  const pbng_dmesh *dm = pb->dm;
  int64_t n = (int64_t)dm->nen * (dm->adj_start[i + 1] - dm->adj_start[i]) + PBNG_WC_MAX_NODES * (int64_t)(dm->wadj_start[i + 1] - dm->wadj_start[i]);
  if (pb->contacts) n += PBNG_WC_MAX_NODES * (int64_t)(pb->contacts->adj_start[i + 1] - pb->contacts->adj_start[i]);
  return n;
}

/* Peridynamic membranes: the rings couple every pair of a ring's nodes, two rings out from a node, and a ring
 * centred on another rank adds to this rank's rows; the pattern (the elements' and the rings') goes through a
 * MATPREALLOCATOR, which gathers other ranks' rows. Collective. */
static PetscErrorCode preallocate_with_rings(const pbng_problem *pb, const pbng_dof_map *map, int64_t *mark, Mat K)
{
  const pbng_dmesh *dm = pb->dm;
  const pbng_pd_terms *pd = pb->pd;
  const PetscScalar zero[9 * (PBNG_PD_MAX_RING + 1) * (PBNG_PD_MAX_RING + 1)] = {0};
  Mat P;
  int32_t *list;
  int64_t room = 1;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(dm->comm, &P));
  PetscCall(MatSetSizes(P, 3 * dm->nfree, 3 * dm->nfree, 3 * map->nglobal, 3 * map->nglobal));
  PetscCall(MatSetBlockSize(P, 3));
  PetscCall(MatSetType(P, MATPREALLOCATOR));
  PetscCall(MatSetUp(P));
  for (int32_t i = 0; i < dm->nfree; ++i) room = PetscMax(room, neighbour_room(pb, i));
  PetscCall(PetscMalloc1(room, &list));
  for (int32_t i = 0; i < dm->nfree; ++i) {
    const int n = node_neighbours(pb, map, i, mark, list);
    const PetscInt row = (PetscInt)map->node_dof[i];
    for (int k = 0; k < n; ++k) {
      const PetscInt col = (PetscInt)map->node_dof[list[k]];
      PetscCall(MatSetValuesBlocked(P, 1, &row, 1, &col, zero, INSERT_VALUES));
    }
  }
  PetscCall(PetscFree(list));
  for (int32_t r = 0; r < pd->nrings; ++r) {
    PetscInt idx[PBNG_PD_MAX_RING + 1];
    const int m = pd->slot_start[r + 1] - pd->slot_start[r];
    for (int k = 0; k < m; ++k) idx[k] = (PetscInt)map->node_dof[pd->slot_node[pd->slot_start[r] + k]];
    PetscCall(MatSetValuesBlocked(P, m, idx, m, idx, zero, INSERT_VALUES)); /* -1 (held) rows and columns are skipped */
  }
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatPreallocatorPreallocate(P, PETSC_TRUE, K));
  PetscCall(MatDestroy(&P));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stiffness_create(const pbng_problem *pb, const pbng_dof_map *map, Mat *K)
{
  const pbng_dmesh *dm = pb->dm;
  PetscInt *dnnz, *onnz;
  int64_t *mark;
  int32_t *list;

  PetscFunctionBeginUser;
  const int32_t nnodes = dm->nlocal + (pb->contacts ? pb->contacts->nghost : 0);
  PetscCall(PetscMalloc3(dm->nfree + 1, &dnnz, dm->nfree + 1, &onnz, nnodes + 1, &mark));
  for (int32_t j = 0; j < nnodes; ++j) mark[j] = -1;
  PetscCall(MatCreate(dm->comm, K));
  PetscCall(MatSetSizes(*K, 3 * dm->nfree, 3 * dm->nfree, 3 * map->nglobal, 3 * map->nglobal));
  PetscCall(MatSetBlockSize(*K, 3));
  PetscCall(MatSetType(*K, MATAIJ));
  if (pb->pd) PetscCall(preallocate_with_rings(pb, map, mark, *K));
  else {
    int64_t room = 1;
    for (int32_t i = 0; i < dm->nfree; ++i) room = PetscMax(room, neighbour_room(pb, i));
    PetscCall(PetscMalloc1(room, &list));
    for (int32_t i = 0; i < dm->nfree; ++i) {
      const int n = node_neighbours(pb, map, i, mark, list);
      dnnz[i] = onnz[i] = 0;
      for (int k = 0; k < n; ++k) ++*(list[k] < dm->nowned ? &dnnz[i] : &onnz[i]);
    }
    PetscCall(PetscFree(list));
    PetscCall(MatXAIJSetPreallocation(*K, 3, dnnz, onnz, NULL, NULL));
  }
  PetscCall(MatSetOption(*K, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscFree3(dnnz, onnz, mark));
  PetscFunctionReturn(0);
}

/* K_q (x)= V sum_jl D_ij,kl g_a,j g_b,l for every node pair a, b of an element with nen nodes
 * (grad [nen][3]); Ke is (3 nen) x (3 nen), row 3a+i, column 3b+k. T holds D contracted with g_b. */
static void add_quadrature_stiffness(int nen, const double D[81], const double *grad, double V, double *Ke)
{
  const int n = 3 * nen;
  double T[9][3 * PBNG_MAX_ELEMENT_NODES]; /* T[3i+j][3b+k] = sum_l D_ij,kl g_b,l */
  for (int ij = 0; ij < 9; ++ij)
    for (int b = 0; b < nen; ++b)
      for (int k = 0; k < 3; ++k)
        T[ij][3 * b + k] = D[9 * ij + 3 * k] * grad[3 * b] + D[9 * ij + 3 * k + 1] * grad[3 * b + 1] + D[9 * ij + 3 * k + 2] * grad[3 * b + 2];
  for (int a = 0; a < nen; ++a)
    for (int i = 0; i < 3; ++i) {
      double *row = &Ke[n * (3 * a + i)];
      const double ga0 = V * grad[3 * a], ga1 = V * grad[3 * a + 1], ga2 = V * grad[3 * a + 2];
      for (int c = 0; c < n; ++c) row[c] += ga0 * T[3 * i][c] + ga1 * T[3 * i + 1][c] + ga2 * T[3 * i + 2][c];
    }
}

/* StVK's analogue at one point (docs/equations.md "StVK"): the exact pair block is
 * (g_a.S g_b) I + mu (g_a.g_b) F F^T + mu w_b w_a^T + lambda w_a w_b^T, w = F g; with S replaced by its
 * positive semidefinite part S+ and mu w_b w_a^T by mu w_a w_b^T (lambda by max(lambda, 0)) every term is a
 * Kronecker or outer product of PSD factors: K_ab += V ((g_a.S+ g_b) I + mu (g_a.g_b) F F^T + (mu + lambda+) w_a w_b^T).
 * Its diagonal blocks bound PBNG's node blocks from above (g.S+ g >= max(g.S g, 0)). Returns 0 or the
 * projection's status. */
static int add_quadrature_modified_stvk(const pbng_material *mat, int nen, const double F[9], const double *ep, const double *grad, double V,
                                        double *Ke)
{
  const int n = 3 * nen;
  double S[9], FFt[9], w[PBNG_MAX_ELEMENT_NODES][3], Sg[PBNG_MAX_ELEMENT_NODES][3];
  pbng_stvk_second_piola(mat, F, S);
  if (ep) pbng_stvk_subtract_plastic(mat, ep, S);
  const int status = pbng_project_psd(3, S);
  if (status) return status;
  mat3_mul(F, (double[9]){F[0], F[3], F[6], F[1], F[4], F[7], F[2], F[5], F[8]}, FFt);
  for (int a = 0; a < nen; ++a) mat3_vec(F, &grad[3 * a], w[a]), mat3_vec(S, &grad[3 * a], Sg[a]);
  const double vol = V * (mat->k_shear + mat->hessian_lambda);
  for (int a = 0; a < nen; ++a)
    for (int b = 0; b < nen; ++b) {
      const double *ga = &grad[3 * a], *gb = &grad[3 * b];
      const double geo = V * (ga[0] * Sg[b][0] + ga[1] * Sg[b][1] + ga[2] * Sg[b][2]);
      const double sh = V * mat->k_shear * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Ke[n * (3 * a + r) + 3 * b + c] += (r == c ? geo : 0.0) + sh * FFt[3 * r + c] + vol * w[a][r] * w[b][c];
    }
  return 0;
}

/* PBNG's modified Hessian of Eq. 36-37 extended to every pair of nodes a, b of an element at one
 * quadrature point: K_ab += V (2 mu (g_a . g_b) I + lambda c_a c_b^T), c_a = cof(F) g_a (lambda:
 * pbng_modified_hessian_lambda, which for neohookean_log grows in compression). It is
 * (G G^T) (x) I plus the outer product of the stacked c_a, so positive semidefinite (StVK: its own
 * form above; ep: its plastic strain or NULL). Returns 0 or the projection's status. */
static int add_quadrature_modified(const pbng_material *mat, int nen, const double F[9], const double *ep, const double *grad, double V, double *Ke)
{
  if (mat->kind == PBNG_MATERIAL_STVK) return add_quadrature_modified_stvk(mat, nen, F, ep, grad, V, Ke);
  const int n = 3 * nen;
  double cof[9], c[PBNG_MAX_ELEMENT_NODES][3];
  mat3_cofactor(F, cof);
  for (int a = 0; a < nen; ++a) mat3_vec(cof, &grad[3 * a], c[a]);
  const double lv = mat->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG ? pbng_modified_hessian_lambda(mat->kind, mat, mat3_det_from_cofactor(F, cof))
                                                               : mat->hessian_lambda; /* neohookean_log: its compression coefficient */
  const double d = 2.0 * mat->mu * V, l = lv * V;
  for (int a = 0; a < nen; ++a)
    for (int b = 0; b < nen; ++b) {
      const double gg = d * (grad[3 * a] * grad[3 * b] + grad[3 * a + 1] * grad[3 * b + 1] + grad[3 * a + 2] * grad[3 * b + 2]);
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) Ke[n * (3 * a + r) + 3 * b + s] += (r == s ? gg : 0.0) + l * c[a][r] * c[b][s];
    }
  return 0;
}

/* The 12x12 element matrix of element e at the current positions; 0 or the PSD projection's status.
 * Thread-safe. */
static int element_matrix(const pbng_problem *pb, int32_t e, pbng_hessian_kind kind, double Ke[144])
{
  const pbng_tet_record *rec = &pb->geo.records[e];
  const pbng_tet_shape *sh = &pb->geo.shapes[rec->shape];
  const double *x = pb->x;
  const double *ep = pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL;
  double F[9], D[81];

  pbng_tet_deformation_gradient(&x[3 * rec->node[0]], &x[3 * rec->node[1]], &x[3 * rec->node[2]], &x[3 * rec->node[3]], sh->B, F);
  if (kind == PBNG_HESSIAN_MODIFIED) {
    double grad[12];
    for (int a = 0; a < 4; ++a) pbng_tet_shape_gradient(sh->B, a, &grad[3 * a]);
    for (int k = 0; k < 144; ++k) Ke[k] = 0.0;
    return add_quadrature_modified(&pb->mat, 4, F, ep, grad, sh->V, Ke);
  }
  pbng_stress_derivative_plastic(&pb->mat, F, ep, D);
  if (kind == PBNG_HESSIAN_PSD_STRESS) {
    const int status = pbng_project_psd(9, D);
    if (status) return status;
  }
  pbng_tet_stiffness(D, sh->B, sh->V, Ke);
  return kind == PBNG_HESSIAN_PSD_ELEMENT ? pbng_project_psd(12, Ke) : 0;
}

/* Any other kind's (3 nen) x (3 nen) element matrix (nen: the element's own node count, its kind's
 * when kinds mix): the sum over its quadrature points, with the stress projection
 * (PBNG_HESSIAN_PSD_STRESS) made per quadrature point and, with plasticity, the element's eps_p at each
 * (S = C : (E_q - eps_p)). Thread-safe. */
static int quadrature_element_matrix(const pbng_problem *pb, int32_t e, pbng_hessian_kind kind, double *Ke)
{
  const pbng_geometry *geo = &pb->geo;
  const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
  const int nen = ref->type->nodes, n = 3 * nen;
  const int32_t *t = &pb->dm->elems[(int64_t)geo->nen * e];
  const double *ep = pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL; /* the element's one eps_p at every point */

  if (pbng_element_is_sheet(ref->type) && pb->pd) { /* peridynamic membranes: the rings hold the sheet's energy */
    for (int k = 0; k < n * n; ++k) Ke[k] = 0.0;
    return 0;
  }
  if (pbng_element_is_sheet(ref->type)) { /* exact; a membrane's made PSD as a whole unless EXACT (its stress projection too) */
    pbng_sheet_element_hessian(pbng_problem_sheet_material(pb, e), ref->type->kind, &geo->sheet[e], t, pb->x, Ke);
    return kind == PBNG_HESSIAN_EXACT || ref->type->kind == PBNG_ELEMENT_BEND4 ? 0 : pbng_project_psd(n, Ke);
  }
  for (int k = 0; k < n * n; ++k) Ke[k] = 0.0;
  for (int q = 0; q < ref->nq; ++q) {
    double F[9], D[81], buf[3 * PBNG_MAX_ELEMENT_NODES];
    const double *grad = pbng_geometry_qp_gradients(geo, ref, e, q, buf);
    const double Vq = pbng_geometry_qp_volume(geo, ref, e, q);
    pbng_qp_deformation_gradient(nen, t, grad, pb->x, F);
    if (kind == PBNG_HESSIAN_MODIFIED) {
      const int status = add_quadrature_modified(&pb->mat, nen, F, ep, grad, Vq, Ke);
      if (status) return status;
      continue;
    }
    pbng_stress_derivative_plastic(&pb->mat, F, ep, D);
    if (kind == PBNG_HESSIAN_PSD_STRESS) {
      const int status = pbng_project_psd(9, D);
      if (status) return status;
    }
    add_quadrature_stiffness(nen, D, grad, Vq, Ke);
  }
  return kind == PBNG_HESSIAN_PSD_ELEMENT ? pbng_project_psd(n, Ke) : 0;
}

int pbng_element_matrix(const pbng_problem *pb, int32_t e, pbng_hessian_kind kind, double *Ke)
{
  return pb->geo.ref ? quadrature_element_matrix(pb, e, kind, Ke) : element_matrix(pb, e, kind, Ke);
}

/* Whether an element (row t of width nen) has a free owned node. */
static int has_owned_row(const pbng_dmesh *dm, const int32_t *t, int nen)
{
  for (int a = 0, m = pbng_row_nodes(t, nen); a < m; ++a)
    if (t[a] < dm->nfree) return 1;
  return 0;
}

/* Adds Ke to K in one call: rows of this rank's free nodes only (all their elements are local);
 * held vertices get index -1, which MatSetValues skips. t: the element's row (width nen). */
static PetscErrorCode add_element_matrix(const pbng_dmesh *dm, const pbng_dof_map *map, const int32_t *t, int nen, const double *Ke, Mat K)
{
  PetscInt rows[PBNG_MAX_ELEMENT_NODES], cols[PBNG_MAX_ELEMENT_NODES];

  PetscFunctionBeginUser;
  nen = pbng_row_nodes(t, nen);
  for (int a = 0; a < nen; ++a) {
    cols[a] = (PetscInt)map->node_dof[t[a]];
    rows[a] = t[a] < dm->nfree ? cols[a] : -1;
  }
  PetscCall(MatSetValuesBlocked(K, nen, rows, nen, cols, Ke, ADD_VALUES)); /* Ke's layout: row 3a+i, column 3b+k */
  PetscFunctionReturn(0);
}

/* The exact Hessian of weak constraints' energies (Eq. 18; the static ones or the contacts): block (a, b)
 * = a_a a_b K_c with the stiffness in effect at x (a unilateral contact's is 0 while it does not act:
 * its zero blocks are inserted all the same, or the matrix's first assembly would drop their
 * preallocated places and a later one could not put them back), positive semidefinite; rows of owned
 * free nodes (local index < nfree) only. */
static PetscErrorCode add_weak_constraint_matrices(int32_t n, const pbng_weak_constraint *c, const int32_t *order, int32_t nfree, const pbng_dof_map *map,
                                                   const double *x, Mat K)
{
  PetscFunctionBeginUser;
  for (int32_t k = 0; k < n; ++k) {
    const pbng_weak_constraint *w = &c[order ? order[k] : k];
    double Kc[9];
    pbng_weak_constraint_stiffness_at(w, x, Kc);
    for (int a = 0; a < w->nnodes; ++a) {
      if (w->node[a] >= nfree) continue;
      const PetscInt row = (PetscInt)map->node_dof[w->node[a]];
      for (int b = 0; b < w->nnodes; ++b) {
        if (map->node_dof[w->node[b]] < 0) continue;
        const PetscInt col = (PetscInt)map->node_dof[w->node[b]];
        PetscScalar block[9];
        for (int p = 0; p < 9; ++p) block[p] = w->a[a] * w->a[b] * Kc[p];
        PetscCall(MatSetValuesBlocked(K, 1, &row, 1, &col, block, ADD_VALUES));
      }
    }
  }
  PetscFunctionReturn(0);
}

enum { ASSEMBLY_CHUNK_ENTRIES = 144 * 2048 }; /* element matrix entries computed in parallel, then inserted */

/* Ring r's matrix (peridynamic membranes): the Hessians of W_r and E_b,r with the virtual bond held fixed
 * (core/peridynamics_hessian.h; the moving normal's second derivative is left out, so Newton's matrix is not
 * the exact Hessian of the energy whose gradient it solves: it converges linearly, fast where rings are
 * nearly flat), or with -pd_hessian fd central differences of the exact ring gradient (x moved and put back),
 * made PSD as a whole unless EXACT. Returns the projection's status; -1 for an inverted ring. */
static int ring_matrix(const pbng_pd_terms *pd, int32_t r, double *x, pbng_hessian_kind kind, double *H)
{
  if (pd->opt.hessian_fd) {
    const int status = pbng_pd_ring_hessian_fd(pd, r, x, H);
    return status ? status : kind == PBNG_HESSIAN_EXACT ? 0 : pbng_project_psd(3 * (pd->rest[r].n + 1), H);
  }
  const pbng_pd_rest *rest = &pd->rest[r];
  const int N = 3 * (rest->n + 1);
  double y_i[3], y_ring[PBNG_PD_MAX_RING][3], Hb[9 * (PBNG_PD_MAX_RING + 1) * (PBNG_PD_MAX_RING + 1)];
  pbng_pd_ring_positions(pd, r, x, y_i, y_ring);
  if (pbng_pd_vertex_hessian(&pd->opt.mat, rest, y_i, (const double(*)[3])y_ring, NULL, H)) return -1;
  if (pd->opt.k_b > 0) {
    if (!isfinite(pbng_pd_bending_hessian(pd->opt.k_b, rest, y_i, (const double(*)[3])y_ring, NULL, Hb))) return -1;
    for (int k = 0; k < N * N; ++k) H[k] += Hb[k];
  }
  return kind == PBNG_HESSIAN_EXACT ? 0 : pbng_project_psd(N, H);
}

/* Every owned ring's matrix into K (rows of other ranks' nodes included: PETSc sends them). */
static PetscErrorCode add_ring_matrices(const pbng_problem *pb, const pbng_dof_map *map, pbng_hessian_kind kind, Mat K)
{
  const pbng_pd_terms *pd = pb->pd;
  double *H;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(9 * (PBNG_PD_MAX_RING + 1) * (PBNG_PD_MAX_RING + 1), &H));
  for (int32_t r = 0; r < pd->nrings; ++r) {
    PetscInt idx[PBNG_PD_MAX_RING + 1];
    const int m = pd->slot_start[r + 1] - pd->slot_start[r];
    const int status = ring_matrix(pd, r, pb->x, kind, H); /* serial: the fd form moves pb->x and puts it back */
    PetscCheck(status == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "stiffness: ring of vertex %" PRId64 " %s", pb->dm->global_node[pd->centre[r]],
               status < 0 ? "inverted (J <= 0) or degenerate" : "could not be made PSD (LAPACK syev failed)");
    for (int k = 0; k < m; ++k) idx[k] = (PetscInt)map->node_dof[pd->slot_node[pd->slot_start[r] + k]];
    PetscCall(MatSetValuesBlocked(K, m, idx, m, idx, H, ADD_VALUES));
  }
  PetscCall(PetscFree(H));
  PetscFunctionReturn(0);
}

/* order[0..n): the local indices 0..n-1 by increasing global id gid[] (the input's numbering). */
static PetscErrorCode order_by_global_id(int32_t n, const int64_t *gid, int32_t **order)
{
  pbng_id_local *v;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)n + 1, &v));
  for (int32_t k = 0; k < n; ++k) v[k].id = gid[k], v[k].local = k;
  qsort(v, (size_t)n, sizeof(*v), pbng_compare_id_local);
  PetscCall(PetscMalloc1((size_t)n + 1, order));
  for (int32_t k = 0; k < n; ++k) (*order)[k] = v[k].local;
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stiffness_assemble(const pbng_problem *pb, const pbng_dof_map *map, pbng_hessian_kind kind, Mat K)
{
  const pbng_dmesh *dm = pb->dm;
  const int nen = dm->nen, size = 9 * nen * nen, chunk = ASSEMBLY_CHUNK_ENTRIES / size;
  double *Ke;
  int32_t *order;

  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(K));
  PetscCall(PetscMalloc1((size_t)size * chunk, &Ke));
  /* every entry's terms are added in the input's order (elements, then weak constraints, by increasing global
   * id), so that the matrix is bitwise the same on any partition (the local orders follow the partition) */
  PetscCall(order_by_global_id(dm->nelems, dm->global_elem, &order));
  for (int32_t first = 0; first < dm->nelems; first += chunk) {
    const int32_t n = PetscMin(chunk, dm->nelems - first);
    int failed = 0;
    /* the element matrices are the expensive part (eigendecompositions): computed by all threads;
     * MatSetValues is not thread-safe, so insertion stays serial */
#pragma omp parallel for schedule(static) reduction(| : failed)
    for (int32_t k = 0; k < n; ++k) {
      const int32_t e = order[first + k];
      if (!has_owned_row(dm, &dm->elems[(int64_t)nen * e], nen)) continue;
      failed |= pbng_element_matrix(pb, e, kind, &Ke[(size_t)size * k]) != 0;
    }
    PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_LIB, "stiffness: the PSD projection (LAPACK syev) failed for an element among those of global ids %" PRId64 "..%" PRId64,
               dm->global_elem[order[first]], dm->global_elem[order[first + n - 1]]);
    for (int32_t k = 0; k < n; ++k) {
      const int32_t *t = &dm->elems[(int64_t)nen * order[first + k]];
      if (has_owned_row(dm, t, nen)) PetscCall(add_element_matrix(dm, map, t, nen, &Ke[(size_t)size * k], K));
    }
  }
  PetscCall(PetscFree(Ke));
  PetscCall(PetscFree(order));
  PetscCall(order_by_global_id(dm->nweak, dm->global_weak, &order));
  PetscCall(add_weak_constraint_matrices(dm->nweak, dm->weak, order, dm->nfree, map, pb->x, K));
  PetscCall(PetscFree(order));
  if (pb->contacts) PetscCall(add_weak_constraint_matrices(pb->contacts->n, pb->contacts->term, NULL, dm->nfree, map, pb->x, K));
  if (pb->pd) PetscCall(add_ring_matrices(pb, map, kind, K));
  for (int32_t i = 0; i < dm->nfree; ++i) { /* node terms: inertia (dynamic), a released set's spring while it holds */
    double xD[3], w = pb->mode == PBNG_MODE_DYNAMIC ? pb->mass[i] / (pb->dt * pb->dt) : 0.0;
    if (pb->handle_k && pbng_problem_handle_target(pb, i, xD)) w += pb->handle_k[i];
    if (w == 0.0) continue;
    const PetscInt row = (PetscInt)map->node_dof[i];
    const PetscScalar block[9] = {w, 0, 0, 0, w, 0, 0, 0, w};
    PetscCall(MatSetValuesBlocked(K, 1, &row, 1, &row, block, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(K, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stiffness_set_linear_modes(const pbng_problem *pb, Mat K)
{
  Vec v[12];
  MatNullSpace nsp;

  PetscFunctionBeginUser;
  for (int m = 0; m < 12; ++m) { /* m < 3: translation e_m; else X_j e_i with i = (m - 3) / 3, j = (m - 3) % 3 */
    PetscScalar *a;
    PetscCall(MatCreateVecs(K, &v[m], NULL));
    PetscCall(VecGetArray(v[m], &a));
    for (int32_t n = 0; n < pb->dm->nfree; ++n)
      for (int i = 0; i < 3; ++i) a[3 * (int64_t)n + i] = m < 3 ? (i == m) : (i == (m - 3) / 3 ? pb->dm->X[3 * (int64_t)n + (m - 3) % 3] : 0.0);
    PetscCall(VecRestoreArray(v[m], &a));
    for (int k = 0; k < m; ++k) { /* modified Gram-Schmidt: MatNullSpaceCreate takes orthonormal vectors */
      PetscScalar d;
      PetscCall(VecDot(v[m], v[k], &d));
      PetscCall(VecAXPY(v[m], -d, v[k]));
    }
    PetscCall(VecNormalize(v[m], NULL));
  }
  PetscCall(MatNullSpaceCreate(PetscObjectComm((PetscObject)K), PETSC_FALSE, 12, v, &nsp));
  PetscCall(MatSetNearNullSpace(K, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  for (int m = 0; m < 12; ++m) PetscCall(VecDestroy(&v[m]));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stiffness_set_rigid_body_modes(const pbng_problem *pb, Mat K)
{
  Vec coords;
  MatNullSpace nsp;
  PetscScalar *c;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(K, &coords, NULL));
  PetscCall(VecSetBlockSize(coords, 3));
  PetscCall(VecGetArray(coords, &c));
  for (int32_t k = 0; k < 3 * pb->dm->nfree; ++k) c[k] = pb->dm->X[k];
  PetscCall(VecRestoreArray(coords, &c));
  PetscCall(MatNullSpaceCreateRigidBody(coords, &nsp));
  PetscCall(MatSetNearNullSpace(K, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(0);
}
