/* The dynamic terms of a subdomain: contacts found by each detection, made weak constraints held by
 * every rank owning one of their nodes, their contact ghosts, the sweep's schedule and the dynamic halo
 * (contacts.h). The incremental recoloring is contact_colors.c. */
#include "contact/contacts.h"
#include "core/csr.h"
#include "core/grow.h"
#include "contact/contact_colors.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_items(const void *a, const void *b) { return pbng_contact_key_compare(((const pbng_contact_item *)a)->key, ((const pbng_contact_item *)b)->key); }
/* (key[3], node set) rows of the previous update: a contact is new when its key or its nodes are (a corner
 * whose weight was zero was not one of the term's nodes). */
static int compare_previous(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  const int c = pbng_contact_key_compare(x, y);
  return c ? c : (x[3] > y[3]) - (x[3] < y[3]);
}
static int compare_deep(const void *a, const void *b)
{
  const pbng_contact_deep_pair *x = a, *y = b;
  return x->vertex_gid != y->vertex_gid ? (x->vertex_gid > y->vertex_gid) - (x->vertex_gid < y->vertex_gid) : (x->key > y->key) - (x->key < y->key);
}

static int compare_pairs(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

int32_t pbng_contacts_static_local(const pbng_contacts *ct, int64_t gid)
{
  int32_t lo = 0, hi = ct->dm->nlocal - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (ct->lookup[mid][0] == gid) return (int32_t)ct->lookup[mid][1];
    if (ct->lookup[mid][0] < gid) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Local index of gid among the static nodes and the contact ghosts (sorted by owner, then gid), or -1. */
static int32_t any_local(const pbng_contacts *ct, int64_t gid, int owner)
{
  const int32_t s = pbng_contacts_static_local(ct, gid);
  if (s >= 0) return s;
  int32_t lo = 0, hi = ct->nghost - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    const int c = ct->ghost_owner[mid] != owner ? (ct->ghost_owner[mid] > owner) - (ct->ghost_owner[mid] < owner)
                                                : (ct->ghost_gid[mid] > gid) - (ct->ghost_gid[mid] < gid);
    if (c == 0) return ct->dm->nlocal + mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* ---- creation: the fixed tables ------------------------------------------------------------------ */

/* (gid, local) of every static local node, sorted by gid. */
static PetscErrorCode build_lookup(pbng_contacts *ct)
{
  const pbng_dmesh *dm = ct->dm;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nlocal + 1, &ct->lookup));
  for (int32_t i = 0; i < dm->nlocal; ++i) ct->lookup[i][0] = dm->global_node[i], ct->lookup[i][1] = i;
  qsort(ct->lookup, (size_t)dm->nlocal, sizeof(ct->lookup[0]), compare_pairs);
  PetscFunctionReturn(0);
}

/* Per owned node, the ranks that hold it as a static ghost: the static halo's send lists (free nodes;
 * a prescribed node is moved by every holder itself). */
static PetscErrorCode build_holders(pbng_contacts *ct, const pbng_halo *halo)
{
  const pbng_dmesh *dm = ct->dm;
  const int N = halo ? halo->nneighbors : 0, C = halo ? halo->ncolors : 0;

  const int32_t nsent = halo ? halo->send_start[C * N] : 0;
  int32_t *neighbor_of; /* [nsent]: the rank each send-list entry goes to */

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nsent + 1, &neighbor_of));
  for (int c = 0; c < C; ++c)
    for (int n = 0; n < N; ++n)
      for (int32_t k = halo->send_start[c * N + n]; k < halo->send_start[c * N + n + 1]; ++k) neighbor_of[k] = halo->neighbor[n];
  /* the entries by owned node (in send-list order), then each entry as its rank */
  PetscErrorCode ierr = pbng_csr_by_key32(nsent, halo ? halo->send_node : neighbor_of, 1, dm->nowned, &ct->holder_start, &ct->holder);
  for (int32_t j = 0; !ierr && j < ct->holder_start[dm->nowned]; ++j) ct->holder[j] = neighbor_of[ct->holder[j]];
  PetscCall(PetscFree(neighbor_of));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* An upper bound of the contact ghosts a rank can need: every node of a contact is a surface vertex. */
static PetscErrorCode surface_vertex_count(const pbng_contacts *ct, int32_t *bound)
{
  const uint8_t *surface = pbng_contact_surface_nodes(ct->det);
  int64_t mine = 0, all;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < ct->dm->nowned; ++i) mine += surface[i];
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, ct->comm));
  PetscCheck(all < INT32_MAX - ct->dm->nlocal, ct->comm, PETSC_ERR_SUP, "contacts: %" PRId64 " surface vertices exceed the local index range", all);
  *bound = (int32_t)all;
  PetscFunctionReturn(0);
}

/* The default contact distance: half the mean edge of the surface triangles at rest, over the job (each
 * triangle counted by its holder). */
static PetscErrorCode default_distance(const pbng_dmesh *dm, double *d)
{
  pbng_surface s;
  double mine[2] = {0, 0}, all[2];

  PetscFunctionBeginUser;
  PetscCall(pbng_surface_create(dm, &s));
  for (int32_t t = 0; t < s.nheld; ++t)
    for (int e = 0; e < 3; ++e) {
      const double *a = &dm->X[3 * (int64_t)s.tri[t].node[e]], *b = &dm->X[3 * (int64_t)s.tri[t].node[(e + 1) % 3]];
      mine[0] += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
      mine[1] += 1;
    }
  PetscCall(pbng_surface_destroy(&s));
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, dm->comm));
  PetscCheck(all[1] > 0 && all[0] > 0, dm->comm, PETSC_ERR_ARG_WRONG, "contacts: the mesh has no boundary surface");
  *d = 0.5 * all[0] / all[1];
  PetscFunctionReturn(0);
}

/* Fields both kinds of set have: the fixed tables and the colors. */
static PetscErrorCode create_common(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contacts *ct)
{
  PetscFunctionBeginUser;
  memset(ct, 0, sizeof(*ct));
  ct->dm = dm;
  ct->opt = *opt;
  PetscCallMPI(MPI_Comm_dup(dm->comm, &ct->comm));
  PetscCall(build_lookup(ct));
  PetscCall(build_holders(ct, halo));
  PetscFunctionReturn(0);
}

