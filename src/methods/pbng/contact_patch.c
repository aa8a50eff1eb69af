/* PBNG's joint step on the nodes of the contacts (contact_patch.h). */
#include "methods/pbng/contact_patch.h"
#include "core/grow.h"
#include <stdlib.h>
#include <string.h>
#include "core/adjacency.h"
#include "problem/assembly.h"
#include "core/sorted_ids.h"

PetscErrorCode pbng_contact_patch_init(pbng_contact_patch *cp)
{
  PetscFunctionBeginUser;
  memset(cp, 0, sizeof(*cp));
  cp->version = -1;
  PetscCall(PetscLogEventRegister("PBNGContactPatch", PETSC_OBJECT_CLASSID, &cp->ev));
  PetscFunctionReturn(0);
}

static PetscErrorCode free_patch(pbng_contact_patch *cp)
{
  PetscFunctionBeginUser;
  if (cp->ksp) PetscCall(KSPReset(cp->ksp)); /* the next system may have another size */
  PetscCall(PetscFree(cp->mine));
  PetscCall(PetscFree(cp->gid));
  PetscCall(PetscFree(cp->local));
  PetscCall(MatDestroy(&cp->H));
  PetscCall(VecDestroy(&cp->f));
  PetscCall(VecDestroy(&cp->dx));
  cp->nmine = 0, cp->nglobal = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_patch_destroy(pbng_contact_patch *cp)
{
  PetscFunctionBeginUser;
  PetscCall(free_patch(cp));
  PetscCall(KSPDestroy(&cp->ksp));
  memset(cp, 0, sizeof(*cp));
  cp->version = -1;
  PetscFunctionReturn(0);
}

/* ---- the patch ---------------------------------------------------------------------------------------- */

/* Whether local node l is free (owned, static ghost or contact ghost). */
static int node_free(const pbng_contacts *ct, int32_t l)
{
  const pbng_dmesh *dm = ct->dm;
  if (l < dm->nowned) return l < dm->nfree;
  if (l < dm->nlocal) return dm->node_bc[l] < 0;
  return !ct->ghost_held[l - dm->nlocal];
}

/* Whether contact c joins two or more free nodes (a contact of one free node is its node's own step). */
static int joins_nodes(const pbng_contacts *ct, const pbng_weak_constraint *c)
{
  int n = 0;
  for (int s = 0; s < c->nnodes; ++s) n += node_free(ct, (int32_t)c->node[s]);
  return n >= 2;
}

/* Patch index of global node gid, or -1. */
static int64_t patch_index(const pbng_contact_patch *cp, int64_t gid) { return pbng_sorted_index(cp->gid, cp->nglobal, gid); }

/* The patch: this rank's owned nodes in it, every patch node's global id (gathered, sorted) and local copy. */
static PetscErrorCode find_patch(pbng_contact_patch *cp, const pbng_contacts *ct)
{
  const pbng_dmesh *dm = ct->dm;
  uint8_t *in;
  int64_t *mine;
  int size, *counts, *displ;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(dm->nowned + 1, &in));
  for (int32_t k = 0; k < ct->n; ++k)
    if (joins_nodes(ct, &ct->term[k]))
      for (int s = 0; s < ct->term[k].nnodes; ++s)
        if (ct->term[k].node[s] < dm->nfree) in[ct->term[k].node[s]] = 1;
  for (int32_t i = 0; i < dm->nfree; ++i) cp->nmine += in[i];
  PetscCall(PetscMalloc1(cp->nmine + 1, &cp->mine));
  PetscCall(PetscMalloc1(cp->nmine + 1, &mine));
  for (int32_t i = 0, m = 0; i < dm->nfree; ++i)
    if (in[i]) cp->mine[m] = i, mine[m++] = dm->global_node[i];
  PetscCallMPI(MPI_Comm_size(dm->comm, &size));
  PetscCall(PetscMalloc2(size, &counts, size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&cp->nmine, 1, MPI_INT, counts, 1, MPI_INT, dm->comm));
  displ[0] = 0;
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + counts[r];
  cp->nglobal = displ[size];
  PetscCall(PetscMalloc1(cp->nglobal + 1, &cp->gid));
  PetscCallMPI(MPI_Allgatherv(mine, cp->nmine, MPI_INT64_T, cp->gid, counts, displ, MPI_INT64_T, dm->comm));
  qsort(cp->gid, (size_t)cp->nglobal, sizeof(int64_t), pbng_compare_int64);
  PetscCall(PetscMalloc1(cp->nglobal + 1, &cp->local));
  for (int64_t k = 0; k < cp->nglobal; ++k) cp->local[k] = -1;
  for (int32_t l = 0; l < dm->nlocal + ct->nghost; ++l) {
    const int64_t k = patch_index(cp, pbng_contacts_node_gid(ct, l));
    if (k >= 0) cp->local[k] = l;
  }
  PetscCall(PetscFree2(counts, displ));
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree(in));
  PetscFunctionReturn(0);
}

