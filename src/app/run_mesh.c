/* The run's mesh: generated or read (on rank 0, or each rank its part of a partitioned file), cut
 * into the ranks' subdomains, and written to the output's /mesh group. */
#include "app/run_state.h"
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/sorted_ids.h"
#include "io/mesh_h5.h"
#include "io/partfile.h"
#include "mesh/sheet_groups.h"
#include "io/weak_rows.h"
#include "parallel/coloring.h"
#include "parallel/distributed_partition.h"

PetscErrorCode run_agree_on_rank0(MPI_Comm comm, PetscErrorCode ierr)
{
  int rank, code = (int)ierr;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, 0, comm));
  if (rank == 0) PetscCall(ierr);
  PetscCheck(code == 0, PETSC_COMM_SELF, PBNG_ERR_ON_RANK0, "setup failed on rank 0");
  PetscFunctionReturn(0);
}

/* Rank 0 generates or reads the mesh (the others keep an empty one); every rank gets its header. */
/* The header's element layout from pbng_mesh_layout's code (the kind, or -nen when kinds mix). */
static void set_header_layout(mesh_header *head, int64_t layout)
{
  head->etype = layout >= 0 ? pbng_element_type_get((pbng_element_kind)layout) : NULL;
  head->nen = head->etype ? head->etype->nodes : (int)-layout;
}

PetscErrorCode run_global_mesh_on_rank0(run_state *st, pbng_mesh *mesh, mesh_header *head)
{
  int64_t sizes[4 + PBNG_ELEMENT_KIND_COUNT] = {0};
  double extent = 0;
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  if (st->rank == 0) {
    ierr = pbng_config_build_mesh(st->cfg, mesh);
    if (!ierr) {
      sizes[0] = mesh->nnodes, sizes[1] = mesh->nelems, sizes[2] = pbng_mesh_layout(mesh), sizes[3] = mesh->nweak, extent = pbng_mesh_extent(mesh);
      pbng_mesh_count_kinds(mesh, &sizes[4]);
    }
  }
  PetscCall(run_agree_on_rank0(st->comm, ierr));
  PetscCallMPI(MPI_Bcast(sizes, 4 + PBNG_ELEMENT_KIND_COUNT, MPI_INT64_T, 0, st->comm));
  PetscCallMPI(MPI_Bcast(&extent, 1, MPI_DOUBLE, 0, st->comm));
  head->nnodes = sizes[0], head->nelems = sizes[1], head->nweak = sizes[3];
  set_header_layout(head, sizes[2]);
  memcpy(head->kind_count, &sizes[4], sizeof(head->kind_count));
  head->extent = extent;
  PetscFunctionReturn(0);
}