/* The arrays sized by the contact ghosts' capacity. */
static PetscErrorCode allocate_ghosts(pbng_contacts *ct)
{
  const pbng_dmesh *dm = ct->dm;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nlocal + ct->ghost_capacity + 1, &ct->color));
  memcpy(ct->color, dm->color, sizeof(int32_t) * (size_t)dm->nlocal);
  ct->ncolors = dm->ncolors;
  PetscCall(PetscMalloc4(ct->ghost_capacity + 1, &ct->ghost_gid, ct->ghost_capacity + 1, &ct->ghost_owner, ct->ghost_capacity + 1,
                         &ct->ghost_static_color, ct->ghost_capacity + 1, &ct->ghost_held));
  PetscCall(PetscCalloc1(dm->nowned + 1, &ct->adj_start));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nlocal + 1, &ct->x_detect));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nlocal + 1, &ct->x_prev));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_create(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contacts *ct)
{
  PetscFunctionBeginUser;
  PetscCall(create_common(dm, halo, opt, ct));
  if (ct->opt.detect.distance == 0) PetscCall(default_distance(dm, &ct->opt.detect.distance));
  if (ct->opt.detect.sheet_offset < 0) ct->opt.detect.sheet_offset = 0.5 * ct->opt.detect.distance;
  PetscCheck(ct->opt.detect.sheet_offset < ct->opt.detect.distance, dm->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-contact_thickness %g: must be below the contact distance %g (a vertex is kept that far from a sheet, so it must be found "
             "farther away)", ct->opt.detect.sheet_offset, ct->opt.detect.distance);
  PetscCall(pbng_contact_detector_create(dm, &ct->opt.detect, &ct->det));
  PetscCall(surface_vertex_count(ct, &ct->ghost_capacity));
  PetscCall(allocate_ghosts(ct));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_create_carried(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contacts *ct)
{
  PetscFunctionBeginUser;
  PetscCall(create_common(dm, halo, opt, ct));
  ct->carried = 1;
  PetscCheck(dm->nglobal_nodes < INT32_MAX - dm->nlocal, dm->comm, PETSC_ERR_SUP, "contacts: %" PRId64 " nodes exceed the local index range",
             dm->nglobal_nodes);
  ct->ghost_capacity = (int32_t)dm->nglobal_nodes;
  PetscCall(allocate_ghosts(ct));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_destroy(pbng_contacts *ct)
{
  PetscFunctionBeginUser;
  if (!ct->dm) PetscFunctionReturn(0);
  PetscCall(pbng_contact_detector_destroy(&ct->det));
  PetscCall(PetscFree(ct->term));
  PetscCall(PetscFree(ct->key));
  PetscCall(PetscFree(ct->counted));
  PetscCall(PetscFree(ct->slots));
  PetscCall(PetscFree(ct->adj_start));
  PetscCall(PetscFree(ct->adj));
  PetscCall(PetscFree(ct->previous));
  PetscCall(PetscFree4(ct->ghost_gid, ct->ghost_owner, ct->ghost_static_color, ct->ghost_held));
  PetscCall(PetscFree(ct->color));
  PetscCall(PetscFree2(ct->recolored_gid, ct->recolored_color));
  PetscCall(PetscFree(ct->sched_start));
  PetscCall(PetscFree(ct->sched_split));
  PetscCall(PetscFree(ct->sched_node));
  PetscCall(pbng_halo_destroy(&ct->dyn));
  PetscCall(PetscFree(ct->lookup));
  PetscCall(PetscFree(ct->holder_start));
  PetscCall(PetscFree(ct->holder));
  PetscCall(PetscFree(ct->x_detect));
  PetscCall(PetscFree(ct->x_prev));
  PetscCall(PetscFree2(ct->deep, ct->keep));
  PetscCallMPI(MPI_Comm_free(&ct->comm));
  memset(ct, 0, sizeof(*ct));
  PetscFunctionReturn(0);
}

/* Whether the previous update had a contact of record r's vertex with the same obstacle, or with a triangle
 * (any: as the vertex slides, its closest triangle changes, e.g. across a quad's diagonal). */
static int had_contact(const pbng_contacts *ct, const pbng_contact_record *r)
{
  int32_t lo = 0, hi = ct->nprevious - 1;
  while (lo <= hi) { /* the first previous row of the vertex and kind */
    const int32_t mid = lo + (hi - lo) / 2;
    const int64_t *p = ct->previous[mid];
    if (p[0] < r->vertex_gid || (p[0] == r->vertex_gid && p[1] < r->kind)) lo = mid + 1;
    else hi = mid - 1;
  }
  for (int32_t k = lo; k < ct->nprevious && ct->previous[k][0] == r->vertex_gid && ct->previous[k][1] == r->kind; ++k)
    if (r->kind == PBNG_CONTACT_TRIANGLE || ct->previous[k][2] == r->key) return 1;
  return 0;
}

/* The paper's spring pulls its vertex onto the surface point from either side: a spring contact is made
 * only for a vertex behind the surface (gap < 0), or a vertex near a surface would be drawn onto it (and
 * a contact found at gap g would start with energy k_n g^2 / 2); once made the vertex keeps a contact
 * while it stays within the contact distance of a triangle (its closest), or of the same obstacle (else
 * the contacts of a surface at rest on another, whose vertices sit at gaps of about +-f/k_n, would come
 * and go at every detection). A
 * unilateral contact acts only behind the surface, so it keeps every record within the distance (it
 * catches a vertex before it passes). */
static int32_t keep_spring_records(const pbng_contacts *ct, int32_t n, pbng_contact_record *rec)
{
  int32_t m = 0;
  for (int32_t k = 0; k < n; ++k)
    if (rec[k].gap < 0 || had_contact(ct, &rec[k])) rec[m++] = rec[k];
  return m;
}

/* ---- update: detections become terms ---------------------------------------------------------------- */

/* The item of one detection record of this rank's (owned) vertex: C = x_v - sum_j w_j x_j - h n over the
 * corners with a non-zero weight (slot j + 1 for corner j; h the record's offset, 0 but for sheets), or x_v - q. */
static void item_from_record(const pbng_contacts *ct, const pbng_contact_record *r, const double *x, pbng_contact_item *it)
{
  memset(it, 0, sizeof(*it));
  it->key[0] = r->vertex_gid, it->key[1] = r->kind, it->key[2] = r->key;
  it->gid[0] = r->vertex_gid, it->owner[0] = ct->dm->rank, it->a[0] = 1.0, it->slots = 1;
  for (int d = 0; d < 3; ++d) it->x[0][d] = x[3 * (int64_t)r->vertex + d];
  it->nnodes = 1;
  if (r->kind == PBNG_CONTACT_TRIANGLE) {
    for (int j = 0; j < 3; ++j) {
      if (r->w[j] == 0.0) continue;
      const int m = it->nnodes++;
      it->gid[m] = r->tri_gid[j], it->owner[m] = r->tri_owner[j], it->a[m] = -r->w[j];
      for (int d = 0; d < 3; ++d) it->x[m][d] = r->tri_x[j][d];
      it->slots |= (uint8_t)(1u << (j + 1));
    }
    for (int d = 0; d < 3; ++d) it->target[d] = r->offset * r->normal[d]; /* a sheet side: kept h in front (n.C = s - h) */
  } else
    for (int d = 0; d < 3; ++d) it->target[d] = r->point[d];
  for (int d = 0; d < 3; ++d) it->normal[d] = r->normal[d];
}

/* Whether rank r owns one of the item's nodes before slot j. */
static int owner_listed(const pbng_contact_item *it, int j, int r)
{
  for (int i = 0; i < j; ++i)
    if (it->owner[i] == r) return 1;
  return 0;
}

/* Every contact touching an owned node: this rank's items with an owned node, plus the items of other
 * ranks with a node owned here (each owner of a node gets the item once). Sorted by key. */
static PetscErrorCode gather_items(pbng_contacts *ct, int32_t nmine, const pbng_contact_item *mine, int32_t *nitems, pbng_contact_item **items)
{
  const int size = ct->dm->size, me = ct->dm->rank;
  int *scount, *rcount, *sdispl, *rdispl;
  pbng_contact_item *send, *recv;
  int64_t nsend = 0, nrecv = 0, nkept = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size + 1, &sdispl, size + 1, &rdispl));
  for (int32_t k = 0; k < nmine; ++k)
    for (int j = 0; j < mine[k].nnodes; ++j) {
      const int r = mine[k].owner[j];
      if (r == me || owner_listed(&mine[k], j, r)) continue;
      ++scount[r], ++nsend;
    }
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, ct->comm));
  for (int r = 0; r < size; ++r) {
    sdispl[r + 1] = sdispl[r] + scount[r], rdispl[r + 1] = rdispl[r] + rcount[r];
    nrecv += rcount[r];
  }
  PetscCall(PetscMalloc2(nsend + 1, &send, nrecv + 1, &recv));
  int *fill;
  PetscCall(PetscMalloc1(size, &fill));
  memcpy(fill, sdispl, sizeof(int) * (size_t)size);
  for (int32_t k = 0; k < nmine; ++k)
    for (int j = 0; j < mine[k].nnodes; ++j) {
      const int r = mine[k].owner[j];
      if (r != me && !owner_listed(&mine[k], j, r)) send[fill[r]++] = mine[k];
    }
  MPI_Datatype item_type;
  PetscCallMPI(MPI_Type_contiguous((int)sizeof(pbng_contact_item), MPI_BYTE, &item_type));
  PetscCallMPI(MPI_Type_commit(&item_type));
  PetscCallMPI(MPI_Alltoallv(send, scount, sdispl, item_type, recv, rcount, rdispl, item_type, ct->comm));
  PetscCallMPI(MPI_Type_free(&item_type));
  PetscCall(PetscMalloc1(nmine + nrecv + 1, items));
  for (int32_t k = 0; k < nmine; ++k)
    if (owner_listed(&mine[k], mine[k].nnodes, me)) (*items)[nkept++] = mine[k];
  if (nrecv) memcpy(*items + nkept, recv, sizeof(pbng_contact_item) * (size_t)nrecv);
  *nitems = (int32_t)(nkept + nrecv);
  qsort(*items, (size_t)*nitems, sizeof(pbng_contact_item), compare_items);
  PetscCall(PetscFree(fill));
  PetscCall(PetscFree2(send, recv));
  PetscCall(PetscFree4(scount, rcount, sdispl, rdispl));
  PetscFunctionReturn(0);
}