/* ---- the rows --------------------------------------------------------------------------------------- */

/* A row in the making: column patch indices and their 3x3 blocks. */
typedef struct {
  int32_t n;
  int64_t cap;
  int64_t *col;
  double (*block)[9];
} row_builder;

static PetscErrorCode row_add(row_builder *r, int64_t col, const double *b, int stride, double scale)
{
  PetscFunctionBeginUser;
  int32_t k = 0;
  while (k < r->n && r->col[k] != col) ++k;
  if (k == r->n) {
    const int64_t cap = r->cap;
    PetscCall(pbng_grow(&r->col, sizeof(*r->col), r->n + 1, &r->cap));
    if (r->cap != cap) PetscCall(PetscRealloc(sizeof(*r->block) * (size_t)r->cap, &r->block)); /* beside col */
    r->col[k] = col, memset(r->block[k], 0, sizeof(r->block[k])), ++r->n;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r->block[k][3 * i + j] += scale * b[stride * i + j];
  PetscFunctionReturn(0);
}

/* The weak constraints' (static or contacts) part of node i's row: a_i a_q K for each of its
 * constraints (entries start..end of adj), in that order. */
static PetscErrorCode add_constraint_blocks(const pbng_contact_patch *cp, const pbng_contacts *ct, const pbng_weak_constraint *terms, const int32_t *adj,
                                            int32_t start, int32_t end, const double *x, row_builder *r)
{
  PetscFunctionBeginUser;
  for (int32_t e = start; e < end; ++e) {
    const pbng_weak_constraint *c = &terms[adj[e] / PBNG_WC_MAX_NODES];
    const int p = adj[e] % PBNG_WC_MAX_NODES;
    double K[9];
    pbng_weak_constraint_stiffness_at(c, x, K); /* zero while a unilateral contact does not act: the place stays */
    for (int q = 0; q < c->nnodes; ++q) {
      const int64_t col = patch_index(cp, pbng_contacts_node_gid(ct, (int32_t)c->node[q]));
      if (col >= 0) PetscCall(row_add(r, col, K, 3, c->a[p] * c->a[q]));
    }
  }
  PetscFunctionReturn(0);
}

/* Owned patch node i's row of H, every sum in an order of global ids: its elements (adjacency by global
 * element id, PBNG's modified element matrices), weak constraints and contacts (by key), inertia. */
static PetscErrorCode build_row(const pbng_contact_patch *cp, const pbng_problem *pb, int32_t i, double *Ke, row_builder *r)
{
  const pbng_dmesh *dm = pb->dm;
  const pbng_contacts *ct = pb->contacts;

  PetscFunctionBeginUser;
  r->n = 0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t e = pbng_adj_element(dm->nen, dm->adj[k]);
    const int a = pbng_adj_local_node(dm->nen, dm->adj[k]);
    const int32_t *t = &dm->elems[(int64_t)dm->nen * e];
    const int nen = pbng_row_nodes(t, dm->nen), n = 3 * nen;
    PetscCheck(pbng_element_matrix(pb, e, PBNG_HESSIAN_MODIFIED, Ke) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "contact patch: element matrix %d", (int)e);
    for (int b = 0; b < nen; ++b) {
      const int64_t col = patch_index(cp, pbng_contacts_node_gid(ct, t[b]));
      if (col >= 0) PetscCall(row_add(r, col, &Ke[n * 3 * a + 3 * b], n, 1.0));
    }
  }
  PetscCall(add_constraint_blocks(cp, ct, dm->weak, dm->wadj, dm->wadj_start[i], dm->wadj_start[i + 1], pb->x, r));
  PetscCall(add_constraint_blocks(cp, ct, ct->term, ct->adj, ct->adj_start[i], ct->adj_start[i + 1], pb->x, r));
  if (pb->mode == PBNG_MODE_DYNAMIC) {
    const double w = pb->mass[i] / (pb->dt * pb->dt), eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    PetscCall(row_add(r, patch_index(cp, dm->global_node[i]), eye, 3, w));
  }
  PetscFunctionReturn(0);
}