/* Every rank's count of the piece's elements it owns (first node owned), by kind, summed. */
static PetscErrorCode count_owned_kinds(MPI_Comm comm, const pbng_submesh *sub, int64_t *counts)
{
  const pbng_mesh *m = &sub->mesh;
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) counts[k] = 0;
  for (int64_t e = 0; e < m->nelems; ++e)
    if (sub->owner[m->elems[(size_t)m->nen * (size_t)e]] == rank) ++counts[pbng_mesh_element_type(m, e)->kind];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, PBNG_ELEMENT_KIND_COUNT, MPI_INT64_T, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode run_is_partitioned_file(run_state *st, const char *option, const char *path, int *partitioned)
{
  char why[256] = "";

  PetscFunctionBeginUser;
  *partitioned = 0;
  if (st->rank == 0) *partitioned = pbng_partfile_probe(path, why, sizeof(why));
  PetscCallMPI(MPI_Bcast(partitioned, 1, MPI_INT, 0, st->comm));
  PetscCallMPI(MPI_Bcast(why, (int)sizeof(why), MPI_CHAR, 0, st->comm));
  PetscCheck(!why[0], st->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: %s", option, path, why);
  PetscFunctionReturn(0);
}

PetscErrorCode run_is_partitioned_input(run_state *st, int *partitioned)
{
  PetscFunctionBeginUser;
  *partitioned = 0;
  if (st->cfg->mesh_source == PBNG_MESH_FILE) PetscCall(run_is_partitioned_file(st, "-mesh", st->cfg->mesh_file, partitioned));
  PetscFunctionReturn(0);
}

/* Every rank reads its own part of a partitioned mesh file (collective HDF5 reads). */
PetscErrorCode run_read_partitioned_input(run_state *st, pbng_submesh *sub, mesh_header *head)
{
  PetscFunctionBeginUser;
  PetscCheck(!st->cfg->weak_file[0], st->comm, PETSC_ERR_ARG_INCOMP,
             "-weak with a partitioned mesh: give the weak constraints to pbng-partition (-weak FILE) instead");
  PetscCheck(st->cfg->bind_distance == 0, st->comm, PETSC_ERR_ARG_INCOMP,
             "-bind_distance with a partitioned mesh: give it to pbng-partition (-bind_distance d) instead");
  PetscCheck(!st->cfg->ptscotch, st->comm, PETSC_ERR_ARG_INCOMP,
             "-partitioner ptscotch with the partitioned mesh %s: its parts are the partition (pbng-partition -partitioner ptscotch writes such files)",
             st->cfg->mesh_file);
  PetscCall(pbng_partfile_read(st->comm, st->cfg->mesh_file, sub, &head->extent));
  head->nnodes = sub->nglobal_nodes, head->nelems = sub->nglobal_elems, head->nweak = sub->nglobal_weak;
  set_header_layout(head, pbng_mesh_layout(&sub->mesh));
  PetscCall(count_owned_kinds(st->comm, sub, head->kind_count));
  PetscFunctionReturn(0);
}

int run_level_min_nodes_per_rank(const pbng_config *cfg, int k)
{
  const int min_nodes = cfg->solver_opt.ml.min_nodes_per_rank, agg = cfg->solver_opt.ml.aggregation;
  if (k == 0 || min_nodes <= 0) return 0; /* the finest, or every level on every rank */
  if (k == cfg->solver_opt.multilevel - 1 && (agg == PBNG_AGGREGATION_AUTO || agg == 0)) return INT_MAX; /* the coarsest: one rank */
  return min_nodes;
}

/* The ranks a level is partitioned over: every rank, or with min_nodes_per_rank > 0 and fewer nodes than that per rank,
 * floor(nnodes / min_nodes_per_rank) of them (at least one). */
static int level_parts(int64_t nnodes, int nranks, int min_nodes_per_rank)
{
  if (min_nodes_per_rank <= 0 || nnodes >= (int64_t)min_nodes_per_rank * nranks) return nranks;
  const int64_t k = nnodes / min_nodes_per_rank;
  return k < 1 ? 1 : (int)k;
}

/* -partitioner ptscotch: level k's mesh made in slices, each rank its own (generated, or its rows of an HDF5 mesh file
 * read: *read), and partitioned by the ranks together into *nparts parts (all ranks; a coarse level's on fewer ranks, as
 * level_parts says). */
static PetscErrorCode partition_level_in_parallel(run_state *st, int k, const pbng_weak_springs *carried, const char *name, int *nparts, int *read,
                                                  pbng_parts *parts, pbng_partition_times *t)
{
  pbng_mesh_slice s;
  int nranks;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(st->comm, &nranks));
  PetscCall(pbng_config_level_slice(st->comm, st->cfg, k, carried, name, &s, read));
  t->generate = MPI_Wtime() - t0;
  *nparts = level_parts(s.nglobal_nodes, nranks, run_level_min_nodes_per_rank(st->cfg, k));
  PetscCall(pbng_partition_slice_ptscotch(st->comm, &s, *nparts, k == 0 && pbng_solver_uses_constraint_colors(st->cfg->solver), parts, t));
  PetscFunctionReturn(0);
}

/* -partitioner ptscotch: level k's mesh (0 the finest; a generated grid or an HDF5 mesh file) partitioned by the ranks
 * together, each rank its own piece (parallel/distributed_partition.h); *extent the mesh's, *etype its kind. An input
 * it does not handle is an error on every rank, before any output. */
