#include "parallel/submesh_migrate.h"
#include "parallel/halo.h"
#include "parallel/slice_sets.h"
#include <string.h>

/* Messages are rows of int64 words: an element [part, global id, its PBD/XPBD color, its nen nodes], an owned node
 * [part, global id, X (3 doubles' bits), color], a weak constraint [part, global id, block color, PBD/XPBD color, the
 * constraint's bytes (global node ids)]. */
enum { NODE_WORDS = 6, WEAK_WORDS = 4 + (sizeof(pbng_weak_constraint) + 7) / 8 };

/* What the migration works from: the slice, the parts and colors of its nodes (and the parts of the other nodes its
 * elements use, asked of their slices: foreign_id increasing), and what the other processes sent here. */
typedef struct {
  MPI_Comm comm;
  int rank, size, nparts;
  const pbng_mesh_slice *s;
  const int64_t *range;
  const int32_t *part;       /* [s->node_end - s->node_begin] */
  const pbng_slice_colors *c;
  PetscInt nforeign, *foreign_id;
  int32_t *foreign_part;
  int *ecount, *edispl; /* element rows received, by source process (in rows) */
  int64_t *erows;
  int *ncount, *ndispl; /* owned-node rows received, by source */
  int64_t *nrows;
  int *wcount, *wdispl; /* weak-constraint rows received, by source */
  int64_t *wrows;
} migration;

static int element_words(const migration *m) { return 3 + m->s->nen; }

static int32_t node_part(const migration *m, int32_t id)
{
  if (id >= m->s->node_begin && id < m->s->node_end) return m->part[id - m->s->node_begin];
  PetscInt at = -1;
  (void)PetscFindInt(id, m->nforeign, m->foreign_id, &at); /* cannot fail: a search */
  return at >= 0 ? m->foreign_part[at] : -1;
}

/* The distinct parts of the nodes of a row of n node ids (an element's, -1 padding; a weak constraint's); returns how
 * many. */
static int row_parts(const migration *m, const int32_t *t, int n_ids, int32_t *parts)
{
  int n = 0;
  for (int a = 0; a < n_ids; ++a) {
    if (t[a] < 0) continue;
    const int32_t p = node_part(m, t[a]);
    int seen = 0;
    for (int b = 0; b < n && !seen; ++b) seen = parts[b] == p;
    if (!seen) parts[n++] = p;
  }
  return n;
}

static int element_parts(const migration *m, const int32_t *t, int32_t *parts) { return row_parts(m, t, m->s->nen, parts); }

/* The distinct parts of a weak constraint's nodes. */
static int weak_parts(const migration *m, const pbng_weak_constraint *c, int32_t *parts)
{
  int32_t ids[PBNG_WC_MAX_NODES];
  pbng_weak_constraint_node_rows(1, c, ids);
  return row_parts(m, ids, c->nnodes, parts);
}

/* A node's part, as this process answers about the nodes of its slice. */
static void answer_part(void *ctx, int64_t local, void *item)
{
  const migration *m = ctx;
  *(int32_t *)item = m->part[local];
}

/* The parts of the nodes the slice's elements and weak constraints use outside its own node range, asked of their slices. */
static PetscErrorCode fetch_foreign_parts(migration *m)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_slice_foreign_nodes(m->s, &m->nforeign, &m->foreign_id));
  PetscCall(PetscMalloc1(m->nforeign + 1, &m->foreign_part));
  PetscCall(pbng_ask_range_owners(m->comm, m->range, m->nforeign, m->foreign_id, sizeof(int32_t), answer_part, m, m->foreign_part));
  PetscFunctionReturn(0);
}

/* Rows for other processes: count[dest] rows of `words` words filled by fill(m, pass, rows, offset) in two passes
 * (pass 0 counts into count, pass 1 writes at offset[dest]), then exchanged: *rcount, *rdispl in rows. */
typedef void (*row_writer)(const migration *m, int pass, int *count, int64_t *rows, int64_t *offset);