/* ---- the system on every rank ----------------------------------------------------------------------- */

/* This rank's rows packed: ints (row, ncols, cols...), reals (f + b [3], blocks [9 ncols]). */
static PetscErrorCode pack_rows(const pbng_contact_patch *cp, const pbng_problem *pb, const double *b, int64_t **ints, int *nint, double **reals,
                                int *nreal)
{
  const pbng_dmesh *dm = pb->dm;
  row_builder r = {0, 0, NULL, NULL};
  int64_t icap = 0, rcap = 0;
  double *Ke;

  PetscFunctionBeginUser;
  *nint = *nreal = 0;
  *ints = NULL, *reals = NULL;
  PetscCall(pbng_grow(ints, sizeof(**ints), 1, &icap)); /* never NULL, even with no row */
  PetscCall(pbng_grow(reals, sizeof(**reals), 1, &rcap));
  PetscCall(PetscMalloc1(9 * PBNG_MAX_ELEMENT_NODES * PBNG_MAX_ELEMENT_NODES, &Ke));
  for (int32_t m = 0; m < cp->nmine; ++m) {
    const int32_t i = cp->mine[m];
    double f[3];
    PetscCall(build_row(cp, pb, i, Ke, &r));
    pbng_node_force(pb, i, pb->x, f, NULL, 0); /* warm starts read only (the color sweep moves them alike on every rank) */
    if (b)
      for (int k = 0; k < 3; ++k) f[k] += b[3 * (int64_t)i + k];
    PetscCall(pbng_grow(ints, sizeof(**ints), *nint + 2 + r.n, &icap));
    PetscCall(pbng_grow(reals, sizeof(**reals), *nreal + 3 + 9 * r.n, &rcap));
    (*ints)[(*nint)++] = patch_index(cp, dm->global_node[i]);
    (*ints)[(*nint)++] = r.n;
    for (int32_t k = 0; k < r.n; ++k) (*ints)[(*nint)++] = r.col[k];
    for (int k = 0; k < 3; ++k) (*reals)[(*nreal)++] = f[k];
    for (int32_t k = 0; k < r.n; ++k)
      for (int q = 0; q < 9; ++q) (*reals)[(*nreal)++] = r.block[k][q];
  }
  PetscCall(PetscFree(Ke));
  PetscCall(PetscFree(r.col));
  PetscCall(PetscFree(r.block));
  PetscFunctionReturn(0);
}