/* The contact ghosts: nodes of the items that are not static local nodes, sorted by (owner, gid). */
static PetscErrorCode collect_ghosts(pbng_contacts *ct, int32_t nitems, const pbng_contact_item *items)
{
  int64_t(*want)[2];
  int32_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(PBNG_WC_MAX_NODES * (int64_t)nitems + 1, &want));
  for (int32_t k = 0; k < nitems; ++k)
    for (int j = 0; j < items[k].nnodes; ++j)
      if (pbng_contacts_static_local(ct, items[k].gid[j]) < 0) want[n][0] = items[k].owner[j], want[n][1] = items[k].gid[j], ++n;
  qsort(want, (size_t)n, sizeof(want[0]), compare_pairs);
  ct->nghost = 0;
  for (int32_t k = 0; k < n; ++k) {
    if (k > 0 && want[k][0] == want[k - 1][0] && want[k][1] == want[k - 1][1]) continue;
    PetscCheck(ct->nghost < ct->ghost_capacity, PETSC_COMM_SELF, PETSC_ERR_PLIB, "contacts: more contact ghosts than surface vertices");
    ct->ghost_owner[ct->nghost] = (int)want[k][0], ct->ghost_gid[ct->nghost] = want[k][1];
    ++ct->nghost;
  }
  PetscCall(PetscFree(want));
  PetscFunctionReturn(0);
}

