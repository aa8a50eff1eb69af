#include "parallel/coloring.h"
#include "core/csr.h"
#include "core/grow.h"
#include <string.h>

/* A CSR view: row r is list[start[r] .. start[r+1]) (or list[stride r .. stride (r+1)) when start is
 * NULL), each entry divided by `divisor` (node-element entries are nen * element + vertex); with
 * list NULL, row r is the single entry r. Negative entries (element rows' padding) are no entries. */
typedef struct {
  int64_t n;
  const int64_t *start;
  int stride;
  const int32_t *list;
  int divisor;
} csr_view;

static int64_t row_begin(const csr_view *v, int64_t r) { return v->start ? v->start[r] : v->stride * r; }
static int64_t entry(const csr_view *v, int64_t k) { return v->list ? v->list[k] / v->divisor : k; }

PetscErrorCode pbng_node_elements_build(const pbng_mesh *mesh, pbng_node_elements *adj)
{
  const int nen = mesh->nen;

  PetscFunctionBeginUser;
  PetscCheck(mesh->nelems <= INT32_MAX / nen, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s: %" PRId64 " elements exceed the node-element adjacency's int32 range", mesh->source, mesh->nelems);
  adj->nnodes = mesh->nnodes;
  /* entry nen e + a (pbng_adj_entry) is element row position k = nen e + a: the rows' positions by node, in element
   * order (each list sorted), the padding of mixed kinds' rows (-1) left out */
  PetscCall(pbng_csr_by_key64(mesh->nelems * nen, mesh->elems, 1, mesh->nnodes, &adj->start, &adj->entry));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_node_elements_destroy(pbng_node_elements *adj)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(adj->start));
  PetscCall(PetscFree(adj->entry));
  PetscFunctionReturn(0);
}

/* Node -> incident weak constraints (CSR of constraint indices, increasing). */
static PetscErrorCode node_constraints_build(const pbng_mesh *mesh, int64_t **start, int32_t **entry)
{
  int32_t *slot_node; /* [nweak][PBNG_WC_MAX_NODES] each constraint's nodes, -1 in its unused slots */

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(mesh->nweak * PBNG_WC_MAX_NODES + 1, &slot_node));
  pbng_weak_constraint_node_rows(mesh->nweak, mesh->weak, slot_node);
  PetscErrorCode ierr = pbng_csr_by_key64(mesh->nweak * PBNG_WC_MAX_NODES, slot_node, PBNG_WC_MAX_NODES, mesh->nnodes, start, entry);
  PetscCall(PetscFree(slot_node));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The least color not in the set of `words` 64-bit words at `taken`, or -1 when every one is taken. */
static int least_free_color(const uint64_t *taken, int words)
{
  for (int w = 0; w < words; ++w)
    if (~taken[w]) return 64 * w + __builtin_ctzll(~taken[w]);
  return -1;
}

/* Sec. 9 for groups of nodes updated together: each element or weak constraint keeps the set S_c of
 * colors used by its nodes (`words` 64-bit words each); every node of a group takes the least color
 * not in the union of S_c over the elements and weak constraints around the group's nodes, which is
 * then registered in each of them. A plain node is a group of one. *fits is 0 when some group found
 * all 64 words colors taken (the caller tries again with wider sets). */
static PetscErrorCode color_node_groups_in(const pbng_mesh *mesh, const pbng_node_elements *adj, const csr_view *groups, int words,
                                           const int64_t *wstart, const int32_t *wentry, int32_t *color, int *ncolors, int *fits)
{
  const int nen = mesh->nen;
  uint64_t *used, *used_weak, *taken; /* S_e: colors used by element e's nodes; the same for weak constraints */
  int maxc = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc3(mesh->nelems * words, &used, (mesh->nweak + 1) * words, &used_weak, words, &taken));
  *fits = 1;
  for (int64_t g = 0; g < groups->n && *fits; ++g) {
    memset(taken, 0, sizeof(uint64_t) * words);
    for (int64_t q = row_begin(groups, g); q < row_begin(groups, g + 1); ++q) {
      const int64_t i = entry(groups, q);
      for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k)
        for (int w = 0; w < words; ++w) taken[w] |= used[(adj->entry[k] / nen) * words + w];
      for (int64_t k = wstart[i]; k < wstart[i + 1]; ++k)
        for (int w = 0; w < words; ++w) taken[w] |= used_weak[wentry[k] * (int64_t)words + w];
    }
    const int c = least_free_color(taken, words);
    if (c < 0) {
      *fits = 0;
      break;
    }
    color[g] = c;
    if (c + 1 > maxc) maxc = c + 1;
    const uint64_t bit = 1ull << (c % 64);
    for (int64_t q = row_begin(groups, g); q < row_begin(groups, g + 1); ++q) {
      const int64_t i = entry(groups, q);
      for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k) used[(adj->entry[k] / nen) * words + c / 64] |= bit;
      for (int64_t k = wstart[i]; k < wstart[i + 1]; ++k) used_weak[wentry[k] * (int64_t)words + c / 64] |= bit;
    }
  }
  PetscCall(PetscFree3(used, used_weak, taken));
  *ncolors = maxc;
  PetscFunctionReturn(0);
}