static PetscErrorCode send_rows(migration *m, int words, row_writer write, int **rcount, int **rdispl, int64_t **recv)
{
  int *count, *wcount;
  int64_t *offset, *rows;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc3(m->size, &count, m->size + 1, &offset, m->size, &wcount));
  write(m, 0, count, NULL, NULL);
  for (int r = 0; r < m->size; ++r) {
    offset[r + 1] = offset[r] + (int64_t)count[r] * words;
    PetscCheck((int64_t)count[r] * words < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "migration: too many rows for process %d", r);
    wcount[r] = count[r] * words;
  }
  PetscCall(PetscMalloc1(offset[m->size] + 1, &rows));
  write(m, 1, count, rows, offset);
  PetscCall(pbng_exchange_items(m->comm, sizeof(int64_t), wcount, rows, rcount, rdispl, (void **)recv));
  for (int r = 0; r <= m->size; ++r) { /* words -> rows */
    if (r < m->size) (*rcount)[r] /= words;
    (*rdispl)[r] /= words;
  }
  PetscCall(PetscFree(rows));
  PetscCall(PetscFree3(count, offset, wcount));
  PetscFunctionReturn(0);
}

/* A row of `words` words for part p: in pass 1 the next one for p's process (NULL when this process builds p); pass 0
 * counts it (NULL). */
static int64_t *next_row(const migration *m, int pass, int32_t p, int words, int *count, int64_t *rows, int64_t *offset)
{
  const int dest = pbng_parts_process(m->nparts, m->size, p);
  if (dest == m->rank) return NULL;
  if (pass == 0) {
    ++count[dest];
    return NULL;
  }
  int64_t *row = &rows[offset[dest]];
  offset[dest] += words;
  return row;
}

/* Each slice element, once per part of its nodes that another process builds. */
static void write_element_rows(const migration *m, int pass, int *count, int64_t *rows, int64_t *offset)
{
  const pbng_mesh_slice *s = m->s;
  int32_t parts[PBNG_MAX_ELEMENT_NODES];
  for (int64_t e = 0; e < s->elem_end - s->elem_begin; ++e) {
    const int32_t *t = &s->elems[e * s->nen];
    for (int k = 0, n = element_parts(m, t, parts); k < n; ++k) {
      int64_t *row = next_row(m, pass, parts[k], element_words(m), count, rows, offset);
      if (!row) continue;
      row[0] = parts[k], row[1] = s->elem_begin + e, row[2] = m->c->elem ? m->c->elem[e] : -1;
      for (int a = 0; a < s->nen; ++a) row[3 + a] = t[a];
    }
  }
}

/* Each slice node whose part another process builds. */
static void write_node_rows(const migration *m, int pass, int *count, int64_t *rows, int64_t *offset)
{
  const pbng_mesh_slice *s = m->s;
  for (int64_t i = 0; i < s->node_end - s->node_begin; ++i) {
    int64_t *row = next_row(m, pass, m->part[i], NODE_WORDS, count, rows, offset);
    if (!row) continue;
    row[0] = m->part[i], row[1] = s->node_begin + i, row[5] = m->c->node[i];
    memcpy(&row[2], &s->X[3 * i], 3 * sizeof(double));
  }
}

/* A slice weak constraint's block and PBD/XPBD colors (-1: not computed). */
static void weak_colors(const migration *m, int64_t c, int32_t *block, int32_t *weak)
{
  *block = m->c->block ? m->c->block[c] : -1;
  *weak = m->c->weak ? m->c->weak[c] : -1;
}

/* Each slice weak constraint, once per part of its nodes that another process builds. */
static void write_weak_rows(const migration *m, int pass, int *count, int64_t *rows, int64_t *offset)
{
  const pbng_mesh_slice *s = m->s;
  int32_t parts[PBNG_WC_MAX_NODES], block, weak;
  for (int64_t c = 0; c < s->weak_end - s->weak_begin; ++c)
    for (int k = 0, n = weak_parts(m, &s->weak[c], parts); k < n; ++k) {
      int64_t *row = next_row(m, pass, parts[k], WEAK_WORDS, count, rows, offset);
      if (!row) continue;
      weak_colors(m, c, &block, &weak);
      row[0] = parts[k], row[1] = s->weak_begin + c, row[2] = block, row[3] = weak;
      memcpy(&row[4], &s->weak[c], sizeof(pbng_weak_constraint));
    }
}