/* Asks the owners of the contact ghosts for their static colors and whether they are prescribed; the
 * owners learn which ranks hold which of their nodes as contact ghosts: (*nheld) pairs (owned local
 * node, holder rank). */
static PetscErrorCode register_ghosts(pbng_contacts *ct, int32_t *nheld, int32_t (**held)[2])
{
  const pbng_dmesh *dm = ct->dm;
  const int size = dm->size;
  int *scount, *rcount, *sdispl, *rdispl;
  int64_t *asked, nasked = 0;
  int32_t *answer, *reply;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size + 1, &sdispl, size + 1, &rdispl));
  for (int32_t g = 0; g < ct->nghost; ++g) ++scount[ct->ghost_owner[g]];
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, ct->comm));
  for (int r = 0; r < size; ++r) sdispl[r + 1] = sdispl[r] + scount[r], rdispl[r + 1] = rdispl[r] + rcount[r];
  nasked = rdispl[size];
  PetscCall(PetscMalloc3(nasked + 1, &asked, 2 * nasked + 1, &answer, 2 * (int64_t)ct->nghost + 1, &reply));
  PetscCallMPI(MPI_Alltoallv(ct->ghost_gid, scount, sdispl, MPI_INT64_T, asked, rcount, rdispl, MPI_INT64_T, ct->comm));
  PetscCall(PetscMalloc1(nasked + 1, held));
  *nheld = 0;
  for (int r = 0; r < size; ++r)
    for (int k = rdispl[r]; k < rdispl[r + 1]; ++k) {
      const int32_t i = pbng_contacts_static_local(ct, asked[k]);
      PetscCheck(i >= 0 && i < dm->nowned, PETSC_COMM_SELF, PETSC_ERR_PLIB, "contacts: node %" PRId64 " asked from a rank that does not own it", asked[k]);
      answer[2 * k] = dm->color[i], answer[2 * k + 1] = dm->node_bc[i] >= 0;
      (*held)[*nheld][0] = i, (*held)[*nheld][1] = r, ++*nheld;
    }
  for (int r = 0; r < size; ++r) sdispl[r] *= 2, rdispl[r] *= 2, scount[r] *= 2, rcount[r] *= 2;
  PetscCallMPI(MPI_Alltoallv(answer, rcount, rdispl, MPI_INT32_T, reply, scount, sdispl, MPI_INT32_T, ct->comm));
  for (int32_t g = 0; g < ct->nghost; ++g) ct->ghost_static_color[g] = reply[2 * g], ct->ghost_held[g] = (uint8_t)reply[2 * g + 1];
  PetscCall(PetscFree3(asked, answer, reply));
  PetscCall(PetscFree4(scount, rcount, sdispl, rdispl));
  PetscFunctionReturn(0);
}

/* The weak constraint of an item in local indices: C = sum_j a_j x_j - target, K = k_n n n^T + k_t (I - n n^T),
 * unilateral by the options. */
static void term_from_item(const pbng_contacts *ct, const pbng_contact_item *it, pbng_weak_constraint *c)
{
  memset(c, 0, sizeof(*c));
  c->nnodes = it->nnodes;
  for (int j = 0; j < it->nnodes; ++j) c->node[j] = any_local(ct, it->gid[j], it->owner[j]), c->a[j] = it->a[j];
  for (int d = 0; d < 3; ++d) c->target[d] = it->target[d];
  c->unilateral = ct->opt.unilateral;
  pbng_weak_constraint_set_stiffness(c, ct->opt.k_n, ct->opt.k_t, it->normal);
}

static PetscErrorCode ensure_term_capacity(pbng_contacts *ct, int32_t n)
{
  PetscFunctionBeginUser;
  if (n <= ct->capacity) PetscFunctionReturn(0);
  const int32_t cap = (int32_t)pbng_grown_capacity(n, ct->capacity); /* four arrays side by side */
  PetscCall(PetscRealloc(sizeof(pbng_weak_constraint) * (size_t)cap, &ct->term));
  PetscCall(PetscRealloc(sizeof(ct->key[0]) * (size_t)cap, &ct->key));
  PetscCall(PetscRealloc(sizeof(uint8_t) * (size_t)cap, &ct->counted));
  PetscCall(PetscRealloc(sizeof(uint8_t) * (size_t)cap, &ct->slots));
  ct->capacity = cap;
  PetscFunctionReturn(0);
}

/* Terms, keys and the per-owned-node adjacency (entries in term order, i.e. by key). */
static PetscErrorCode build_terms(pbng_contacts *ct, int32_t nitems, const pbng_contact_item *items)
{
  const pbng_dmesh *dm = ct->dm;

  int32_t *slot_node; /* [nitems][PBNG_WC_MAX_NODES] each term's owned nodes, -1 in its other and unused slots */

  PetscFunctionBeginUser;
  PetscCall(ensure_term_capacity(ct, nitems));
  ct->n = nitems;
  PetscCall(PetscMalloc1((int64_t)nitems * PBNG_WC_MAX_NODES + 1, &slot_node));
  for (int32_t k = 0; k < nitems; ++k) {
    term_from_item(ct, &items[k], &ct->term[k]);
    memcpy(ct->key[k], items[k].key, sizeof(ct->key[k]));
    ct->slots[k] = items[k].slots;
    ct->counted[k] = items[k].owner[0] == dm->rank;
    for (int j = 0; j < PBNG_WC_MAX_NODES; ++j)
      slot_node[(int64_t)k * PBNG_WC_MAX_NODES + j] = j < ct->term[k].nnodes && ct->term[k].node[j] < dm->nowned ? (int32_t)ct->term[k].node[j] : -1;
  }
  /* entry PBNG_WC_MAX_NODES k + j is slot position k (stride 1): each owned node's terms, in term order */
  PetscCall(PetscFree(ct->adj_start));
  PetscCall(PetscFree(ct->adj));
  PetscErrorCode ierr = pbng_csr_by_key32((int64_t)nitems * PBNG_WC_MAX_NODES, slot_node, 1, dm->nowned, &ct->adj_start, &ct->adj);
  PetscCall(PetscFree(slot_node));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The row of term k for the previous-update list: its key and the bit set of its item slots in use. */
static void previous_row(const pbng_contacts *ct, int32_t k, int64_t row[4])
{
  memcpy(row, ct->key[k], sizeof(ct->key[k]));
  row[3] = ct->slots[k];
}

/* Whether term k was there at the previous update, with the same nodes. */
static int seen_before(const pbng_contacts *ct, int32_t k)
{
  int64_t row[4];
  previous_row(ct, k, row);
  return ct->nprevious && bsearch(row, ct->previous, (size_t)ct->nprevious, sizeof(ct->previous[0]), compare_previous) != NULL;
}

/* Per owned free node: whether it is a node of a term not present at the previous update (new), and
 * whether it was in some term then and is in none now (left). */
static PetscErrorCode mark_changes(const pbng_contacts *ct, const uint8_t *was_in_contact, uint8_t *new_node, uint8_t *left_node)
{
  const pbng_dmesh *dm = ct->dm;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < dm->nfree; ++i) new_node[i] = 0, left_node[i] = was_in_contact[i] && ct->adj_start[i + 1] == ct->adj_start[i];
  for (int32_t k = 0; k < ct->n; ++k) {
    if (seen_before(ct, k)) continue;
    for (int j = 0; j < ct->term[k].nnodes; ++j)
      if (ct->term[k].node[j] < dm->nfree) new_node[ct->term[k].node[j]] = 1;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode remember_keys(pbng_contacts *ct)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(ct->previous));
  PetscCall(PetscMalloc1(ct->n + 1, &ct->previous));
  for (int32_t k = 0; k < ct->n; ++k) previous_row(ct, k, ct->previous[k]);
  ct->nprevious = ct->n; /* already sorted: the terms are in key order, one term per key */
  PetscFunctionReturn(0);
}

