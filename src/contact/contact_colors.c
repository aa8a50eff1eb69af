/* Incremental recoloring for contacts (paper Sec. 9.1; contact_colors.h). */
#include "contact/contact_colors.h"
#include "core/grow.h"
#include <stdlib.h>
#include <string.h>
#include "core/adjacency.h"

int32_t pbng_contact_colors_current(const pbng_contacts *ct, int64_t gid, int32_t static_color)
{
  int32_t lo = 0, hi = ct->nrecolored - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (ct->recolored_gid[mid] == gid) return ct->recolored_color[mid];
    if (ct->recolored_gid[mid] < gid) lo = mid + 1;
    else hi = mid - 1;
  }
  return static_color;
}

/* Whether local node l (static or contact ghost) is ever updated, i.e. its color matters. */
static int is_free(const pbng_contacts *ct, int32_t l)
{
  const pbng_dmesh *dm = ct->dm;
  if (l < dm->nowned) return l < dm->nfree;
  if (l < dm->nlocal) return dm->node_bc[l] < 0;
  return !ct->ghost_held[l - dm->nlocal];
}

static int64_t local_gid(const pbng_contacts *ct, int32_t l) { return l < ct->dm->nlocal ? ct->dm->global_node[l] : ct->ghost_gid[l - ct->dm->nlocal]; }

/* A growing int64 buffer. */
typedef struct {
  int64_t *v;
  int64_t n, cap;
} buffer;

static PetscErrorCode push(buffer *b, int64_t x)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&b->v, sizeof(*b->v), b->n + 1, &b->cap));
  b->v[b->n++] = x;
  PetscFunctionReturn(0);
}

/* Adds neighbour l of the node being described unless it is the node itself, held, or already listed
 * (mark[] per local node, reset by the caller). */
static PetscErrorCode add_neighbour(const pbng_contacts *ct, int32_t self, int32_t l, uint8_t *mark, int32_t *listed, int32_t *nlisted)
{
  PetscFunctionBeginUser;
  if (l == self || l < 0 || mark[l] || !is_free(ct, l)) PetscFunctionReturn(0);
  mark[l] = 1;
  listed[(*nlisted)++] = l;
  PetscFunctionReturn(0);
}

/* Node i's description for rank 0: gid, first guess, static color, neighbour count, then (gid, color)
 * of every free neighbour through its elements, weak constraints and contacts. */
static PetscErrorCode describe_node(const pbng_contacts *ct, int32_t i, int guess, uint8_t *mark, int32_t *listed, buffer *b)
{
  const pbng_dmesh *dm = ct->dm;
  int32_t n = 0;

  PetscFunctionBeginUser;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t *row = &dm->elems[(int64_t)dm->nen * pbng_adj_element(dm->nen, dm->adj[k])];
    for (int a = 0, m = pbng_row_nodes(row, dm->nen); a < m; ++a) PetscCall(add_neighbour(ct, i, row[a], mark, listed, &n));
  }
  for (int32_t k = dm->wadj_start[i]; k < dm->wadj_start[i + 1]; ++k) {
    const pbng_weak_constraint *w = &dm->weak[dm->wadj[k] / PBNG_WC_MAX_NODES];
    for (int a = 0; a < w->nnodes; ++a) PetscCall(add_neighbour(ct, i, (int32_t)w->node[a], mark, listed, &n));
  }
  for (int32_t k = ct->adj_start[i]; k < ct->adj_start[i + 1]; ++k) {
    const pbng_weak_constraint *w = &ct->term[ct->adj[k] / PBNG_WC_MAX_NODES];
    for (int a = 0; a < w->nnodes; ++a) PetscCall(add_neighbour(ct, i, (int32_t)w->node[a], mark, listed, &n));
  }
  PetscCall(push(b, dm->global_node[i]));
  PetscCall(push(b, guess));
  PetscCall(push(b, dm->color[i]));
  PetscCall(push(b, n));
  for (int32_t k = 0; k < n; ++k) {
    PetscCall(push(b, local_gid(ct, listed[k])));
    PetscCall(push(b, ct->color[listed[k]]));
    mark[listed[k]] = 0;
  }
  PetscFunctionReturn(0);
}

