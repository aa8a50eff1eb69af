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

/* The groups of nodes tied by weak constraints (each node alone when it has none), numbered by their lowest node:
 * group[i] for every node; returns their count. */
static PetscErrorCode weak_groups(const pbng_mesh *mesh, int64_t *group, int64_t *ngroups)
{
  int64_t *parent;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(mesh->nnodes, &parent));
  for (int64_t i = 0; i < mesh->nnodes; ++i) parent[i] = i;
  for (int64_t c = 0; c < mesh->nweak; ++c)
    for (int j = 1; j < mesh->weak[c].nnodes; ++j) {
      const int64_t a = find_root(parent, mesh->weak[c].node[0]), b = find_root(parent, mesh->weak[c].node[j]);
      if (a < b) parent[b] = a; /* the lower index stays the root */
      else parent[a] = b;
    }
  *ngroups = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i) { /* a root precedes its group's other nodes */
    const int64_t r = find_root(parent, i);
    group[i] = r == i ? (*ngroups)++ : group[r];
  }
  PetscCall(PetscFree(parent));
  PetscFunctionReturn(0);
}

/* PBNG updates the nodes of a weak constraint together (methods/pbng/sweep.c), so they must live on one
 * rank: after a partition that does not know the groups (the dual graph's), every group of nodes tied through weak
 * constraints goes to the part of its lowest node. */
static PetscErrorCode keep_weak_constraints_together(const pbng_mesh *mesh, int32_t *part)
{
  int64_t *group, ngroups, seen = 0;
  int32_t *group_part;

  PetscFunctionBeginUser;
  if (mesh->nweak == 0) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(mesh->nnodes, &group));
  PetscCall(weak_groups(mesh, group, &ngroups));
  PetscCall(PetscMalloc1(ngroups, &group_part));
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    if (group[i] == seen) group_part[seen++] = part[i]; /* the group's lowest node */
    part[i] = group_part[group[i]];
  }
  PetscCall(PetscFree(group_part));
  PetscCall(PetscFree(group));
  PetscFunctionReturn(0);
}

/* The node graph with each weak group contracted to one vertex (its nodes' weights summed, its edges to other groups
 * once each, in the order the nodes meet them; without weak constraints this is the node graph itself, so
 * pbng_partition_nodes does not build it then): METIS then balances
 * the groups whole, where moving each group to one part after METIS (keep_weak_constraints_together) could unbalance
 * the parts or empty one (-multilevel_min_nodes_per_rank 0 on the stacked blocks' coarse levels, 4 ranks). */
static PetscErrorCode contract_groups(int64_t n, const idx_t *xadj, const idx_t *adjncy, const idx_t *vwgt, const int64_t *group,
                                      int64_t ngroups, idx_t **gxadj, idx_t **gadjncy, idx_t **gwgt)
{
  int64_t *first, *next, *mark, total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(ngroups, &first, n, &next, ngroups, &mark));
  for (int64_t g = 0; g < ngroups; ++g) first[g] = -1, mark[g] = -1;
  for (int64_t i = n - 1; i >= 0; --i) next[i] = first[group[i]], first[group[i]] = i; /* each group's nodes, ascending */
  PetscCall(PetscMalloc1(ngroups + 1, gxadj));
  PetscCall(PetscCalloc1(ngroups, gwgt));
  *gadjncy = NULL;
  for (int pass = 0; pass < 2; ++pass) { /* pass 0 counts, pass 1 fills */
    total = 0;
    for (int64_t g = 0; g < ngroups; ++g) {
      if (pass == 0) (*gxadj)[g] = (idx_t)total;
      for (int64_t i = first[g]; i >= 0; i = next[i]) {
        if (pass == 0) (*gwgt)[g] += vwgt[i];
        for (idx_t k = xadj[i]; k < xadj[i + 1]; ++k) {
          const int64_t h = group[adjncy[k]];
          if (h == g || mark[h] == g + pass * ngroups) continue;
          mark[h] = g + pass * ngroups;
          if (pass == 1) (*gadjncy)[total] = (idx_t)h;
          ++total;
        }
      }
    }
    if (pass == 0) {
      (*gxadj)[ngroups] = (idx_t)total;
      PetscCall(PetscMalloc1(total + 1, gadjncy));
    }
  }
  PetscCall(PetscFree3(first, next, mark));
  PetscFunctionReturn(0);
}