/* ---- the schedule and the dynamic halo ------------------------------------------------------------ */

/* Whether owned node i is held by another rank as a static ghost (it is an interface node) . */
static int static_interface(const pbng_contacts *ct, int32_t i) { return ct->holder_start[i + 1] > ct->holder_start[i]; }

/* Owned free nodes bucketed by current color, nodes other ranks hold first, each group in local order. */
static PetscErrorCode build_schedule(pbng_contacts *ct, const uint8_t *contact_shared)
{
  const pbng_dmesh *dm = ct->dm;
  const int C = ct->ncolors;

  int32_t *group, *start; /* group 2 c: color c's nodes other ranks hold; 2 c + 1: its others */

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nfree + 1, &group));
  for (int32_t i = 0; i < dm->nfree; ++i) group[i] = 2 * ct->color[i] + !(static_interface(ct, i) || contact_shared[i]);
  PetscCall(PetscFree(ct->sched_node));
  PetscErrorCode ierr = pbng_csr_by_key32(dm->nfree, group, 1, 2 * C, &start, &ct->sched_node);
  PetscCall(PetscFree(group));
  PetscCall(ierr);
  PetscCall(PetscFree(ct->sched_start));
  PetscCall(PetscFree(ct->sched_split));
  PetscCall(PetscCalloc1(C + 1, &ct->sched_start));
  PetscCall(PetscCalloc1(C + 1, &ct->sched_split));
  for (int c = 0; c <= C; ++c) ct->sched_start[c] = start[2 * c];
  for (int c = 0; c < C; ++c) ct->sched_split[c] = start[2 * c + 1];
  PetscCall(PetscFree(start));
  PetscFunctionReturn(0);
}

/* One entry of the dynamic halo: (color or the held pseudo-color, neighbour rank, gid, local). */
typedef struct {
  int64_t color, rank, gid, local;
} halo_entry;

static int compare_entries(const void *a, const void *b)
{
  const halo_entry *x = a, *y = b;
  if (x->color != y->color) return (x->color > y->color) - (x->color < y->color);
  if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
  return (x->gid > y->gid) - (x->gid < y->gid);
}

/* Send entries: owned nodes to the ranks holding them as contact ghosts (held ones under the pseudo-color
 * C), and recolored owned free nodes to the ranks holding them as static ghosts. */
static PetscErrorCode send_entries(const pbng_contacts *ct, int32_t nheld, const int32_t (*held)[2], int64_t *n, halo_entry **e)
{
  const pbng_dmesh *dm = ct->dm;
  const int C = ct->ncolors;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nheld + ct->holder_start[dm->nowned] + 1, e));
  *n = 0;
  for (int32_t k = 0; k < nheld; ++k) {
    const int32_t i = held[k][0];
    (*e)[(*n)++] = (halo_entry){dm->node_bc[i] >= 0 ? C : ct->color[i], held[k][1], dm->global_node[i], i};
  }
  for (int32_t i = 0; i < dm->nfree; ++i)
    if (ct->color[i] != dm->color[i])
      for (int32_t k = ct->holder_start[i]; k < ct->holder_start[i + 1]; ++k) (*e)[(*n)++] = (halo_entry){ct->color[i], ct->holder[k], dm->global_node[i], i};
  qsort(*e, (size_t)*n, sizeof(halo_entry), compare_entries);
  PetscFunctionReturn(0);
}

/* Receive entries: the contact ghosts, and the static ghosts (free) whose color differs from the static one. */
static PetscErrorCode recv_entries(const pbng_contacts *ct, int64_t *n, halo_entry **e)
{
  const pbng_dmesh *dm = ct->dm;
  const int C = ct->ncolors;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(ct->nghost + (dm->nlocal - dm->nowned) + 1, e));
  *n = 0;
  for (int32_t g = 0; g < ct->nghost; ++g) {
    const int32_t l = dm->nlocal + g;
    (*e)[(*n)++] = (halo_entry){ct->ghost_held[g] ? C : ct->color[l], ct->ghost_owner[g], ct->ghost_gid[g], l};
  }
  for (int32_t g = dm->nowned; g < dm->nlocal; ++g)
    if (dm->node_bc[g] < 0 && ct->color[g] != dm->color[g])
      (*e)[(*n)++] = (halo_entry){ct->color[g], dm->ghost_owner[g - dm->nowned], dm->global_node[g], g};
  qsort(*e, (size_t)*n, sizeof(halo_entry), compare_entries);
  PetscFunctionReturn(0);
}