/* --- a part's elements and owned nodes, in increasing global id: the sources in process order (the slices' ranges
 * increase with the process), this process's own slice read in place --- */

typedef PetscErrorCode (*element_visitor)(void *ctx, int64_t id, const int32_t *nodes, int32_t color);
typedef PetscErrorCode (*node_visitor)(void *ctx, int64_t id, const double *X, int32_t color);
typedef PetscErrorCode (*weak_visitor)(void *ctx, int64_t id, const pbng_weak_constraint *c, int32_t block, int32_t weak);

static PetscErrorCode visit_elements(const migration *m, int p, element_visitor visit, void *ctx)
{
  const pbng_mesh_slice *s = m->s;
  const int nen = s->nen, words = element_words(m);
  int32_t parts[PBNG_MAX_ELEMENT_NODES], nodes[PBNG_MAX_ELEMENT_NODES];

  PetscFunctionBeginUser;
  for (int r = 0; r < m->size; ++r) {
    if (r == m->rank) {
      for (int64_t e = 0; e < s->elem_end - s->elem_begin; ++e) {
        const int32_t *t = &s->elems[e * nen];
        int mine = 0;
        for (int k = 0, n = element_parts(m, t, parts); k < n && !mine; ++k) mine = parts[k] == p;
        if (mine) PetscCall(visit(ctx, s->elem_begin + e, t, m->c->elem ? m->c->elem[e] : -1));
      }
      continue;
    }
    for (int64_t k = m->edispl[r]; k < m->edispl[r + 1]; ++k) {
      const int64_t *row = &m->erows[k * words];
      if (row[0] != p) continue;
      for (int a = 0; a < nen; ++a) nodes[a] = (int32_t)row[3 + a];
      PetscCall(visit(ctx, row[1], nodes, (int32_t)row[2]));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode visit_owned_nodes(const migration *m, int p, node_visitor visit, void *ctx)
{
  const pbng_mesh_slice *s = m->s;

  PetscFunctionBeginUser;
  for (int r = 0; r < m->size; ++r) {
    if (r == m->rank) {
      for (int64_t i = 0; i < s->node_end - s->node_begin; ++i)
        if (m->part[i] == p) PetscCall(visit(ctx, s->node_begin + i, &s->X[3 * i], m->c->node[i]));
      continue;
    }
    for (int64_t k = m->ndispl[r]; k < m->ndispl[r + 1]; ++k) {
      const int64_t *row = &m->nrows[k * NODE_WORDS];
      double X[3];
      if (row[0] != p) continue;
      memcpy(X, &row[2], sizeof(X));
      PetscCall(visit(ctx, row[1], X, (int32_t)row[5]));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode visit_weak(const migration *m, int p, weak_visitor visit, void *ctx)
{
  const pbng_mesh_slice *s = m->s;
  int32_t parts[PBNG_WC_MAX_NODES], block, weak;
  pbng_weak_constraint c;

  PetscFunctionBeginUser;
  for (int r = 0; r < m->size; ++r) {
    if (r == m->rank) {
      for (int64_t k = 0; k < s->weak_end - s->weak_begin; ++k) {
        int mine = 0;
        for (int q = 0, n = weak_parts(m, &s->weak[k], parts); q < n && !mine; ++q) mine = parts[q] == p;
        weak_colors(m, k, &block, &weak);
        if (mine) PetscCall(visit(ctx, s->weak_begin + k, &s->weak[k], block, weak));
      }
      continue;
    }
    for (int64_t k = m->wdispl[r]; k < m->wdispl[r + 1]; ++k) {
      const int64_t *row = &m->wrows[k * WEAK_WORDS];
      if (row[0] != p) continue;
      memcpy(&c, &row[4], sizeof(c));
      PetscCall(visit(ctx, row[1], &c, (int32_t)row[2], (int32_t)row[3]));
    }
  }
  PetscFunctionReturn(0);
}

/* --- one part's piece --- */

typedef struct {
  int p;
  int64_t nelems, nowned, nghost, nweak;
  int64_t lo, hi;  /* the part's node ids lie in [lo, hi] */
  int32_t *map;    /* [hi - lo + 1]: the local index of node lo + k (owned first, then ghosts), -1 when not in the piece */
  int64_t *ghost;  /* [nghost] the ghosts' global ids, increasing */
  pbng_submesh *sub;
  int64_t last;    /* the last element or node visited (global ids must increase) */
} piece;

static void widen(piece *pc, int64_t id)
{
  pc->lo = PetscMin(pc->lo, id), pc->hi = PetscMax(pc->hi, id);
}

static PetscErrorCode count_element(void *ctx, int64_t id, const int32_t *nodes, int32_t color)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)id, (void)color;
  ++pc->nelems;
  for (int a = 0; a < pc->sub->mesh.nen; ++a)
    if (nodes[a] >= 0) widen(pc, nodes[a]);
  PetscFunctionReturn(0);
}

static PetscErrorCode count_weak(void *ctx, int64_t id, const pbng_weak_constraint *c, int32_t block, int32_t weak)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)id, (void)block, (void)weak;
  ++pc->nweak;
  for (int j = 0; j < c->nnodes; ++j) widen(pc, c->node[j]);
  PetscFunctionReturn(0);
}

static PetscErrorCode count_owned(void *ctx, int64_t id, const double *X, int32_t color)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)X, (void)color;
  ++pc->nowned;
  widen(pc, id);
  PetscFunctionReturn(0);
}