PetscErrorCode run_partition_grid_in_parallel(run_state *st, int k, const pbng_weak_springs *carried, const char *name, pbng_submesh *sub, double *extent,
                                              const pbng_element_type **etype)
{
  pbng_parts parts;
  pbng_partition_times t;
  int nranks, nparts = 1, read = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(st->comm, &nranks));
  PetscCall(partition_level_in_parallel(st, k, carried, name, &nparts, &read, &parts, &t));
  *extent = parts.extent, *etype = parts.etype;
  if (parts.nlocal == 1) { /* this rank's part (at most one: nparts <= nranks), taken over; its owners named by rank */
    *sub = parts.sub[0];
    parts.nlocal = 0;
    for (int64_t i = 0; i < sub->mesh.nnodes; ++i) sub->owner[i] = pbng_parts_process(nparts, nranks, sub->owner[i]);
  } else { /* a rank without a part of a coarse level: an empty piece of the mesh, its node sets named */
    pbng_mesh whole;
    PetscCall(pbng_parts_shape(&parts, &whole));
    int32_t none = 0; /* pbng_submesh_empty takes the constraint colors' counts only (the piece has no element) */
    const pbng_constraint_colors counts = {.nelem_colors = parts.nelem_colors, .nweak_colors = parts.nweak_colors, .nblock_colors = parts.nblock_colors,
                                           .block = &none, .elem = &none, .weak = &none};
    PetscCall(pbng_submesh_empty(&whole, parts.ncolors, &counts, sub));
    sub->nglobal_weak = parts.nweak;
    PetscCall(pbng_mesh_destroy(&whole));
  }
  PetscCall(PetscPrintf(st->comm, "partitioner: PT-Scotch, %d parts on %d ranks, %s: %s %.2f s, graph %.2f s, coloring %.2f s (%d rounds), "
                                  "PT-Scotch %.2f s, migration %.2f s (rank 0)\n",
                        nparts, nranks, parts.source, read ? "read" : "generate", t.generate, t.graph, t.coloring, t.rounds, t.partition, t.migration));
  PetscCall(pbng_parts_destroy(&parts));
  PetscFunctionReturn(0);
}

PetscErrorCode run_partition_in_parallel(run_state *st, pbng_mesh *mesh, pbng_submesh *sub, mesh_header *head)
{
  double extent;
  const pbng_element_type *etype;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh)); /* no rank holds the whole mesh */
  PetscCall(run_partition_grid_in_parallel(st, 0, NULL, "the mesh", sub, &extent, &etype));
  head->nnodes = sub->nglobal_nodes, head->nelems = sub->nglobal_elems, head->nweak = sub->nglobal_weak, head->extent = extent;
  head->etype = etype, head->nen = etype->nodes;
  PetscCall(count_owned_kinds(st->comm, sub, head->kind_count));
  PetscFunctionReturn(0);
}

/* The peridynamic parameters as the output records them, every default resolved (the contact step's xi, dhat and
 * rest exclusion as pbng_pd_contact_create receives them). */
static pbng_output_pd output_pd(const pbng_pd_options *o, double sheet_thickness)
{
  const pbng_pd_contact_options *c = &o->contact;
  const double xi = pbng_pd_contact_thickness(o, sheet_thickness), dhat = pbng_pd_contact_dhat(c, xi);
  return (pbng_output_pd){.material = o->mat.kind == PBNG_PD_NEOHOOKEAN ? "neohookean" : "stretching", .s0 = o->mat.s0, .s1 = o->mat.s1,
                          .k_b = o->k_b, .thickness = o->thickness, .contact = c->on, .contact_thickness = xi, .contact_dhat = dhat,
                          .contact_rest_exclusion = pbng_pd_contact_rest_exclusion(c, xi, dhat), .contact_eps = c->eps, .contact_kappa = c->kappa, .nobstacles = c->nobstacles,
                          .obstacle = c->obstacle};
}

PetscErrorCode run_open_output(run_state *st, const mesh_header *mesh, const char *command_line)
{
  const pbng_config *cfg = st->cfg;
  const PetscBool sheets = mesh->kind_count[PBNG_ELEMENT_TRI3] + mesh->kind_count[PBNG_ELEMENT_BEND4] + mesh->kind_count[PBNG_ELEMENT_CLOTH6] > 0;
  const pbng_output_pd pd = output_pd(&cfg->pd, sheets ? cfg->sheet.membrane.thickness : 0.0);
  pbng_output_info info = {
    .material = pbng_material_kind_name(cfg->material), .youngs_modulus = cfg->youngs,
    .poisson_ratio = cfg->poisson, .density = cfg->density, .gravity = {cfg->gravity[0], cfg->gravity[1], cfg->gravity[2]},
    .solver = cfg->solver, .mode = cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic",
    .command_line = command_line, .element = mesh->etype, .mixed_nen = mesh->etype ? 0 : mesh->nen, .kind_count = mesh->kind_count,
    .frames = cfg->frames + 1, .sheet = sheets ? &cfg->sheet : NULL,
    .pd = cfg->pd.model == PBNG_SHEET_MODEL_PERIDYNAMIC ? &pd : NULL,
    .frame_cell_doubles = cfg->plastic ? 6 : 0}; /* /frames/N/plastic_strain */

  PetscFunctionBeginUser;
  for (int b = 0; b < cfg->bcs.count; ++b)
    if (cfg->bcs.bc[b].release > 0) info.frame_node_doubles = 3; /* /frames/N/handle_targets (at most) */
  PetscCall(pbng_output_open(st->comm, cfg->output, &info, mesh->nnodes, mesh->nelems, &st->out));
  PetscFunctionReturn(0);
}

