/* The coarse levels of a multilevel run (-solver pbng -multilevel L): each one a complete problem,
 * its mesh generated (scenes), read (-mesh_levels, partitioned files included) or made from the fine
 * mesh, partitioned by METIS on its own, with the run's boundary sets (boxes and node sets alike:
 * a coarse mesh must have a node in every set) and its own discrete problem. */
#include "app/run_state.h"
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <string.h>

#include "io/partfile.h"
#include "mesh/coarsen.h"
#include "parallel/transfer.h"
#include "parallel/weak_levels.h"

/* Whether the coarse levels are made from the fine mesh (a mesh file, no -mesh_levels). */
static int levels_made_from_fine(const pbng_config *cfg)
{
  return cfg->solver_opt.multilevel > 1 && pbng_config_coarsens_fine_mesh(cfg); /* -multilevel L > 1: -solver pbng only */
}

/* One coarsening of `finer` into *coarse (rank 0): with the run's -multilevel_coarsen_* first; when that does not reach
 * PBNG_COARSEN_MIN_RATIO (thin walls: the feature angle and the quality stop the collapses), again with the relaxed
 * limits of PBNG_COARSEN_RELAXED_*, measured on the hollow tube (docs/multilevel.md#automatic-levels). *enough: whether
 * the result has at most 1 / PBNG_COARSEN_MIN_RATIO of the nodes. */
static PetscErrorCode coarsen_once(const pbng_config *cfg, const pbng_mesh *finer, double extent, pbng_mesh *coarse, int *enough)
{
  int8_t *node_bc;
  int64_t selected[PBNG_MAX_BC];
  pbng_coarsen_options opt = cfg->coarsen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(finer->nnodes + 1, &node_bc));
  PetscCall(pbng_bc_assign(&cfg->bcs, finer, extent, node_bc, selected));
  PetscCall(pbng_mesh_coarsen(finer, node_bc, &opt, coarse));
  *enough = PBNG_COARSEN_MIN_RATIO * (double)coarse->nnodes <= (double)finer->nnodes;
  if (!*enough && (opt.quality_min > PBNG_COARSEN_RELAXED_QUALITY || opt.feature_angle < PBNG_COARSEN_RELAXED_ANGLE)) {
    opt.quality_min = fmin(opt.quality_min, PBNG_COARSEN_RELAXED_QUALITY);
    opt.feature_angle = fmax(opt.feature_angle, PBNG_COARSEN_RELAXED_ANGLE);
    PetscCall(pbng_mesh_destroy(coarse));
    PetscCall(pbng_mesh_coarsen(finer, node_bc, &opt, coarse));
    *enough = PBNG_COARSEN_MIN_RATIO * (double)coarse->nnodes <= (double)finer->nnodes;
  }
  PetscCall(PetscFree(node_bc));
  PetscFunctionReturn(0);
}

/* Rank 0: the next coarser level of a mesh that is not of linear tetrahedra: a high-order kind's corner mesh
 * (p-multigrid: the same cells as tet4 or hex8), any other volume kinds' tetrahedra (pbng_mesh_tetrahedralize)
 * coarsened once. */
static PetscErrorCode coarsen_other_kinds(const pbng_config *cfg, const pbng_mesh *fine, double extent, pbng_mesh *coarse, int *enough)
{
  PetscFunctionBeginUser;
  *enough = 1;
  const int tetrahedral_levels_needed = cfg->contact || cfg->weak_file[0] || fine->nweak > 0; /* carried to tetrahedra only */
  int high_order = 0, tetrahedra = 1;
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_mesh_element_type(fine, e);
    high_order |= t->order > 1, tetrahedra &= t->shape == PBNG_SHAPE_TETRAHEDRON;
  }
  if (high_order && (tetrahedra || !tetrahedral_levels_needed)) PetscFunctionReturn(pbng_mesh_corners(fine, coarse));
  pbng_mesh tets;
  PetscCall(pbng_mesh_tetrahedralize(fine, &tets));
  PetscCall(coarsen_once(cfg, &tets, extent, coarse, enough));
  *enough = PBNG_COARSEN_MIN_RATIO * (double)coarse->nnodes <= (double)fine->nnodes;
  PetscCall(pbng_mesh_destroy(&tets));
  PetscFunctionReturn(0);
}