static PetscErrorCode number_owned(void *ctx, int64_t id, const double *X, int32_t color)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)X, (void)color;
  pc->map[id - pc->lo] = (int32_t)pc->nowned++;
  PetscFunctionReturn(0);
}

static PetscErrorCode mark_ghosts(void *ctx, int64_t id, const int32_t *nodes, int32_t color)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)id, (void)color;
  for (int a = 0; a < pc->sub->mesh.nen; ++a)
    if (nodes[a] >= 0 && pc->map[nodes[a] - pc->lo] == -1) pc->map[nodes[a] - pc->lo] = -2;
  PetscFunctionReturn(0);
}

static PetscErrorCode mark_weak_ghosts(void *ctx, int64_t id, const pbng_weak_constraint *c, int32_t block, int32_t weak)
{
  piece *pc = ctx;
  PetscFunctionBeginUser;
  (void)id, (void)block, (void)weak;
  for (int j = 0; j < c->nnodes; ++j)
    if (pc->map[c->node[j] - pc->lo] == -1) pc->map[c->node[j] - pc->lo] = -2;
  PetscFunctionReturn(0);
}

static PetscErrorCode fill_owned(void *ctx, int64_t id, const double *X, int32_t color)
{
  piece *pc = ctx;
  pbng_submesh *sub = pc->sub;
  const int32_t l = pc->map[id - pc->lo];
  PetscFunctionBeginUser;
  PetscCheck(id > pc->last, PETSC_COMM_SELF, PETSC_ERR_PLIB, "migration: node %" PRId64 " out of order", id);
  pc->last = id;
  sub->global_node[l] = id, sub->owner[l] = pc->p, sub->color[l] = color;
  for (int d = 0; d < 3; ++d) sub->mesh.X[3 * l + d] = X[d];
  PetscFunctionReturn(0);
}

static PetscErrorCode fill_element(void *ctx, int64_t id, const int32_t *nodes, int32_t color)
{
  piece *pc = ctx;
  pbng_submesh *sub = pc->sub;
  const int nen = sub->mesh.nen;
  const int64_t e = pc->nelems++;
  PetscFunctionBeginUser;
  PetscCheck(id > pc->last, PETSC_COMM_SELF, PETSC_ERR_PLIB, "migration: element %" PRId64 " out of order", id);
  pc->last = id;
  sub->global_elem[e] = id;
  if (sub->cc.elem) sub->cc.elem[e] = color;
  for (int a = 0; a < nen; ++a) sub->mesh.elems[e * nen + a] = nodes[a] < 0 ? -1 : pc->map[nodes[a] - pc->lo];
  PetscFunctionReturn(0);
}

