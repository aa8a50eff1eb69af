/* Unit tests of the parallel partitioning (src/parallel/distributed_partition.c and the modules it runs): on any
 * number of processes, every generated grid below is cut into parts by PT-Scotch with no process holding the
 * whole mesh, and each process's pieces are compared, field by field and bit by bit, with the serial path's
 * pieces cut from the whole mesh (pbng_submesh_extract) with the serial colorings (pbng_color_nodes, and the PBD/XPBD
 * element colors of pbng_constraint_colors_compute: pbng_color_elements; with weak constraints their block and PBD/XPBD
 * colors too) and the same parts. Weak constraints (interpolated points, anisotropic ones, a chain zigzagging across
 * every slice, given to the slices in uneven shares in two additions, and read from a file in shares as the serial
 * reader reads it): the nodes of every connected set of them in one part, each piece's constraints those with an owned
 * node, in global order. The stacked blocks of two_blocks_hanging (bound, and unbound at a coarse level's gap) in slices
 * too. Also: every node owned by exactly one part, every element in some piece, the parts' sizes within
 * PT-Scotch's balance, the same parts on a second run, the distributed slices equal to the serial grid, node
 * sets given to the slices in shares (68 of them: several membership words per node) restricted to the pieces as
 * the serial path restricts them, and the errors (more parts than nodes, kinds not generated). Grids of tet10 and tet20 (unused grid points dropped) too. Run on 1 or more processes (test_ptscotch.sh:
 * 1, 2, 3). */
#include "mesh/boundary.h"
#include "mesh/generate.h"
#include "parallel/distributed_partition.h"
#include "parallel/halo.h"
#include "io/weak_file_shares.h"
#include "parallel/slice_sets.h"
#include "parallel/slice_weak.h"
#include "test_check.h"
#include <stdlib.h>
#include <sys/stat.h>

/* The grid's whole mesh, as the serial path makes it: pbng_generate_grid's, or the stacked blocks'. */
static PetscErrorCode whole_grid(const pbng_grid *g, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  if (g->stacked) PetscCall(pbng_generate_stacked_blocks((int)g->n[0], g->gap, g->bind_k, mesh));
  else PetscCall(pbng_generate_grid(g->n, g->lo, g->hi, &g->el, mesh));
  PetscFunctionReturn(0);
}

/* The part of every node of the whole mesh from the pieces' owned nodes (each counted: a node owned twice or
 * never is a failure). */