/* Rank 0: the fine mesh coarsened level by level into levels[0..] (linear tetrahedra, by edge collapses; from a
 * high-order kind first its corner mesh, from other kinds their tetrahedra), its boundary sets' nodes kept in place;
 * *made: how many, each reducing the nodes by PBNG_COARSEN_MIN_RATIO at least. -multilevel L: up to L - 1 of them; where
 * a coarsening does not reach that ratio (also with the relaxed limits: thin walls, shells, several bodies) the levels
 * left are made by aggregation below the coarsest mesh (*aggregation; an error only when not even one coarse mesh
 * could be made). -multilevel auto: until the coarsest has at most PBNG_AUTO_COARSEST_NODES nodes or a coarsening no longer
 * reduces them by that ratio (that level is dropped; above PBNG_AGGREGATION_DIRECT_NODES nodes left, aggregation below
 * it: PBNG_AGGREGATION_ANY). */
static PetscErrorCode coarsen_levels(const pbng_config *cfg, const pbng_mesh *fine, double extent, pbng_mesh *levels, int *made, int *aggregation)
{
  PetscFunctionBeginUser;
  char kinds[96];
  pbng_mesh_kinds_label(fine, kinds, sizeof(kinds));
  PetscCheck(!(pbng_element_kinds_mask(fine->etype, fine->kind, fine->nelems) & PBNG_SHEET_KINDS_MASK), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "-multilevel %d: coarse levels are made from a file of volume elements only; give this %s mesh's coarser levels with -mesh_levels",
             cfg->solver_opt.multilevel, kinds);
  *made = *aggregation = 0;
  /* Weak constraints and contacts (k ~ 1e8) are stiff couplings GAMG's linear fields do not see: its CG took ~500
   * iterations a coarse solve on the muscles (-scale 1: 16 s a frame against 1.1 s with the direct factorisation of the
   * 2 532-node coarsest mesh), so -multilevel auto keeps the direct solve there (docs/multilevel.md#automatic-levels). */
  const int stiff_couplings = cfg->contact || cfg->weak_file[0] || fine->nweak > 0;
  for (int k = 1; k < cfg->solver_opt.multilevel; ++k) {
    const pbng_mesh *finer = k == 1 ? fine : &levels[k - 2];
    if (cfg->multilevel_auto && k > 1 && finer->nnodes <= PBNG_AUTO_COARSEST_NODES) break;
    int enough = 1;
    if (finer->etype && finer->etype->kind == PBNG_ELEMENT_TET4) PetscCall(coarsen_once(cfg, finer, extent, &levels[k - 1], &enough));
    else PetscCall(coarsen_other_kinds(cfg, finer, extent, &levels[k - 1], &enough));
    if (!enough) {
      const int64_t left = levels[k - 1].nnodes;
      PetscCall(pbng_mesh_destroy(&levels[k - 1]));
      PetscCheck(k > 1 || cfg->multilevel_auto, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
                 "-multilevel %d: %s cannot be coarsened even once (edge collapses left %" PRId64 " of %" PRId64 " nodes, also with the relaxed limits "
                 "-multilevel_coarsen_quality %.2f -multilevel_coarsen_angle %d); give coarser meshes with -mesh_levels, or use -solver newton",
                 cfg->solver_opt.multilevel, fine->source, left, finer->nnodes, PBNG_COARSEN_RELAXED_QUALITY, (int)PBNG_COARSEN_RELAXED_ANGLE);
      if (!cfg->multilevel_auto) *aggregation = cfg->solver_opt.multilevel - k; /* the levels the meshes could not make */
      else if (finer->nnodes > PBNG_AGGREGATION_DIRECT_NODES && !stiff_couplings) *aggregation = PBNG_AGGREGATION_ANY;
      break;
    }
    *made = k;
  }
  PetscFunctionReturn(0);
}

/* -multilevel auto with a mesh file: why its coarse levels cannot be made here (the defaults: line's account), or NULL. */
static const char *file_levels_unavailable(const pbng_config *cfg, const mesh_header *head, int partitioned)
{
  const int64_t sheets = head->kind_count[PBNG_ELEMENT_TRI3] + head->kind_count[PBNG_ELEMENT_BEND4] + head->kind_count[PBNG_ELEMENT_CLOTH6];
  if (partitioned) return "a partitioned mesh has no whole mesh to coarsen: give its coarser levels with -mesh_levels (pbng-partition -multilevel L writes them)";
  if (sheets && cfg->contact) return "contacts are carried to coarse tetrahedra only, not to coarse sheets";
  if (sheets) return "coarse levels are made automatically from volume elements only: give this mesh's coarser levels with -mesh_levels";
  return NULL;
}