/* The greedy coloring above with sets of one word (64 colors, the usual case: a tetrahedral mesh needs
 * 20-40), widened fourfold while some group finds every color taken (coarse levels whose weak
 * constraints span many elements, or long chains of them); the colors are the same whatever the width. */
static PetscErrorCode color_node_groups(const pbng_mesh *mesh, const pbng_node_elements *adj, const csr_view *groups, int32_t *color,
                                        int *ncolors)
{
  int64_t *wstart;
  int32_t *wentry;
  int fits = 0;

  PetscFunctionBeginUser;
  PetscCheck(mesh->nweak < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: too many weak constraints", mesh->source);
  PetscCall(node_constraints_build(mesh, &wstart, &wentry));
  for (int words = 1; !fits; words *= 4) {
    PetscCheck(words <= 64, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: a node or weak-constraint group would need more than 4096 colors",
               mesh->source);
    PetscCall(color_node_groups_in(mesh, adj, groups, words, wstart, wentry, color, ncolors, &fits));
  }
  PetscCall(PetscFree(wstart));
  PetscCall(PetscFree(wentry));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors)
{
  const csr_view each_node = {mesh->nnodes, NULL, 1, NULL, 1};

  PetscFunctionBeginUser;
  PetscCall(color_node_groups(mesh, adj, &each_node, color, ncolors));
  PetscFunctionReturn(0);
}

/* Each weak constraint's nodes as a CSR row. */
static PetscErrorCode weak_constraint_rows(const pbng_mesh *mesh, int64_t **start, int32_t **nodes)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(mesh->nweak + 1, start, PBNG_WC_MAX_NODES * mesh->nweak + 1, nodes));
  (*start)[0] = 0;
  for (int64_t c = 0; c < mesh->nweak; ++c) {
    (*start)[c + 1] = (*start)[c] + mesh->weak[c].nnodes;
    for (int j = 0; j < mesh->weak[c].nnodes; ++j) (*nodes)[(*start)[c] + j] = (int32_t)mesh->weak[c].node[j];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_weak_blocks(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors)
{
  int64_t *cstart;
  int32_t *cnodes;

  PetscFunctionBeginUser;
  PetscCall(weak_constraint_rows(mesh, &cstart, &cnodes));
  const csr_view blocks = {mesh->nweak, cstart, 0, cnodes, 1};
  PetscCall(color_node_groups(mesh, adj, &blocks, color, ncolors));
  PetscCall(PetscFree2(cstart, cnodes));
  PetscFunctionReturn(0);
}

int pbng_coloring_is_valid(const pbng_mesh *mesh, const int32_t *color)
{
  const int nen = mesh->nen;
  for (int64_t e = 0; e < mesh->nelems; ++e)
    for (int a = 0, n = pbng_mesh_element_nodes(mesh, e); a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (color[mesh->elems[e * nen + a]] == color[mesh->elems[e * nen + b]]) return 0;
  for (int64_t c = 0; c < mesh->nweak; ++c)
    for (int a = 0; a < mesh->weak[c].nnodes; ++a)
      for (int b = a + 1; b < mesh->weak[c].nnodes; ++b)
        if (color[mesh->weak[c].node[a]] == color[mesh->weak[c].node[b]]) return 0;
  return 1;
}


/* Greedy coloring of items (elements or weak constraints) in order: each takes the least color that no
 * item sharing a node with it has taken (Sec. 9, constraint coloring). forbidden[c] == item marks c. */
static PetscErrorCode greedy_item_coloring(const csr_view *item_nodes, const csr_view *node_items, int32_t *color, int *ncolors)
{
  int64_t *forbidden, cap = 64;
  int maxc = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(cap, &forbidden));
  for (int64_t c = 0; c < cap; ++c) forbidden[c] = -1;
  for (int64_t i = 0; i < item_nodes->n; ++i) color[i] = -1;
  for (int64_t i = 0; i < item_nodes->n; ++i) {
    for (int64_t k = row_begin(item_nodes, i); k < row_begin(item_nodes, i + 1); ++k) {
      const int64_t node = entry(item_nodes, k);
      if (node < 0) continue;
      for (int64_t q = row_begin(node_items, node); q < row_begin(node_items, node + 1); ++q) {
        const int32_t c = color[entry(node_items, q)];
        if (c >= 0) forbidden[c] = i;
      }
    }
    int32_t c = 0;
    while (c < cap && forbidden[c] == i) ++c;
    if (c == cap) { /* every color so far is taken around this item */
      const int64_t old = cap;
      PetscCall(pbng_grow(&forbidden, sizeof(*forbidden), cap + 1, &cap));
      for (int64_t k = old; k < cap; ++k) forbidden[k] = -1;
    }
    color[i] = c;
    if (c + 1 > maxc) maxc = c + 1;
  }
  PetscCall(PetscFree(forbidden));
  *ncolors = maxc;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_elements(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors)
{
  const int nen = mesh->nen;
  const csr_view elem_nodes = {mesh->nelems, NULL, nen, mesh->elems, 1}, node_elems = {mesh->nnodes, adj->start, 0, adj->entry, nen};

  PetscFunctionBeginUser;
  PetscCall(greedy_item_coloring(&elem_nodes, &node_elems, color, ncolors));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_weak_constraints(const pbng_mesh *mesh, int32_t *color, int *ncolors)
{
  int64_t *wstart, *cstart;
  int32_t *wentry, *cnodes;

  PetscFunctionBeginUser;
  *ncolors = 0;
  if (mesh->nweak == 0) PetscFunctionReturn(0);
  PetscCall(node_constraints_build(mesh, &wstart, &wentry));
  PetscCall(weak_constraint_rows(mesh, &cstart, &cnodes));
  const csr_view weak_nodes = {mesh->nweak, cstart, 0, cnodes, 1}, node_weak = {mesh->nnodes, wstart, 0, wentry, 1};
  PetscCall(greedy_item_coloring(&weak_nodes, &node_weak, color, ncolors));
  PetscCall(PetscFree2(cstart, cnodes));
  PetscCall(PetscFree(wstart));
  PetscCall(PetscFree(wentry));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_colors_compute(const pbng_mesh *mesh, const pbng_node_elements *adj, PetscBool with_pbd,
                                              pbng_constraint_colors *cc)
{
  PetscFunctionBeginUser;
  memset(cc, 0, sizeof(*cc));
  PetscCall(PetscMalloc1(mesh->nweak + 1, &cc->block));
  PetscCall(pbng_color_weak_blocks(mesh, adj, cc->block, &cc->nblock_colors));
  if (!with_pbd) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(mesh->nelems, &cc->elem));
  PetscCall(PetscMalloc1(mesh->nweak + 1, &cc->weak));
  PetscCall(pbng_color_elements(mesh, adj, cc->elem, &cc->nelem_colors));
  PetscCall(pbng_color_weak_constraints(mesh, cc->weak, &cc->nweak_colors));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_constraint_colors_destroy(pbng_constraint_colors *cc)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(cc->block));
  PetscCall(PetscFree(cc->elem));
  PetscCall(PetscFree(cc->weak));
  memset(cc, 0, sizeof(*cc));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_groups_build(int ncolors, int32_t n, const int32_t *color, pbng_color_groups *g)
{
  PetscFunctionBeginUser;
  g->ncolors = ncolors;
  PetscCall(pbng_csr_by_key32(n, color, 1, ncolors, &g->start, &g->item));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_groups_destroy(pbng_color_groups *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->start));
  PetscCall(PetscFree(g->item));
  g->ncolors = 0;
  PetscFunctionReturn(0);
}