/* Every rank's rows into the sequential H and f (rows by patch index, whatever rank sent them). */
static PetscErrorCode assemble_system(pbng_contact_patch *cp, const int64_t *ints, int nint, const double *reals)
{
  PetscInt *nnz;
  PetscScalar *f;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(cp->nglobal + 1, &nnz));
  for (int p = 0; p < nint; p += 2 + (int)ints[p + 1]) nnz[ints[p]] = (PetscInt)ints[p + 1];
  PetscCall(MatDestroy(&cp->H));
  PetscCall(MatCreate(PETSC_COMM_SELF, &cp->H));
  PetscCall(MatSetSizes(cp->H, 3 * cp->nglobal, 3 * cp->nglobal, 3 * cp->nglobal, 3 * cp->nglobal));
  PetscCall(MatSetBlockSize(cp->H, 3));
  PetscCall(MatSetType(cp->H, MATSEQAIJ));
  PetscCall(MatXAIJSetPreallocation(cp->H, 3, nnz, NULL, NULL, NULL));
  PetscCall(MatSetOption(cp->H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  if (!cp->f) PetscCall(MatCreateVecs(cp->H, &cp->dx, &cp->f));
  PetscCall(VecGetArray(cp->f, &f));
  for (int p = 0, q = 0; p < nint; p += 2 + (int)ints[p + 1]) {
    const PetscInt row = (PetscInt)ints[p], n = (PetscInt)ints[p + 1];
    for (int k = 0; k < 3; ++k) f[3 * row + k] = reals[q++];
    for (PetscInt k = 0; k < n; ++k, q += 9) {
      const PetscInt col = (PetscInt)ints[p + 2 + k];
      PetscCall(MatSetValuesBlocked(cp->H, 1, &row, 1, &col, &reals[q], INSERT_VALUES));
    }
  }
  PetscCall(VecRestoreArray(cp->f, &f));
  PetscCall(MatAssemblyBegin(cp->H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(cp->H, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(nnz));
  PetscFunctionReturn(0);
}

/* The KSP (once): options prefix "contact_", a direct solve unless the options say otherwise. */
static PetscErrorCode solve(pbng_contact_patch *cp)
{
  PetscFunctionBeginUser;
  if (!cp->ksp) {
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_SELF, &cp->ksp));
    PetscCall(KSPSetOptionsPrefix(cp->ksp, "contact_"));
    PetscCall(KSPSetType(cp->ksp, KSPPREONLY));
    PetscCall(KSPGetPC(cp->ksp, &pc));
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(KSPSetFromOptions(cp->ksp));
  }
  PetscCall(KSPSetOperators(cp->ksp, cp->H, cp->H));
  PetscCall(KSPSolve(cp->ksp, cp->f, cp->dx));
  PetscFunctionReturn(0);
}

/* ---- unilateral contacts: the active set ------------------------------------------------------------- */

enum { UTERM = 27 }; /* per unilateral term: patch index [4] (-1: none), a [4], K [9], n [3], C at x [3], acting [1], key [3] */

static int compare_uterms(const void *a, const void *b)
{
  const double *x = a, *y = b;
  for (int q = 24; q < 27; ++q)
    if (x[q] != y[q]) return (x[q] > y[q]) - (x[q] < y[q]);
  return 0;
}

/* The counted unilateral contacts joining patch nodes, packed (every rank then has every one). */
static PetscErrorCode pack_unilateral(const pbng_contact_patch *cp, const pbng_problem *pb, double **terms, int *n)
{
  const pbng_contacts *ct = pb->contacts;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(UTERM * (int64_t)ct->n + 1, terms));
  *n = 0;
  for (int32_t k = 0; k < ct->n; ++k) {
    const pbng_weak_constraint *c = &ct->term[k];
    if (!ct->counted[k] || !c->unilateral || !joins_nodes(ct, c)) continue;
    double *t = &(*terms)[*n], K[9]; /* *n counts values */
    for (int s = 0; s < 4; ++s) {
      t[s] = s < c->nnodes ? (double)patch_index(cp, pbng_contacts_node_gid(ct, (int32_t)c->node[s])) : -1.0;
      t[4 + s] = s < c->nnodes ? c->a[s] : 0.0;
    }
    memcpy(&t[8], c->K, sizeof(c->K));
    memcpy(&t[17], c->n, sizeof(c->n));
    pbng_weak_constraint_violation(c, pb->x, &t[20]);
    t[23] = pbng_weak_constraint_stiffness_at(c, pb->x, K);
    for (int q = 0; q < 3; ++q) t[24 + q] = (double)ct->key[k][q]; /* exact: ids below 2^53 */
    *n += UTERM;
  }
  PetscFunctionReturn(0);
}

/* Adds sign * (term t's quadratic branch at x) to H and f: a_p a_q K between its patch nodes, -a_p K C. */
static PetscErrorCode switch_term(pbng_contact_patch *cp, const double *t, double sign, PetscScalar *f)
{
  double KC[3];

  PetscFunctionBeginUser;
  for (int r = 0; r < 3; ++r) KC[r] = t[8 + 3 * r] * t[20] + t[8 + 3 * r + 1] * t[21] + t[8 + 3 * r + 2] * t[22];
  for (int p = 0; p < 4; ++p) {
    if (t[p] < 0) continue;
    const PetscInt row = (PetscInt)t[p];
    for (int r = 0; r < 3; ++r) f[3 * row + r] -= sign * t[4 + p] * KC[r];
    for (int q = 0; q < 4; ++q) {
      if (t[q] < 0) continue;
      const PetscInt col = (PetscInt)t[q];
      PetscScalar block[9];
      for (int k = 0; k < 9; ++k) block[k] = sign * t[4 + p] * t[4 + q] * t[8 + k];
      PetscCall(MatSetValuesBlocked(cp->H, 1, &row, 1, &col, block, ADD_VALUES));
    }
  }
  PetscFunctionReturn(0);
}