/* A mesh file under -multilevel auto and no reason against it: what was made (levels), else single-level PBNG with
 * the reason in the defaults: line. */
static void settle_file_levels(pbng_config *cfg, int made, int64_t fine_nodes)
{
  cfg->multilevel_auto = 0;
  cfg->solver_opt.multilevel = cfg->fast_levels = made + 1;
  if (made > 0) return;
  cfg->fast_levels = 0;
  snprintf(cfg->default_note, sizeof(cfg->default_note), "edge collapses did not reduce the %" PRId64 " nodes of the mesh by %g", fine_nodes,
           PBNG_COARSEN_MIN_RATIO);
}

PetscErrorCode run_make_coarse_meshes(run_state *st, pbng_config *cfg, const pbng_mesh *fine, const mesh_header *head, int partitioned)
{
  PetscErrorCode ierr = 0;
  int made = 0;

  PetscFunctionBeginUser;
  if (cfg->multilevel_auto) {
    const char *why = file_levels_unavailable(cfg, head, partitioned);
    if (why) {
      cfg->multilevel_auto = 0, cfg->solver_opt.multilevel = 1;
      snprintf(cfg->default_note, sizeof(cfg->default_note), "%s", why);
      PetscFunctionReturn(0);
    }
  }
  if (!levels_made_from_fine(cfg)) PetscFunctionReturn(0);
  PetscCheck(!partitioned, st->comm, PETSC_ERR_ARG_INCOMP,
             "-multilevel %d with the partitioned mesh %s: there is no whole mesh to coarsen here; give its coarser levels with -mesh_levels "
             "(pbng-partition -multilevel %d writes them)",
             cfg->solver_opt.multilevel, cfg->mesh_file, cfg->solver_opt.multilevel);
  int counts[2] = {0, 0}; /* made, aggregation */
  if (st->rank == 0) {
    ierr = PetscCalloc1(cfg->solver_opt.multilevel - 1, &st->made_levels);
    if (!ierr) ierr = coarsen_levels(cfg, fine, st->extent, st->made_levels, &counts[0], &counts[1]);
  }
  PetscCall(run_agree_on_rank0(st->comm, ierr));
  PetscCallMPI(MPI_Bcast(counts, 2, MPI_INT, 0, st->comm));
  made = counts[0];
  if (cfg->solver_opt.ml.aggregation == PBNG_AGGREGATION_AUTO) cfg->solver_opt.ml.aggregation = counts[1];
  if (!cfg->multilevel_auto) {
    cfg->solver_opt.multilevel = made + 1; /* the meshes made; the rest of -multilevel L by aggregation */
    PetscFunctionReturn(0);
  }
  settle_file_levels(cfg, made, head->nnodes);
  PetscFunctionReturn(0);
}

/* What level k's mesh is, for messages and the report. */
static void describe_level(const pbng_config *cfg, int k, char *buf, size_t len)
{
  const int res = k == 0 ? cfg->res : pbng_config_coarse_res(cfg, k);
  const pbng_element_type *fine = pbng_element_type_get(cfg->elements.kind);
  char kind[16] = ""; /* named when the finest level is not linear tetrahedra: each level's kind (p-multigrid) */
  if (fine->kind != PBNG_ELEMENT_TET4) snprintf(kind, sizeof(kind), ", %s", k == 0 ? fine->name : pbng_element_corner_type(fine)->name);
  if (cfg->cells[0] > 0 && cfg->mesh_source != PBNG_MESH_FILE) {
    int cells[3];
    pbng_config_coarse_cells(cfg, k, cells);
    snprintf(buf, len, "generated %s of %dx%dx%d cells%s", cfg->mesh_source == PBNG_MESH_BAR ? "bar" : "box", cells[0], cells[1], cells[2], kind);
    return;
  }
  switch (cfg->mesh_source) {
  case PBNG_MESH_RES_BOX: snprintf(buf, len, "generated Res-%d box%s", res, kind); break;
  case PBNG_MESH_BAR: snprintf(buf, len, "generated bar, res %d%s", res, kind); break;
  case PBNG_MESH_STACKED_BLOCKS:
  case PBNG_MESH_COLLIDING_BLOCKS: snprintf(buf, len, "generated stacked blocks, res %d", res); break;
  case PBNG_MESH_OBJECTS: snprintf(buf, len, "generated %d objects, scale %g", cfg->objects, cfg->scale); break;
  case PBNG_MESH_MUSCLES:
    if (k == 0) snprintf(buf, len, "generated arm, scale %g", cfg->scale);
    else snprintf(buf, len, "generated arm coarsened %d time%s", k, k > 1 ? "s" : "");
    break;
  case PBNG_MESH_SHEET: snprintf(buf, len, "generated sheet, res %d", res); break;
  case PBNG_MESH_FILE:
    if (k == 0) snprintf(buf, len, "%s", cfg->mesh_file);
    else if (k <= cfg->nmesh_levels) snprintf(buf, len, "%s", cfg->mesh_levels[k - 1]);
    else snprintf(buf, len, "%.4000s coarsened %d time%s", cfg->mesh_file, k, k > 1 ? "s" : "");
    break;
  }
}