/* Rank 0: coloring (Sec. 9) and the METIS partition into nparts parts, part p given to rank pbng_parts_process(p) (nparts
 * <= nranks: the parts spread evenly over the ranks, as -partitioner ptscotch gives them), for every global node; the weak-constraint block colors, and the
 * PBD/XPBD constraint colors when with_pbd. */
static PetscErrorCode plan_nodes(const pbng_mesh *mesh, int nranks, int nparts, int32_t *color, int *ncolors, PetscBool with_pbd,
                                 pbng_constraint_colors *cc, int32_t *part)
{
  pbng_node_elements adj;

  PetscFunctionBeginUser;
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, ncolors));
  PetscCall(pbng_constraint_colors_compute(mesh, &adj, with_pbd, cc));
  PetscCall(pbng_partition_nodes(mesh, &adj, nparts, part));
  PetscCall(pbng_node_elements_destroy(&adj));
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = (int32_t)pbng_parts_process(nparts, nranks, part[i]); /* part -> its rank */
  PetscFunctionReturn(0);
}

/* Whether rank r holds one of nparts parts (nparts <= nranks: at most one each; parallel/submesh_migrate.h's blocks). */
static int rank_holds_part(int r, int nranks, int nparts) { return pbng_parts_first(nparts, nranks, r + 1) > pbng_parts_first(nparts, nranks, r); }

/* Rank 0 plans, cuts the mesh into the ranks' pieces and sends them (freeing the global mesh once its
 * own piece is cut); every other rank receives its piece (empty on the ranks a level with fewer than
 * min_nodes_per_rank nodes per rank leaves out: level_parts). need_cc: the PBD/XPBD constraint colors too. */
static PetscErrorCode distribute_mesh(run_state *st, pbng_mesh *mesh, int need_cc, int min_nodes_per_rank, pbng_submesh *sub)
{
  int nranks, nparts = 1, ncolors = 0;
  int32_t *color = NULL, *part = NULL;
  pbng_constraint_colors cc = {0};
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(st->comm, &nranks));
  if (st->rank == 0) {
    ierr = PetscMalloc2(mesh->nnodes, &color, mesh->nnodes, &part);
    nparts = level_parts(mesh->nnodes, nranks, min_nodes_per_rank);
    if (!ierr) ierr = plan_nodes(mesh, nranks, nparts, color, &ncolors, (PetscBool)need_cc, &cc, part);
  }
  PetscCall(run_agree_on_rank0(st->comm, ierr));
  if (st->rank != 0) {
    PetscCall(pbng_submesh_recv(st->comm, 0, PBNG_ERR_ON_RANK0, sub));
    PetscFunctionReturn(0);
  }
  for (int p = 1; p < nranks; ++p) {
    pbng_submesh piece;
    if (rank_holds_part(p, nranks, nparts)) ierr = pbng_submesh_extract(mesh, color, ncolors, &cc, part, p, &piece);
    else ierr = pbng_submesh_empty(mesh, ncolors, &cc, &piece);
    if (ierr) { /* release the ranks still waiting for their part, then report */
      for (int q = p; q < nranks; ++q) PetscCall(pbng_submesh_send_failure(st->comm, q));
      PetscCall(ierr);
    }
    PetscCall(pbng_submesh_send(st->comm, &piece, p));
    PetscCall(pbng_submesh_destroy(&piece));
  }
  if (rank_holds_part(0, nranks, nparts)) PetscCall(pbng_submesh_extract(mesh, color, ncolors, &cc, part, 0, sub));
  else PetscCall(pbng_submesh_empty(mesh, ncolors, &cc, sub));
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_constraint_colors_destroy(&cc));
  PetscCall(pbng_mesh_destroy(mesh));
  PetscFunctionReturn(0);
}

