#include "parallel/partition.h"
#include <metis.h>
#include <string.h>

/* CSR node graph: neighbours of node i are the other nodes of its elements, each once. */
static PetscErrorCode node_graph(const pbng_mesh *mesh, const pbng_node_elements *adj, idx_t **xadj, idx_t **adjncy)
{
  const int nen = mesh->nen;
  const int64_t n = mesh->nnodes;
  int64_t *mark, total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n + 1, xadj));
  PetscCall(PetscMalloc1(n, &mark));
  for (int64_t i = 0; i < n; ++i) mark[i] = -1;
  for (int pass = 0; pass < 2; ++pass) { /* pass 0 counts, pass 1 fills */
    total = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (pass == 0) (*xadj)[i] = (idx_t)total;
      for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k) {
        const int32_t *t = &mesh->elems[(int64_t)(adj->entry[k] / nen) * nen];
        for (int a = 0, m = pbng_row_nodes(t, nen); a < m; ++a) {
          const int64_t j = t[a];
          if (j == i || mark[j] == i + pass * n) continue;
          mark[j] = i + pass * n;
          if (pass == 1) (*adjncy)[total] = (idx_t)j;
          ++total;
        }
      }
    }
    if (pass == 0) {
      (*xadj)[n] = (idx_t)total;
      PetscCheck(total < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "node graph too large for 32-bit METIS indices");
      PetscCall(PetscMalloc1(total + 1, adjncy));
    }
  }
  PetscCall(PetscFree(mark));
  PetscFunctionReturn(0);
}

static int64_t find_root(int64_t *parent, int64_t i)
{
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* PBNG updates the nodes of a weak constraint together (methods/pbng/sweep.c), so they must live on one
 * rank: every set of nodes connected through weak constraints goes to the part of its lowest node. */
static PetscErrorCode keep_weak_constraints_together(const pbng_mesh *mesh, int32_t *part)
{
  int64_t *parent;

  PetscFunctionBeginUser;
  if (mesh->nweak == 0) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(mesh->nnodes, &parent));
  for (int64_t i = 0; i < mesh->nnodes; ++i) parent[i] = i;
  for (int64_t c = 0; c < mesh->nweak; ++c)
    for (int j = 1; j < mesh->weak[c].nnodes; ++j) {
      const int64_t a = find_root(parent, mesh->weak[c].node[0]), b = find_root(parent, mesh->weak[c].node[j]);
      if (a < b) parent[b] = a; /* the lower index stays the root */
      else parent[a] = b;
    }
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = part[find_root(parent, i)];
  PetscCall(PetscFree(parent));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int nparts, int32_t *part)
{
  idx_t *xadj, *adjncy, *vwgt, *where, nvtxs = (idx_t)mesh->nnodes, ncon = 1, np = nparts, objval;
  idx_t options[METIS_NOPTIONS];

  PetscFunctionBeginUser;
  if (nparts <= 1) {
    for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = 0;
    PetscFunctionReturn(0);
  }
  PetscCheck(mesh->nnodes >= nparts, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes cannot be split over %d ranks", mesh->source, mesh->nnodes, nparts);
  PetscCall(node_graph(mesh, adj, &xadj, &adjncy));
  PetscCall(PetscMalloc1(mesh->nnodes, &vwgt));
  PetscCall(PetscMalloc1(mesh->nnodes, &where));
  /* One constraint, the total work. One constraint per color (each color is a synchronised step)
   * was measured no faster on 2 ranks and left parts empty on small meshes (docs/status.md, Open). */
  for (int64_t i = 0; i < mesh->nnodes; ++i) vwgt[i] = (idx_t)(adj->start[i + 1] - adj->start[i] + 1);
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;
  options[METIS_OPTION_NUMBERING] = 0;
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, NULL, &np, NULL, NULL, options, &objval, where);
  PetscCheck(status == METIS_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "METIS_PartGraphKway failed (status %d) on %s", status,
             mesh->source);
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = (int32_t)where[i];
  PetscCall(keep_weak_constraints_together(mesh, part));
  PetscCall(PetscFree(xadj));
  PetscCall(PetscFree(adjncy));
  PetscCall(PetscFree(vwgt));
  PetscCall(PetscFree(where));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_nodes_dual(const pbng_mesh *mesh, int nparts, int32_t *part)
{
  const int nen = mesh->nen;
  idx_t ne = (idx_t)mesh->nelems, nn = (idx_t)mesh->nnodes, ncommon = 3, np = nparts, objval;
  idx_t *eptr, *eind, *epart, *npart, options[METIS_NOPTIONS];

  PetscFunctionBeginUser;
  if (nparts <= 1) {
    for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = 0;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc4(mesh->nelems + 1, &eptr, mesh->nelems * nen, &eind, mesh->nelems, &epart, mesh->nnodes, &npart));
  eptr[0] = 0;
  for (int64_t e = 0; e < mesh->nelems; ++e) { /* each element's own nodes (rows of mixed kinds are padded) */
    const int n = pbng_mesh_element_nodes(mesh, e);
    for (int a = 0; a < n; ++a) eind[eptr[e] + a] = (idx_t)mesh->elems[e * nen + a];
    eptr[e + 1] = eptr[e] + n;
  }
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;
  options[METIS_OPTION_NUMBERING] = 0;
  /* elements sharing a face (3 nodes) are dual-graph neighbours; METIS derives the node owners */
  const int status = METIS_PartMeshDual(&ne, &nn, eptr, eind, NULL, NULL, &ncommon, &np, NULL, options, &objval, epart, npart);
  PetscCheck(status == METIS_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "METIS_PartMeshDual failed (status %d) on %s", status, mesh->source);
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = (int32_t)npart[i];
  PetscCall(keep_weak_constraints_together(mesh, part));
  PetscCall(PetscFree4(eptr, eind, epart, npart));
  PetscFunctionReturn(0);
}