/* METIS may leave a part empty on a small graph (the stacked blocks' Res-2 coarse level: 45 groups over 4 parts): each
 * empty part takes the last group of the part holding the most groups (deterministic; every rank needs a node). */
static PetscErrorCode fill_empty_parts(int64_t ngroups, int nparts, idx_t *where)
{
  int64_t *count;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(nparts, &count));
  for (int64_t g = 0; g < ngroups; ++g) ++count[where[g]];
  for (int p = 0; p < nparts; ++p) {
    if (count[p]) continue;
    int q = 0;
    for (int k = 1; k < nparts; ++k)
      if (count[k] > count[q]) q = k;
    int64_t g = ngroups - 1;
    while (where[g] != q) --g; /* count[q] >= 2: ngroups >= nparts and part p is empty */
    where[g] = p, --count[q], ++count[p];
  }
  PetscCall(PetscFree(count));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int nparts, int32_t *part)
{
  idx_t *xadj, *adjncy, *vwgt, *gxadj, *gadjncy, *gwgt, *where, ncon = 1, np = nparts, objval;
  idx_t options[METIS_NOPTIONS];
  int64_t *group, ngroups;

  PetscFunctionBeginUser;
  if (nparts <= 1) {
    for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = 0;
    PetscFunctionReturn(0);
  }
  PetscCheck(mesh->nnodes >= nparts, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes cannot be split over %d ranks", mesh->source, mesh->nnodes, nparts);
  PetscCall(PetscMalloc1(mesh->nnodes, &group));
  PetscCall(weak_groups(mesh, group, &ngroups));
  PetscCheck(ngroups >= nparts, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes in %" PRId64 " groups tied by weak constraints (each group on one rank) cannot be split over %d ranks",
             mesh->source, mesh->nnodes, ngroups, nparts);
  PetscCall(node_graph(mesh, adj, &xadj, &adjncy));
  PetscCall(PetscMalloc1(mesh->nnodes, &vwgt));
  /* One constraint, the total work. One constraint per color (each color is a synchronised step)
   * was measured no faster on 2 ranks and left parts empty on small meshes (docs/status.md, Open). */
  for (int64_t i = 0; i < mesh->nnodes; ++i) vwgt[i] = (idx_t)(adj->start[i + 1] - adj->start[i] + 1);
  const int contracted = ngroups < mesh->nnodes; /* without weak constraints the node graph itself, not a copy of it */
  if (contracted) PetscCall(contract_groups(mesh->nnodes, xadj, adjncy, vwgt, group, ngroups, &gxadj, &gadjncy, &gwgt));
  else gxadj = xadj, gadjncy = adjncy, gwgt = vwgt;
  PetscCall(PetscMalloc1(ngroups, &where));
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;
  options[METIS_OPTION_NUMBERING] = 0;
  idx_t nvtxs = (idx_t)ngroups;
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, gxadj, gadjncy, gwgt, NULL, NULL, &np, NULL, NULL, options, &objval, where);
  PetscCheck(status == METIS_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "METIS_PartGraphKway failed (status %d) on %s", status,
             mesh->source);
  PetscCall(fill_empty_parts(ngroups, nparts, where));
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = (int32_t)where[group[i]]; /* a group's nodes together */
  if (contracted) {
    PetscCall(PetscFree(gxadj));
    PetscCall(PetscFree(gadjncy));
    PetscCall(PetscFree(gwgt));
  }
  PetscCall(PetscFree(xadj));
  PetscCall(PetscFree(adjncy));
  PetscCall(PetscFree(vwgt));
  PetscCall(PetscFree(where));
  PetscCall(PetscFree(group));
  PetscFunctionReturn(0);
}

/* The dual graph's parts know nothing of the weak groups moved after them: one can end empty. */
static PetscErrorCode check_no_part_empty(const pbng_mesh *mesh, int nparts, const int32_t *part)
{
  int64_t *count;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(nparts, &count));
  for (int64_t i = 0; i < mesh->nnodes; ++i) ++count[part[i]];
  int empty = -1;
  for (int p = nparts - 1; p >= 0; --p)
    if (!count[p]) empty = p;
  PetscCall(PetscFree(count));
  PetscCheck(empty < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: the dual graph's partition leaves part %d empty once the nodes tied by weak constraints are kept together; "
             "use the node graph (-graph node), which partitions those groups whole", mesh->source, empty);
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
  PetscCall(check_no_part_empty(mesh, nparts, part));
  PetscFunctionReturn(0);
}
