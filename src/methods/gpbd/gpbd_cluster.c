/* GPBD: the joint projection of the tetrahedra left inverted after the passes (methods/gpbd/gpbd_cluster.h). */
#include "methods/gpbd/gpbd_cluster.h"
#include <string.h>
#include "core/mat3.h"
#include "core/sorted_ids.h"

/* A gathered tetrahedron: global element, global nodes, rest shape, positions and inverse masses of its nodes (ids as
 * doubles: exact below 2^53). */
typedef struct {
  double id, node[4], B[9], volume, x[4][3], inv_mass[4];
} cluster_record;

static int compare_records(const void *a, const void *b)
{
  const double x = ((const cluster_record *)a)->id, y = ((const cluster_record *)b)->id;
  return (x > y) - (x < y);
}

static int is_tet(const pbng_gpbd_cluster_mesh *m, int32_t e) { return m->tet[e].rest.volume > 0; }

static int tet_flipped(const pbng_gpbd_cluster_mesh *m, const double *x, int32_t e)
{
  double xe[4][3], F[9];
  for (int a = 0; a < 4; ++a) memcpy(xe[a], &x[3 * m->tet[e].node[a]], sizeof(xe[a]));
  pbng_gpbd_tet_deformation(&m->tet[e].rest, (const double(*)[3])xe, F);
  return mat3_det(F) <= 0.0;
}

/* Every rank's n values (doubles), in rank order, into *all (*total values; PetscFree it). Collective. */
static PetscErrorCode gather_all(MPI_Comm comm, const double *mine, int n, double **all, int *total)
{
  int size, *counts, *starts;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc2(size, &counts, size + 1, &starts));
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm));
  starts[0] = 0;
  for (int r = 0; r < size; ++r) starts[r + 1] = starts[r] + counts[r];
  *total = starts[size];
  PetscCall(PetscMalloc1(*total + 1, all));
  PetscCallMPI(MPI_Allgatherv(mine, n, MPI_DOUBLE, *all, counts, starts, MPI_DOUBLE, comm));
  PetscCall(PetscFree2(counts, starts));
  PetscFunctionReturn(0);
}

/* Sorts ids[0..n) and drops repeats; returns the count kept. */
static int64_t sort_unique(int64_t *ids, int64_t n)
{
  qsort(ids, (size_t)n, sizeof(int64_t), pbng_compare_int64);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i)
    if (k == 0 || ids[i] != ids[k - 1]) ids[k++] = ids[i];
  return k;
}

/* The global nodes of every rank's owned inverted tetrahedra, sorted, into *nodes (*n; PetscFree it), and how many
 * tetrahedra there are. Collective. */