/* Rank 0 builds coarse level k's global mesh with the fine level's weak constraints carried to it (the
 * others keep an empty mesh). */
static PetscErrorCode coarse_mesh_on_rank0(run_state *st, int k, const char *name, const pbng_weak_springs *springs, pbng_mesh *mesh)
{
  PetscErrorCode ierr = 0;
  int made = 1;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  if (st->rank == 0) {
    ierr = pbng_config_build_coarse_mesh(st->cfg, k, mesh, &made);
    if (!ierr && !made) { /* made from the fine mesh before it was distributed: taken over */
      *mesh = st->made_levels[k - 1];
      memset(&st->made_levels[k - 1], 0, sizeof(*mesh));
    }
    if (!ierr) ierr = pbng_mesh_add_weak_springs(mesh, name, springs->n, springs->s, PBNG_TRANSFER_RADIUS);
  }
  PetscCall(run_agree_on_rank0(st->comm, ierr));
  PetscFunctionReturn(0);
}

/* -partitioner ptscotch: level k's generated grid or HDF5 mesh file partitioned by the ranks together (run_partition_grid_in_parallel), as
 * the finest, with the fine level's weak constraints carried to it (springs: this rank's share). */
static PetscErrorCode build_coarse_subdomain_in_parallel(run_state *st, int k, const char *name, const pbng_weak_springs *springs, pbng_coarse_level *c,
                                                         uint8_t **sheet_material)
{
  pbng_submesh sub;
  double extent;
  const pbng_element_type *etype;

  PetscFunctionBeginUser;
  PetscCall(run_partition_grid_in_parallel(st, k, springs, name, &sub, &extent, &etype));
  PetscCall(PetscStrncpy(c->source, st->cfg->mesh_source == PBNG_MESH_FILE ? "file" : "generated", sizeof(c->source)));
  PetscCall(run_build_level_subdomain(st, NULL, st->extent, &sub, 0, 0, name, sheet_material, &c->dm, &c->halo));
  PetscFunctionReturn(0);
}

/* Level k's piece on every rank: from a partitioned -mesh_levels file (which must carry the weak
 * constraints itself: pbng-partition -multilevel writes them), or cut from rank 0's mesh. */
/* Level k's subdomain and halo in c; with -sheetK_group, *sheet_material gets its elements' entries in the
 * sheet material table from the level's own node sets (every -mesh_levels file names the groups too). */