static PetscErrorCode fill_weak(void *ctx, int64_t id, const pbng_weak_constraint *c, int32_t block, int32_t weak)
{
  piece *pc = ctx;
  pbng_submesh *sub = pc->sub;
  const int64_t k = sub->mesh.nweak++;
  PetscFunctionBeginUser;
  PetscCheck(id > pc->last, PETSC_COMM_SELF, PETSC_ERR_PLIB, "migration: weak constraint %" PRId64 " out of order", id);
  pc->last = id;
  sub->mesh.weak[k] = *c;
  for (int j = 0; j < c->nnodes; ++j) sub->mesh.weak[k].node[j] = pc->map[c->node[j] - pc->lo];
  sub->global_weak[k] = id;
  if (sub->cc.block) sub->cc.block[k] = block;
  if (sub->cc.weak) sub->cc.weak[k] = weak;
  PetscFunctionReturn(0);
}

/* The piece's counts, its node window and local numbering: owned nodes first, then the ghosts (both in global order). */
static PetscErrorCode number_piece(const migration *m, piece *pc)
{
  PetscFunctionBeginUser;
  pc->lo = INT64_MAX, pc->hi = -1;
  PetscCall(visit_elements(m, pc->p, count_element, pc));
  PetscCall(visit_owned_nodes(m, pc->p, count_owned, pc));
  PetscCall(visit_weak(m, pc->p, count_weak, pc));
  if (pc->nowned == 0 || pc->nelems == 0) PetscFunctionReturn(0); /* empty: an error on every process (check_parts) */
  PetscCall(PetscMalloc1(pc->hi - pc->lo + 1, &pc->map));
  for (int64_t k = 0; k <= pc->hi - pc->lo; ++k) pc->map[k] = -1;
  pc->nowned = 0;
  PetscCall(visit_owned_nodes(m, pc->p, number_owned, pc));
  PetscCall(visit_elements(m, pc->p, mark_ghosts, pc));
  PetscCall(visit_weak(m, pc->p, mark_weak_ghosts, pc));
  pc->nghost = 0;
  for (int64_t k = 0; k <= pc->hi - pc->lo; ++k) pc->nghost += pc->map[k] == -2;
  PetscCall(PetscMalloc1(pc->nghost + 1, &pc->ghost));
  pc->nghost = 0;
  for (int64_t k = 0; k <= pc->hi - pc->lo; ++k)
    if (pc->map[k] == -2) {
      pc->ghost[pc->nghost] = pc->lo + k;
      pc->map[k] = (int32_t)(pc->nowned + pc->nghost++);
    }
  PetscCheck(pc->nowned + pc->nghost < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "part %d: too many nodes for one piece", pc->p);
  PetscFunctionReturn(0);
}

/* Every process stops with the same message when a part is empty. */
static PetscErrorCode check_parts(const migration *m, const piece *pcs, int nlocal)
{
  int empty = m->nparts, first = m->nparts;

  PetscFunctionBeginUser;
  for (int k = 0; k < nlocal; ++k)
    if (pcs[k].nowned == 0 || pcs[k].nelems == 0) empty = PetscMin(empty, pcs[k].p);
  PetscCallMPI(MPI_Allreduce(&empty, &first, 1, MPI_INT, MPI_MIN, m->comm));
  PetscCheck(first == m->nparts, m->comm, PETSC_ERR_ARG_WRONG, "%s: part %d is empty", m->s->source, first);
  PetscFunctionReturn(0);
}

/* A ghost's data as its slice's process answers. */
typedef struct {
  double X[3];
  int32_t owner, color;
} ghost_data;

/* The ghosts' positions, owners and colors, asked of their slices' processes for every piece at once; *data in the
 * order of the pieces' ghosts. */