/* start[(c * N + n)] over sorted entries of C + 1 colors and the neighbours nb[N]. */
static PetscErrorCode entry_lists(int64_t n, const halo_entry *e, int C1, int N, const int *nb, int32_t **start, int32_t **node)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(C1 * N + 1, start));
  PetscCall(PetscMalloc1(n + 1, node));
  int64_t k = 0;
  for (int c = 0; c < C1; ++c)
    for (int q = 0; q < N; ++q) {
      (*start)[c * N + q] = (int32_t)k;
      while (k < n && e[k].color == c && e[k].rank == nb[q]) (*node)[k] = (int32_t)e[k].local, ++k;
    }
  (*start)[C1 * N] = (int32_t)k;
  PetscCheck(k == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "contacts: dynamic halo entries out of order");
  PetscFunctionReturn(0);
}

static PetscErrorCode build_dynamic_halo(pbng_contacts *ct, int32_t nheld, const int32_t (*held)[2])
{
  const int size = ct->dm->size, C1 = ct->ncolors + 1;
  halo_entry *se = NULL, *re = NULL;
  int64_t ns = 0, nr = 0;
  int *is_nb, *nb, N = 0;

  PetscFunctionBeginUser;
  PetscCall(pbng_halo_destroy(&ct->dyn));
  PetscCall(send_entries(ct, nheld, held, &ns, &se));
  PetscCall(recv_entries(ct, &nr, &re));
  PetscCall(PetscCalloc1(size, &is_nb));
  PetscCall(PetscMalloc1(size, &nb)); /* its own allocation: the halo takes it */
  for (int64_t k = 0; k < ns; ++k) is_nb[se[k].rank] = 1;
  for (int64_t k = 0; k < nr; ++k) is_nb[re[k].rank] = 1;
  for (int r = 0; r < size; ++r)
    if (is_nb[r]) nb[N++] = r;
  int32_t *send_start, *send_node, *recv_start, *recv_node;
  PetscCall(entry_lists(ns, se, C1, N, nb, &send_start, &send_node));
  PetscCall(entry_lists(nr, re, C1, N, nb, &recv_start, &recv_node));
  PetscCall(pbng_halo_create_from_lists(ct->comm, C1, N, nb, send_start, send_node, recv_start, recv_node, &ct->dyn));
  PetscCall(PetscFree(is_nb));
  PetscCall(PetscFree(se));
  PetscCall(PetscFree(re));
  PetscFunctionReturn(0);
}

/* ---- update ---------------------------------------------------------------------------------------- */

/* The colors of the contact ghosts: the recolored map, else their static ones. */
static void color_contact_ghosts(pbng_contacts *ct)
{
  for (int32_t g = 0; g < ct->nghost; ++g) ct->color[ct->dm->nlocal + g] = pbng_contact_colors_current(ct, ct->ghost_gid[g], ct->ghost_static_color[g]);
}

static PetscErrorCode sum_stats(pbng_contacts *ct, int64_t new_terms, int64_t new_acting, double new_depth, double t_detect, double t_color,
                                double t_build)
{
  int64_t mine[4] = {0, 0, new_terms, new_acting}, all[4];
  double tm[4] = {t_detect, t_color, t_build, new_depth}, ta[4];

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < ct->n; ++k)
    if (ct->counted[k]) ++mine[0], mine[1] += ct->key[k][1] == PBNG_CONTACT_OBSTACLE;
  PetscCallMPI(MPI_Allreduce(mine, all, 4, MPI_INT64_T, MPI_SUM, ct->comm));
  PetscCallMPI(MPI_Allreduce(tm, ta, 4, MPI_DOUBLE, MPI_MAX, ct->comm));
  ct->stats.contacts = all[0], ct->stats.obstacle_contacts = all[1], ct->stats.new_contacts = all[2], ct->stats.new_acting = all[3];
  ct->stats.ncolors = ct->ncolors;
  ct->stats.detect_seconds = ta[0], ct->stats.recolor_seconds = ta[1], ct->stats.build_seconds = ta[2], ct->stats.new_depth = ta[3];
  PetscFunctionReturn(0);
}

/* Per owned free node, for the recoloring: carried sets are colored afresh from the static colors at
 * every update (every node of a term is new, none left), so that they depend on the set alone. */
static void mark_all_new(pbng_contacts *ct, uint8_t *new_node)
{
  const pbng_dmesh *dm = ct->dm;
  memcpy(ct->color, dm->color, sizeof(int32_t) * (size_t)dm->nlocal);
  ct->nrecolored = 0;
  for (int32_t k = 0; k < ct->n; ++k)
    for (int j = 0; j < ct->term[k].nnodes; ++j)
      if (ct->term[k].node[j] < dm->nfree) new_node[ct->term[k].node[j]] = 1;
}

/* The new contacts among the terms (not present at the previous update) and of them those acting at x
 * (gap n.C < 0), with the deepest gap: counted terms only. */
static void count_new_terms(const pbng_contacts *ct, const double *x, int64_t *new_terms, int64_t *new_acting, double *new_depth)
{
  *new_terms = 0, *new_acting = 0, *new_depth = 0;
  for (int32_t k = 0; k < ct->n; ++k) {
    if (!ct->counted[k] || seen_before(ct, k)) continue;
    const pbng_weak_constraint *c = &ct->term[k];
    double C[3];
    pbng_weak_constraint_violation(c, x, C);
    const double gap = c->n[0] * C[0] + c->n[1] * C[1] + c->n[2] * C[2];
    ++*new_terms;
    if (gap < 0) ++*new_acting, *new_depth = gap < -*new_depth ? -gap : *new_depth;
  }
}

/* Items (this rank's, nmine) become the terms of every rank owning one of their nodes, with the contact
 * ghosts (first positions from the items; the exchange refreshes them), the colors, the schedule and
 * the dynamic halo. */
