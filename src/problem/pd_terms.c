#include "problem/pd_terms.h"
#include "core/csr.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/adjacency.h"
#include "core/element.h"
#include "core/vec3.h"
#include "parallel/reduce.h"

PetscErrorCode pbng_pd_options_check(const pbng_pd_options *o)
{
  PetscFunctionBeginUser;
  if (o->model != PBNG_SHEET_MODEL_PERIDYNAMIC) PetscFunctionReturn(0);
  PetscCheck(o->mat.s0 > 0 && isfinite(o->mat.s0), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_s0 %g: must be > 0", o->mat.s0);
  PetscCheck(o->mat.s1 >= 0 && isfinite(o->mat.s1), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_s1 %g: must be >= 0", o->mat.s1);
  PetscCheck(o->k_b >= 0 && isfinite(o->k_b), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_kb %g: must be >= 0", o->k_b);
  PetscCheck(o->thickness >= 0 && isfinite(o->thickness), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-pd_thickness %g: must be > 0 (or 0: the sheet's thickness)", o->thickness);
  PetscFunctionReturn(0);
}

/* ---- building the rings ----------------------------------------------------------------------- */

/* Owned vertex i's triangles as oriented edges (b, c) of (i, b, c); returns how many (at most cap). */
static int vertex_edges(const pbng_dmesh *dm, int32_t i, int cap, int32_t (*edge)[2], int32_t *elem)
{
  int m = 0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t e = pbng_adj_element(dm->nen, dm->adj[k]);
    const int a = pbng_adj_local_node(dm->nen, dm->adj[k]);
    if (pbng_dmesh_element_type(dm, e)->kind != PBNG_ELEMENT_TRI3) continue;
    if (m == cap) return cap + 1;
    const int32_t *t = &dm->elems[(int64_t)dm->nen * e];
    edge[m][0] = t[(a + 1) % 3], edge[m][1] = t[(a + 2) % 3], elem[m] = e;
    ++m;
  }
  return m;
}

/* Chains the m edges into one fan: ring[0..n) with triangles (i, ring[k], ring[k+1]) (and (i, ring[n-1],
 * ring[0]) when closed). Returns n, or -1 when the edges do not form one fan (non-manifold vertex). */
static int chain_fan(int m, const int32_t (*edge)[2], int32_t *ring, int *closed)
{
  int start = 0, used[PBNG_PD_MAX_RING + 1] = {0};
  for (int k = 0; k < m; ++k) { /* an open fan starts at the edge whose b ends no other edge */
    int ends = 0;
    for (int l = 0; l < m; ++l) ends |= edge[l][1] == edge[k][0];
    if (!ends) {
      start = k;
      break;
    }
  }
  int n = 0, cur = start;
  ring[n++] = edge[cur][0];
  for (int step = 0; step < m; ++step) {
    used[cur] = 1;
    const int32_t next = edge[cur][1];
    int found = -1;
    for (int l = 0; l < m; ++l)
      if (!used[l] && edge[l][0] == next) found = l;
    if (found < 0) {
      *closed = next == ring[0];
      if (!*closed) ring[n++] = next;
      return step + 1 == m ? n : -1;
    }
    ring[n++] = next;
    cur = found;
  }
  return -1;
}

static int compare_by_global(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The owned vertices with triangles, by increasing global id. */
static PetscErrorCode ring_centres(const pbng_dmesh *dm, pbng_pd_terms *pd)
{
  int64_t *key;
  int32_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(2 * (int64_t)dm->nowned + 2, &key));
  for (int32_t i = 0; i < dm->nowned; ++i)
    for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k)
      if (pbng_dmesh_element_type(dm, pbng_adj_element(dm->nen, dm->adj[k]))->kind == PBNG_ELEMENT_TRI3) {
        key[2 * n] = dm->global_node[i], key[2 * n + 1] = i, ++n;
        break;
      }
  qsort(key, (size_t)n, 2 * sizeof(int64_t), compare_by_global);
  pd->nrings = n;
  PetscCall(PetscMalloc1(n + 1, &pd->centre));
  for (int32_t r = 0; r < n; ++r) pd->centre[r] = (int32_t)key[2 * r + 1];
  PetscCall(PetscFree(key));
  PetscFunctionReturn(0);
}

/* Ring r's rest data; returns an error text or NULL. */
static const char *ring_rest(const pbng_dmesh *dm, const double *thickness, const pbng_pd_options *o, pbng_pd_terms *pd, int32_t r, int32_t *slots)
{
  int32_t edge[PBNG_PD_MAX_RING + 1][2], elem[PBNG_PD_MAX_RING + 1], ring[PBNG_PD_MAX_RING + 2];
  const int32_t i = pd->centre[r];
  const int m = vertex_edges(dm, i, PBNG_PD_MAX_RING, edge, elem);
  if (m > PBNG_PD_MAX_RING) return "more than 16 triangles around it";
  int closed = 0;
  const int n = chain_fan(m, (const int32_t(*)[2])edge, ring, &closed);
  if (n < 0) return "its triangles do not form one fan (a non-manifold vertex, or inconsistently oriented triangles)";
  if (n > PBNG_PD_MAX_RING) return "more than 16 neighbours";
  double X_ring[PBNG_PD_MAX_RING][3], V = 0, h = 0;
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < 3; ++a) X_ring[k][a] = dm->X[3 * (int64_t)ring[k] + a];
  for (int k = 0; k < m; ++k) {
    double u[3], v[3], c[3];
    vec3_sub(&dm->X[3 * (int64_t)edge[k][0]], &dm->X[3 * (int64_t)i], u);
    vec3_sub(&dm->X[3 * (int64_t)edge[k][1]], &dm->X[3 * (int64_t)i], v);
    vec3_cross(u, v, c);
    V += thickness[elem[k]] * 0.5 * vec3_norm(c) / 3.0; /* thickness x area / 3 */
    h += thickness[elem[k]] / m;
  }
  if (pbng_pd_rest_init(&dm->X[3 * (int64_t)i], (const double(*)[3])X_ring, n, closed, NULL, o->thickness > 0 ? o->thickness : h, V, &pd->rest[r]))
    return "a degenerate ring (zero-area triangles or a singular shape tensor K, Eq. 14)";
  slots[0] = i;
  memcpy(&slots[1], ring, sizeof(int32_t) * (size_t)n);
  return NULL;
}

/* inc: every slot, grouped by node (rings in increasing global centre order within a node). */
static PetscErrorCode build_incidence(int32_t nlocal, pbng_pd_terms *pd)
{
  PetscFunctionBeginUser;
  /* slots in ring order: each node's list ends up by ring */
  PetscCall(pbng_csr_by_key32(pd->slot_start[pd->nrings], pd->slot_node, 1, nlocal, &pd->inc_start, &pd->inc));
  PetscFunctionReturn(0);
}

/* One term of an owned node's sum: the global centre of its ring (the order) and where its value is. */
typedef struct {
  int64_t centre;
  int32_t item; /* >= 0 a local slot, < 0 received value -1 - item */
} slot_term;

static int compare_terms(const void *a, const void *b)
{
  const slot_term *x = a, *y = b;
  return (x->centre > y->centre) - (x->centre < y->centre);
}

/* The global centre of every local slot's ring. */
static PetscErrorCode slot_centres(const pbng_dmesh *dm, const pbng_pd_terms *pd, int64_t **centre)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(pd->slot_start[pd->nrings] + 1, centre));
  for (int32_t r = 0; r < pd->nrings; ++r)
    for (int32_t k = pd->slot_start[r]; k < pd->slot_start[r + 1]; ++k) (*centre)[k] = dm->global_node[pd->centre[r]];
  PetscFunctionReturn(0);
}

