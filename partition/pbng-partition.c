/* pbng-partition: reads a mesh or generates a scene's mesh, colors its nodes (Sec. 9), partitions the
 * node graph with METIS and writes one piece per part (owned nodes, their elements, ghosts with
 * owners, colors, global ids, node sets, weak constraints) to a partitioned HDF5 file that `mpiexec -n P pbng -mesh FILE`
 * reads in parallel, each rank only its part.
 *   pbng-partition -scene box_stretch_twist -res 128 -parts 2 -output box128.p2.h5
 *   pbng-partition -mesh body.msh -parts 64 -output body.p64.h5
 * With -multilevel L it also writes the L-1 coarse levels of multilevel PBNG (the scene's generated
 * coarser meshes, or meshes coarsened from -mesh as pbng would make them) to FILE.level1.h5, ...,
 * each partitioned on its own, and prints the -mesh_levels option that names them. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "app/config.h"
#include "io/mesh_h5.h"
#include "io/partfile.h"
#include "mesh/coarsen.h"
#include "parallel/transfer.h"
#include "parallel/weak_levels.h"
#include "parallel/coloring.h"
#include "parallel/distributed_partition.h"
#include "parallel/partition.h"

static const char help[] = "pbng-partition: partition a mesh for pbng (METIS k-way on the node graph, or PT-Scotch in parallel).\n"
                           "  -scene NAME | -mesh FILE, -res N, -bar_length L, -weak FILE, -weak_stiffness K, -parts P, -output FILE.h5,\n"
                           "  -graph node|dual (node graph weighted by elements, default; or the element dual graph),\n"
                           "  -partitioner metis|ptscotch (metis: serial, default; ptscotch: generated boxes, bars and stacked blocks, HDF5 meshes, with their\n"
                           "    weak constraints, on any number of processes),\n"
                           "  -pbd_colors (with ptscotch: the PBD/XPBD constraint colors too; their element graph takes tens of times the node graph's memory),\n"
                           "  -multilevel L (also write the L-1 coarse levels: FILE.level1.h5 ..., the weak constraints carried to each;\n"
                           "    with -mesh, the boundary-set options -fix_box, -fix_group, -bcK_* and -multilevel_coarsen_* as given to pbng)\n";

typedef struct {
  pbng_config cfg;
  int parts;
  int dual;     /* -graph dual: METIS on the element dual graph instead of the node graph */
  int ptscotch; /* -partitioner ptscotch: generated grids partitioned in parallel, no process holding the whole mesh */
  int pbd_colors; /* -pbd_colors: with ptscotch, the PBD/XPBD element colors too (METIS's files always have them) */
  char output[PETSC_MAX_PATH_LEN];
  int levels; /* -multilevel L: the fine mesh and L-1 coarse levels */
} partition_options;