/* The step was solved with each unilateral contact acting as it does at x; one whose side changes over the
 * step is switched and the step solved again, a few passes at most (an active-set iteration on the
 * piecewise quadratic model). Every rank does the same with the same data. */
static PetscErrorCode settle_unilateral(pbng_contact_patch *cp, const pbng_problem *pb)
{
  double *mine = NULL, *all = NULL;
  int nmine = 0, nall = 0;

  PetscFunctionBeginUser;
  PetscCall(pack_unilateral(cp, pb, &mine, &nmine));
  PetscCall(pbng_allgather_items(pb->dm->comm, sizeof(double), nmine, mine, &nall, (void **)&all));
  qsort(all, (size_t)(nall / UTERM), sizeof(double) * UTERM, compare_uterms); /* by key: the same order on every partition */
  for (int pass = 0; pass < 4 && nall > 0; ++pass) {
    const PetscScalar *dx;
    PetscScalar *f;
    int switched = 0;
    PetscCall(VecGetArrayRead(cp->dx, &dx));
    PetscCall(VecGetArray(cp->f, &f));
    for (int k = 0; k < nall; k += UTERM) {
      double *t = &all[k], C[3] = {t[20], t[21], t[22]};
      for (int p = 0; p < 4; ++p)
        if (t[p] >= 0)
          for (int r = 0; r < 3; ++r) C[r] += t[4 + p] * dx[3 * (int64_t)t[p] + r];
      const double after = t[17] * C[0] + t[18] * C[1] + t[19] * C[2] < 0;
      if (after == t[23]) continue;
      PetscCall(switch_term(cp, t, after ? 1.0 : -1.0, f));
      t[23] = after, ++switched;
    }
    PetscCall(VecRestoreArray(cp->f, &f));
    PetscCall(VecRestoreArrayRead(cp->dx, &dx));
    if (!switched) break;
    PetscCall(MatAssemblyBegin(cp->H, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(cp->H, MAT_FINAL_ASSEMBLY));
    PetscCall(solve(cp));
  }
  PetscCall(PetscFree(all));
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

/* ---- the step ------------------------------------------------------------------------------------------ */

PetscErrorCode pbng_contact_patch_step(pbng_contact_patch *cp, pbng_problem *pb, const double *b)
{
  const pbng_contacts *ct = pb->contacts;
  int64_t *mine_i, *all_i;
  double *mine_r, *all_r;
  int nmi, nmr, nai, nar;

  PetscFunctionBeginUser;
  if (!ct) PetscFunctionReturn(0);
  if (cp->version != ct->version) {
    PetscCall(free_patch(cp));
    PetscCall(find_patch(cp, ct));
    cp->version = ct->version;
  }
  if (cp->nglobal == 0) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(cp->ev, 0, 0, 0, 0));
  PetscCall(pack_rows(cp, pb, b, &mine_i, &nmi, &mine_r, &nmr));
  PetscCall(pbng_allgather_items(pb->dm->comm, sizeof(int64_t), nmi, mine_i, &nai, (void **)&all_i));
  PetscCall(pbng_allgather_items(pb->dm->comm, sizeof(double), nmr, mine_r, &nar, (void **)&all_r));
  PetscCall(assemble_system(cp, all_i, nai, all_r));
  PetscCall(solve(cp));
  if (ct->opt.unilateral) PetscCall(settle_unilateral(cp, pb));
  const PetscScalar *dx;
  PetscCall(VecGetArrayRead(cp->dx, &dx));
  for (int64_t k = 0; k < cp->nglobal; ++k) /* every copy, owned or ghost, moves alike */
    if (cp->local[k] >= 0)
      for (int r = 0; r < 3; ++r) pb->x[3 * (int64_t)cp->local[k] + r] += dx[3 * k + r];
  PetscCall(VecRestoreArrayRead(cp->dx, &dx));
  PetscCall(PetscFree(all_i));
  PetscCall(PetscFree(all_r));
  PetscCall(PetscFree(mine_i));
  PetscCall(PetscFree(mine_r));
  PetscCall(PetscLogEventEnd(cp->ev, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