/* The slots each ghost's owner is sent: every ghost's incident slots, ghosts in the dmesh's (owner, global id)
 * order, so that the owner reads them in its ghost plan's give order; counts[g] how many for ghost g. */
static PetscErrorCode exchange_send_lists(const pbng_dmesh *dm, const pbng_pd_terms *pd, const pbng_ghost_plan *plan, pbng_pd_slot_exchange *x,
                                          int *counts)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc2(dm->size, &x->send_count, dm->size + 1, &x->send_displ));
  for (int r = 0; r < dm->size; ++r)
    for (int g = plan->want_displ[r]; g < plan->want_displ[r + 1]; ++g) {
      const int32_t i = dm->nowned + g;
      counts[g] = pd->inc_start[i + 1] - pd->inc_start[i];
      x->send_count[r] += counts[g];
    }
  for (int r = 0; r < dm->size; ++r) x->send_displ[r + 1] = x->send_displ[r] + x->send_count[r];
  PetscCall(PetscMalloc1(x->send_displ[dm->size] + 1, &x->send_slot));
  for (int32_t i = dm->nowned, n = 0; i < dm->nlocal; ++i)
    for (int32_t k = pd->inc_start[i]; k < pd->inc_start[i + 1]; ++k) x->send_slot[n++] = pd->inc[k];
  PetscFunctionReturn(0);
}