static PetscErrorCode gather_inverted_nodes(const pbng_gpbd_cluster_mesh *m, const double *x, int64_t **nodes, int64_t *n, long long *inverted)
{
  const pbng_dmesh *dm = m->dm;
  double *mine, *all;
  int nmine = 0, total;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(4 * (size_t)dm->nowned_elems + 1, &mine));
  for (int32_t e = 0; e < dm->nowned_elems && e < m->n; ++e)
    if (is_tet(m, e) && tet_flipped(m, x, e))
      for (int a = 0; a < 4; ++a) mine[nmine++] = (double)dm->global_node[m->tet[e].node[a]];
  PetscCall(gather_all(dm->comm, mine, nmine, &all, &total));
  PetscCall(PetscMalloc1(total + 1, nodes));
  for (int i = 0; i < total; ++i) (*nodes)[i] = (int64_t)all[i];
  *inverted = total / 4;
  *n = sort_unique(*nodes, total);
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Every owned tetrahedron touching one of nodes[0..n) (all ranks'), sorted by global element, into *rec (*nrec).
 * Collective. */
static PetscErrorCode gather_cluster(const pbng_gpbd_cluster_mesh *m, const double *x, const int64_t *nodes, int64_t n, cluster_record **rec, int *nrec)
{
  const pbng_dmesh *dm = m->dm;
  cluster_record *mine;
  double *all;
  int nmine = 0, total;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nowned_elems + 1, &mine));
  for (int32_t e = 0; e < dm->nowned_elems && e < m->n; ++e) {
    if (!is_tet(m, e)) continue;
    const int32_t *node = m->tet[e].node;
    int touches = 0;
    for (int a = 0; a < 4; ++a) touches |= pbng_sorted_index(nodes, n, dm->global_node[node[a]]) >= 0;
    if (!touches) continue;
    cluster_record *r = &mine[nmine++];
    r->id = (double)dm->global_elem[e];
    memcpy(r->B, m->tet[e].rest.B, sizeof(r->B));
    r->volume = m->tet[e].rest.volume;
    for (int a = 0; a < 4; ++a) {
      r->node[a] = (double)dm->global_node[node[a]];
      memcpy(r->x[a], &x[3 * node[a]], sizeof(r->x[a]));
      r->inv_mass[a] = m->inv_mass[node[a]];
    }
  }
  enum { PER = sizeof(cluster_record) / sizeof(double) };
  PetscCall(gather_all(dm->comm, (const double *)mine, PER * nmine, &all, &total));
  *nrec = total / PER;
  *rec = (cluster_record *)all;
  qsort(*rec, (size_t)*nrec, sizeof(cluster_record), compare_records);
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

/* The cluster of the records: its nodes (gid[] sorted), positions, which move (a node of an inverted
 * tetrahedron, nodes[0..n), with 1/m > 0), tetrahedra and each movable node's tetrahedra; then projected. Returns
 * through *left the tetrahedra left inverted. Every rank alike. */
static PetscErrorCode untangle_records(const cluster_record *rec, int nrec, const int64_t *nodes, int64_t n, const pbng_gpbd_untangle_options *o,
                                       int64_t **gid, double **xc, uint8_t **movable, int32_t *nnodes, long long *left)
{
  int32_t(*tet)[4], *adj_start, *adj;
  pbng_gpbd_tet_rest *rest;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(4 * (size_t)nrec + 1, gid));
  for (int t = 0; t < nrec; ++t)
    for (int a = 0; a < 4; ++a) (*gid)[4 * t + a] = (int64_t)rec[t].node[a];
  const int32_t nn = (int32_t)sort_unique(*gid, 4 * (int64_t)nrec);
  PetscCall(PetscCalloc1(3 * (size_t)nn + 1, xc));
  PetscCall(PetscCalloc1(nn + 1, movable));
  PetscCall(PetscMalloc4(nrec + 1, &tet, nrec + 1, &rest, nn + 2, &adj_start, 4 * (size_t)nrec + 1, &adj));
  memset(adj_start, 0, sizeof(int32_t) * (size_t)(nn + 2));
  for (int t = 0; t < nrec; ++t) {
    memcpy(rest[t].B, rec[t].B, sizeof(rest[t].B));
    rest[t].volume = rec[t].volume;
    for (int a = 0; a < 4; ++a) {
      const int32_t i = (int32_t)pbng_sorted_index(*gid, nn, (int64_t)rec[t].node[a]);
      tet[t][a] = i;
      memcpy(&(*xc)[3 * i], rec[t].x[a], sizeof(rec[t].x[a]));
      (*movable)[i] = rec[t].inv_mass[a] > 0 && pbng_sorted_index(nodes, n, (int64_t)rec[t].node[a]) >= 0;
    }
  }
  for (int t = 0; t < nrec; ++t) /* each movable node's tetrahedra, in global element order */
    for (int a = 0; a < 4; ++a) adj_start[tet[t][a] + 2] += (*movable)[tet[t][a]];
  for (int32_t i = 0; i < nn; ++i) adj_start[i + 2] += adj_start[i + 1];
  for (int t = 0; t < nrec; ++t)
    for (int a = 0; a < 4; ++a)
      if ((*movable)[tet[t][a]]) adj[adj_start[tet[t][a] + 1]++] = 4 * t + a;
  double *work = NULL;
  if (o->joint_steps > 0) PetscCall(PetscMalloc1(pbng_gpbd_untangle_work_size(nn, nrec), &work));
  const pbng_gpbd_cluster c = {.nnodes = nn, .ntets = nrec, .x = *xc, .movable = *movable, .tet = (const int32_t(*)[4])tet, .rest = rest,
                               .adj_start = adj_start, .adj = adj, .work = work};
  *left = pbng_gpbd_untangle(&c, o);
  *nnodes = nn;
  PetscCall(PetscFree(work));
  PetscCall(PetscFree4(tet, rest, adj_start, adj));
  PetscFunctionReturn(0);
}