static PetscErrorCode read_options(partition_options *o)
{
  char scene[64] = "none";
  PetscBool set;
  pbng_mesh_options_given given = {0};
  PetscInt res, parts = 1;
  char element[16] = "", split[16] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-scene", scene, sizeof(scene), &set));
  PetscCall(pbng_config_scene_defaults(scene, &o->cfg));
  res = o->cfg.res;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-res", &res, &given.res));
  o->cfg.res = (int)res; /* range checked in pbng_config_check_mesh_parameters */
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-bar_length", &o->cfg.bar_length, &given.bar_length));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-element", element, sizeof(element), &given.element));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-tet_split", split, sizeof(split), &given.tet_split));
  PetscCall(pbng_config_set_grid_elements(&o->cfg, given.element ? element : NULL, given.tet_split ? split : NULL, PETSC_COMM_SELF));
  char cells[64] = "";
  PetscCall(PetscOptionsGetString(NULL, NULL, "-cells", cells, sizeof(cells), &given.cells));
  if (given.cells) PetscCall(pbng_config_set_grid_cells(&o->cfg, cells, PETSC_COMM_SELF));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mesh", o->cfg.mesh_file, sizeof(o->cfg.mesh_file), &set));
  if (set) o->cfg.mesh_source = PBNG_MESH_FILE;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-weak", o->cfg.weak_file, sizeof(o->cfg.weak_file), &set));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-weak_stiffness", &o->cfg.weak_stiffness, &given.weak_stiffness));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-scale", &o->cfg.scale, &given.scale));
  PetscErrorCode ierr = 0; /* -bind_distance, -bind_stiffness: read as pbng reads them */
  PetscOptionsBegin(PETSC_COMM_SELF, NULL, "pbng-partition: bindings", NULL);
  ierr = pbng_config_read_binding_options(PetscOptionsObject, &o->cfg);
  PetscOptionsEnd();
  PetscCall(ierr);
  /* sheets: a file's triangles get their bending stencils when k_b > 0, as pbng would add them */
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-sheet_bending_stiffness", &o->cfg.sheet_opt.bending_stiffness, NULL));
  PetscCheck(o->cfg.sheet_opt.bending_stiffness >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_bending_stiffness %g: must be >= 0",
             o->cfg.sheet_opt.bending_stiffness);
  PetscInt objects = o->cfg.objects;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-objects", &objects, &given.objects));
  o->cfg.objects = (int)objects;
  PetscCheck(o->cfg.mesh_source != PBNG_MESH_FILE || o->cfg.mesh_file[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "no mesh: give -scene NAME or -mesh FILE");
  PetscCall(pbng_config_check_mesh_parameters(&o->cfg, &given, PETSC_COMM_SELF));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-parts", &parts, &set));
  PetscCheck(parts >= 1 && parts <= 1000000, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-parts %d: must be >= 1", (int)parts);
  o->parts = (int)parts;
  char graph[16] = "node";
  PetscCall(PetscOptionsGetString(NULL, NULL, "-graph", graph, sizeof(graph), &set));
  PetscCheck(!strcmp(graph, "node") || !strcmp(graph, "dual"), PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "-graph %s: known graphs are node (default) and dual", graph);
  o->dual = !strcmp(graph, "dual");
  char partitioner[16] = "metis";
  PetscCall(PetscOptionsGetString(NULL, NULL, "-partitioner", partitioner, sizeof(partitioner), &set));
  PetscCheck(!strcmp(partitioner, "metis") || !strcmp(partitioner, "ptscotch"), PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "-partitioner %s: known partitioners are metis (default) and ptscotch", partitioner);
  o->ptscotch = !strcmp(partitioner, "ptscotch");
  PetscCheck(!o->ptscotch || !o->dual, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-graph dual is METIS's: -partitioner ptscotch partitions the node graph");
  PetscBool pbd_colors = PETSC_FALSE;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-pbd_colors", &pbd_colors, &set));
  PetscCheck(!set || o->ptscotch, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-pbd_colors is for -partitioner ptscotch (METIS's files always have the PBD/XPBD colors)");
  o->pbd_colors = pbd_colors;
  o->output[0] = 0;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-output", o->output, sizeof(o->output), &set));
  PetscCheck(o->output[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-output FILE.h5 is required");
  PetscInt levels = 1;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-multilevel", &levels, &set));
  PetscCheck(levels >= 1 && levels <= PBNG_MAX_LEVELS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel %d: must be 1..%d", (int)levels,
             PBNG_MAX_LEVELS);
  PetscCheck(levels == 1 || o->cfg.mesh_source != PBNG_MESH_OBJECTS, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "-multilevel %d: the objects of -scene objects_dropping have no coarse levels", (int)levels);
  PetscCheck(levels == 1 || o->cfg.mesh_source == PBNG_MESH_FILE || pbng_config_coarse_res(&o->cfg, (int)levels - 1) > 0, PETSC_COMM_SELF,
             PETSC_ERR_ARG_OUTOFRANGE, "-multilevel %d: the generated mesh (-res %d) has fewer coarser levels with at least 2 nodes per axis",
             (int)levels, o->cfg.res);
  o->levels = (int)levels;
  o->cfg.solver_opt.multilevel = o->levels;
  if (o->levels > 1) PetscCall(pbng_config_read_coarsening_options(&o->cfg));
  PetscCall(pbng_config_reject_unused_options(&o->cfg));
  PetscFunctionReturn(0);
}

static double peak_rss_mib(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static PetscErrorCode write_parts(const partition_options *o, const char *output, const pbng_mesh *mesh, const int32_t *color, int ncolors,
                                  const pbng_constraint_colors *cc, const int32_t *part)
{
  pbng_partfile_writer *w;
  int64_t owned_min = INT64_MAX, owned_max = 0, ghost_min = INT64_MAX, ghost_max = 0;

  PetscFunctionBeginUser;
  PetscCall(pbng_partfile_create(output, o->parts, mesh->nnodes, mesh->nelems, ncolors, cc, mesh, pbng_mesh_extent(mesh), &w));
  for (int p = 0; p < o->parts; ++p) {
    pbng_submesh sub;
    PetscErrorCode ierr = pbng_submesh_extract(mesh, color, ncolors, cc, part, p, &sub);
    if (!ierr) ierr = pbng_partfile_append(w, &sub);
    if (ierr) {
      pbng_partfile_close(&w, PETSC_FALSE);
      PetscCall(ierr);
    }
    owned_min = PetscMin(owned_min, sub.nowned), owned_max = PetscMax(owned_max, sub.nowned);
    ghost_min = PetscMin(ghost_min, sub.mesh.nnodes - sub.nowned), ghost_max = PetscMax(ghost_max, sub.mesh.nnodes - sub.nowned);
    PetscCall(pbng_submesh_destroy(&sub));
  }
  PetscCall(pbng_partfile_close(&w, PETSC_TRUE));
  printf("parts: %d, owned nodes %lld..%lld, ghost nodes %lld..%lld per part\n", o->parts, (long long)owned_min, (long long)owned_max,
         (long long)ghost_min, (long long)ghost_max);
  PetscFunctionReturn(0);
}

/* Colors, partitions and writes one mesh to `output`; t0: when the mesh started being made (for the times). */
static PetscErrorCode partition_one(const partition_options *o, const pbng_mesh *mesh, const char *output, double t0)
{
  pbng_node_elements adj;
  int32_t *color, *part;
  int ncolors;
  pbng_constraint_colors cc;
  const double t_mesh = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(mesh->nnodes, &color, mesh->nnodes, &part));
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, &ncolors));
  PetscCall(pbng_constraint_colors_compute(mesh, &adj, PETSC_TRUE, &cc)); /* also for -solver pbd | xpbd | xpbd_qs */
  const double t_color = MPI_Wtime();
  if (o->dual) PetscCall(pbng_partition_nodes_dual(mesh, o->parts, part));
  else PetscCall(pbng_partition_nodes(mesh, &adj, o->parts, part));
  const double t_metis = MPI_Wtime();
  PetscCall(pbng_node_elements_destroy(&adj));
  PetscCall(write_parts(o, output, mesh, color, ncolors, &cc, part));
  char kinds[96];
  pbng_mesh_kinds_label(mesh, kinds, sizeof(kinds));
  printf("%s: %lld nodes, %lld %s, %lld weak constraints, %d node colors (PBNG), %d + %d constraint colors (PBD/XPBD) -> %s\n",
         mesh->source, (long long)mesh->nnodes, (long long)mesh->nelems, mesh->etype && mesh->etype->kind == PBNG_ELEMENT_TET4 ? "tetrahedra" : kinds,
         (long long)mesh->nweak, ncolors, cc.nelem_colors, cc.nweak_colors, output);
  printf("time: mesh %.2f s, coloring %.2f s, METIS %.2f s, writing %.2f s, total %.2f s; peak memory %.1f MiB\n", t_mesh - t0,
         t_color - t_mesh, t_metis - t_color, MPI_Wtime() - t_metis, MPI_Wtime() - t0, peak_rss_mib());
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_constraint_colors_destroy(&cc));
  PetscFunctionReturn(0);
}

/* FILE.h5 -> FILE.level<k>.h5 */
static void level_path(const char *output, int k, char *path, size_t len)
{
  const size_t n = strlen(output);
  const int h5 = n > 3 && !strcmp(output + n - 3, ".h5");
  snprintf(path, len, "%.*s.level%d.h5", (int)(h5 ? n - 3 : n), output, k);
}

/* -multilevel L: coarse level k of the scene (generated) or of -mesh (coarsened from level k-1 with the
 * scene's boundary sets, as pbng does). */
static PetscErrorCode coarse_level(const partition_options *o, int k, const pbng_mesh *finer, pbng_mesh *mesh)
{
  int made;

  PetscFunctionBeginUser;
  PetscCall(pbng_config_build_coarse_mesh(&o->cfg, k, mesh, &made));
  if (made) PetscFunctionReturn(0);
  int8_t *node_bc;
  int64_t selected[PBNG_MAX_BC];
  PetscCall(PetscMalloc1(finer->nnodes + 1, &node_bc));
  PetscCall(pbng_bc_assign(&o->cfg.bcs, finer, pbng_mesh_extent(finer), node_bc, selected));
  PetscCall(pbng_mesh_coarsen(finer, node_bc, &o->cfg.coarsen, mesh));
  PetscCall(PetscFree(node_bc));
  PetscCheck(2 * mesh->nnodes <= finer->nnodes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-multilevel %d: coarsening %d left %lld of %lld nodes; use -multilevel %d at most", o->levels, k, (long long)mesh->nnodes,
             (long long)finer->nnodes, k);
  PetscFunctionReturn(0);
}

/* Drops a mesh's weak constraints (a coarse level's carried ones, once written: pbng coarsens each
 * level from the one above before carrying the constraints to it, and so does this). */
static PetscErrorCode drop_weak_constraints(pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(mesh->weak));
  mesh->nweak = 0;
  PetscFunctionReturn(0);
}

/* The part sizes over all parts: owned nodes and ghosts, min..max (collective). */
static PetscErrorCode report_parts(const pbng_parts *pp)
{
  int64_t v[4] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN}; /* -owned min, owned max, -ghost min, ghost max */

  PetscFunctionBeginUser;
  for (int k = 0; k < pp->nlocal; ++k) {
    const int64_t owned = pp->sub[k].nowned, ghosts = pp->sub[k].mesh.nnodes - owned;
    v[0] = PetscMax(v[0], -owned), v[1] = PetscMax(v[1], owned), v[2] = PetscMax(v[2], -ghosts), v[3] = PetscMax(v[3], ghosts);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "parts: %d, owned nodes %lld..%lld, ghost nodes %lld..%lld per part\n", pp->nparts, (long long)-v[0],
                        (long long)v[1], (long long)-v[2], (long long)v[3]));
  PetscFunctionReturn(0);
}

