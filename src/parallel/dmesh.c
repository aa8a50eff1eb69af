#include "parallel/dmesh.h"
#include "core/csr.h"
#include "core/adjacency.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t key;
  int64_t id;
} sort_item;

static int compare_items(const void *a, const void *b)
{
  const sort_item *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->id > y->id) - (x->id < y->id);
}

/* Spreads the low 18 bits of v so that two zero bits separate consecutive ones. */
static uint64_t spread_bits(uint64_t v)
{
  uint64_t r = 0;
  for (int b = 0; b < 18; ++b) r |= ((v >> b) & 1ull) << (3 * b);
  return r;
}

/* 54-bit Morton (Z-order) code of a point in the bounding box [lo, lo + ext]. */
static uint64_t morton_code(const double p[3], const double lo[3], const double ext[3])
{
  uint64_t code = 0;
  for (int d = 0; d < 3; ++d) {
    double s = ext[d] > 0 ? (p[d] - lo[d]) / ext[d] : 0.0;
    s = fmin(fmax(s, 0.0), 1.0);
    code |= spread_bits((uint64_t)(s * 262143.0)) << d;
  }
  return code;
}

static void bounding_box(const pbng_mesh *mesh, double lo[3], double ext[3])
{
  double hi[3];
  for (int d = 0; d < 3; ++d) lo[d] = INFINITY, hi[d] = -INFINITY;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], mesh->X[3 * i + d]);
      hi[d] = fmax(hi[d], mesh->X[3 * i + d]);
    }
  for (int d = 0; d < 3; ++d) ext[d] = hi[d] - lo[d];
}

static int owner_of(const int32_t *part, int64_t node) { return part ? part[node] : 0; }

/* Owned nodes sorted by (held?, color, interior?, Morton code): free nodes of each color become a
 * contiguous range, the interface nodes (in an element with a ghost: other ranks need them) first so
 * that their halo messages can travel while the interior is updated, each part spatially ordered.
 * Held nodes are prescribed ones and those of no element (a mesh file's stray points: no equation,
 * they keep their rest position). */
static PetscErrorCode order_owned_nodes(const pbng_mesh *mesh, const uint8_t *in_element, const int32_t *color,
                                        const int8_t *node_bc, const int32_t *part, int rank, const double lo[3],
                                        const double ext[3], sort_item **items, int32_t *nowned, int32_t *nfree)
{
  int32_t n = 0;

  PetscFunctionBeginUser;
  *nfree = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i) n += owner_of(part, i) == rank;
  PetscCall(PetscMalloc1(n > 0 ? n : 1, items));
  n = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    if (owner_of(part, i) != rank) continue;
    const uint64_t held = node_bc[i] >= 0 || !(in_element[i] & 1), interior = !(in_element[i] & 2);
    *nfree += !held;
    (*items)[n].key = (held << 63) | ((uint64_t)color[i] << 57) | (interior << 56) | morton_code(&mesh->X[3 * i], lo, ext);
    (*items)[n++].id = i;
  }
  if (n > 0) qsort(*items, (size_t)n, sizeof(sort_item), compare_items); /* none on a rank without a part of a level */
  *nowned = n;
  PetscFunctionReturn(0);
}

/* Elements touching an owned node, owned ones (first node owned) first, each group in Morton order
 * of the centroid. */
static PetscErrorCode select_elements(const pbng_mesh *mesh, const int32_t *part, int rank, const double lo[3],
                                      const double ext[3], sort_item **items, int32_t *nelems, int32_t *nowned_elems)
{
  const int nen = mesh->nen;
  int64_t n = 0, nown = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(mesh->nelems + 1, items));
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const int32_t *t = &mesh->elems[e * nen];
    const int m = pbng_row_nodes(t, nen);
    int touches = 0;
    double c[3] = {0, 0, 0};
    for (int a = 0; a < m; ++a) {
      touches |= owner_of(part, t[a]) == rank;
      for (int d = 0; d < 3; ++d) c[d] += mesh->X[3 * t[a] + d] / m;
    }
    if (!touches) continue;
    const uint64_t foreign = owner_of(part, t[0]) != rank;
    nown += !foreign;
    (*items)[n].key = (foreign << 63) | morton_code(c, lo, ext);
    (*items)[n++].id = e;
  }
  if (n > 0) qsort(*items, (size_t)n, sizeof(sort_item), compare_items); /* none on a rank without a part of a level */
  PetscCheck(n <= INT32_MAX / nen, PETSC_COMM_SELF, PETSC_ERR_SUP, "too many elements on one rank");
  *nelems = (int32_t)n;
  *nowned_elems = (int32_t)nown;
  PetscFunctionReturn(0);
}

