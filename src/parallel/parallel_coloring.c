#include "parallel/parallel_coloring.h"
#include "core/csr.h"
#include "core/grow.h"
#include "parallel/halo.h"
#include <string.h>

/* The neighbours held by other processes (ghosts), each once, increasing, with their colors when known (-1 before);
 * for each ghost, the local rows waiting for it (its higher-id neighbours here): CSR wait_start/wait_row; and for each
 * local row, the processes with a higher-id neighbour of it, which wait for its color: CSR dest_start/dest. */
typedef struct {
  int64_t nghost;
  PetscInt *ghost;
  int32_t *ghost_color;
  int64_t *wait_start;
  int32_t *wait_row;
  int64_t *dest_start;
  int32_t *dest;
  int32_t *waiting; /* [nrows] lower-id neighbours not colored yet */
  uint8_t *taken;   /* [longest row + 1] the colors around the row being colored */
  int32_t *ready;   /* stack of rows whose lower neighbours are all colored */
  int64_t nready;
} coloring_state;

static int64_t ghost_index(const coloring_state *c, PetscInt id)
{
  PetscInt at = -1;
  (void)PetscFindInt(id, (PetscInt)c->nghost, c->ghost, &at); /* cannot fail: a search */
  return at >= 0 ? at : -1;
}

static int is_local(const pbng_dist_graph *g, PetscInt id) { return id >= g->range[g->rank] && id < g->range[g->rank + 1]; }

static PetscErrorCode collect_ghosts(const pbng_dist_graph *g, coloring_state *c)
{
  const int64_t nadj = g->start[g->nrows];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nadj + 1, &c->ghost));
  c->nghost = 0;
  for (int64_t k = 0; k < nadj; ++k)
    if (!is_local(g, g->adj[k])) c->ghost[c->nghost++] = g->adj[k];
  PetscInt n = (PetscInt)c->nghost;
  PetscCall(PetscSortRemoveDupsInt(&n, c->ghost));
  c->nghost = n;
  PetscCall(PetscMalloc1(n + 1, &c->ghost_color));
  for (int64_t k = 0; k < n; ++k) c->ghost_color[k] = -1;
  PetscFunctionReturn(0);
}

/* wait_start/wait_row, dest_start/dest and the waiting counts (see coloring_state). */
static PetscErrorCode build_waits(const pbng_dist_graph *g, coloring_state *c)
{
  const PetscInt first = (PetscInt)g->range[g->rank];
  int64_t nwait = 0, ndest = 0;
  int32_t *key, *item;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(g->nrows + 1, &c->waiting));
  PetscCall(PetscMalloc1(g->nrows + 1, &c->dest_start));
  PetscCall(PetscMalloc1(g->start[g->nrows] + 1, &c->dest));
  PetscCall(PetscMalloc2(g->start[g->nrows] + 1, &key, g->start[g->nrows] + 1, &item));
  c->dest_start[0] = 0;
  for (int64_t i = 0; i < g->nrows; ++i) {
    const PetscInt self = first + (PetscInt)i;
    c->waiting[i] = 0;
    for (PetscInt k = g->start[i]; k < g->start[i + 1]; ++k) {
      const PetscInt j = g->adj[k];
      if (j < self) ++c->waiting[i];
      if (is_local(g, j)) continue;
      if (j < self) key[nwait] = (int32_t)ghost_index(c, j), item[nwait++] = (int32_t)i; /* row i waits for ghost j */
      else {                                                                            /* j's process waits for row i */
        const int r = pbng_range_owner(g->range, g->size, j);
        int seen = 0;
        for (int64_t q = c->dest_start[i]; q < ndest && !seen; ++q) seen = c->dest[q] == r;
        if (!seen) c->dest[ndest++] = r;
      }
    }
    c->dest_start[i + 1] = ndest;
  }
  PetscCall(pbng_csr_by_key64(nwait, key, 1, c->nghost, &c->wait_start, &c->wait_row));
  for (int64_t k = 0; k < c->wait_start[c->nghost]; ++k) c->wait_row[k] = item[c->wait_row[k]];
  PetscCall(PetscFree2(key, item));
  PetscCall(PetscMalloc1(g->nrows + 1, &c->ready));
  PetscInt longest = 0;
  for (int64_t i = 0; i < g->nrows; ++i) longest = PetscMax(longest, g->start[i + 1] - g->start[i]);
  PetscCall(PetscMalloc1(longest + 1, &c->taken));
  c->nready = 0;
  for (int64_t i = g->nrows - 1; i >= 0; --i)
    if (c->waiting[i] == 0) c->ready[c->nready++] = (int32_t)i;
  PetscFunctionReturn(0);
}

/* The least color no lower-id neighbour of row i has (all of them are colored): with n lower neighbours it is at most
 * n, so only colors 0 .. n are marked (c->taken has room for the longest row). */