/* Each process's phase times (made: how its slice was made, "generate" or "read") and peak memory, then the slowest total
 * and the largest and summed peaks (collective). */
static PetscErrorCode report_processes(const char *made, const pbng_partition_times *t, double writing, double total)
{
  int rank, size;
  const double peak = peak_rss_mib();
  double most[2], sum;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD,
                                    "process %d: %s %.2f s, graph %.2f s, coloring %.2f s (%d rounds), PT-Scotch %.2f s, migration %.2f s, "
                                    "writing %.2f s; peak memory %.1f MiB\n",
                                    rank, made, t->generate, t->graph, t->coloring, t->rounds, t->partition, t->migration, writing, peak));
  PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  const double mine[2] = {total, peak};
  PetscCallMPI(MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(&peak, &sum, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "time: total %.2f s (slowest process); peak memory %.1f MiB per process at most, %.1f MiB over %d processes\n",
                        most[0], most[1], sum, size));
  PetscFunctionReturn(0);
}

/* -partitioner ptscotch: level k's mesh, an HDF5 mesh file read in slices (*read) or a generated grid, cut into the parts
 * by all processes together. */
static PetscErrorCode partition_level(const partition_options *o, int k, const char *output, pbng_weak_springs *springs, int *read, pbng_parts *pp,
                                      pbng_partition_times *t)
{
  pbng_mesh_slice s;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(pbng_config_level_slice(PETSC_COMM_WORLD, &o->cfg, k, springs, output, &s, read));
  /* -multilevel L: the finest level's weak constraints as springs, each process its slice's, carried to every level */
  PetscErrorCode ierr = k == 0 && o->levels > 1 ? pbng_slice_weak_springs(PETSC_COMM_WORLD, &s, &springs->n, &springs->s) : 0;
  if (ierr) PetscCall(pbng_mesh_slice_destroy(&s));
  PetscCall(ierr);
  t->generate = MPI_Wtime() - t0;
  PetscCall(pbng_partition_slice_ptscotch(PETSC_COMM_WORLD, &s, o->parts, o->pbd_colors && k == 0, pp, t));
  PetscFunctionReturn(0);
}