static PetscErrorCode build_local_nodes(pbng_dmesh *dm, const pbng_mesh *mesh, const int32_t *color,
                                        const int8_t *node_bc, const int32_t *part, const sort_item *owned,
                                        const sort_item *elems, int32_t *g2l)
{
  const int nen = mesh->nen;
  int32_t nlocal = dm->nowned;
  sort_item *ghosts;
  int32_t nghost = 0;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < dm->nowned; ++k) g2l[owned[k].id] = k;
  /* ghosts: element nodes owned elsewhere, ordered by (owner, global id) */
  PetscCall(PetscMalloc1((int64_t)dm->nelems * nen + PBNG_WC_MAX_NODES * mesh->nweak + 1, &ghosts));
  for (int32_t e = 0; e < dm->nelems; ++e)
    for (int a = 0, m = pbng_mesh_element_nodes(mesh, elems[e].id); a < m; ++a) {
      const int64_t g = mesh->elems[elems[e].id * nen + a];
      if (g2l[g] != -1) continue; /* owned, or already a ghost */
      g2l[g] = -2; /* seen */
      ghosts[nghost].key = (uint64_t)owner_of(part, g);
      ghosts[nghost++].id = g;
    }
  for (int64_t c = 0; c < mesh->nweak; ++c)
    for (int j = 0; j < mesh->weak[c].nnodes; ++j) {
      const int64_t g = mesh->weak[c].node[j];
      if (g2l[g] != -1) continue;
      g2l[g] = -2;
      ghosts[nghost].key = (uint64_t)owner_of(part, g);
      ghosts[nghost++].id = g;
    }
  qsort(ghosts, (size_t)nghost, sizeof(sort_item), compare_items);
  nlocal += nghost;
  dm->nlocal = nlocal;
  /* every array + 1: a rank without a part of a coarse level (docs/multilevel.md#levels-on-fewer-ranks) has none */
  PetscCall(PetscMalloc1(nlocal + 1, &dm->global_node));
  PetscCall(PetscMalloc1(nlocal + 1, &dm->color));
  PetscCall(PetscMalloc1(nlocal + 1, &dm->node_bc));
  PetscCall(PetscMalloc1(3 * (int64_t)nlocal + 3, &dm->X));
  PetscCall(PetscMalloc1(nghost + 1, &dm->ghost_owner));
  for (int32_t k = 0; k < nlocal; ++k) {
    const int64_t g = k < dm->nowned ? owned[k].id : ghosts[k - dm->nowned].id;
    g2l[g] = k;
    dm->global_node[k] = g;
    dm->color[k] = color[g];
    dm->node_bc[k] = node_bc[g];
    for (int d = 0; d < 3; ++d) dm->X[3 * k + d] = mesh->X[3 * g + d];
    if (k >= dm->nowned) dm->ghost_owner[k - dm->nowned] = (int)ghosts[k - dm->nowned].key;
  }
  PetscCall(PetscFree(ghosts));
  PetscFunctionReturn(0);
}

static PetscErrorCode build_color_ranges(pbng_dmesh *dm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(dm->ncolors + 1, &dm->color_start));
  for (int32_t k = 0; k < dm->nfree; ++k) dm->color_start[dm->color[k] + 1]++;
  for (int c = 0; c < dm->ncolors; ++c) dm->color_start[c + 1] += dm->color_start[c];
  PetscFunctionReturn(0);
}