static int32_t least_free_color(const pbng_dist_graph *g, coloring_state *c, const int32_t *color, int64_t i)
{
  const PetscInt self = (PetscInt)(g->range[g->rank] + i);
  PetscInt n = 0;

  while (g->start[i] + n < g->start[i + 1] && g->adj[g->start[i] + n] < self) ++n; /* neighbours increase */
  memset(c->taken, 0, (size_t)n + 1);
  for (PetscInt k = g->start[i]; k < g->start[i] + n; ++k) {
    const PetscInt j = g->adj[k];
    const int32_t cj = is_local(g, j) ? color[j - g->range[g->rank]] : c->ghost_color[ghost_index(c, j)];
    if (cj <= n) c->taken[cj] = 1;
  }
  int32_t least = 0;
  while (c->taken[least]) ++least;
  return least;
}

/* A colored node for another process, and one to be sent: its row here and the process waiting for it. */
typedef struct {
  PetscInt id;
  int32_t color;
} colored_node;
typedef struct {
  int32_t row, dest;
} pending_send;

/* Colors every ready row (and those it makes ready), queueing for other processes the colors they wait for. */
static PetscErrorCode color_ready_rows(const pbng_dist_graph *g, coloring_state *c, int32_t *color, pending_send **out, int64_t *nout, int64_t *cap,
                                       int64_t *colored)
{
  const PetscInt first = (PetscInt)g->range[g->rank];

  PetscFunctionBeginUser;
  while (c->nready > 0) {
    const int32_t i = c->ready[--c->nready];
    color[i] = least_free_color(g, c, color, i);
    ++*colored;
    for (PetscInt k = g->start[i + 1] - 1; k >= g->start[i] && g->adj[k] > first + i; --k)
      if (is_local(g, g->adj[k]) && --c->waiting[g->adj[k] - first] == 0) c->ready[c->nready++] = (int32_t)(g->adj[k] - first);
    for (int64_t q = c->dest_start[i]; q < c->dest_start[i + 1]; ++q) {
      PetscCall(pbng_grow(out, sizeof(pending_send), *nout + 1, cap));
      (*out)[(*nout)++] = (pending_send){i, c->dest[q]};
    }
  }
  PetscFunctionReturn(0);
}

/* Sends the queued colors (grouped by destination) and takes the received ones in: ghosts colored, rows made ready. */
static PetscErrorCode exchange_colors(const pbng_dist_graph *g, coloring_state *c, const int32_t *color, const pending_send *out, int64_t nout)
{
  int *dest;
  colored_node *send, *recv;
  int64_t nrecv;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nout + 1, &dest, nout + 1, &send));
  for (int64_t k = 0; k < nout; ++k) dest[k] = out[k].dest, send[k] = (colored_node){(PetscInt)g->range[g->rank] + out[k].row, color[out[k].row]};
  PetscCall(pbng_send_items_to(g->comm, sizeof(colored_node), nout, dest, send, &nrecv, (void **)&recv));
  for (int64_t k = 0; k < nrecv; ++k) {
    const int64_t h = ghost_index(c, recv[k].id);
    PetscCheck(h >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "coloring: node %" PetscInt_FMT " is no neighbour here", recv[k].id);
    c->ghost_color[h] = recv[k].color;
    for (int64_t q = c->wait_start[h]; q < c->wait_start[h + 1]; ++q)
      if (--c->waiting[c->wait_row[q]] == 0) c->ready[c->nready++] = c->wait_row[q];
  }
  PetscCall(PetscFree2(dest, send));
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

static PetscErrorCode coloring_state_destroy(coloring_state *c)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(c->ghost));
  PetscCall(PetscFree(c->ghost_color));
  PetscCall(PetscFree(c->wait_start));
  PetscCall(PetscFree(c->wait_row));
  PetscCall(PetscFree(c->dest_start));
  PetscCall(PetscFree(c->dest));
  PetscCall(PetscFree(c->waiting));
  PetscCall(PetscFree(c->ready));
  PetscCall(PetscFree(c->taken));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_dist_graph(const pbng_dist_graph *g, int32_t *color, int *ncolors, int *rounds)
{
  coloring_state c;
  pending_send *out = NULL;
  int64_t nout = 0, cap = 0, colored = 0;
  int maxc = 0;

  PetscFunctionBeginUser;
  memset(&c, 0, sizeof(c));
  PetscCall(collect_ghosts(g, &c));
  PetscCall(build_waits(g, &c));
  for (*rounds = 1;; ++*rounds) {
    int64_t before = colored, counts[2];
    nout = 0;
    PetscCall(color_ready_rows(g, &c, color, &out, &nout, &cap, &colored));
    const int64_t mine[2] = {g->nrows - colored, colored - before};
    PetscCallMPI(MPI_Allreduce(mine, counts, 2, MPI_INT64_T, MPI_SUM, g->comm));
    if (counts[0] == 0) break;
    PetscCheck(counts[1] > 0 || *rounds == 1, g->comm, PETSC_ERR_PLIB, "coloring: no node could be colored in round %d", *rounds);
    PetscCall(exchange_colors(g, &c, color, out, nout));
  }
  for (int64_t i = 0; i < g->nrows; ++i) maxc = PetscMax(maxc, color[i] + 1);
  PetscCallMPI(MPI_Allreduce(&maxc, ncolors, 1, MPI_INT, MPI_MAX, g->comm));
  PetscCall(PetscFree(out));
  PetscCall(coloring_state_destroy(&c));
  PetscFunctionReturn(0);
}