static PetscErrorCode install_items(pbng_contacts *ct, int32_t nmine, const pbng_contact_item *mine, double *x, double t_detect)
{
  const pbng_dmesh *dm = ct->dm;
  pbng_contact_item *items;
  int32_t nitems, nheld;
  int32_t(*held)[2];
  uint8_t *was, *new_node, *left_node, *shared;

  PetscFunctionBeginUser;
  double t0 = MPI_Wtime();
  PetscCall(PetscCalloc4(dm->nowned + 1, &was, dm->nowned + 1, &new_node, dm->nowned + 1, &left_node, dm->nowned + 1, &shared));
  for (int32_t i = 0; i < dm->nowned; ++i) was[i] = ct->adj_start[i + 1] > ct->adj_start[i];
  PetscCall(gather_items(ct, nmine, mine, &nitems, &items));
  PetscCall(collect_ghosts(ct, nitems, items));
  PetscCall(register_ghosts(ct, &nheld, &held));
  for (int32_t k = 0; k < nheld; ++k) shared[held[k][0]] = 1;
  PetscCall(build_terms(ct, nitems, items));
  int64_t new_terms = 0, new_acting = 0;
  double new_depth = 0;
  if (ct->carried) mark_all_new(ct, new_node);
  else {
    PetscCall(mark_changes(ct, was, new_node, left_node));
    count_new_terms(ct, x, &new_terms, &new_acting, &new_depth);
  }
  PetscCall(remember_keys(ct));
  for (int32_t k = 0; k < nitems; ++k) /* initial positions of the contact ghosts (the exchange below refreshes them) */
    for (int j = 0; j < items[k].nnodes; ++j) {
      const int32_t l = any_local(ct, items[k].gid[j], items[k].owner[j]);
      if (l >= dm->nlocal)
        for (int d = 0; d < 3; ++d) x[3 * (int64_t)l + d] = items[k].x[j][d];
    }
  color_contact_ghosts(ct);
  const double t_build0 = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  if (!ct->restoring) PetscCall(pbng_contact_colors_update(ct, new_node, left_node));
  color_contact_ghosts(ct);
  const double t_color = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  int any_local_work = ct->n > 0 || ct->nrecolored > 0, any;
  PetscCallMPI(MPI_Allreduce(&any_local_work, &any, 1, MPI_INT, MPI_MAX, ct->comm));
  ct->dyn_built = any;
  if (any) {
    PetscCall(build_schedule(ct, shared));
    PetscCall(build_dynamic_halo(ct, nheld, held));
    PetscCall(pbng_contacts_exchange(ct, -1, x));
  }
  ++ct->version;
  PetscCall(sum_stats(ct, new_terms, new_acting, new_depth, t_detect, t_color, t_build0 + MPI_Wtime() - t0));
  PetscCall(PetscFree(held));
  PetscCall(PetscFree(items));
  PetscCall(PetscFree4(was, new_node, left_node, shared));
  PetscFunctionReturn(0);
}

/* The deep pairs among the records (sorted by vertex gid, then key, as the records are), for the next detection. */
/* The records' pairs the next detection keeps (a triangle's, the vertex behind it: a vertex carried deeper than d
 * after it is found keeps its triangle) and the deep ones (both sorted by vertex gid, then key, as the records are),
 * and the figures of the deep ones (over the ranks) into the stats. */