static PetscErrorCode build_elements(pbng_dmesh *dm, const pbng_submesh *sub, const sort_item *elems, const int32_t *g2l)
{
  const pbng_mesh *mesh = &sub->mesh;
  const int nen = mesh->nen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((int64_t)dm->nelems * nen + 1, &dm->elems));
  PetscCall(PetscMalloc1(dm->nelems + 1, &dm->global_elem));
  if (mesh->kind) PetscCall(PetscMalloc1(dm->nelems + 1, &dm->kind));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int64_t id = elems[e].id;
    dm->global_elem[e] = id;
    if (mesh->kind) dm->kind[e] = mesh->kind[id];
    for (int a = 0; a < nen; ++a) dm->elems[e * nen + a] = mesh->elems[id * nen + a] < 0 ? -1 : g2l[mesh->elems[id * nen + a]];
  }
  if (sub->cc.elem) {
    dm->nelem_colors = sub->cc.nelem_colors, dm->nweak_colors = sub->cc.nweak_colors;
    PetscCall(PetscMalloc1(dm->nelems + 1, &dm->elem_color));
    for (int32_t e = 0; e < dm->nelems; ++e) dm->elem_color[e] = sub->cc.elem[elems[e].id];
  }
  PetscFunctionReturn(0);
}

/* Bit 1 for every node that some element references, bit 2 for the nodes of elements and weak
 * constraints that also have a node owned by another rank. */
static PetscErrorCode mark_element_nodes(const pbng_mesh *mesh, const int32_t *owner, int rank, uint8_t **in_element)
{
  const int nen = mesh->nen;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(mesh->nnodes + 1, in_element));
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const int32_t *t = &mesh->elems[e * nen];
    const int m = pbng_row_nodes(t, nen);
    uint8_t mark = 1;
    for (int a = 0; a < m; ++a) mark |= owner[t[a]] != rank ? 2 : 0;
    for (int a = 0; a < m; ++a) (*in_element)[t[a]] |= mark;
  }
  for (int64_t c = 0; c < mesh->nweak; ++c) {
    const pbng_weak_constraint *w = &mesh->weak[c];
    uint8_t mark = 0;
    for (int j = 0; j < w->nnodes; ++j) mark |= owner[w->node[j]] != rank ? 2 : 0;
    for (int j = 0; j < w->nnodes; ++j) (*in_element)[w->node[j]] |= mark;
  }
  PetscFunctionReturn(0);
}

/* Whether local element e has a ghost node. */
static int element_has_ghost(const pbng_dmesh *dm, int32_t e)
{
  const int32_t *t = &dm->elems[(int64_t)dm->nen * e];
  int ghost = 0;
  for (int a = 0, m = pbng_row_nodes(t, dm->nen); a < m; ++a) ghost |= t[a] >= dm->nowned;
  return ghost;
}

/* color_split[c]: the end of color c's interface nodes (they come first in the color's range). */
static PetscErrorCode build_color_splits(pbng_dmesh *dm)
{
  const int nen = dm->nen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->ncolors + 1, &dm->color_split));
  for (int c = 0; c < dm->ncolors; ++c) {
    int32_t i = dm->color_start[c];
    for (; i < dm->color_start[c + 1]; ++i) {
      int interface = 0;
      for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1] && !interface; ++k)
        interface |= element_has_ghost(dm, pbng_adj_element(nen, dm->adj[k]));
      for (int32_t k = dm->wadj_start[i]; k < dm->wadj_start[i + 1] && !interface; ++k) {
        const pbng_weak_constraint *w = &dm->weak[dm->wadj[k] / PBNG_WC_MAX_NODES];
        for (int j = 0; j < w->nnodes; ++j) interface |= w->node[j] >= dm->nowned;
      }
      if (!interface) break;
    }
    dm->color_split[c] = i;
  }
  PetscFunctionReturn(0);
}

/* Orders one node's visits (entries nen * element + vertex) by increasing global element id
 * (insertion sort: lists are short). Also used for weak constraints (nen = PBNG_WC_MAX_NODES). */