static PetscErrorCode build_coarse_subdomain(run_state *st, int k, const char *name, const pbng_weak_springs *springs, pbng_coarse_level *c,
                                             uint8_t **sheet_material)
{
  const pbng_config *cfg = st->cfg;
  int partitioned = 0;

  PetscFunctionBeginUser;
  if (cfg->mesh_source == PBNG_MESH_FILE && k <= cfg->nmesh_levels)
    PetscCall(run_is_partitioned_file(st, "-mesh_levels", cfg->mesh_levels[k - 1], &partitioned));
  if (partitioned) {
    pbng_submesh sub;
    double extent;
    PetscCall(pbng_partfile_read(st->comm, cfg->mesh_levels[k - 1], &sub, &extent));
    PetscCheck(st->dm.nglobal_weak == 0 || sub.nglobal_weak > 0, st->comm, PETSC_ERR_ARG_INCOMP,
               "%s: the partitioned file has no weak constraints, the fine mesh %" PRId64 "; write the levels with the constraints "
               "(pbng-partition -multilevel L, which carries them to every level)",
               name, st->dm.nglobal_weak);
    PetscCall(PetscStrncpy(c->source, "file", sizeof(c->source)));
    PetscCall(run_build_level_subdomain(st, NULL, st->extent, &sub, 0, 0, name, sheet_material, &c->dm, &c->halo));
  } else if (cfg->ptscotch) PetscCall(build_coarse_subdomain_in_parallel(st, k, name, springs, c, sheet_material));
  else {
    pbng_mesh mesh;
    PetscCall(coarse_mesh_on_rank0(st, k, name, springs, &mesh));
    PetscCall(PetscStrncpy(c->source, levels_made_from_fine(cfg) ? "coarsened" : (cfg->mesh_source == PBNG_MESH_FILE ? "file" : "generated"),
                           sizeof(c->source)));
    PetscCall(run_build_level_subdomain(st, &mesh, st->extent, NULL, 0, run_level_min_nodes_per_rank(cfg, k), name, sheet_material, &c->dm, &c->halo));
  }
  PetscFunctionReturn(0);
}

/* "level l (what): N nodes, M tetrahedra, C colors, owned a..b, ghosts c..d per rank". */
static PetscErrorCode report_level(run_state *st, const char *name, const pbng_dmesh *dm)
{
  const int64_t none = INT64_MIN; /* the least counts over the ranks that hold a part of the level */
  const int64_t mine[4] = {dm->nowned, dm->nlocal - dm->nowned, dm->nowned ? -(int64_t)dm->nowned : none,
                           dm->nowned ? -(int64_t)(dm->nlocal - dm->nowned) : none};
  int64_t mx[4], holding = dm->nowned > 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(mine, mx, 4, MPI_INT64_T, MPI_MAX, st->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &holding, 1, MPI_INT64_T, MPI_SUM, st->comm));
  char ranks[64] = ""; /* a level on fewer ranks (-multilevel_min_nodes_per_rank): the others' pieces are empty */
  if (holding < dm->size) snprintf(ranks, sizeof(ranks), " (on %" PRId64 " of %d ranks)", holding, dm->size);
  char weak[64] = "";
  if (dm->nglobal_weak > 0) snprintf(weak, sizeof(weak), ", %" PRId64 " weak constraints", dm->nglobal_weak);
  PetscCall(PetscPrintf(st->comm, "%s: %" PRId64 " nodes, %" PRId64 " %s%s, %d colors; owned nodes %" PRId64 "..%" PRId64 ", ghost nodes %" PRId64
                                  "..%" PRId64 " per rank%s\n",
                        name, dm->nglobal_nodes, dm->nglobal_elems, dm->etype && dm->etype->kind == PBNG_ELEMENT_TET4 ? "tetrahedra" : pbng_dmesh_kinds_name(dm), weak, dm->ncolors, -mx[2], mx[0], -mx[3], mx[1], ranks));
  PetscFunctionReturn(0);
}