/* Boundary-condition index of every local node; a set that selects no node anywhere is an error. */
static PetscErrorCode assign_boundary_conditions(run_state *st, const pbng_submesh *sub, double extent, const char *name, int8_t *node_bc)
{
  const pbng_bc_list *bcs = &st->cfg->bcs;
  int64_t mine[PBNG_MAX_BC] = {0}, total[PBNG_MAX_BC];

  PetscFunctionBeginUser;
  PetscCall(pbng_bc_assign(bcs, &sub->mesh, extent, node_bc, mine));
  PetscCallMPI(MPI_Allreduce(mine, total, PBNG_MAX_BC, MPI_INT64_T, MPI_SUM, st->comm));
  for (int b = 0; b < bcs->count; ++b)
    PetscCheck(total[b] > 0, st->comm, PETSC_ERR_ARG_WRONG, "boundary condition %s selects no node of %s", bcs->bc[b].name, name);
  PetscFunctionReturn(0);
}

/* The sheet material table entry of every element of dm (mesh/sheet_groups.h) from the node sets of its
 * piece sub; a group without a triangle anywhere in the mesh called name is an error. */
static PetscErrorCode assign_sheet_materials(run_state *st, const pbng_submesh *sub, const pbng_dmesh *dm, const char *name, uint8_t **material)
{
  const pbng_config *cfg = st->cfg;
  const char *names[PBNG_MAX_SHEET_GROUPS];
  int64_t mine[PBNG_MAX_SHEET_GROUPS], total[PBNG_MAX_SHEET_GROUPS], *pair;
  uint8_t *by_sub;

  PetscFunctionBeginUser;
  for (int g = 0; g < cfg->nsheet_groups; ++g) names[g] = cfg->sheet_group[g].name;
  PetscCall(PetscMalloc1(sub->mesh.nelems + 1, &by_sub));
  PetscErrorCode ierr = pbng_sheet_groups_assign(&sub->mesh, cfg->nsheet_groups, names, sub->global_elem, by_sub, mine);
  if (ierr) PetscCall(PetscFree(by_sub)); /* a group the mesh does not have: nothing left allocated */
  PetscCall(ierr);
  PetscCallMPI(MPI_Allreduce(mine, total, cfg->nsheet_groups, MPI_INT64_T, MPI_SUM, st->comm));
  for (int g = 0; g < cfg->nsheet_groups; ++g)
    if (total[g] == 0) {
      PetscCall(PetscFree(by_sub));
      SETERRQ(st->comm, PETSC_ERR_ARG_WRONG, "-sheet%d_group %s: no sheet triangle of %s has its three corners in that group", cfg->sheet_group[g].k,
              names[g], name);
    }
  /* the piece's elements by global id, then each of dm's looked up */
  PetscCall(PetscMalloc1(2 * sub->mesh.nelems + 1, &pair));
  for (int64_t e = 0; e < sub->mesh.nelems; ++e) pair[2 * e] = sub->global_elem[e], pair[2 * e + 1] = by_sub[e];
  qsort(pair, (size_t)sub->mesh.nelems, 2 * sizeof(int64_t), pbng_compare_int64);
  PetscCall(PetscMalloc1(dm->nelems + 1, material));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int64_t *at = bsearch(&dm->global_elem[e], pair, (size_t)sub->mesh.nelems, 2 * sizeof(int64_t), pbng_compare_int64);
    PetscCheck(at, PETSC_COMM_SELF, PETSC_ERR_PLIB, "element %" PRId64 " of the subdomain is not in its piece", dm->global_elem[e]);
    (*material)[e] = (uint8_t)at[1];
  }
  PetscCall(PetscFree(pair));
  PetscCall(PetscFree(by_sub));
  PetscFunctionReturn(0);
}