/* -partitioner ptscotch: level k's mesh partitioned by all processes together, written by them to output (springs: the
 * finest level's weak constraints, this process's share, made at k = 0 and carried to the coarse levels). */
static PetscErrorCode partition_in_parallel(const partition_options *o, int k, const char *output, pbng_weak_springs *springs)
{
  pbng_parts pp;
  pbng_partition_times t;
  int read;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(partition_level(o, k, output, springs, &read, &pp, &t));
  const double t_write = MPI_Wtime();
  PetscCall(pbng_partfile_write_parallel(PETSC_COMM_WORLD, output, &pp));
  const double writing = MPI_Wtime() - t_write;
  PetscCall(report_parts(&pp));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %lld nodes, %lld %s, %lld weak constraints, %d node colors (PBNG), %d + %d constraint colors (PBD/XPBD) -> %s\n",
                        pp.source, (long long)pp.nnodes, (long long)pp.nelems, pp.etype->kind == PBNG_ELEMENT_TET4 ? "tetrahedra" : pp.etype->name,
                        (long long)pp.nweak, pp.ncolors, pp.nelem_colors, pp.nweak_colors, output));
  PetscCall(report_processes(read ? "read" : "generate", &t, writing, MPI_Wtime() - t0));
  PetscCall(pbng_parts_destroy(&pp));
  PetscFunctionReturn(0);
}