/* One node to recolor as rank 0 sees it. */
typedef struct {
  int64_t gid, guess, static_color, color;
  const int64_t *neighbours; /* (gid, color) pairs */
  int64_t nneighbours;
} to_color;

static int compare_to_color(const void *a, const void *b)
{
  const int64_t x = ((const to_color *)a)->gid, y = ((const to_color *)b)->gid;
  return (x > y) - (x < y);
}

/* The position of gid among the sorted nodes to color, or -1. */
static int64_t find_node(const to_color *v, int64_t n, int64_t gid)
{
  int64_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (v[mid].gid == gid) return mid;
    if (v[mid].gid < gid) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Rank 0: the greedy rule in increasing gid. A neighbour being recolored counts with its new color once
 * chosen, with its current one before. Writes (gid, color, static color) triples into out. */
static PetscErrorCode choose_colors(const int64_t *all, int64_t len, int64_t *nout, int64_t **out)
{
  to_color *v;
  int64_t n = 0;
  int64_t cap = 64;
  uint8_t *used;

  PetscFunctionBeginUser;
  for (int64_t p = 0; p < len; p += 4 + 2 * all[p + 3]) ++n;
  PetscCall(PetscMalloc1(n + 1, &v));
  n = 0;
  for (int64_t p = 0; p < len; p += 4 + 2 * all[p + 3])
    v[n++] = (to_color){all[p], all[p + 1], all[p + 2], -1, &all[p + 4], all[p + 3]};
  qsort(v, (size_t)n, sizeof(to_color), compare_to_color);
  PetscCall(PetscCalloc1(cap, &used));
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t q = 0; q < v[k].nneighbours; ++q) {
      const int64_t u = find_node(v, n, v[k].neighbours[2 * q]);
      const int64_t c = u >= 0 && u < k ? v[u].color : v[k].neighbours[2 * q + 1];
      if (c >= cap) {
        const int64_t old = cap;
        PetscCall(pbng_grow(&used, sizeof(*used), c + 1, &cap));
        memset(used + old, 0, (size_t)(cap - old));
      }
      used[c] = 1;
    }
    int64_t c = v[k].guess;
    if (c < cap && used[c])
      for (c = 0; c < cap && used[c]; ++c) {}
    v[k].color = c;
    for (int64_t q = 0; q < v[k].nneighbours; ++q) { /* reset what was set */
      const int64_t u = find_node(v, n, v[k].neighbours[2 * q]);
      const int64_t cu = u >= 0 && u < k ? v[u].color : v[k].neighbours[2 * q + 1];
      if (cu < cap) used[cu] = 0;
    }
  }
  PetscCall(PetscMalloc1(3 * n + 1, out));
  for (int64_t k = 0; k < n; ++k) (*out)[3 * k] = v[k].gid, (*out)[3 * k + 1] = v[k].color, (*out)[3 * k + 2] = v[k].static_color;
  *nout = n;
  PetscCall(PetscFree(used));
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}

/* Gathers every rank's buffer on rank 0, which makes rows of `width` int64 with `choose`; every rank
 * gets them (collective). */
typedef PetscErrorCode (*rank0_chooser)(const int64_t *all, int64_t len, int64_t *nrows, int64_t **rows);
static PetscErrorCode gather_on_rank0(const pbng_contacts *ct, const buffer *mine, rank0_chooser choose, int width, int64_t *n, int64_t **rows)
{
  const int size = ct->dm->size, rank = ct->dm->rank;
  int *counts = NULL, *displ = NULL, len = (int)mine->n;
  int64_t *all = NULL, total = 0;

  PetscFunctionBeginUser;
  PetscCheck(mine->n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "contacts: coloring data of one rank too large");
  if (rank == 0) PetscCall(PetscMalloc2(size, &counts, size + 1, &displ));
  PetscCallMPI(MPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, ct->comm));
  if (rank == 0) {
    displ[0] = 0;
    for (int r = 0; r < size; ++r) total += counts[r], displ[r + 1] = (int)(displ[r] + counts[r]);
    PetscCheck(total < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "contacts: coloring data too large for one gather");
    PetscCall(PetscMalloc1(total + 1, &all));
  }
  PetscCallMPI(MPI_Gatherv(mine->v, len, MPI_INT64_T, all, counts, displ, MPI_INT64_T, 0, ct->comm));
  if (rank == 0) PetscCall(choose(all, total, n, rows));
  PetscCallMPI(MPI_Bcast(n, 1, MPI_INT64_T, 0, ct->comm));
  if (rank != 0) PetscCall(PetscMalloc1(width * *n + 1, rows));
  PetscCheck(width * *n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "contacts: coloring result too large for one broadcast");
  PetscCallMPI(MPI_Bcast(*rows, (int)(width * *n), MPI_INT64_T, 0, ct->comm));
  if (rank == 0) {
    PetscCall(PetscFree(all));
    PetscCall(PetscFree2(counts, displ));
  }
  PetscFunctionReturn(0);
}