/* Every owned node's terms, local and received, by increasing global ring centre (rc[k]: how many the owner
 * receives for its k-th given node, recv_centre the received terms' centres in order). */
static PetscErrorCode exchange_sum_order(const pbng_dmesh *dm, const pbng_pd_terms *pd, const pbng_ghost_plan *plan, const int *rc, const int64_t *slot_centre,
                                         const int64_t *recv_centre, pbng_pd_slot_exchange *x)
{
  int32_t *extra, *extra_start, *where;
  const int ngive = plan->give_displ[dm->size];

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc3(dm->nowned + 1, &extra_start, dm->nowned + 1, &where, x->recv_displ[dm->size] + 1, &extra));
  for (int k = 0; k < ngive; ++k) extra_start[plan->give_local[k] + 1] += rc[k];
  for (int32_t i = 0; i < dm->nowned; ++i) extra_start[i + 1] += extra_start[i];
  for (int k = 0, j = 0; k < ngive; ++k) /* the received terms of each owned node, in their arrival order */
    for (int m = 0; m < rc[k]; ++m, ++j) {
      const int32_t i = plan->give_local[k];
      extra[extra_start[i] + where[i]++] = j;
    }
  PetscCall(PetscMalloc1(dm->nowned + 1, &x->sum_start));
  x->sum_start[0] = 0;
  for (int32_t i = 0; i < dm->nowned; ++i) x->sum_start[i + 1] = x->sum_start[i] + (pd->inc_start[i + 1] - pd->inc_start[i]) + (extra_start[i + 1] - extra_start[i]);
  PetscCall(PetscMalloc1(x->sum_start[dm->nowned] + 1, &x->sum_item));
  for (int32_t i = 0; i < dm->nowned; ++i) {
    slot_term t[4 * (PBNG_PD_MAX_RING + 2)];
    int n = 0;
    PetscCheck(x->sum_start[i + 1] - x->sum_start[i] <= (int32_t)(sizeof(t) / sizeof(t[0])), PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "peridynamic rings: node %" PRId64 " is in %d rings", dm->global_node[i], (int)(x->sum_start[i + 1] - x->sum_start[i]));
    for (int32_t k = pd->inc_start[i]; k < pd->inc_start[i + 1]; ++k) t[n].centre = slot_centre[pd->inc[k]], t[n++].item = pd->inc[k];
    for (int32_t k = extra_start[i]; k < extra_start[i + 1]; ++k) t[n].centre = recv_centre[extra[k]], t[n++].item = -1 - extra[k];
    qsort(t, (size_t)n, sizeof(slot_term), compare_terms); /* a node is in a ring once: the centres differ */
    for (int k = 0; k < n; ++k) x->sum_item[x->sum_start[i] + k] = t[k].item;
  }
  PetscCall(PetscFree3(extra_start, where, extra));
  PetscFunctionReturn(0);
}

