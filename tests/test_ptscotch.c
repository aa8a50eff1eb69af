/* Unit tests of the parallel partitioning (src/parallel/distributed_partition.c and the modules it runs): on any
 * number of processes, every generated grid below is cut into parts by PT-Scotch with no process holding the
 * whole mesh, and each process's pieces are compared, field by field and bit by bit, with the serial path's
 * pieces cut from the whole mesh (pbng_submesh_extract) with the serial colorings (pbng_color_nodes, and the PBD/XPBD
 * element colors of pbng_constraint_colors_compute: pbng_color_elements) and the same parts. Also: every node owned by exactly one part, every element in some piece, the parts' sizes within
 * PT-Scotch's balance, the same parts on a second run, the distributed slices equal to the serial grid, node
 * sets given to the slices in shares (68 of them: several membership words per node) restricted to the pieces as
 * the serial path restricts them, and the errors (more parts than nodes, kinds not generated). Grids of tet10 and tet20 (unused grid points dropped) too. Run on 1 or more processes (test_ptscotch.sh:
 * 1, 2, 3). */
#include "mesh/boundary.h"
#include "parallel/distributed_partition.h"
#include "parallel/halo.h"
#include "parallel/slice_sets.h"
#include "test_check.h"

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
  snprintf(msg, sizeof(msg), "%s: no weak constraints", what);
  check(m->nweak == 0 && r->nweak == 0, msg, (double)m->nweak, 0);
  snprintf(msg, sizeof(msg), "%s: constraint color counts (element, weak, block)", what);
  check(a->cc.elem && a->cc.weak && a->cc.block && a->cc.nelem_colors == ref->cc.nelem_colors && a->cc.nweak_colors == ref->cc.nweak_colors &&
          a->cc.nblock_colors == ref->cc.nblock_colors,
        msg, a->cc.nelem_colors, ref->cc.nelem_colors);
  if (!a->cc.elem) return;
  snprintf(msg, sizeof(msg), "%s: element colors = pbng_color_elements's", what);
  check(!memcmp(a->cc.elem, ref->cc.elem, sizeof(int32_t) * m->nelems), msg, 0, 0);
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
  check_balance(what, mesh, part, nparts);
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
  PetscCall(pbng_generate_grid(g->n, g->lo, g->hi, &g->el, &mesh));
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
  int64_t nnodes, nelems, ncells, total = 0, n = 0, *pairs;
  char(*names)[64];

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  pbng_grid_counts(g, &nnodes, &nelems, &ncells);
  PetscCall(pbng_grid_slice_create(g, nnodes * rank / size, nnodes * (rank + 1) / size, ncells * rank / size, ncells * (rank + 1) / size, s));
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
  PetscCall(pbng_generate_grid(g->n, g->lo, g->hi, &g->el, &mesh));
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

/* Slices of a grid, cut anywhere (the whole grid, sevenths, an odd cut, the last node and cell), are the serial grid's
 * rows and positions. */
static PetscErrorCode check_slices(const pbng_grid *g)
{
  pbng_mesh mesh;
  int64_t nnodes, nelems, ncells;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(g->n, g->lo, g->hi, &g->el, &mesh));
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