/* The job's recolored list merged with the new triples (sorted by gid): a node back on its static color
 * leaves it. */
static PetscErrorCode merge_recolored(pbng_contacts *ct, int64_t n, const int64_t *t)
{
  const int32_t m = ct->nrecolored;
  int64_t *gid;
  int32_t *color, k = 0, out = 0;
  int64_t q = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(m + n + 1, &gid, m + n + 1, &color));
  while (k < m || q < n) {
    if (q >= n || (k < m && ct->recolored_gid[k] < t[3 * q])) {
      gid[out] = ct->recolored_gid[k], color[out++] = ct->recolored_color[k++];
      continue;
    }
    if (k < m && ct->recolored_gid[k] == t[3 * q]) ++k; /* replaced */
    if (t[3 * q + 1] != t[3 * q + 2]) gid[out] = t[3 * q], color[out++] = (int32_t)t[3 * q + 1];
    ++q;
  }
  PetscCall(PetscFree2(ct->recolored_gid, ct->recolored_color));
  PetscCall(PetscMalloc2(out + 1, &ct->recolored_gid, out + 1, &ct->recolored_color));
  if (out) memcpy(ct->recolored_gid, gid, sizeof(int64_t) * (size_t)out);
  if (out) memcpy(ct->recolored_color, color, sizeof(int32_t) * (size_t)out);
  ct->nrecolored = out;
  PetscCall(PetscFree2(gid, color));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_colors_update(pbng_contacts *ct, const uint8_t *new_node, const uint8_t *left_node)
{
  const pbng_dmesh *dm = ct->dm;
  buffer mine = {NULL, 0, 0};
  uint8_t *mark;
  int32_t *listed;
  int64_t count = 0, total, n, *triples;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(dm->nlocal + ct->nghost + 1, &mark));
  PetscCall(PetscMalloc1(dm->nlocal + ct->nghost + 1, &listed));
  for (int32_t i = 0; i < dm->nfree; ++i) {
    const int back = left_node[i] && ct->color[i] != dm->color[i];
    if (!new_node[i] && !back) continue;
    PetscCall(describe_node(ct, i, new_node[i] ? ct->color[i] : dm->color[i], mark, listed, &mine));
    ++count;
  }
  PetscCall(PetscFree(mark));
  PetscCall(PetscFree(listed));
  PetscCallMPI(MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, ct->comm));
  ct->stats.recolored = total;
  if (total > 0) {
    PetscCall(gather_on_rank0(ct, &mine, choose_colors, 3, &n, &triples));
    PetscCall(merge_recolored(ct, n, triples));
    for (int64_t q = 0; q < n; ++q) {
      const int32_t l = pbng_contacts_static_local(ct, triples[3 * q]);
      if (l >= 0) ct->color[l] = (int32_t)triples[3 * q + 1];
    }
    PetscCall(PetscFree(triples));
  }
  PetscCall(PetscFree(mine.v));
  ct->ncolors = dm->ncolors;
  for (int32_t k = 0; k < ct->nrecolored; ++k)
    if (ct->recolored_color[k] + 1 > ct->ncolors) ct->ncolors = ct->recolored_color[k] + 1;
  PetscFunctionReturn(0);
}