/* The ghosts' slot values to their owners, summed there in one rank's order (more than one rank). Collective. */
static PetscErrorCode build_slot_exchange(const pbng_dmesh *dm, pbng_pd_terms *pd)
{
  pbng_ghost_plan plan;
  pbng_pd_slot_exchange *x;
  int *counts, *rc;
  int64_t *slot_centre, *send_centre, *recv_centre;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&x));
  pd->exchange = x;
  x->comm = dm->comm, x->size = dm->size;
  PetscCall(pbng_ghost_plan_create(dm, &plan));
  PetscCall(PetscMalloc2(dm->nlocal - dm->nowned + 1, &counts, plan.give_displ[dm->size] + 1, &rc));
  PetscCall(exchange_send_lists(dm, pd, &plan, x, counts));
  PetscCallMPI(MPI_Alltoallv(counts, plan.want_count, plan.want_displ, MPI_INT, rc, plan.give_count, plan.give_displ, MPI_INT, dm->comm));
  PetscCall(PetscCalloc2(dm->size, &x->recv_count, dm->size + 1, &x->recv_displ));
  for (int r = 0; r < dm->size; ++r)
    for (int k = plan.give_displ[r]; k < plan.give_displ[r + 1]; ++k) x->recv_count[r] += rc[k];
  for (int r = 0; r < dm->size; ++r) x->recv_displ[r + 1] = x->recv_displ[r] + x->recv_count[r];
  PetscCall(PetscMalloc1(dm->size, &x->neighbor));
  for (int r = 0; r < dm->size; ++r)
    if (x->send_count[r] || x->recv_count[r]) x->neighbor[x->nneighbors++] = r;
  PetscCall(slot_centres(dm, pd, &slot_centre));
  PetscCall(PetscMalloc2(x->send_displ[dm->size] + 1, &send_centre, x->recv_displ[dm->size] + 1, &recv_centre));
  for (int k = 0; k < x->send_displ[dm->size]; ++k) send_centre[k] = slot_centre[x->send_slot[k]];
  PetscCallMPI(MPI_Alltoallv(send_centre, x->send_count, x->send_displ, MPI_INT64_T, recv_centre, x->recv_count, x->recv_displ, MPI_INT64_T, dm->comm));
  PetscCall(exchange_sum_order(dm, pd, &plan, rc, slot_centre, recv_centre, x));
  PetscCall(PetscFree2(send_centre, recv_centre));
  PetscCall(PetscFree(slot_centre));
  PetscCall(PetscFree2(counts, rc));
  PetscCall(pbng_ghost_plan_destroy(&plan));
  PetscFunctionReturn(0);
}