/* Triangles (tri3 membranes) of a distributed mesh, over all ranks (each counted by its owner). */
static PetscErrorCode global_triangles(const pbng_dmesh *dm, int64_t *n)
{
  int64_t mine = 0;

  PetscFunctionBeginUser;
  for (int32_t e = 0; e < dm->nowned_elems; ++e) mine += pbng_row_type(dm->etype, dm->kind, e)->kind == PBNG_ELEMENT_TRI3;
  PetscCallMPI(MPI_Allreduce(&mine, n, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscFunctionReturn(0);
}

/* The factor of a coarse level's sheet bending stiffness k_b: h_c / h_f, the ratio
 * of the levels' edge lengths, sqrt(fine triangles / coarse triangles) (2 per halving of -res). Along a
 * coarse edge of a nested sheet lie two fine edges whose stencils have the coarse stencil's |e|^2 / A and
 * dihedral angle, and the fine stencils inside coarse triangles are flat, so the fine bending energy of
 * an interpolated coarse field (Eq. E_b of docs/cloth.md#bending) is 2 x the coarse one per halving:
 * the scaled k_b makes the coarse bending that of the fine level (as the membranes are on nested P1
 * sheets). docs/sheets_multilevel.md measures it. */
static PetscErrorCode coarse_bending_scale(const run_state *st, const pbng_dmesh *coarse, double *scale)
{
  int64_t nf, nc;

  PetscFunctionBeginUser;
  PetscCall(global_triangles(&st->dm, &nf));
  PetscCall(global_triangles(coarse, &nc));
  *scale = nf > 0 && nc > 0 ? sqrt((double)nf / (double)nc) : 1;
  PetscFunctionReturn(0);
}

/* The coarse level c's problem: the run's material, the sheet's with k_b scaled (above), and with
 * -sheetK_group each group's (material: the coarse elements' table entries), k_b scaled alike. */
static PetscErrorCode create_coarse_problem(const run_state *st, const pbng_material *mat, const uint8_t *material, pbng_coarse_level *c)
{
  const pbng_config *cfg = st->cfg;
  pbng_sheet_material sheet = cfg->sheet, table[256];
  double scale = 1;

  PetscFunctionBeginUser;
  PetscCall(coarse_bending_scale(st, &c->dm, &scale));
  sheet.bending_stiffness *= scale;
  PetscCall(pbng_problem_create(&c->dm, &cfg->bcs, mat, &sheet, cfg->density, cfg->gravity, cfg->mode, cfg->dt, &c->pb));
  if (material) {
    const int n = run_sheet_table(cfg, table);
    for (int m = 0; m < n; ++m) table[m].bending_stiffness *= scale;
    PetscCall(pbng_problem_set_sheet_materials(&c->pb, n, table, material));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode run_build_levels(run_state *st)
{
  const pbng_config *cfg = st->cfg;
  const int L = cfg->solver_opt.multilevel;
  pbng_hierarchy *h = &st->hierarchy;
  pbng_material mat;
  char what[PETSC_MAX_PATH_LEN];

  PetscFunctionBeginUser;
  if (L <= 1) PetscFunctionReturn(0); /* -multilevel L > 1 is for -solver pbng only (options.c) */
  pbng_material_init(&mat, cfg->material, cfg->youngs, cfg->poisson);
  h->nlevels = L;
  PetscCall(PetscCalloc1(L - 1, &h->coarse));
  describe_level(cfg, 0, what, sizeof(what));
  snprintf(h->fine_name, sizeof(h->fine_name), "level %d (%s)", L - 1, what);
  PetscCall(report_level(st, h->fine_name, &st->dm));
  pbng_weak_springs springs = {0, NULL}; /* rank 0's all, or with -partitioner ptscotch each rank's share: no rank holds them all */
  if (cfg->ptscotch) PetscCall(pbng_weak_springs_spread(&st->dm, &springs.n, &springs.s));
  else PetscCall(pbng_weak_springs_gather(&st->dm, &springs.n, &springs.s));
  for (int k = 1; k < L; ++k) { /* k coarsenings of the finest: PETSc's level L-1-k */
    pbng_coarse_level *c = &h->coarse[L - 1 - k];
    describe_level(cfg, k, what, sizeof(what));
    snprintf(c->name, sizeof(c->name), "level %d (%s)", L - 1 - k, what);
    uint8_t *material = NULL;
    PetscCall(build_coarse_subdomain(st, k, c->name, &springs, c, st->sheet_material ? &material : NULL));
    malloc_trim(0);
    PetscCall(create_coarse_problem(st, &mat, material, c));
    PetscCall(PetscFree(material));
    c->pb.halo = &c->halo;
    /* released sets hold the coarse nodes in their boxes too; the coarse levels stay elastic (no eps_p: the
     * FAS correction keeps the fine level's elastoplastic equilibrium exact, docs/cloth.md#plasticity-in-a-run) */
    if (st->pb.handle) PetscCall(pbng_problem_set_handles(&c->pb, st->extent, cfg->release_penalty));
    PetscCall(report_level(st, c->name, &c->dm));
  }
  PetscCall(PetscFree(springs.s));
  PetscCall(PetscFree(st->made_levels));
  const int agg = cfg->solver_opt.ml.aggregation;
  char count[32] = "levels"; /* PBNG_AGGREGATION_ANY: as many as GAMG makes */
  if (agg > 0) snprintf(count, sizeof(count), "%d level%s", agg, agg > 1 ? "s" : "");
  if (agg > 0 || agg == PBNG_AGGREGATION_ANY)
    PetscCall(PetscPrintf(st->comm, "below level 0: %s by aggregation of its Newton matrix (PCGAMG, linear fields)%s\n", count,
                          agg > 0 ? "" : " as GAMG makes them"));
  PetscFunctionReturn(0);
}