PetscErrorCode run_build_level_subdomain(run_state *st, pbng_mesh *mesh, double extent, pbng_submesh *sub_in, int need_cc, int min_nodes_per_rank,
                                         const char *name, uint8_t **sheet_material, pbng_dmesh *dm, pbng_halo *halo)
{
  pbng_submesh sub;
  int8_t *node_bc;

  PetscFunctionBeginUser;
  if (sub_in) sub = *sub_in;
  else PetscCall(distribute_mesh(st, mesh, need_cc, min_nodes_per_rank, &sub));
  malloc_trim(0);
  PetscCall(PetscMalloc1(sub.mesh.nnodes, &node_bc));
  PetscCall(assign_boundary_conditions(st, &sub, extent, name, node_bc));
  PetscCall(pbng_dmesh_create(st->comm, &sub, node_bc, dm));
  PetscCall(PetscFree(node_bc));
  PetscErrorCode ierr = 0;
  if (sheet_material && st->cfg->nsheet_groups) ierr = assign_sheet_materials(st, &sub, dm, name, sheet_material);
  PetscCall(pbng_submesh_destroy(&sub)); /* also when the assignment failed */
  PetscCall(ierr);
  PetscCall(pbng_halo_create(dm, halo));
  PetscFunctionReturn(0);
}

PetscErrorCode run_build_subdomain(run_state *st, pbng_mesh *mesh, const mesh_header *head, pbng_submesh *sub_in)
{
  PetscFunctionBeginUser;
  PetscCall(run_build_level_subdomain(st, mesh, head->extent, sub_in, pbng_solver_uses_constraint_colors(st->cfg->solver), 0, "the mesh", &st->sheet_material, &st->dm,
                                      &st->halo));
  PetscFunctionReturn(0);
}

/* /mesh/tetrahedra (or /mesh/elements) from the owned elements, passed in increasing global order so
 * that the writer needs no sorted copy of its own (the largest buffer of the setup); rows of mixed
 * kinds keep their padding (-1) and come with their kinds. */
static PetscErrorCode write_elements_in_global_order(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  const int nen = dm->nen;
  const int32_t n = dm->nowned_elems;
  PetscInt64 *order; /* global id << 32 | local index, sorted */
  int64_t *conn, *rows;
  uint8_t *kinds = NULL;

  PetscFunctionBeginUser;
  PetscCheck(dm->nglobal_elems < ((int64_t)1 << 31), PETSC_COMM_SELF, PETSC_ERR_SUP, "more than 2^31 elements");
  PetscCall(PetscMalloc1(n + 1, &order));
  for (int32_t e = 0; e < n; ++e) order[e] = (dm->global_elem[e] << 32) | e;
  PetscCall(PetscSortInt64(n, order));
  PetscCall(PetscMalloc1((int64_t)n * nen + 1, &conn));
  if (dm->kind) PetscCall(PetscMalloc1(n + 1, &kinds));
  rows = order; /* reused in place: each entry is read before it is overwritten */
  for (int32_t k = 0; k < n; ++k) {
    const int32_t e = (int32_t)(order[k] & 0xffffffff);
    for (int a = 0; a < nen; ++a) conn[(int64_t)k * nen + a] = dm->elems[e * nen + a] < 0 ? -1 : dm->global_node[dm->elems[e * nen + a]];
    if (kinds) kinds[k] = dm->kind[e];
    rows[k] = order[k] >> 32;
  }
  PetscCall(pbng_output_write_elements(st->out, n, rows, conn, kinds));
  PetscCall(PetscFree(kinds));
  PetscCall(PetscFree(conn));
  PetscCall(PetscFree(order));
  PetscFunctionReturn(0);
}

/* The owned nodes in increasing global order: node data is passed to the writer in that order, so
 * that it writes from our buffer instead of sorting a copy. */
PetscErrorCode run_build_node_output_order(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  PetscInt64 *order;

  PetscFunctionBeginUser;
  PetscCheck(dm->nglobal_nodes < ((int64_t)1 << 31), PETSC_COMM_SELF, PETSC_ERR_SUP, "more than 2^31 nodes");
  PetscCall(PetscMalloc1(dm->nowned + 1, &order));
  for (int32_t i = 0; i < dm->nowned; ++i) order[i] = (dm->global_node[i] << 32) | i;
  PetscCall(PetscSortInt64(dm->nowned, order));
  PetscCall(PetscMalloc1(dm->nowned + 1, &st->node_order));
  for (int32_t k = 0; k < dm->nowned; ++k) st->node_order[k] = (int32_t)(order[k] & 0xffffffff);
  for (int32_t k = 0; k < dm->nowned; ++k) order[k] >>= 32;
  st->node_rows = order;
  PetscFunctionReturn(0);
}

/* ncomp values per owned node, from local order to the output order. */
PetscErrorCode run_gather_for_output(const run_state *st, int ncomp, const double *local, double **out)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((int64_t)ncomp * st->dm.nowned + 1, out));
  for (int32_t k = 0; k < st->dm.nowned; ++k)
    for (int c = 0; c < ncomp; ++c) (*out)[(int64_t)ncomp * k + c] = local[(int64_t)ncomp * st->node_order[k] + c];
  PetscFunctionReturn(0);
}