static PetscErrorCode destroy_slot_exchange(pbng_pd_slot_exchange **x)
{
  PetscFunctionBeginUser;
  if (!*x) PetscFunctionReturn(0);
  PetscCall(PetscFree2((*x)->send_count, (*x)->send_displ));
  PetscCall(PetscFree2((*x)->recv_count, (*x)->recv_displ));
  PetscCall(PetscFree((*x)->send_slot));
  PetscCall(PetscFree((*x)->neighbor));
  PetscCall(PetscFree((*x)->sum_start));
  PetscCall(PetscFree((*x)->sum_item));
  PetscCall(PetscFree(*x));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_terms_create(const pbng_dmesh *dm, const double *thickness, const pbng_pd_options *o, pbng_pd_terms **out)
{
  pbng_pd_terms *pd;
  int32_t *slots;
  int64_t bad = INT64_MAX, first;
  const char *why = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&pd));
  pd->opt = *o;
  PetscCall(ring_centres(dm, pd));
  PetscCall(PetscMalloc1(pd->nrings + 1, &pd->rest));
  PetscCall(PetscMalloc1(pd->nrings + 1, &pd->slot_start));
  PetscCall(PetscMalloc1((int64_t)pd->nrings * (PBNG_PD_MAX_RING + 1) + 1, &slots));
  pd->slot_start[0] = 0;
  for (int32_t r = 0; r < pd->nrings; ++r) {
    const char *err = ring_rest(dm, thickness, o, pd, r, &slots[pd->slot_start[r]]);
    if (err && dm->global_node[pd->centre[r]] < bad) bad = dm->global_node[pd->centre[r]], why = err;
    pd->slot_start[r + 1] = pd->slot_start[r] + (err ? 0 : pd->rest[r].n + 1);
  }
  PetscCallMPI(MPI_Allreduce(&bad, &first, 1, MPI_INT64_T, MPI_MIN, dm->comm));
  if (first != INT64_MAX) {
    char msg[256] = "";
    if (bad == first) snprintf(msg, sizeof(msg), "-sheet_model peridynamic: vertex %" PRId64 ": %s", bad, why);
    PetscCall(PetscFree(slots));
    PetscCall(pbng_pd_terms_destroy(&pd));
    int mine = bad == first ? dm->rank : dm->size, from;
    PetscCallMPI(MPI_Allreduce(&mine, &from, 1, MPI_INT, MPI_MIN, dm->comm));
    PetscCallMPI(MPI_Bcast(msg, sizeof(msg), MPI_CHAR, from, dm->comm)); /* the lowest such vertex's owner's text */
    SETERRQ(dm->comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  }
  PetscCall(PetscMalloc1(pd->slot_start[pd->nrings] + 1, &pd->slot_node));
  memcpy(pd->slot_node, slots, sizeof(int32_t) * (size_t)pd->slot_start[pd->nrings]);
  PetscCall(PetscFree(slots));
  PetscCall(build_incidence(dm->nlocal, pd));
  pd->nowned = dm->nowned;
  if (dm->size > 1) PetscCall(build_slot_exchange(dm, pd));
  PetscCall(PetscMalloc1(3 * (int64_t)pd->slot_start[pd->nrings] + 3, &pd->slot_grad));
  PetscCall(PetscMalloc1(pd->nrings + 1, &pd->ring_energy));
  PetscCall(PetscMalloc1(3 * (int64_t)dm->nlocal + 3, &pd->grad));
  *out = pd;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_terms_destroy(pbng_pd_terms **pd)
{
  PetscFunctionBeginUser;
  if (!*pd) PetscFunctionReturn(0);
  PetscCall(PetscFree((*pd)->centre));
  PetscCall(PetscFree((*pd)->slot_start));
  PetscCall(PetscFree((*pd)->slot_node));
  PetscCall(PetscFree((*pd)->rest));
  PetscCall(PetscFree((*pd)->inc_start));
  PetscCall(PetscFree((*pd)->inc));
  PetscCall(PetscFree((*pd)->slot_grad));
  PetscCall(PetscFree((*pd)->ring_energy));
  PetscCall(PetscFree((*pd)->grad));
  PetscCall(destroy_slot_exchange(&(*pd)->exchange));
  PetscCall(PetscFree(*pd));
  PetscFunctionReturn(0);
}

/* ---- energy and gradient -------------------------------------------------------------------------- */

void pbng_pd_ring_positions(const pbng_pd_terms *pd, int32_t r, const double *x, double y_i[3], double (*y_ring)[3])
{
  const int32_t *s = &pd->slot_node[pd->slot_start[r]];
  for (int a = 0; a < 3; ++a) y_i[a] = x[3 * (int64_t)s[0] + a];
  for (int k = 0; k < pd->rest[r].n; ++k)
    for (int a = 0; a < 3; ++a) y_ring[k][a] = x[3 * (int64_t)s[k + 1] + a];
}

double pbng_pd_ring_energy(const pbng_pd_terms *pd, int32_t r, const double *x, double (*grad)[3])
{
  const pbng_pd_rest *rest = &pd->rest[r];
  double y_i[3], y_ring[PBNG_PD_MAX_RING][3], gp[3] = {0, 0, 0}, gb[3] = {0, 0, 0}, gbr[PBNG_PD_MAX_RING][3];
  pbng_pd_ring_positions(pd, r, x, y_i, y_ring);
  const double W = pbng_pd_vertex_energy_gradient(&pd->opt.mat, rest, y_i, (const double(*)[3])y_ring, grad ? grad[0] : NULL, grad ? &grad[1] : NULL,
                                                  grad ? gp : NULL);
  if (!isfinite(W)) return INFINITY;
  double Eb = 0;
  if (pd->opt.k_b > 0) {
    double gbi[3];
    Eb = pbng_pd_bending_energy_gradient(pd->opt.k_b, rest, y_i, (const double(*)[3])y_ring, NULL, grad ? gbi : NULL, grad ? gbr : NULL, grad ? gb : NULL);
    if (!isfinite(Eb)) return INFINITY;
    if (grad) {
      for (int a = 0; a < 3; ++a) grad[0][a] += gbi[a];
      for (int k = 0; k < rest->n; ++k)
        for (int a = 0; a < 3; ++a) grad[k + 1][a] += gbr[k][a];
    }
  }
  if (grad) { /* the chain through the moving virtual bond (Eq. 13), which the seed drops */
    for (int a = 0; a < 3; ++a) gp[a] += gb[a];
    pbng_pd_virtual_bond_gradient(rest, y_i, (const double(*)[3])y_ring, gp, grad[0], &grad[1]);
  }
  return W + Eb;
}

int pbng_pd_ring_hessian_fd(const pbng_pd_terms *pd, int32_t r, double *x, double *H)
{
  const int n = pd->rest[r].n + 1, N = 3 * n;
  const int32_t *node = &pd->slot_node[pd->slot_start[r]];
  double gp[PBNG_PD_MAX_RING + 1][3], gm[PBNG_PD_MAX_RING + 1][3], size = 0;
  for (int k = 0; k < pd->rest[r].n; ++k) size = fmax(size, vec3_norm(pd->rest[r].bond[k]));
  const double h = 1e-6 * size;
  for (int p = 0; p < n; ++p)
    for (int c = 0; c < 3; ++c) {
      double *xi = &x[3 * (int64_t)node[p] + c];
      const double keep = *xi;
      *xi = keep + h;
      const double Ep = pbng_pd_ring_energy(pd, r, x, gp);
      *xi = keep - h;
      const double Em = pbng_pd_ring_energy(pd, r, x, gm);
      *xi = keep;
      if (!isfinite(Ep) || !isfinite(Em)) return -1;
      for (int q = 0; q < n; ++q)
        for (int e = 0; e < 3; ++e) H[(3 * q + e) * N + 3 * p + c] = (gp[q][e] - gm[q][e]) / (2 * h);
    }
  for (int a = 0; a < N; ++a)
    for (int b = 0; b < a; ++b) H[a * N + b] = H[b * N + a] = 0.5 * (H[a * N + b] + H[b * N + a]);
  return 0;
}

void pbng_pd_terms_energy(const pbng_pd_terms *pd, const double *x, void *exact_sum)
{
  pbng_exact_sum *sum = exact_sum;
#pragma omp parallel
  {
    pbng_exact_sum mine;
    pbng_exact_sum_zero(&mine);
#pragma omp for schedule(static) nowait
    for (int32_t r = 0; r < pd->nrings; ++r) pbng_exact_sum_add(&mine, pbng_pd_ring_energy(pd, r, x, NULL));
#pragma omp critical(pbng_pd_energy_sum)
    pbng_exact_sum_merge(sum, &mine);
  }
}

/* Owned node i's sum in one rank's order: its terms, local slots and received values, by global ring centre. */
static void sum_owned_node(const pbng_pd_slot_exchange *x, int w, const double *val, const double *recv, int32_t i, double *o)
{
  for (int c = 0; c < w; ++c) o[c] = 0;
  for (int32_t k = x->sum_start[i]; k < x->sum_start[i + 1]; ++k) {
    const int32_t t = x->sum_item[k];
    const double *v = t >= 0 ? &val[(int64_t)w * t] : &recv[(int64_t)w * (-1 - t)];
    for (int c = 0; c < w; ++c) o[c] += v[c];
  }
}

/* The packed slot values to the ranks that hold them as ghosts' owners, point to point with the neighbours only. */
static PetscErrorCode exchange_with_neighbours(const pbng_pd_slot_exchange *x, int w, const double *send, double *recv)
{
  MPI_Request *req;
  int n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(2 * x->nneighbors + 1, &req));
  for (int k = 0; k < x->nneighbors; ++k) {
    const int r = x->neighbor[k];
    if (x->recv_count[r]) PetscCallMPI(MPI_Irecv(&recv[(int64_t)w * x->recv_displ[r]], w * x->recv_count[r], MPI_DOUBLE, r, 0, x->comm, &req[n++]));
  }
  for (int k = 0; k < x->nneighbors; ++k) {
    const int r = x->neighbor[k];
    if (x->send_count[r]) PetscCallMPI(MPI_Isend(&send[(int64_t)w * x->send_displ[r]], w * x->send_count[r], MPI_DOUBLE, r, 0, x->comm, &req[n++]));
  }
  PetscCallMPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
  PetscCall(PetscFree(req));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_terms_gather(const pbng_pd_terms *pd, int w, const double *val, double *out, int32_t nlocal)
{
  const pbng_pd_slot_exchange *x = pd->exchange;
  const int32_t nown = x ? pd->nowned : 0; /* one rank: every node's local slots are all of them */

  PetscFunctionBeginUser;
#pragma omp parallel for schedule(static)
  for (int32_t i = nown; i < nlocal; ++i) {
    double *o = &out[(int64_t)w * i];
    for (int c = 0; c < w; ++c) o[c] = 0;
    for (int32_t k = pd->inc_start[i]; k < pd->inc_start[i + 1]; ++k) {
      const double *v = &val[(int64_t)w * pd->inc[k]];
      for (int c = 0; c < w; ++c) o[c] += v[c];
    }
  }
  if (!x) PetscFunctionReturn(0);
  double *send, *recv;
  PetscCall(PetscMalloc2((int64_t)w * x->send_displ[x->size] + 1, &send, (int64_t)w * x->recv_displ[x->size] + 1, &recv));
  for (int k = 0; k < x->send_displ[x->size]; ++k) memcpy(&send[(int64_t)w * k], &val[(int64_t)w * x->send_slot[k]], sizeof(double) * (size_t)w);
  PetscCall(exchange_with_neighbours(x, w, send, recv));
#pragma omp parallel for schedule(static)
  for (int32_t i = 0; i < nown; ++i) sum_owned_node(x, w, val, recv, i, &out[(int64_t)w * i]);
  PetscCall(PetscFree2(send, recv));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_terms_gradient(pbng_pd_terms *pd, const double *x, int32_t nlocal)
{
  PetscFunctionBeginUser;
#pragma omp parallel for schedule(static)
  for (int32_t r = 0; r < pd->nrings; ++r) {
    double (*g)[3] = (double(*)[3]) & pd->slot_grad[3 * (int64_t)pd->slot_start[r]];
    pd->ring_energy[r] = pbng_pd_ring_energy(pd, r, x, g);
    if (!isfinite(pd->ring_energy[r]))
      for (int k = 0; k <= pd->rest[r].n; ++k) g[k][0] = g[k][1] = g[k][2] = NAN; /* the residual says: not finite */
  }
  PetscCall(pbng_pd_terms_gather(pd, 3, pd->slot_grad, pd->grad, nlocal));
  PetscFunctionReturn(0);
}