static PetscErrorCode gather_parts(MPI_Comm comm, const pbng_parts *pp, int32_t *part)
{
  int64_t n = 0, k = 0, *mine, *all;
  int total;

  PetscFunctionBeginUser;
  for (int q = 0; q < pp->nlocal; ++q) n += pp->sub[q].nowned;
  PetscCall(PetscMalloc1(2 * n + 1, &mine));
  for (int q = 0; q < pp->nlocal; ++q)
    for (int32_t i = 0; i < pp->sub[q].nowned; ++i, ++k) mine[2 * k] = pp->sub[q].global_node[i], mine[2 * k + 1] = pp->first + q;
  PetscCall(pbng_allgather_items(comm, 2 * sizeof(int64_t), (int)n, mine, &total, (void **)&all));
  for (int64_t i = 0; i < pp->nnodes; ++i) part[i] = -1;
  int twice = 0;
  for (int j = 0; j < total; ++j) {
    const int64_t id = all[2 * j];
    if (id < 0 || id >= pp->nnodes) continue;
    twice += part[id] >= 0;
    part[id] = (int32_t)all[2 * j + 1];
  }
  int never = 0;
  for (int64_t i = 0; i < pp->nnodes; ++i) never += part[i] < 0;
  check(total == pp->nnodes && !twice && !never, "every node owned by exactly one part", twice, never);
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Two weak constraints alike, field by field (their padding aside). */
static int same_constraint(const pbng_weak_constraint *x, const pbng_weak_constraint *y)
{
  int same = x->nnodes == y->nnodes && x->unilateral == y->unilateral && x->k_n == y->k_n && x->k_t == y->k_t;
  for (int j = 0; j < x->nnodes && same; ++j) same = x->node[j] == y->node[j] && x->a[j] == y->a[j];
  same = same && !memcmp(x->K, y->K, sizeof(x->K)) && !memcmp(x->n, y->n, sizeof(x->n)) && !memcmp(x->target, y->target, sizeof(x->target));
  return same;
}

/* The piece's weak constraints are ref's: the same ones (global ids, nodes in local numbering, weights, stiffness). */
static void compare_weak(const char *what, const pbng_submesh *a, const pbng_submesh *ref)
{
  char msg[1024];
  const pbng_mesh *m = &a->mesh, *r = &ref->mesh;
  int same = m->nweak == r->nweak && a->nglobal_weak == ref->nglobal_weak && !memcmp(a->global_weak, ref->global_weak, sizeof(int64_t) * m->nweak);
  for (int64_t c = 0; c < m->nweak && same; ++c) same = same_constraint(&m->weak[c], &r->weak[c]);
  snprintf(msg, sizeof(msg), "%s: weak constraints (global ids, nodes, weights, stiffness)", what);
  check(same, msg, (double)m->nweak, (double)r->nweak);
}

/* Piece q of this process equals the serial extraction ref, bit by bit. */
static void compare_piece(const char *what, const pbng_submesh *a, const pbng_submesh *ref)
{
  char msg[1024];
  const pbng_mesh *m = &a->mesh, *r = &ref->mesh;
  const int same_sizes = m->nnodes == r->nnodes && m->nelems == r->nelems && a->nowned == ref->nowned && m->nen == r->nen;
  snprintf(msg, sizeof(msg), "%s: node, element and owned counts", what);
  check(same_sizes, msg, (double)m->nnodes, (double)r->nnodes);
  if (!same_sizes) return;
  snprintf(msg, sizeof(msg), "%s: global counts, colors, kind", what);
  check(a->nglobal_nodes == ref->nglobal_nodes && a->nglobal_elems == ref->nglobal_elems && a->ncolors == ref->ncolors && m->etype == r->etype, msg,
        a->ncolors, ref->ncolors);
  snprintf(msg, sizeof(msg), "%s: rest positions (bitwise)", what);
  check(!memcmp(m->X, r->X, sizeof(double) * 3 * m->nnodes), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: global node ids", what);
  check(!memcmp(a->global_node, ref->global_node, sizeof(int64_t) * m->nnodes), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: owners (every ghost's owner owns it)", what);
  check(!memcmp(a->owner, ref->owner, sizeof(int32_t) * m->nnodes), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: node colors = pbng_color_nodes's", what);
  check(!memcmp(a->color, ref->color, sizeof(int32_t) * m->nnodes), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: global element ids", what);
  check(!memcmp(a->global_elem, ref->global_elem, sizeof(int64_t) * m->nelems), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: element rows", what);
  check(!memcmp(m->elems, r->elems, sizeof(int32_t) * m->nen * m->nelems), msg, 0, 0);
  int same_sets = m->nsets == r->nsets;
  for (int s = 0; s < m->nsets && same_sets; ++s)
    same_sets = !strcmp(m->sets[s].name, r->sets[s].name) && m->sets[s].count == r->sets[s].count &&
                !memcmp(m->sets[s].nodes, r->sets[s].nodes, sizeof(int32_t) * m->sets[s].count);
  snprintf(msg, sizeof(msg), "%s: node sets (names, order, members)", what);
  check(same_sets, msg, m->nsets, r->nsets);
  compare_weak(what, a, ref);
  snprintf(msg, sizeof(msg), "%s: constraint color counts (element, weak, block)", what);
  check(a->cc.elem && a->cc.weak && a->cc.block && a->cc.nelem_colors == ref->cc.nelem_colors && a->cc.nweak_colors == ref->cc.nweak_colors &&
          a->cc.nblock_colors == ref->cc.nblock_colors,
        msg, a->cc.nelem_colors, ref->cc.nelem_colors);
  if (!a->cc.elem) return;
  snprintf(msg, sizeof(msg), "%s: element colors = pbng_color_elements's", what);
  check(!memcmp(a->cc.elem, ref->cc.elem, sizeof(int32_t) * m->nelems), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%s: weak-constraint block and PBD/XPBD colors = pbng_color_weak_blocks's and pbng_color_weak_constraints's", what);
  check(a->cc.weak && a->cc.block && !memcmp(a->cc.block, ref->cc.block, sizeof(int32_t) * m->nweak) &&
          !memcmp(a->cc.weak, ref->cc.weak, sizeof(int32_t) * m->nweak),
        msg, 0, 0);
}

/* Every element lies in some piece. */
static PetscErrorCode check_elements_covered(MPI_Comm comm, const char *what, const pbng_parts *pp)
{
  int *seen;
  char msg[1024];

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(pp->nelems, &seen));
  for (int q = 0; q < pp->nlocal; ++q)
    for (int64_t e = 0; e < pp->sub[q].mesh.nelems; ++e) seen[pp->sub[q].global_elem[e]] = 1;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, seen, (int)pp->nelems, MPI_INT, MPI_MAX, comm));
  int64_t missing = 0;
  for (int64_t e = 0; e < pp->nelems; ++e) missing += !seen[e];
  snprintf(msg, sizeof(msg), "%s: every element in some piece", what);
  check(missing == 0, msg, (double)missing, 0);
  PetscCall(PetscFree(seen));
  PetscFunctionReturn(0);
}

/* The parts' weights (incident elements + 1 per node, as PT-Scotch balances them) within 10 % of the mean:
 * PT-Scotch's tolerance is 1 %, the check leaves room for small graphs. */
static void check_balance(const char *what, const pbng_mesh *mesh, const int32_t *part, int nparts)
{
  int64_t *w, total = 0, most = 0;
  char msg[1024];
  PetscCalloc1(nparts, &w);
  for (int64_t e = 0; e < mesh->nelems; ++e)
    for (int a = 0; a < mesh->nen; ++a) ++w[part[mesh->elems[e * mesh->nen + a]]];
  for (int64_t i = 0; i < mesh->nnodes; ++i) ++w[part[i]];
  for (int p = 0; p < nparts; ++p) total += w[p], most = PetscMax(most, w[p]);
  snprintf(msg, sizeof(msg), "%s: largest part's weight / mean <= 1.1", what);
  check(most * nparts <= 1.1 * total, msg, (double)most * nparts / total, 1.1);
  PetscFree(w);
}

/* The nodes of every weak constraint in one part (so every set connected through them: pbng_partition_nodes's rule). */
static void check_weak_together(const char *what, const pbng_mesh *mesh, const int32_t *part)
{
  char msg[1024];
  int64_t split = 0;
  for (int64_t c = 0; c < mesh->nweak; ++c)
    for (int j = 1; j < mesh->weak[c].nnodes; ++j) split += part[mesh->weak[c].node[j]] != part[mesh->weak[c].node[0]];
  snprintf(msg, sizeof(msg), "%s: every weak constraint's nodes in one part", what);
  check(split == 0, msg, (double)split, 0);
}

/* The pieces pp (of the whole mesh `mesh`, cut into nparts parts) against the serial path's with the same parts. */
static PetscErrorCode compare_with_serial(MPI_Comm comm, const char *what, const pbng_parts *pp, const pbng_mesh *mesh, int nparts)
{
  pbng_node_elements adj;
  pbng_constraint_colors cc;
  int32_t *color, *part;
  int ncolors;

  PetscFunctionBeginUser;
  check(pp->nnodes == mesh->nnodes && pp->nelems == mesh->nelems && pp->etype == mesh->etype, "the global counts", (double)pp->nnodes,
        (double)mesh->nnodes);
  check(pp->extent == pbng_mesh_extent(mesh), "the extent equals pbng_mesh_extent's", pp->extent, pbng_mesh_extent(mesh));
  PetscCall(PetscMalloc2(mesh->nnodes, &color, mesh->nnodes, &part));
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, &ncolors));
  PetscCall(pbng_constraint_colors_compute(mesh, &adj, PETSC_TRUE, &cc));
  PetscCall(pbng_node_elements_destroy(&adj));
  check(pp->ncolors == ncolors, "the number of colors", pp->ncolors, ncolors);
  check(pp->nelem_colors == cc.nelem_colors, "the number of element colors", pp->nelem_colors, cc.nelem_colors);
  PetscCall(gather_parts(comm, pp, part));
  if (mesh->nweak == 0) check_balance(what, mesh, part, nparts); /* else whole sets of nodes moved to one part: not balanced alike */
  check_weak_together(what, mesh, part);
  for (int q = 0; q < pp->nlocal; ++q) {
    pbng_submesh ref;
    char piece[700];
    snprintf(piece, sizeof(piece), "%s, part %d", what, pp->first + q);
    PetscCall(pbng_submesh_extract(mesh, color, ncolors, &cc, part, pp->first + q, &ref));
    compare_piece(piece, &pp->sub[q], &ref);
    PetscCall(pbng_submesh_destroy(&ref));
  }
  PetscCall(check_elements_covered(comm, what, pp));
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_constraint_colors_destroy(&cc));
  PetscFunctionReturn(0);
}

/* The grid partitioned twice into nparts parts, checked against the serial path. */
static PetscErrorCode check_grid(MPI_Comm comm, const pbng_grid *g, int nparts)
{
  pbng_parts pp, again;
  pbng_partition_times t;
  pbng_mesh mesh;
  char what[640];

  PetscFunctionBeginUser;
  PetscCall(pbng_partition_grid_ptscotch(comm, g, nparts, 1, &pp, &t));
  PetscCall(whole_grid(g, &mesh));
  snprintf(what, sizeof(what), "%.500s (%s) in %d parts", g->source, mesh.etype->name, nparts);
  PetscCall(compare_with_serial(comm, what, &pp, &mesh, nparts));
  /* deterministic: the same pieces on a second run, here without the element colors (not asked for: none) */
  PetscCall(pbng_partition_grid_ptscotch(comm, g, nparts, 0, &again, &t));
  int same = again.nlocal == pp.nlocal && again.nelem_colors == 0;
  for (int q = 0; q < pp.nlocal && same; ++q)
    same = again.sub[q].nowned == pp.sub[q].nowned && again.sub[q].mesh.nnodes == pp.sub[q].mesh.nnodes &&
           !memcmp(again.sub[q].global_node, pp.sub[q].global_node, sizeof(int64_t) * pp.sub[q].mesh.nnodes) && !again.sub[q].cc.elem &&
           again.sub[q].cc.nelem_colors == 0;
  snprintf(what + strlen(what), sizeof(what) - strlen(what), ": the same parts on a second run, no element colors unasked");
  check(same, what, 0, 0);
  PetscCall(pbng_parts_destroy(&again));
  PetscCall(pbng_parts_destroy(&pp));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

/* The test's node sets on the whole mesh: the face x = 0, every 7th node, an empty one and 65 sets splitting the
 * nodes by id mod 65 (68 sets: two membership words per node). */
static PetscErrorCode add_test_sets(pbng_mesh *mesh)
{
  int32_t *ids;
  int64_t n;
  char name[64];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(mesh->nnodes, &ids));
  n = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    if (mesh->X[3 * i] == 0) ids[n++] = (int32_t)i;
  PetscCall(pbng_mesh_add_node_set(mesh, "left", n, ids));
  n = 0;
  for (int64_t i = 3; i < mesh->nnodes; i += 7) ids[n++] = (int32_t)i;
  PetscCall(pbng_mesh_add_node_set(mesh, "seventh", n, ids));
  PetscCall(pbng_mesh_add_node_set(mesh, "empty", 0, ids));
  for (int k = 0; k < 65; ++k) {
    n = 0;
    for (int64_t i = k; i < mesh->nnodes; i += 65) ids[n++] = (int32_t)i;
    snprintf(name, sizeof(name), "mod65_%02d", k);
    PetscCall(pbng_mesh_add_node_set(mesh, name, n, ids));
  }
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}

/* The grid's slice of this process (the ranges pbng_partition_grid_ptscotch takes) with the mesh's sets, each process
 * giving a share of every set's members (process r: members [K r / P, K (r + 1) / P), most for other slices). */
static PetscErrorCode slice_with_sets(MPI_Comm comm, const pbng_grid *g, const pbng_mesh *mesh, pbng_mesh_slice *s)
{
  int rank, size;
  int64_t total = 0, n = 0, *pairs;
  char(*names)[64];

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscCall(pbng_grid_slice_of_process(g, rank, size, s));
  PetscCall(PetscMalloc1(mesh->nsets, &names));
  for (int t = 0; t < mesh->nsets; ++t) memcpy(names[t], mesh->sets[t].name, sizeof(names[t])), total += mesh->sets[t].count;
  PetscCall(pbng_mesh_slice_name_sets(s, mesh->nsets, (const char(*)[64])names));
  PetscCall(PetscMalloc1(2 * total + 1, &pairs));
  for (int t = 0; t < mesh->nsets; ++t) {
    const int64_t K = mesh->sets[t].count;
    for (int64_t k = K * rank / size; k < K * (rank + 1) / size; ++k, ++n) pairs[2 * n] = t, pairs[2 * n + 1] = mesh->sets[t].nodes[k];
  }
  PetscCall(pbng_slice_sets_add_members(comm, s, n, pairs));
  PetscCall(PetscFree(pairs));
  PetscCall(PetscFree(names));
  PetscFunctionReturn(0);
}

/* The grid with the test's node sets cut into nparts parts from slices: the pieces' sets are the serial path's. */
static PetscErrorCode check_grid_sets(MPI_Comm comm, const pbng_grid *g, int nparts)
{
  pbng_parts pp;
  pbng_partition_times t;
  pbng_mesh mesh;
  pbng_mesh_slice s;
  char what[640];

  PetscFunctionBeginUser;
  PetscCall(whole_grid(g, &mesh));
  PetscCall(add_test_sets(&mesh));
  PetscCall(slice_with_sets(comm, g, &mesh, &s));
  PetscCall(pbng_partition_slice_ptscotch(comm, &s, nparts, 1, &pp, &t));
  snprintf(what, sizeof(what), "%.500s (%s) with %d node sets in %d parts", g->source, mesh.etype->name, mesh.nsets, nparts);
  check(pp.nsets == mesh.nsets, "the parts name every set", pp.nsets, mesh.nsets);
  PetscCall(compare_with_serial(comm, what, &pp, &mesh, nparts));
  PetscCall(pbng_parts_destroy(&pp));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

/* One slice of the grid equals the serial mesh's rows and positions there. */
static PetscErrorCode check_slice(const pbng_grid *g, const pbng_mesh *mesh, int64_t node_begin, int64_t node_end, int64_t cell_begin,
                                  int64_t cell_end)
{
  pbng_mesh_slice s;
  char msg[700];

  PetscFunctionBeginUser;
  PetscCall(pbng_grid_slice_create(g, node_begin, node_end, cell_begin, cell_end, &s));
  snprintf(msg, sizeof(msg), "%.500s: the positions of slice nodes %" PRId64 "..%" PRId64 " are the grid's", g->source, node_begin, node_end);
  check(!memcmp(s.X, &mesh->X[3 * s.node_begin], sizeof(double) * 3 * (s.node_end - s.node_begin)), msg, 0, 0);
  snprintf(msg, sizeof(msg), "%.500s: the rows of slice cells %" PRId64 "..%" PRId64 " are the grid's", g->source, cell_begin, cell_end);
  check(!memcmp(s.elems, &mesh->elems[s.elem_begin * s.nen], sizeof(int32_t) * s.nen * (s.elem_end - s.elem_begin)), msg, 0, 0);
  PetscCall(pbng_mesh_slice_destroy(&s));
  PetscFunctionReturn(0);
}

/* Line k of the test's weak-constraint file for a mesh of n nodes: pairs of nodes (k < 30), a node against an
 * interpolated point, anisotropic (k < 40), then a chain zigzagging over the whole id range, so across every slice (its
 * 13 nodes one connected set); "" when the line would join fewer than two nodes. */
static void weak_line(int64_t n, int k, char *buf, size_t len)
{
  if (k < 30) {
    const int64_t a = (37 * k + 5) % n, b = (91 * k + 13) % n;
    if (a == b) buf[0] = 0;
    else snprintf(buf, len, "1 %" PRId64 " 1.0   1 %" PRId64 " 1   %g %g", a, b, 1e3 * (k + 1), 1e3 * (k + 1));
  } else if (k < 40)
    snprintf(buf, len, "1 %" PRId64 " 1   4 %" PRId64 " 0.25 %" PRId64 " 0.25 %" PRId64 " 0.25 %" PRId64 " 0.25   60 5   0 %d 1", (53 * k + 7) % n,
             (11 * k + 1) % n, (11 * k + 4) % n, (11 * k + 8) % n, (11 * k + 12) % n, k % 3);
  else {
    const int i = k - 40;
    const int64_t a = i % 2 ? n - 1 - 7 * i : 7 * i, b = (i + 1) % 2 ? n - 1 - 7 * (i + 1) : 7 * (i + 1);
    if (a == b || a < 0 || b < 0 || a >= n || b >= n) buf[0] = 0;
    else snprintf(buf, len, "1 %" PRId64 " 1   1 %" PRId64 " 1   1e8 1e8", a, b);
  }
}

/* The test's weak-constraint file for a mesh of n nodes (rank 0 writes it): comments, blank lines and a CRLF line
 * around the 52 lines, so that the shares' line numbers are tested. */
static PetscErrorCode write_weak_file(MPI_Comm comm, int64_t n, char *path, size_t len)
{
  int rank, size;
  char line[256];

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const char *tmp = getenv("PBNG_TEST_TMP");
  snprintf(path, len, "%s/test_ptscotch_weak_np%d_n%" PRId64 ".txt", tmp && tmp[0] ? tmp : "/tmp", size, n);
  if (rank == 0) {
    (void)mkdir(tmp && tmp[0] ? tmp : "/tmp", 0777);
    FILE *f = fopen(path, "w");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
    fprintf(f, "# the test's constraints\n\n   \npbng-weak-constraints 1   # the header\n");
    for (int k = 0; k < 52; ++k) {
      weak_line(n, k, line, sizeof(line));
      fprintf(f, "%s%s", line, k == 17 ? " # a comment\r\n" : "\n");
      if (k % 9 == 4) fprintf(f, "\n# between the lines\n");
    }
    fclose(f);
  }
  MPI_Barrier(comm);
  PetscFunctionReturn(0);
}

/* The slice's constraints are the whole mesh's of its range. */
static void check_slice_weak(const char *what, const pbng_mesh_slice *s, const pbng_mesh *mesh)
{
  char msg[1024];
  int same = s->nglobal_weak == mesh->nweak && s->weak_begin <= s->weak_end && s->weak_end <= mesh->nweak;
  for (int64_t c = s->weak_begin; c < s->weak_end && same; ++c) same = same_constraint(&s->weak[c - s->weak_begin], &mesh->weak[c]);
  snprintf(msg, sizeof(msg), "%s: the slice's weak constraints are the serial mesh's of its range", what);
  check(same, msg, (double)s->nglobal_weak, (double)mesh->nweak);
}

/* The whole grid with the test's weak constraints, read from its file (written at path[len]). */
static PetscErrorCode mesh_with_weak_file(MPI_Comm comm, const pbng_grid *g, pbng_mesh *mesh, char *path, size_t len)
{
  PetscFunctionBeginUser;
  PetscCall(whole_grid(g, mesh));
  PetscCall(write_weak_file(comm, mesh->nnodes, path, len));
  PetscCall(pbng_mesh_read_weak_constraints(path, mesh));
  PetscFunctionReturn(0);
}

/* This process's slice of the grid with the test's weak constraints (the whole mesh's, from the file at path): the file
 * read in shares, or (additions) the constraints given in two additions of uneven shares, the first 20 shared out, the
 * rest all by the last process. */
static PetscErrorCode weak_slice(MPI_Comm comm, const pbng_grid *g, const pbng_mesh *mesh, const char *path, int additions, pbng_mesh_slice *s)
{
  int rank, size;
  const int64_t W1 = 20;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscCall(pbng_grid_slice_of_process(g, rank, size, s));
  if (!additions) PetscFunctionReturn(pbng_slice_read_weak_file(comm, path, s));
  PetscCall(pbng_slice_add_weak(comm, s, W1 * (rank + 1) / size - W1 * rank / size, &mesh->weak[W1 * rank / size]));
  PetscCall(pbng_slice_add_weak(comm, s, rank == size - 1 ? mesh->nweak - W1 : 0, &mesh->weak[W1]));
  PetscFunctionReturn(0);
}

/* The grid with the test's weak constraints (weak_slice) cut into nparts parts: the slices hold the serial mesh's
 * constraints, the pieces are the serial path's; without the PBD/XPBD colors, the same block colors and no others. */
static PetscErrorCode check_grid_weak(MPI_Comm comm, const pbng_grid *g, int nparts, int additions)
{
  pbng_parts pp, plain;
  pbng_partition_times t;
  pbng_mesh mesh;
  pbng_mesh_slice s;
  char what[640], path[PETSC_MAX_PATH_LEN];

  PetscFunctionBeginUser;
  PetscCall(mesh_with_weak_file(comm, g, &mesh, path, sizeof(path)));
  snprintf(what, sizeof(what), "%.500s (%s) with %" PRId64 " weak constraints %s in %d parts", g->source, mesh.etype->name, mesh.nweak,
           additions ? "in two additions" : "from a file", nparts);
  for (int pass = 0; pass < 2; ++pass) {
    PetscCall(weak_slice(comm, g, &mesh, path, additions, &s));
    if (pass == 0) check_slice_weak(what, &s, &mesh);
    PetscCall(pbng_partition_slice_ptscotch(comm, &s, nparts, pass == 0, pass == 0 ? &pp : &plain, &t));
  }
  PetscCall(compare_with_serial(comm, what, &pp, &mesh, nparts));
  int same = plain.nlocal == pp.nlocal && plain.nblock_colors == pp.nblock_colors && plain.nelem_colors == 0;
  for (int q = 0; q < pp.nlocal && same; ++q)
    same = !plain.sub[q].cc.elem && !plain.sub[q].cc.weak && plain.sub[q].cc.block && plain.sub[q].mesh.nweak == pp.sub[q].mesh.nweak &&
           !memcmp(plain.sub[q].cc.block, pp.sub[q].cc.block, sizeof(int32_t) * pp.sub[q].mesh.nweak);
  snprintf(what + strlen(what), sizeof(what) - strlen(what), ": without the PBD/XPBD colors, the same block colors and none else");
  check(same, what, 0, 0);
  PetscCall(pbng_parts_destroy(&plain));
  PetscCall(pbng_parts_destroy(&pp));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

/* Slices of a grid, cut anywhere (the whole grid, sevenths, an odd cut, the last node and cell), are the serial grid's
 * rows and positions. */
static PetscErrorCode check_slices(const pbng_grid *g)
{
  pbng_mesh mesh;
  int64_t nnodes, nelems, ncells;

  PetscFunctionBeginUser;
  PetscCall(whole_grid(g, &mesh));
  pbng_grid_counts(g, &nnodes, &nelems, &ncells);
  check(nnodes == mesh.nnodes && nelems == mesh.nelems, "pbng_grid_counts", (double)nnodes, (double)mesh.nnodes);
  if (nnodes != mesh.nnodes || nelems != mesh.nelems) PetscFunctionReturn(pbng_mesh_destroy(&mesh));
  for (int k = 0; k < 7; ++k) PetscCall(check_slice(g, &mesh, nnodes * k / 7, nnodes * (k + 1) / 7, ncells * k / 7, ncells * (k + 1) / 7));
  PetscCall(check_slice(g, &mesh, 0, nnodes, 0, ncells));
  PetscCall(check_slice(g, &mesh, nnodes / 3, nnodes - 5, ncells / 4, ncells - 1));
  PetscCall(check_slice(g, &mesh, nnodes - 1, nnodes, ncells - 1, ncells));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

static pbng_grid grid(int64_t nx, int64_t ny, int64_t nz, pbng_element_kind kind, pbng_tet_split split, const char *name)
{
  pbng_grid g = {.n = {nx, ny, nz}, .lo = {0, 0, 0}, .hi = {1, 0.5 + 0.1 * ny, 2}, .el = {kind, split}};
  snprintf(g.source, sizeof(g.source), "%s", name);
  return g;
}

/* An error expected from every process, naming what. */
static void check_error(PetscErrorCode ierr, const char *what)
{
  char msg[1024];
  snprintf(msg, sizeof(msg), "an error: %s", what);
  check(ierr != 0, msg, ierr, 0);
}

int main(int argc, char **argv)
{
  int size;
  MPI_Comm comm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  comm = PETSC_COMM_WORLD;
  MPI_Comm_size(comm, &size);
  const pbng_grid res8 = grid(8, 8, 8, PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE, "Res-8 box");
  const pbng_grid aniso = grid(9, 5, 7, PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_SIX, "9x5x7 box, six tetrahedra per cell");
  const pbng_grid hex = grid(5, 4, 6, PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE, "5x4x6 hex8 box");
  const pbng_grid hex27 = grid(4, 3, 4, PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE, "4x3x4 hex27 box");
  PetscCall(check_slices(&res8));
  PetscCall(check_slices(&aniso));
  PetscCall(check_slices(&hex27));
  /* tet10 and tet20 leave grid points unused (five per cell: tet10 the cell centres, tet20 half the interior
   * points; six: none): odd and even cell counts, both splits */
  const pbng_grid ho[] = {grid(4, 3, 5, PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_FIVE, "4x3x5 tet10 box"),
                          grid(5, 4, 3, PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_SIX, "5x4x3 tet10 box, six per cell"),
                          grid(3, 5, 4, PBNG_ELEMENT_TET20, PBNG_TET_SPLIT_FIVE, "3x5x4 tet20 box"),
                          grid(4, 4, 2, PBNG_ELEMENT_TET20, PBNG_TET_SPLIT_SIX, "4x4x2 tet20 box, six per cell")};
  for (size_t k = 0; k < sizeof(ho) / sizeof(ho[0]); ++k) PetscCall(check_slices(&ho[k]));
  /* the stacked blocks of two_blocks_hanging: two boxes numbered one after the other, their node sets and bindings */
  const pbng_grid blocks = {.n = {5, 5, 5}, .el = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE}, .stacked = 1, .bind_k = 1e8, .source = "stacked blocks"};
  const pbng_grid coarse_blocks = {.n = {3, 3, 3}, .el = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE}, .stacked = 1, .gap = 0.25, .source = "unbound"};
  PetscCall(check_slices(&blocks));
  PetscCall(check_grid(comm, &blocks, size + 1));
  PetscCall(check_grid(comm, &coarse_blocks, size));
  PetscCall(check_grid(comm, &res8, size));
  PetscCall(check_grid(comm, &res8, size + 2)); /* more parts than processes */
  PetscCall(check_grid(comm, &aniso, 3));
  PetscCall(check_grid(comm, &hex, 2));
  PetscCall(check_grid(comm, &hex27, size));
  PetscCall(check_grid(comm, &ho[0], size + 1));
  PetscCall(check_grid(comm, &ho[1], 2));
  PetscCall(check_grid(comm, &ho[2], size));
  PetscCall(check_grid(comm, &ho[3], 3));
  if (size > 1) PetscCall(check_grid(comm, &res8, 1)); /* fewer parts than processes: some hold none */
  PetscCall(check_grid_sets(comm, &res8, size + 1));
  PetscCall(check_grid_sets(comm, &hex, 2));
  PetscCall(check_grid_sets(comm, &ho[0], 2));
  PetscCall(check_grid_weak(comm, &res8, size + 1, 0));
  PetscCall(check_grid_weak(comm, &hex, 2, 0));
  PetscCall(check_grid_weak(comm, &aniso, size, 1));
  /* errors, on every process alike */
  pbng_parts pp;
  pbng_partition_times t;
  const pbng_grid tiny = grid(2, 2, 2, PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE, "Res-2 box");
  const pbng_grid prisms = grid(3, 3, 3, PBNG_ELEMENT_PRISM6, PBNG_TET_SPLIT_FIVE, "Res-3 prism6 box");
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  check_error(pbng_partition_grid_ptscotch(comm, &tiny, 9, 0, &pp, &t), "8 nodes in 9 parts");
  check_error(pbng_partition_grid_ptscotch(comm, &prisms, size, 0, &pp, &t), "slices of prism6 grids (not generated)");
  PetscCall(PetscPopErrorHandler());
  int all;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, comm);
  PetscCall(PetscPrintf(comm, "test_ptscotch: %d checks, %d failures\n", checks, all));
  PetscCall(PetscFinalize());
  return all ? 1 : 0;
}