/* -multilevel L: the option naming the coarse levels' files for pbng. */
static PetscErrorCode print_levels_option(const partition_options *o)
{
  char path[PETSC_MAX_PATH_LEN + 16], levels[4 * PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBeginUser;
  if (o->levels == 1) PetscFunctionReturn(0);
  for (int k = 1; k < o->levels; ++k) {
    level_path(o->output, k, path, sizeof(path));
    if (k > 1) PetscCall(PetscStrlcat(levels, ",", sizeof(levels)));
    PetscCall(PetscStrlcat(levels, path, sizeof(levels)));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "coarse levels for pbng: -mesh %s -mesh_levels %s\n", o->output, levels));
  PetscFunctionReturn(0);
}

/* -partitioner ptscotch on any number of processes: every level checked first (nothing written for an input it does
 * not handle), then each partitioned and written in turn. */
static PetscErrorCode run_ptscotch(const partition_options *o)
{
  char path[PETSC_MAX_PATH_LEN + 16], why[512];
  pbng_grid grid;

  PetscFunctionBeginUser;
  for (int k = 0; k < o->levels; ++k) {
    const char *file = pbng_config_ptscotch_file(&o->cfg, k, why, sizeof(why));
    PetscCheck(!why[0], PETSC_COMM_WORLD, PETSC_ERR_SUP, "-partitioner ptscotch: %s", why);
    PetscCheck(file || pbng_config_ptscotch_grid(&o->cfg, k, &grid, why, sizeof(why)), PETSC_COMM_WORLD, PETSC_ERR_SUP, "-partitioner ptscotch: %s", why);
  }
  pbng_weak_springs springs = {0, NULL};
  PetscErrorCode ierr = 0;
  for (int k = 0; k < o->levels && !ierr; ++k) {
    if (k == 0) PetscCall(PetscStrncpy(path, o->output, sizeof(path)));
    else level_path(o->output, k, path, sizeof(path));
    ierr = partition_in_parallel(o, k, path, &springs);
  }
  PetscCall(PetscFree(springs.s));
  PetscCall(ierr);
  PetscCall(print_levels_option(o));
  PetscFunctionReturn(0);
}

/* -partitioner metis: the whole mesh on one process. */
static PetscErrorCode run_metis(const partition_options *o)
{
  pbng_mesh mesh, coarse;
  char path[PETSC_MAX_PATH_LEN + 16];
  int64_t nsprings = 0;
  pbng_weak_spring *springs = NULL;

  PetscFunctionBeginUser;
  double t0 = MPI_Wtime();
  PetscCall(pbng_config_build_mesh(&o->cfg, &mesh));
  PetscCheck(o->levels == 1 || !(pbng_element_kinds_mask(mesh.etype, mesh.kind, mesh.nelems) & PBNG_SHEET_KINDS_MASK), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "-multilevel %d: meshes with sheet elements (tri3, bend4) have no coarse levels yet (docs/cloth.md#solvers)", o->levels);
  PetscCall(partition_one(o, &mesh, o->output, t0));
  if (o->levels > 1) PetscCall(pbng_weak_springs_of_mesh(&mesh, &nsprings, &springs));
  for (int k = 1; k < o->levels; ++k) {
    t0 = MPI_Wtime();
    PetscCall(coarse_level(o, k, &mesh, &coarse));
    PetscCall(pbng_mesh_destroy(&mesh));
    mesh = coarse;
    level_path(o->output, k, path, sizeof(path));
    PetscCall(pbng_mesh_add_weak_springs(&mesh, path, nsprings, springs, PBNG_TRANSFER_RADIUS));
    PetscCall(partition_one(o, &mesh, path, t0));
    PetscCall(drop_weak_constraints(&mesh));
  }
  PetscCall(print_levels_option(o));
  PetscCall(PetscFree(springs));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(void)
{
  partition_options o;
  int size;

  PetscFunctionBeginUser;
  PetscCall(read_options(&o));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(o.ptscotch || size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "run it on one process (METIS is serial), or give -partitioner ptscotch (generated boxes and bars, HDF5 meshes, any number of processes)");
  if (o.ptscotch) PetscCall(run_ptscotch(&o));
  else PetscCall(run_metis(&o));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscErrorCode ierr;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = run();
  PetscCall(PetscPopErrorHandler());
  if (ierr) { /* on several processes the errors are every process's alike: process 0 tells */
    const char *text = NULL;
    char *specific = NULL;
    int rank;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    PetscErrorMessage(ierr, &text, &specific);
    if (rank == 0) fprintf(stderr, "pbng-partition: error: %s\n", specific && specific[0] ? specific : text);
    PetscFinalize();
    return 1;
  }
  PetscCall(PetscFinalize());
  return 0;
}