static PetscErrorCode remember_deep_pairs(pbng_contacts *ct, int32_t n, const pbng_contact_record *rec)
{
  pbng_contact_detect_stats ds;
  double deepest = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscFree2(ct->deep, ct->keep));
  PetscCall(PetscMalloc2(n + 1, &ct->deep, n + 1, &ct->keep));
  ct->ndeep = ct->nkeep = 0;
  for (int32_t k = 0; k < n; ++k) {
    if (rec[k].kind == PBNG_CONTACT_TRIANGLE && rec[k].gap < 0) ct->keep[ct->nkeep++] = (pbng_contact_deep_pair){rec[k].vertex_gid, rec[k].key};
    if (rec[k].deep) ct->deep[ct->ndeep++] = (pbng_contact_deep_pair){rec[k].vertex_gid, rec[k].key}, deepest = fmax(deepest, -rec[k].gap);
  }
  pbng_contact_detect_get_stats(ct->det, &ds);
  int64_t mine[2] = {ct->ndeep, ds.crossings}, all[2];
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, ct->comm));
  PetscCallMPI(MPI_Allreduce(&deepest, &ct->stats.deepest, 1, MPI_DOUBLE, MPI_MAX, ct->comm));
  ct->stats.deep = all[0], ct->stats.crossings = all[1];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_update(pbng_contacts *ct, double *x)
{
  pbng_contact_record *rec;
  pbng_contact_item *mine;
  int32_t nrec;

  PetscFunctionBeginUser;
  PetscCheck(ct->det, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "contacts: a carried set has no detector (pbng_contacts_install)");
  const double t0 = MPI_Wtime();
  const size_t bytes = sizeof(double) * 3 * (size_t)ct->dm->nlocal;
  const int swept = ct->opt.detect.ccd, crossings = swept && ct->have_detect && !ct->restoring;
  if (crossings) memcpy(ct->x_prev, ct->x_detect, bytes); /* the swept rules' previous positions (docs/contact.md#crossings) */
  if (!ct->restoring) memcpy(ct->x_detect, x, bytes);
  PetscCall(pbng_contact_detect_swept(ct->det, ct->x_detect, crossings ? ct->x_prev : NULL, swept ? ct->nkeep : 0, ct->keep, &nrec, &rec));
  ct->have_detect = 1;
  if (!ct->opt.unilateral) nrec = keep_spring_records(ct, nrec, rec);
  PetscCall(remember_deep_pairs(ct, nrec, rec));
  PetscCall(PetscMalloc1(nrec + 1, &mine));
  for (int32_t k = 0; k < nrec; ++k) item_from_record(ct, &rec[k], x, &mine[k]);
  const double t_detect = MPI_Wtime() - t0;
  PetscCall(install_items(ct, nrec, mine, x, t_detect));
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree(rec));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_install(pbng_contacts *ct, int32_t n, const pbng_contact_item *items, double *x)
{
  PetscFunctionBeginUser;
  PetscCheck(ct->carried, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "contacts: pbng_contacts_install is for carried sets");
  PetscCall(install_items(ct, n, items, x, 0.0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_history_save(const pbng_contacts *ct, pbng_contacts_history *h)
{
  const size_t bytes = sizeof(double) * 3 * (size_t)ct->dm->nlocal;

  PetscFunctionBeginUser;
  memset(h, 0, sizeof(*h));
  PetscCall(PetscMalloc3(ct->nprevious + 1, &h->previous, ct->nkeep + 1, &h->keep, 3 * (size_t)ct->dm->nlocal + 1, &h->x_detect));
  if (ct->nprevious) memcpy(h->previous, ct->previous, sizeof(ct->previous[0]) * (size_t)ct->nprevious);
  if (ct->nkeep) memcpy(h->keep, ct->keep, sizeof(ct->keep[0]) * (size_t)ct->nkeep);
  memcpy(h->x_detect, ct->x_detect, bytes);
  h->nprevious = ct->nprevious, h->nkeep = ct->nkeep, h->have_detect = ct->have_detect;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_history_restore(pbng_contacts *ct, const pbng_contacts_history *h)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(ct->previous));
  PetscCall(PetscMalloc1(h->nprevious + 1, &ct->previous));
  if (h->nprevious) memcpy(ct->previous, h->previous, sizeof(ct->previous[0]) * (size_t)h->nprevious);
  ct->nprevious = h->nprevious;
  PetscCall(PetscFree2(ct->deep, ct->keep));
  PetscCall(PetscMalloc2(1, &ct->deep, h->nkeep + 1, &ct->keep));
  if (h->nkeep) memcpy(ct->keep, h->keep, sizeof(ct->keep[0]) * (size_t)h->nkeep);
  ct->nkeep = h->nkeep, ct->ndeep = 0; /* the next detection finds the deep ones again */
  memcpy(ct->x_detect, h->x_detect, sizeof(double) * 3 * (size_t)ct->dm->nlocal);
  ct->have_detect = h->have_detect;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_history_free(pbng_contacts_history *h)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree3(h->previous, h->keep, h->x_detect));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_gather_deep(const pbng_contacts *ct, int32_t *n, pbng_contact_deep_pair **all)
{
  const int size = ct->dm->size;
  int *count, *displ, mine = 2 * ct->ndeep;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc2(size, &count, size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, count, 1, MPI_INT, ct->comm));
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + count[r];
  PetscCall(PetscMalloc1(displ[size] / 2 + 1, all));
  PetscCallMPI(MPI_Allgatherv(ct->deep, mine, MPI_INT64_T, *all, count, displ, MPI_INT64_T, ct->comm));
  *n = displ[size] / 2; /* each rank's pairs by vertex gid; ranks own disjoint vertices: sorted as a whole below */
  qsort(*all, (size_t)*n, sizeof(pbng_contact_deep_pair), compare_deep);
  PetscCall(PetscFree2(count, displ));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_restore(pbng_contacts *ct, pbng_halo *halo, const int64_t *recolored, int32_t n, int32_t ndeep,
                                     const pbng_contact_deep_pair *deep, double *x)
{
  const pbng_dmesh *dm = ct->dm;

  PetscFunctionBeginUser;
  PetscCall(PetscFree2(ct->deep, ct->keep));
  PetscCall(PetscMalloc2(ndeep + 1, &ct->deep, ndeep + 1, &ct->keep));
  ct->ndeep = ct->nkeep = 0;
  for (int32_t k = 0; k < ndeep; ++k) { /* this rank's owned vertices' deep pairs, in the job's order: kept, they give the records again */
    const int32_t l = pbng_contacts_static_local(ct, deep[k].vertex_gid);
    if (l >= 0 && l < dm->nowned) ct->keep[ct->nkeep++] = deep[k];
  }
  PetscCall(PetscFree2(ct->recolored_gid, ct->recolored_color));
  PetscCall(PetscMalloc2(n + 1, &ct->recolored_gid, n + 1, &ct->recolored_color));
  for (int32_t k = 0; k < n; ++k) ct->recolored_gid[k] = recolored[2 * k], ct->recolored_color[k] = (int32_t)recolored[2 * k + 1];
  ct->nrecolored = n;
  ct->ncolors = dm->ncolors;
  for (int32_t l = 0; l < dm->nlocal; ++l) ct->color[l] = pbng_contact_colors_current(ct, dm->global_node[l], dm->color[l]);
  for (int32_t k = 0; k < n; ++k)
    if (ct->recolored_color[k] + 1 > ct->ncolors) ct->ncolors = ct->recolored_color[k] + 1;
  if (halo) PetscCall(pbng_halo_exchange(halo, -1, ct->x_detect)); /* the detection's ghost positions (held ones move alike everywhere) */
  ct->restoring = 1;
  const PetscErrorCode ierr = pbng_contacts_update(ct, x);
  ct->restoring = 0;
  ct->have_detect = 1;
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* ---- exchange and queries ------------------------------------------------------------------------- */

PetscErrorCode pbng_contacts_exchange_begin(pbng_contacts *ct, int c, const double *x)
{
  PetscFunctionBeginUser;
  if (ct->dyn_built && c < ct->dyn.ncolors) PetscCall(pbng_halo_begin(&ct->dyn, c, x));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_exchange_end(pbng_contacts *ct, int c, double *x)
{
  PetscFunctionBeginUser;
  if (ct->dyn_built && c < ct->dyn.ncolors) PetscCall(pbng_halo_end(&ct->dyn, c, x));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contacts_exchange(pbng_contacts *ct, int c, double *x)
{
  PetscFunctionBeginUser;
  if (ct->dyn_built) PetscCall(pbng_halo_exchange(&ct->dyn, c, x));
  PetscFunctionReturn(0);
}

void pbng_contacts_mark_nodes(const pbng_contacts *ct, uint8_t *in_contact)
{
  memset(in_contact, 0, (size_t)(ct->dm->nlocal + ct->nghost));
  for (int32_t k = 0; k < ct->n; ++k)
    for (int j = 0; j < ct->term[k].nnodes; ++j) in_contact[ct->term[k].node[j]] = 1;
}