/* /constraints/weak/: the constraints this rank counts, in global node numbering. */
static PetscErrorCode write_weak_constraints(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  pbng_weak_rows rows;

  PetscFunctionBeginUser;
  if (dm->nglobal_weak == 0) PetscFunctionReturn(0);
  PetscCall(pbng_weak_rows_pack(dm->nowned_weak, dm->weak, dm->global_node, &rows));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/nodes", PBNG_OUTPUT_INT64, dm->nglobal_weak, PBNG_WC_MAX_NODES,
                                    dm->nowned_weak, dm->global_weak, rows.nodes));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/weights", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, PBNG_WC_MAX_NODES,
                                    dm->nowned_weak, dm->global_weak, rows.weights));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/stiffness", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, 9, dm->nowned_weak,
                                    dm->global_weak, rows.stiffness));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/spring", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, 5, dm->nowned_weak,
                                    dm->global_weak, rows.spring));
  PetscCall(pbng_output_write_table(st->out, "/constraints/weak/target", PBNG_OUTPUT_DOUBLE, dm->nglobal_weak, 3, dm->nowned_weak,
                                    dm->global_weak, rows.target));
  PetscCall(pbng_weak_rows_free(&rows));
  PetscFunctionReturn(0);
}

int run_sheet_table(const pbng_config *cfg, pbng_sheet_material *table)
{
  pbng_sheet_material groups[PBNG_MAX_SHEET_GROUPS];
  for (int g = 0; g < cfg->nsheet_groups; ++g) groups[g] = cfg->sheet_group[g].mat;
  pbng_sheet_table_build(&cfg->sheet, cfg->nsheet_groups, groups, table);
  return pbng_sheet_table_size(cfg->nsheet_groups);
}

/* -sheetK_group: /mesh/sheet_material (each element's entry in the table) and the table as root
 * attributes sheet_table_C [T * 9] (row-major T x 3 x 3), sheet_table_thickness, sheet_table_bending_stiffness,
 * sheet_table_density [T], sheet_groups (the groups' names, comma-separated, in table order 1..n). */
static PetscErrorCode write_sheet_materials(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  pbng_sheet_material table[256];
  double C[9 * 256], h[256], kb[256], rho[256];
  char names[PBNG_MAX_SHEET_GROUPS * 65] = "";
  int64_t *rows, *value;

  PetscFunctionBeginUser;
  if (!st->sheet_material) PetscFunctionReturn(0);
  const int n = run_sheet_table(st->cfg, table);
  for (int k = 0; k < n; ++k) {
    memcpy(&C[9 * k], &table[k].membrane.C[0][0], sizeof(double) * 9);
    h[k] = table[k].membrane.thickness, kb[k] = table[k].bending_stiffness, rho[k] = table[k].density;
  }
  for (int g = 0; g < st->cfg->nsheet_groups; ++g) {
    if (g) PetscCall(PetscStrlcat(names, ",", sizeof(names)));
    PetscCall(PetscStrlcat(names, st->cfg->sheet_group[g].name, sizeof(names)));
  }
  PetscCall(pbng_output_root_doubles(st->out, "sheet_table_C", 9 * n, C));
  PetscCall(pbng_output_root_doubles(st->out, "sheet_table_thickness", n, h));
  PetscCall(pbng_output_root_doubles(st->out, "sheet_table_bending_stiffness", n, kb));
  PetscCall(pbng_output_root_doubles(st->out, "sheet_table_density", n, rho));
  PetscCall(pbng_output_root_string(st->out, "sheet_groups", names));
  PetscCall(PetscMalloc2(dm->nowned_elems + 1, &rows, dm->nowned_elems + 1, &value));
  for (int32_t e = 0; e < dm->nowned_elems; ++e) rows[e] = dm->global_elem[e], value[e] = st->sheet_material[e];
  PetscCall(pbng_output_write_table(st->out, "/mesh/sheet_material", PBNG_OUTPUT_INT64, dm->nglobal_elems, 1, dm->nowned_elems, rows, value));
  PetscCall(PetscFree2(rows, value));
  PetscFunctionReturn(0);
}