static void sort_by_global_element(int32_t *list, int32_t n, const int64_t *global_elem, int nen)
{
  for (int32_t j = 1; j < n; ++j) {
    const int32_t v = list[j];
    const int64_t key = global_elem[pbng_adj_element(nen, v)];
    int32_t k = j - 1;
    for (; k >= 0 && global_elem[pbng_adj_element(nen, list[k])] > key; --k) list[k + 1] = list[k];
    list[k + 1] = v;
  }
}

/* Incident elements of every owned node, from the local elements, in increasing global element order
 * so that every node's sums run in the same order whatever the partition. */
static PetscErrorCode build_adjacency(pbng_dmesh *dm)
{
  const int nen = dm->nen;

  PetscFunctionBeginUser;
  /* the owned nodes' rows (ghosts and the padding of mixed kinds' rows left out); entry nen e + a (pbng_adj_entry) is
   * row position k = nen e + a */
  PetscCall(pbng_csr_by_key32((int64_t)dm->nelems * nen, dm->elems, 1, dm->nowned, &dm->adj_start, &dm->adj));
  for (int32_t i = 0; i < dm->nowned; ++i)
    sort_by_global_element(&dm->adj[dm->adj_start[i]], dm->adj_start[i + 1] - dm->adj_start[i], dm->global_elem, nen);
  PetscFunctionReturn(0);
}

/* The piece's weak constraints in local numbering, those counted here (node[0] owned) first, each
 * group by increasing global index (the piece lists them so). */
static PetscErrorCode build_weak(pbng_dmesh *dm, const pbng_submesh *sub, const int32_t *g2l)
{
  const pbng_mesh *mesh = &sub->mesh;
  int32_t n = 0;

  PetscFunctionBeginUser;
  PetscCheck(mesh->nweak < INT32_MAX / PBNG_WC_MAX_NODES, PETSC_COMM_SELF, PETSC_ERR_SUP, "too many weak constraints on one rank");
  dm->nweak = (int32_t)mesh->nweak;
  dm->nglobal_weak = sub->nglobal_weak;
  PetscCall(PetscMalloc1(dm->nweak + 1, &dm->weak));
  PetscCall(PetscMalloc1(dm->nweak + 1, &dm->global_weak));
  if (sub->cc.elem) PetscCall(PetscMalloc1(dm->nweak + 1, &dm->weak_color));
  if (sub->cc.block) PetscCall(PetscMalloc1(dm->nweak + 1, &dm->block_color));
  dm->nblock_colors = sub->cc.nblock_colors;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t c = 0; c < mesh->nweak; ++c) {
      const int counted = sub->owner[mesh->weak[c].node[0]] == dm->rank;
      if (counted != (pass == 0)) continue;
      dm->weak[n] = mesh->weak[c];
      for (int j = 0; j < mesh->weak[c].nnodes; ++j) dm->weak[n].node[j] = g2l[mesh->weak[c].node[j]];
      if (dm->weak_color) dm->weak_color[n] = sub->cc.weak[c];
      if (dm->block_color) dm->block_color[n] = sub->cc.block[c];
      dm->global_weak[n++] = sub->global_weak[c];
    }
  dm->nowned_weak = 0;
  for (int64_t c = 0; c < mesh->nweak; ++c) dm->nowned_weak += sub->owner[mesh->weak[c].node[0]] == dm->rank;
  PetscFunctionReturn(0);
}