static PetscErrorCode fetch_ghosts(const migration *m, const piece *pcs, int nlocal, ghost_data **data)
{
  int64_t n = 0;
  int *count, *displ, *rcount, *rdispl, *at;
  int64_t *asked, *ids;
  ghost_data *answer;

  PetscFunctionBeginUser;
  for (int k = 0; k < nlocal; ++k) n += pcs[k].nghost;
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "migration: too many ghosts on one process");
  PetscCall(PetscCalloc3(m->size, &count, m->size + 1, &displ, m->size, &at));
  PetscCall(PetscMalloc1(n + 1, &ids));
  for (int k = 0; k < nlocal; ++k)
    for (int64_t g = 0; g < pcs[k].nghost; ++g) ++count[pbng_range_owner(m->range, m->size, pcs[k].ghost[g])];
  for (int r = 0; r < m->size; ++r) displ[r + 1] = displ[r] + count[r];
  int32_t *slot; /* where each ghost's request goes, to put the answers back in the pieces' order */
  PetscCall(PetscMalloc1(n + 1, &slot));
  for (int k = 0, q = 0; k < nlocal; ++k)
    for (int64_t g = 0; g < pcs[k].nghost; ++g, ++q) {
      const int r = pbng_range_owner(m->range, m->size, pcs[k].ghost[g]);
      slot[q] = displ[r] + at[r]++;
      ids[slot[q]] = pcs[k].ghost[g];
    }
  PetscCall(pbng_exchange_items(m->comm, sizeof(int64_t), count, ids, &rcount, &rdispl, (void **)&asked));
  PetscCall(PetscMalloc1(rdispl[m->size] + 1, &answer));
  for (int k = 0; k < rdispl[m->size]; ++k) {
    const int64_t i = asked[k] - m->s->node_begin;
    PetscCheck(i >= 0 && i < m->s->node_end - m->s->node_begin, PETSC_COMM_SELF, PETSC_ERR_PLIB, "migration: node %" PRId64 " asked of the wrong process",
               asked[k]);
    answer[k].owner = m->part[i], answer[k].color = m->c->node[i];
    for (int d = 0; d < 3; ++d) answer[k].X[d] = m->s->X[3 * i + d];
  }
  ghost_data *grouped;
  PetscCall(PetscMalloc1(n + 1, &grouped));
  PetscCall(pbng_alltoallv_items(answer, rcount, rdispl, grouped, count, displ, sizeof(ghost_data), m->comm));
  PetscCall(PetscMalloc1(n + 1, data));
  for (int64_t q = 0; q < n; ++q) (*data)[q] = grouped[slot[q]];
  PetscCall(PetscFree(grouped));
  PetscCall(PetscFree(answer));
  PetscCall(PetscFree(asked));
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  PetscCall(PetscFree(slot));
  PetscCall(PetscFree(ids));
  PetscCall(PetscFree3(count, displ, at));
  PetscFunctionReturn(0);
}

/* The piece as pbng_submesh_extract makes it (ghosts: this piece's answers). */
static PetscErrorCode fill_piece(const migration *m, piece *pc, const ghost_data *ghosts)
{
  pbng_submesh *sub = pc->sub;
  pbng_mesh *mesh = &sub->mesh;
  const int64_t nnodes = pc->nowned + pc->nghost, nelems = pc->nelems;

  PetscFunctionBeginUser;
  mesh->etype = m->s->etype, mesh->nen = m->s->nen, mesh->nnodes = nnodes, mesh->nelems = nelems;
  PetscCall(PetscStrncpy(mesh->source, m->s->source, sizeof(mesh->source)));
  PetscCall(PetscMalloc1(3 * nnodes, &mesh->X));
  PetscCall(PetscMalloc1(nelems * mesh->nen, &mesh->elems));
  PetscCall(PetscMalloc1(pc->nweak + 1, &mesh->weak));
  PetscCall(PetscMalloc1(pc->nweak + 1, &sub->global_weak));
  PetscCall(PetscMalloc4(nnodes, &sub->global_node, nelems, &sub->global_elem, nnodes, &sub->owner, nnodes, &sub->color));
  sub->nglobal_nodes = m->s->nglobal_nodes, sub->nglobal_elems = m->s->nglobal_elems, sub->nglobal_weak = m->s->nglobal_weak;
  sub->nowned = (int32_t)pc->nowned, sub->ncolors = m->c->nnode;
  /* the constraint colors as pbng_submesh_extract takes them from pbng_constraint_colors_compute: the PBD/XPBD colors
   * when computed, the block colors with them or with weak constraints (else none, as the pieces of a serial cut
   * without them) */
  if (m->c->elem) {
    sub->cc.nelem_colors = m->c->nelem, sub->cc.nweak_colors = m->c->nweak;
    PetscCall(PetscMalloc1(nelems + 1, &sub->cc.elem));
    PetscCall(PetscMalloc1(pc->nweak + 1, &sub->cc.weak));
  }
  if (m->c->elem || m->s->nglobal_weak > 0) {
    sub->cc.nblock_colors = m->c->nblock;
    PetscCall(PetscMalloc1(pc->nweak + 1, &sub->cc.block));
  }
  pc->last = -1;
  PetscCall(visit_owned_nodes(m, pc->p, fill_owned, pc));
  for (int64_t g = 0; g < pc->nghost; ++g) {
    const int64_t l = pc->nowned + g;
    sub->global_node[l] = pc->ghost[g], sub->owner[l] = ghosts[g].owner, sub->color[l] = ghosts[g].color;
    for (int d = 0; d < 3; ++d) mesh->X[3 * l + d] = ghosts[g].X[d];
  }
  pc->nelems = 0, pc->last = -1;
  PetscCall(visit_elements(m, pc->p, fill_element, pc));
  pc->last = -1;
  PetscCall(visit_weak(m, pc->p, fill_weak, pc));
  PetscFunctionReturn(0);
}