PetscErrorCode run_write_mesh_output(run_state *st)
{
  const pbng_dmesh *dm = &st->dm;
  int64_t *fixed, nfixed = 0;
  int32_t *part;

  PetscFunctionBeginUser;
  double *rest;
  PetscCall(run_build_node_output_order(st));
  PetscCall(run_gather_for_output(st, 3, dm->X, &rest));
  PetscCall(pbng_output_write_nodes_double(st->out, "/mesh/rest_positions", 3, dm->nowned, st->node_rows, rest));
  PetscCall(PetscFree(rest));
  PetscCall(PetscMalloc1(dm->nowned + 1, &part));
  for (int32_t k = 0; k < dm->nowned; ++k) part[k] = dm->color[st->node_order[k]];
  PetscCall(pbng_output_write_nodes_int32(st->out, "/mesh/color", dm->nowned, st->node_rows, part));
  for (int32_t k = 0; k < dm->nowned; ++k) part[k] = dm->rank;
  PetscCall(pbng_output_write_nodes_int32(st->out, "/mesh/partition", dm->nowned, st->node_rows, part));
  if (dm->nglobal_weak > 0) { /* 1 for a node of a weak constraint (a binding's: the blue of the paper's Fig. 10) */
    for (int32_t k = 0; k < dm->nowned; ++k) part[k] = dm->wadj_start[st->node_order[k] + 1] > dm->wadj_start[st->node_order[k]];
    PetscCall(pbng_output_write_nodes_int32(st->out, "/mesh/bound", dm->nowned, st->node_rows, part));
  }
  PetscCall(PetscFree(part));
  PetscCall(write_elements_in_global_order(st));
  PetscCall(write_sheet_materials(st));
  PetscCall(PetscMalloc1(dm->nowned - dm->nfree + 1, &fixed));
  for (int32_t i = dm->nfree; i < dm->nowned; ++i)
    if (dm->node_bc[i] >= 0) fixed[nfixed++] = dm->global_node[i];
  PetscCall(pbng_output_write_fixed_nodes(st->out, nfixed, fixed));
  PetscCall(PetscFree(fixed));
  PetscCall(write_weak_constraints(st));
  PetscFunctionReturn(0);
}

PetscErrorCode run_write_node_loads(run_state *st)
{
  double *loads;

  PetscFunctionBeginUser;
  if (!st->pb.node_load || st->restart[0] || !st->out) PetscFunctionReturn(0); /* a restarted run's file has them; -dry_run: no file */
  PetscCall(run_gather_for_output(st, 3, st->pb.node_load, &loads));
  PetscCall(pbng_output_write_nodes_double(st->out, "/mesh/node_loads", 3, st->dm.nowned, st->node_rows, loads));
  PetscCall(PetscFree(loads));
  PetscFunctionReturn(0);
}

/* Owned and ghost nodes per rank (min/max), neighbours and halo volume, for the report. */
PetscErrorCode run_summarize_partition(run_state *st, pbng_run_summary *sum)
{
  const int64_t mine[4] = {st->dm.nowned, st->dm.nlocal - st->dm.nowned, -(int64_t)st->dm.nowned,
                           -(int64_t)(st->dm.nlocal - st->dm.nowned)};
  int64_t mx[4], bytes = 24 * st->halo.nodes_per_iteration;
  int neighbors = st->halo.nneighbors;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, mx, 4, MPI_INT64_T, MPI_MAX, st->comm));
  PetscCallMPI(MPI_Allreduce(&bytes, &sum->halo_bytes_per_iteration, 1, MPI_INT64_T, MPI_SUM, st->comm));
  PetscCallMPI(MPI_Allreduce(&neighbors, &sum->halo_neighbors_max, 1, MPI_INT, MPI_MAX, st->comm));
  sum->owned_max = mx[0], sum->ghosts_max = mx[1], sum->owned_min = -mx[2], sum->ghosts_min = -mx[3];
  if (sum->ranks > 1)
    PetscCall(PetscPrintf(st->comm, "partition: %d ranks, owned nodes %" PRId64 "..%" PRId64 ", ghost nodes %" PRId64 "..%" PRId64
                                    " per rank, up to %d neighbours, halo %.3f MB per iteration\n",
                          sum->ranks, sum->owned_min, sum->owned_max, sum->ghosts_min, sum->ghosts_max, sum->halo_neighbors_max,
                          sum->halo_bytes_per_iteration / 1e6));
  PetscFunctionReturn(0);
}