/* nodes[0..*n) grown by one ring: the nodes of every tetrahedron touching one of them (all ranks'). Collective. */
static PetscErrorCode grow_ring(const pbng_gpbd_cluster_mesh *m, const double *x, int64_t **nodes, int64_t *n)
{
  cluster_record *rec;
  int nrec;

  PetscFunctionBeginUser;
  PetscCall(gather_cluster(m, x, *nodes, *n, &rec, &nrec));
  PetscCall(PetscFree(*nodes));
  PetscCall(PetscMalloc1(4 * (size_t)nrec + 1, nodes));
  for (int t = 0; t < nrec; ++t)
    for (int a = 0; a < 4; ++a) (*nodes)[4 * t + a] = (int64_t)rec[t].node[a];
  *n = sort_unique(*nodes, 4 * (int64_t)nrec);
  PetscCall(PetscFree(rec));
  PetscFunctionReturn(0);
}

/* One joint projection: the nodes of the inverted tetrahedra and `rings` rings around them move. Collective. */
static PetscErrorCode project_once(const pbng_gpbd_cluster_mesh *m, const pbng_gpbd_untangle_options *o, int rings, long long max_inverted, double *x,
                                   long long *inverted, long long *left)
{
  const pbng_dmesh *dm = m->dm;
  int64_t *nodes = NULL, nnodes = 0, *gid = NULL;
  cluster_record *rec = NULL;
  double *xc = NULL;
  uint8_t *movable = NULL;
  int nrec = 0;
  int32_t nn = 0;

  PetscFunctionBeginUser;
  PetscCall(gather_inverted_nodes(m, x, &nodes, &nnodes, inverted));
  *left = *inverted;
  if (*inverted > 0 && *inverted <= max_inverted) {
    for (int r = 0; r < rings; ++r) PetscCall(grow_ring(m, x, &nodes, &nnodes));
    PetscCall(gather_cluster(m, x, nodes, nnodes, &rec, &nrec));
    PetscCall(untangle_records(rec, nrec, nodes, nnodes, o, &gid, &xc, &movable, &nn, left));
    for (int32_t i = 0; i < dm->nlocal; ++i) { /* every local copy of a moved node, owned or ghost */
      const int64_t k = pbng_sorted_index(gid, nn, dm->global_node[i]);
      if (k >= 0 && movable[k]) memcpy(&x[3 * i], &xc[3 * k], 3 * sizeof(double));
    }
    PetscCall(PetscFree(rec));
    PetscCall(PetscFree(gid));
    PetscCall(PetscFree(xc));
    PetscCall(PetscFree(movable));
  }
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_gpbd_project_clusters(const pbng_gpbd_cluster_mesh *m, const pbng_gpbd_untangle_options *o, long long max_inverted, double *x,
                                          long long *inverted, long long *left)
{
  long long now;

  PetscFunctionBeginUser;
  PetscCall(project_once(m, o, 0, max_inverted, x, inverted, left));
  for (int rings = 1; rings <= o->max_rings && *left > 0; ++rings) PetscCall(project_once(m, o, rings, max_inverted, x, &now, left));
  PetscFunctionReturn(0);
}