static PetscErrorCode migration_destroy(migration *m)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(m->foreign_id));
  PetscCall(PetscFree(m->foreign_part));
  PetscCall(PetscFree(m->ecount));
  PetscCall(PetscFree(m->edispl));
  PetscCall(PetscFree(m->erows));
  PetscCall(PetscFree(m->ncount));
  PetscCall(PetscFree(m->ndispl));
  PetscCall(PetscFree(m->nrows));
  PetscCall(PetscFree(m->wcount));
  PetscCall(PetscFree(m->wdispl));
  PetscCall(PetscFree(m->wrows));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_migrate(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *range, const int32_t *part, const pbng_slice_colors *c,
                                    int nparts, pbng_submesh *sub)
{
  migration m = {.comm = comm, .nparts = nparts, .s = s, .range = range, .part = part, .c = c};
  piece *pcs;
  ghost_data *ghosts;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &m.rank));
  PetscCallMPI(MPI_Comm_size(comm, &m.size));
  const int first = pbng_parts_first(nparts, m.size, m.rank), nlocal = pbng_parts_first(nparts, m.size, m.rank + 1) - first;
  PetscCall(fetch_foreign_parts(&m));
  PetscCall(send_rows(&m, element_words(&m), write_element_rows, &m.ecount, &m.edispl, &m.erows));
  PetscCall(send_rows(&m, NODE_WORDS, write_node_rows, &m.ncount, &m.ndispl, &m.nrows));
  PetscCall(send_rows(&m, WEAK_WORDS, write_weak_rows, &m.wcount, &m.wdispl, &m.wrows));
  PetscCall(PetscCalloc1(nlocal + 1, &pcs));
  for (int k = 0; k < nlocal; ++k) {
    memset(&sub[k], 0, sizeof(sub[k]));
    pcs[k].p = first + k, pcs[k].sub = &sub[k];
    sub[k].mesh.nen = s->nen;
    PetscCall(number_piece(&m, &pcs[k]));
  }
  PetscCall(check_parts(&m, pcs, nlocal));
  PetscCall(fetch_ghosts(&m, pcs, nlocal, &ghosts));
  for (int k = 0, g = 0; k < nlocal; g += (int)pcs[k].nghost, ++k) PetscCall(fill_piece(&m, &pcs[k], &ghosts[g]));
  PetscCall(pbng_submesh_take_slice_sets(comm, s, range, nlocal, sub));
  for (int k = 0; k < nlocal; ++k) {
    PetscCall(PetscFree(pcs[k].map));
    PetscCall(PetscFree(pcs[k].ghost));
  }
  PetscCall(PetscFree(ghosts));
  PetscCall(PetscFree(pcs));
  PetscCall(migration_destroy(&m));
  PetscFunctionReturn(0);
}