/* Weak constraints of every owned node, in increasing global constraint order. */
static PetscErrorCode build_weak_adjacency(pbng_dmesh *dm)
{
  int32_t *slot_node; /* [nweak][PBNG_WC_MAX_NODES] each constraint's local nodes, -1 in its unused slots */

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((int64_t)dm->nweak * PBNG_WC_MAX_NODES + 1, &slot_node));
  pbng_weak_constraint_node_rows(dm->nweak, dm->weak, slot_node);
  /* entry PBNG_WC_MAX_NODES c + j is slot position k (stride 1), the owned nodes' rows */
  PetscErrorCode ierr = pbng_csr_by_key32((int64_t)dm->nweak * PBNG_WC_MAX_NODES, slot_node, 1, dm->nowned, &dm->wadj_start, &dm->wadj);
  PetscCall(PetscFree(slot_node));
  PetscCall(ierr);
  for (int32_t i = 0; i < dm->nowned; ++i)
    sort_by_global_element(&dm->wadj[dm->wadj_start[i]], dm->wadj_start[i + 1] - dm->wadj_start[i], dm->global_weak, PBNG_WC_MAX_NODES);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dmesh_create(MPI_Comm comm, const pbng_submesh *sub, const int8_t *node_bc, pbng_dmesh *dm)
{
  const pbng_mesh *mesh = &sub->mesh;
  const int32_t *color = sub->color, *part = sub->owner;
  double lo[3], ext[3];
  sort_item *owned, *elems;
  int32_t *g2l;
  uint8_t *in_element;

  PetscFunctionBeginUser;
  memset(dm, 0, sizeof(*dm));
  dm->comm = comm;
  PetscCallMPI(MPI_Comm_rank(comm, &dm->rank));
  PetscCallMPI(MPI_Comm_size(comm, &dm->size));
  dm->etype = mesh->etype;
  dm->nen = mesh->nen;
  dm->nglobal_nodes = sub->nglobal_nodes;
  dm->nglobal_elems = sub->nglobal_elems;
  dm->ncolors = sub->ncolors;
  bounding_box(mesh, lo, ext);
  PetscCall(mark_element_nodes(mesh, part, dm->rank, &in_element));
  PetscCall(order_owned_nodes(mesh, in_element, color, node_bc, part, dm->rank, lo, ext, &owned, &dm->nowned, &dm->nfree));
  PetscCall(PetscFree(in_element));
  PetscCall(select_elements(mesh, part, dm->rank, lo, ext, &elems, &dm->nelems, &dm->nowned_elems));
  PetscCall(PetscMalloc1(mesh->nnodes + 1, &g2l));
  for (int64_t i = 0; i < mesh->nnodes; ++i) g2l[i] = -1;
  PetscCall(build_local_nodes(dm, mesh, color, node_bc, part, owned, elems, g2l));
  for (int32_t k = 0; k < dm->nlocal; ++k) dm->global_node[k] = sub->global_node[dm->global_node[k]];
  PetscCall(build_color_ranges(dm));
  PetscCall(build_elements(dm, sub, elems, g2l));
  for (int32_t e = 0; e < dm->nelems; ++e) dm->global_elem[e] = sub->global_elem[dm->global_elem[e]];
  PetscCall(build_weak(dm, sub, g2l));
  PetscCall(PetscFree(g2l));
  PetscCall(PetscFree(owned));
  PetscCall(PetscFree(elems));
  PetscCall(build_adjacency(dm));
  PetscCall(build_weak_adjacency(dm));
  PetscCall(build_color_splits(dm));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dmesh_destroy(pbng_dmesh *dm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(dm->color_start));
  PetscCall(PetscFree(dm->color_split));
  PetscCall(PetscFree(dm->global_node));
  PetscCall(PetscFree(dm->color));
  PetscCall(PetscFree(dm->node_bc));
  PetscCall(PetscFree(dm->ghost_owner));
  PetscCall(PetscFree(dm->X));
  PetscCall(PetscFree(dm->elems));
  PetscCall(PetscFree(dm->kind));
  PetscCall(PetscFree(dm->global_elem));
  PetscCall(PetscFree(dm->adj_start));
  PetscCall(PetscFree(dm->adj));
  PetscCall(PetscFree(dm->weak));
  PetscCall(PetscFree(dm->global_weak));
  PetscCall(PetscFree(dm->wadj_start));
  PetscCall(PetscFree(dm->wadj));
  PetscCall(PetscFree(dm->elem_color));
  PetscCall(PetscFree(dm->weak_color));
  PetscCall(PetscFree(dm->block_color));
  memset(dm, 0, sizeof(*dm));
  PetscFunctionReturn(0);
}
