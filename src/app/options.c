/* The pbng command's options (PETSc options database: -help lists them, -options_file works). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app/config.h"

/* A comma-separated list of up to *n finite reals; on return *n is the count. Every malformed entry
 * is an error naming the option (PETSc's own parser would not name it). */
static PetscErrorCode read_real_list(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, double *values,
                                     PetscInt *n, PetscBool *set)
{
  char buf[1024] = "", *save = NULL;
  const PetscInt max = *n;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString(name, text, NULL, buf, buf, sizeof(buf), set));
  if (!*set) PetscFunctionReturn(0);
  *n = 0;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *end;
    const double v = strtod(tok, &end);
    while (*end == ' ') ++end;
    PetscCheck(end != tok && *end == 0 && isfinite(v), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "%s: \"%s\" is not a finite number", name, tok);
    PetscCheck(*n < max, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s: more than %d values", name, (int)max);
    values[(*n)++] = v;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_options_read_vector3(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, double v[3])
{
  PetscInt n = 3;
  PetscBool set;
  double tmp[3] = {v[0], v[1], v[2]};

  PetscFunctionBeginUser;
  PetscCall(read_real_list(PetscOptionsObject, name, text, tmp, &n, &set));
  if (set) {
    PetscCheck(n == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s needs exactly 3 comma-separated values (got %d)", name, (int)n);
    for (int d = 0; d < 3; ++d) v[d] = tmp[d];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode read_choice_material(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  const char *names[PBNG_MATERIAL_COUNT];
  int kind = (int)cfg->material;
  PetscBool set;

  PetscFunctionBeginUser;
  for (int k = 0; k < PBNG_MATERIAL_COUNT; ++k) names[k] = pbng_material_kind_name((pbng_material_kind)k);
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-material", "corotated | neohookean | stable_neohookean | stvk | neohookean_log", "material ", names,
                                      PBNG_MATERIAL_COUNT, &kind, &set));
  cfg->material = (pbng_material_kind)kind;
  PetscFunctionReturn(0);
}

/* A scene whose default solver is not PBNG (cloth_drape, plastic_twist: Newton) run with PBNG's own options and no
 * -solver runs PBNG: the options say which solver the user means (docs/options.md#scenes). */
static PetscErrorCode pbng_options_imply_pbng(pbng_config *cfg)
{
  static const char *const pbng_only[] = {"-accel", "-multilevel", "-mesh_levels", "-omega", "-rho", "-gamma", "-weak_blocks", NULL};

  PetscFunctionBeginUser;
  for (int k = 0; pbng_only[k]; ++k) {
    PetscBool given;
    PetscCall(PetscOptionsHasName(NULL, NULL, pbng_only[k], &given));
    if (given) {
      PetscCall(PetscStrncpy(cfg->solver, pbng_solver_pbng_ops.name, sizeof(cfg->solver)));
      break;
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode read_choices(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  char name[64];
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(read_choice_material(PetscOptionsObject, cfg));
  char known[128], help[256];
  pbng_solver_names(known, sizeof(known));
  snprintf(help, sizeof(help), "%s (each solver's own options: its section below)", known);
  PetscCall(PetscOptionsString("-solver", help, NULL, cfg->solver, cfg->solver, sizeof(cfg->solver), &set));
  PetscCheck(pbng_solver_find(cfg->solver, 1), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-solver: unknown solver \"%s\" (known: %s)", cfg->solver,
             known);
  if (!set) PetscCall(pbng_options_imply_pbng(cfg));
  PetscCall(PetscStrncpy(name, cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic", sizeof(name)));
  PetscCall(PetscOptionsString("-mode", "quasistatic | dynamic (backward Euler)", NULL, name, name, sizeof(name), &set));
  if (!strcmp(name, "quasistatic")) cfg->mode = PBNG_MODE_QUASISTATIC;
  else if (!strcmp(name, "dynamic")) cfg->mode = PBNG_MODE_DYNAMIC;
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-mode: unknown mode \"%s\" (known: quasistatic, dynamic)", name);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_mesh_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  PetscBool set, help;
  pbng_mesh_options_given given = {0};
  PetscInt res = cfg->res;
  char element[16], split[16];

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsInt("-res", "Res-N: N^3 corner vertices for box scenes (N across for the bar)", NULL, res, &res, &given.res));
  cfg->res = (int)res; /* range checked in pbng_config_check_mesh_parameters */
  PetscCall(PetscOptionsReal("-bar_length", "bar scene: length along x (cross-section 1 x 1)", NULL, cfg->bar_length, &cfg->bar_length, &given.bar_length));
  PetscCall(PetscStrncpy(element, pbng_element_type_get(cfg->elements.kind)->name, sizeof(element)));
  PetscCall(PetscStrncpy(split, cfg->elements.split == PBNG_TET_SPLIT_SIX ? "six" : "five", sizeof(split)));
  PetscCall(PetscOptionsString("-element", "generated box and bar: tet4 | tet10 | tet20 | hex8 | hex27", NULL, element, element, sizeof(element),
                               &given.element));
  PetscCall(PetscOptionsString("-tet_split", "generated tetrahedra: five (unbiased) | six (biased: two prisms of three) per cell", NULL, split, split,
                               sizeof(split), &given.tet_split));
  PetscCall(pbng_config_set_grid_elements(cfg, element, split, PETSC_COMM_WORLD));
  char cells[64] = "";
  PetscCall(PetscOptionsString("-cells", "generated box and bar: cells per axis NX,NY,NZ (instead of -res)", NULL, cells, cells, sizeof(cells), &given.cells));
  if (given.cells) PetscCall(pbng_config_set_grid_cells(cfg, cells, PETSC_COMM_WORLD));
  PetscCall(PetscOptionsString("-mesh", "mesh file: Gmsh .msh (2.2/4.1), TetGen .node/.ele, or HDF5 (/mesh/rest_positions, /mesh/tetrahedra: a pbng result, pbng-convert's)", NULL, cfg->mesh_file,
                               cfg->mesh_file, sizeof(cfg->mesh_file), &set));
  if (set) cfg->mesh_source = PBNG_MESH_FILE;
  static const char *const partitioners[] = {"metis", "ptscotch"}; /* cfg->ptscotch 0, 1 (not PetscOptionsEList: PETSc 3.18 leaks its copy on an unknown value) */
  int which = cfg->ptscotch;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-partitioner",
                                      "on the fly: metis (rank 0 partitions the whole mesh) | ptscotch (the ranks generate a box, bar or stacked blocks, or read an "
                                      "HDF5 mesh, in slices, with its weak constraints, and partition it together with PT-Scotch; docs/scaling.md)",
                                      "partitioner ", partitioners, 2, &which, &set));
  cfg->ptscotch = which == 1;
  PetscCall(PetscOptionsString("-weak", "weak constraints file to add to the mesh (docs/weak_constraints.md)", NULL, cfg->weak_file,
                               cfg->weak_file, sizeof(cfg->weak_file), &set));
  PetscCall(PetscOptionsReal("-weak_stiffness", "two_blocks_hanging: stiffness k of the weak constraints binding the blocks", NULL,
                             cfg->weak_stiffness, &cfg->weak_stiffness, &given.weak_stiffness));
  PetscCall(pbng_config_read_binding_options(PetscOptionsObject, cfg));
  PetscCall(PetscOptionsReal("-scale", "objects_dropping, muscles, cylinder_twist, cloth_on_table, projectile_sheet: refine the generated mesh s times per length", NULL, cfg->scale, &cfg->scale,
                             &given.scale));
  PetscInt objects = cfg->objects;
  PetscCall(PetscOptionsInt("-objects", "objects_dropping: the number of objects", NULL, objects, &objects, &given.objects));
  cfg->objects = (int)objects; /* range checked in pbng_config_check_mesh_parameters */
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscCheck(help || cfg->mesh_source != PBNG_MESH_FILE || cfg->mesh_file[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "no mesh: give -scene NAME or -mesh FILE (see -help)");
  PetscCall(pbng_config_check_mesh_parameters(cfg, &given, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_binding_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  double k[2] = {cfg->bind_k[0], cfg->bind_k[1]};
  PetscInt nk = 2; /* at most 2 values: a third is refused by read_real_list */
  PetscBool set_d, set_k;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-bind_distance", "connective tissue: bind, at rest, each surface vertex within this distance of another body's surface "
                             "(weak constraints; d > 0; without it none, except -scene muscles)", NULL, cfg->bind_distance, &cfg->bind_distance, &set_d));
  PetscCall(read_real_list(PetscOptionsObject, "-bind_stiffness", "the bindings' stiffness: k (isotropic) or k_n,k_t (along the surface's normal, across)",
                           k, &nk, &set_k)); /* not PetscOptionsRealArray: it leaks on a malformed value (found by tests/test_fuzz.sh) */
  PetscCall(PetscOptionsString("-bind_apart", "node sets whose nodes are not bound to another of these sets' nodes (comma-separated names: "
                               "parts that their boundary conditions move apart)", NULL, cfg->bind_apart, cfg->bind_apart, sizeof(cfg->bind_apart), NULL));
  PetscCall(PetscOptionsBool("-bind_snap", "move each bound vertex onto the surface it binds to (at most about d) and bind one side of each pair: "
                             "zero-length bindings that do not resist turning", NULL, cfg->bind_snap, &cfg->bind_snap, NULL));
  PetscCheck(!set_d || (cfg->bind_distance > 0 && isfinite(cfg->bind_distance)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-bind_distance %g: must be > 0", cfg->bind_distance);
  PetscCheck(!set_k || nk == 1 || nk == 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-bind_stiffness: give k or k_n,k_t");
  if (set_k) cfg->bind_k[0] = k[0], cfg->bind_k[1] = nk == 2 ? k[1] : k[0];
  PetscCheck(cfg->bind_k[0] >= 0 && cfg->bind_k[1] >= 0 && cfg->bind_k[0] + cfg->bind_k[1] > 0 && isfinite(cfg->bind_k[0]) && isfinite(cfg->bind_k[1]),
             PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-bind_stiffness %g,%g: need k_n, k_t >= 0, finite, not both 0", cfg->bind_k[0], cfg->bind_k[1]);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_fixed_sets(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  double boxes[6 * PBNG_MAX_BC];
  char *groups[PBNG_MAX_BC];
  PetscInt n = 6 * PBNG_MAX_BC, ng = PBNG_MAX_BC;
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(read_real_list(PetscOptionsObject, "-fix_box", "clamp the nodes in box x0,y0,z0,x1,y1,z1 (several: 6k values)", boxes, &n, &set));
  if (set) {
    PetscCheck(n > 0 && n % 6 == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "-fix_box needs 6 comma-separated values per box: x0,y0,z0,x1,y1,z1 (got %d)", (int)n);
    for (PetscInt b = 0; b < n / 6; ++b) {
      char name[64];
      snprintf(name, sizeof(name), "fix_box%d", (int)b);
      PetscCall(pbng_bc_add_box(&cfg->bcs, name, &boxes[6 * b], NULL));
    }
  }
  PetscCall(PetscOptionsStringArray("-fix_group", "clamp the nodes of these node sets / physical groups", NULL, groups, &ng, &set));
  PetscErrorCode ierr = 0;
  for (PetscInt g = 0; set && g < ng; ++g) { /* every name is freed, also after an error (fuzzing found that leak) */
    if (!ierr) ierr = pbng_bc_add_group(&cfg->bcs, groups[g], groups[g], NULL);
    PetscCall(PetscFree(groups[g]));
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* -bcK_box | -bcK_group with -bcK_velocity, -bcK_rotation_rate, -bcK_axis, -bcK_center, -bcK_scale_rate. */
static PetscErrorCode read_moving_set(PetscOptionItems *PetscOptionsObject, pbng_config *cfg, int k)
{
  char opt[64], group[64] = "";
  double box[6];
  PetscInt n = 6;
  PetscBool has_box, has_group, has_release, set;
  double release = 0.0;
  pbng_motion m = {.axis = {1, 0, 0}};

  PetscFunctionBeginUser;
  snprintf(opt, sizeof(opt), "-bc%d_box", k);
  PetscCall(read_real_list(PetscOptionsObject, opt, "boundary set by box x0,y0,z0,x1,y1,z1", box, &n, &has_box));
  PetscCheck(!has_box || n == 6, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s needs 6 values (got %d)", opt, (int)n);
  snprintf(opt, sizeof(opt), "-bc%d_group", k);
  PetscCall(PetscOptionsString(opt, "boundary set by node set / physical group", NULL, group, group, sizeof(group), &has_group));
  snprintf(opt, sizeof(opt), "-bc%d_velocity", k);
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, opt, "translation velocity", m.velocity));
  snprintf(opt, sizeof(opt), "-bc%d_rotation_rate", k);
  PetscCall(PetscOptionsReal(opt, "rotation rate (rad per unit time)", NULL, m.rotation_rate, &m.rotation_rate, &set));
  snprintf(opt, sizeof(opt), "-bc%d_axis", k);
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, opt, "rotation axis", m.axis));
  snprintf(opt, sizeof(opt), "-bc%d_center", k);
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, opt, "center of rotation and scaling", m.center));
  snprintf(opt, sizeof(opt), "-bc%d_scale_rate", k);
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, opt, "per-axis scaling rate about the center", m.scale_rate));
  snprintf(opt, sizeof(opt), "-bc%d_until", k);
  PetscCall(PetscOptionsReal(opt, "the motion stops at this time and holds the set there (0: never)", NULL, m.until, &m.until, &set));
  snprintf(opt, sizeof(opt), "-bc%d_release", k);
  PetscCall(PetscOptionsReal(opt, "release the set at this time: its nodes are free, tied to the motion by a stiff spring until then", NULL, release,
                             &release, &has_release));
  PetscCheck(!(has_box && has_group), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-bc%d: give _box or _group, not both", k);
  snprintf(opt, sizeof(opt), "bc%d", k);
  if (has_box) PetscCall(pbng_bc_add_box(&cfg->bcs, opt, box, &m));
  if (has_group) PetscCall(pbng_bc_add_group(&cfg->bcs, opt, group, &m));
  if (has_release && (has_box || has_group)) PetscCall(pbng_bc_set_release(&cfg->bcs, cfg->bcs.count - 1, release));
  PetscFunctionReturn(0);
}

/* -load_box x0,y0,z0,x1,y1,z1 and -load_force fx,fy,fz: one constant force shared by the box's nodes. */
static PetscErrorCode read_point_load(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_point_load *l = &cfg->load;
  PetscInt n = 6;
  PetscBool box_set, force_set;
  double box[6];

  PetscFunctionBeginUser;
  PetscCall(read_real_list(PetscOptionsObject, "-load_box", "point load: the nodes in box x0,y0,z0,x1,y1,z1 share -load_force", box, &n, &box_set));
  PetscCheck(!box_set || n == 6, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-load_box needs 6 comma-separated values: x0,y0,z0,x1,y1,z1 (got %d)", (int)n);
  PetscCall(PetscOptionsHasName(NULL, NULL, "-load_force", &force_set));
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, "-load_force", "point load: total force fx,fy,fz shared by the -load_box nodes", l->force));
  if (box_set) memcpy(l->box, box, sizeof(box)), l->active = 1;
  PetscCheck(l->active || !force_set, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-load_force needs -load_box (the nodes that share it)");
  for (int d = 0; d < 3 && l->active; ++d)
    PetscCheck(isfinite(l->force[d]) && l->box[d] <= l->box[3 + d], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-load_box/-load_force: a non-finite force or a box with x%d > x%d", d, d + 3);
  PetscFunctionReturn(0);
}

/* -plasticity, -plastic_yield, -plastic_creep, -plastic_max (any of the last three turns it on), and
 * -release_penalty (released sets, -bcK_release). The values are checked with the frame step when the
 * problem is made (pbng_problem_set_plasticity). */
static PetscErrorCode read_plasticity(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_plasticity *p = &cfg->plasticity;
  PetscBool y, c, m, on, set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-plastic_yield", "plasticity: gamma_yield, von Mises threshold on |dev(E - eps_p)|", NULL, p->yield, &p->yield, &y));
  PetscCall(PetscOptionsReal("-plastic_creep", "plasticity: gamma_creep, flow rate per unit time", NULL, p->creep, &p->creep, &c));
  PetscCall(PetscOptionsReal("-plastic_max", "plasticity: gamma_max, the largest |eps_p|", NULL, p->max, &p->max, &m));
  on = cfg->plastic || y || c || m;
  PetscCall(PetscOptionsBool("-plasticity", "elastoplastic StVK (seed position-based-continuous-materials Sec. 4.2)", NULL, on, &on, &set));
  PetscCheck(!set || on || !(y || c || m), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-plasticity 0 with -plastic_yield/-plastic_creep/-plastic_max");
  cfg->plastic = on;
  PetscCall(PetscOptionsReal("-release_penalty", "released sets (-bcK_release): spring stiffness over the node's own", NULL, cfg->release_penalty,
                             &cfg->release_penalty, &set));
  PetscCheck(cfg->release_penalty > 0 && isfinite(cfg->release_penalty), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-release_penalty %g: must be positive and finite", cfg->release_penalty);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_physics(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-youngs", "Young's modulus E (> 0)", NULL, cfg->youngs, &cfg->youngs, &set));
  PetscCall(PetscOptionsReal("-poisson", "Poisson's ratio nu in (-1, 0.5)", NULL, cfg->poisson, &cfg->poisson, &set));
  PetscCall(PetscOptionsReal("-density", "density rho (> 0)", NULL, cfg->density, &cfg->density, &set));
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, "-gravity", "gravity gx,gy,gz", cfg->gravity));
  PetscCall(read_point_load(PetscOptionsObject, cfg));
  PetscCall(read_plasticity(PetscOptionsObject, cfg));
  pbng_material probe;
  PetscCheck(cfg->material != PBNG_MATERIAL_NEOHOOKEAN_LOG || !(cfg->poisson < 0), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-material neohookean_log -poisson %g: needs nu >= 0 (with lambda < 0 its energy -mu log J + lambda/2 (log J)^2 is unbounded below as J -> 0)",
             cfg->poisson);
  PetscCheck(pbng_material_init(&probe, cfg->material, cfg->youngs, cfg->poisson) == 0, PETSC_COMM_WORLD,
             PETSC_ERR_ARG_OUTOFRANGE, "-youngs %g -poisson %g: need E > 0 and -1 < nu < 0.5", cfg->youngs, cfg->poisson);
  PetscCheck(cfg->density > 0 && isfinite(cfg->density), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-density %g: must be > 0", cfg->density);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_coarsen_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg, PetscBool allowed);

/* -multilevel L and -mesh_levels C1,C2,...: the levels of PBNG inside FAS (docs/multilevel.md; the
 * multilevel solver reads its own options, src/methods/multilevel/multilevel.c). */
static PetscErrorCode read_multilevel_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_solver_options *o = &cfg->solver_opt;
  PetscInt levels = o->multilevel, nfiles = PBNG_MAX_LEVELS - 1;
  PetscBool levels_set, files_set;
  char *files[PBNG_MAX_LEVELS - 1], given[32] = "auto";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-multilevel",
                               "pbng: levels of the FAS hierarchy, the finest included (1: single-level PBNG; auto: chosen per run, "
                               "docs/multilevel.md#automatic-levels)",
                               NULL, given, given, sizeof(given), &levels_set));
  cfg->multilevel_auto = levels_set && !strcmp(given, "auto");
  if (levels_set && !cfg->multilevel_auto) {
    long n = 0;
    PetscCheck(pbng_parse_auto_or_integer(given, &n) == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-multilevel %s: must be auto or a number of levels 1..%d", given,
               PBNG_MAX_LEVELS);
    levels = n < 0 ? 0 : n > 1000 ? 1000 : (PetscInt)n;
  }
  PetscCall(PetscOptionsStringArray("-mesh_levels", "with -mesh: coarser meshes C1,C2,... (finest first; any mesh format, partitioned files too)",
                                    NULL, files, &nfiles, &files_set));
  PetscErrorCode ierr = 0;
  for (PetscInt k = 0; files_set && k < nfiles; ++k) { /* every name is freed, also after an error */
    if (!ierr) ierr = PetscStrncpy(cfg->mesh_levels[k], files[k], sizeof(cfg->mesh_levels[k]));
    if (!ierr && !files[k][0]) ierr = PETSC_ERR_ARG_WRONG;
    PetscCall(PetscFree(files[k]));
  }
  PetscCheck(ierr != PETSC_ERR_ARG_WRONG, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-mesh_levels: an empty file name");
  PetscCall(ierr);
  cfg->nmesh_levels = files_set ? (int)nfiles : 0;
  PetscCheck(!files_set || nfiles > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-mesh_levels: no file given");
  PetscCheck(!files_set || cfg->mesh_source == PBNG_MESH_FILE, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-mesh_levels names coarser meshes of -mesh FILE (a generated scene makes its own coarse levels)");
  if (files_set && (!levels_set || cfg->multilevel_auto)) levels = nfiles + 1, cfg->multilevel_auto = 0;
  PetscCheck(levels >= 1 && levels <= PBNG_MAX_LEVELS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel %d: must be 1..%d", (int)levels,
             PBNG_MAX_LEVELS);
  PetscCheck(!files_set || levels == nfiles + 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-multilevel %d with %d -mesh_levels files: the levels are the -mesh file and its %d coarser meshes", (int)levels, (int)nfiles,
             (int)nfiles);
  const pbng_solver_ops *ops = pbng_solver_find(cfg->solver, 1);
  PetscCheck(!(levels_set || files_set) || (ops && ops->kind.multilevel), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-multilevel and -mesh_levels are for -solver pbng (the solver is %s)", cfg->solver);
  if (cfg->multilevel_auto) levels = 1; /* resolved with the defaults (options_defaults.c) */
  PetscCheck(levels == 1 || cfg->mesh_source != PBNG_MESH_OBJECTS, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-multilevel %d: the objects of -scene objects_dropping have no coarse levels (not generated at coarser cells yet; its dynamic frames take ~20 sweeps)",
             (int)levels);
  o->multilevel = (int)levels;
  int usable = 0; /* coarser levels a generated mesh can have */
  while (usable < PBNG_MAX_LEVELS && pbng_config_coarse_res(cfg, usable + 1) > 0) ++usable;
  PetscCheck(pbng_config_coarsens_fine_mesh(cfg) || cfg->mesh_source == PBNG_MESH_FILE || levels - 1 <= usable, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-multilevel %d: the generated mesh (%s %d%s) has only %d coarser level%s with at least 2 nodes per axis", (int)levels,
             cfg->cells[0] > 0 ? "-cells" : "-res", cfg->cells[0] > 0 ? cfg->cells[0] : cfg->res, cfg->cells[0] > 0 ? ",..." : "", usable,
             usable == 1 ? "" : "s");
  PetscCall(read_coarsen_options(PetscOptionsObject, cfg, (o->multilevel > 1 || !levels_set || cfg->multilevel_auto) && pbng_config_coarsens_fine_mesh(cfg) && !files_set));
  PetscFunctionReturn(0);
}

/* -multilevel_coarsen_*: how coarse levels are made from the fine mesh (allowed: whether they are). */
static PetscErrorCode read_coarsen_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg, PetscBool allowed)
{
  pbng_coarsen_options *c = &cfg->coarsen;
  PetscBool q_set, a_set, r_set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-multilevel_coarsen_ratio", "-multilevel with -mesh alone: nodes of a level / nodes of the next coarser", NULL,
                             c->target_ratio, &c->target_ratio, &r_set));
  PetscCall(PetscOptionsReal("-multilevel_coarsen_quality", "-multilevel with -mesh alone: least 6 sqrt(2) V / l_max^3 of a coarse tetrahedron", NULL,
                             c->quality_min, &c->quality_min, &q_set));
  PetscCall(PetscOptionsReal("-multilevel_coarsen_angle", "-multilevel with -mesh alone: feature angle (degrees) of ridges kept in coarse meshes",
                             NULL, c->feature_angle, &c->feature_angle, &a_set));
  PetscCheck(c->target_ratio >= 2 && c->target_ratio <= 1000, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel_coarsen_ratio %g: must be in [2, 1000]",
             c->target_ratio);
  PetscCheck(c->quality_min > 0 && c->quality_min < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel_coarsen_quality %g: must be in (0, 1)",
             c->quality_min);
  PetscCheck(c->feature_angle > 0 && c->feature_angle < 90, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel_coarsen_angle %g: must be in (0, 90)",
             c->feature_angle);
  PetscCheck(!(q_set || a_set || r_set) || allowed, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-multilevel_coarsen_* are for -multilevel L > 1 with -mesh FILE and no -mesh_levels (coarse meshes made from the fine one)");
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_coarsening_options(pbng_config *cfg)
{
  PetscFunctionBeginUser;
  PetscErrorCode ierr = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "pbng-partition -multilevel: coarse levels", NULL);
  if (!ierr) ierr = read_fixed_sets(PetscOptionsObject, cfg);
  for (int k = 0; k < PBNG_USER_BCS && !ierr; ++k) ierr = read_moving_set(PetscOptionsObject, cfg, k);
  if (!ierr) ierr = read_coarsen_options(PetscOptionsObject, cfg, cfg->mesh_source == PBNG_MESH_FILE);
  PetscOptionsEnd();
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* -quasistatic_guess's default (after the solver, the tolerance and -contact are known): secant for PBNG and Newton frames to a
 * tolerance without contacts, previous otherwise. The constraint solvers keep their own start (with the guess xpbd_qs's 3-rank
 * contact test ended 0.42 deep); with contacts the guess is opt-in (the muscles arm at the paper's size, guarded: frame 7 took
 * 101 s against 57 s without it, docs/muscles.md#quasistatic-frames-in-contact). */
static void resolve_quasistatic_guess(pbng_config *cfg)
{
  if (cfg->secant_guess >= 0) return;
  const pbng_solver_ops *ops = pbng_solver_resolve(cfg->solver, &cfg->solver_opt);
  cfg->secant_guess = cfg->mode == PBNG_MODE_QUASISTATIC && cfg->rtol > 0 && !(ops && ops->kind.own_guess) && !cfg->contact;
}

static PetscErrorCode read_solver_controls(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  PetscBool set, every_set, dt_set, frames_set;
  PetscInt frames = cfg->frames, iters = cfg->iters, every = cfg->residual_every, threads = 0;

  PetscFunctionBeginUser;
  PetscCall(read_multilevel_options(PetscOptionsObject, cfg));
  PetscCall(PetscOptionsReal("-dt", "time step per frame (cloth_drape: 0.1 / (res - 1))", NULL, cfg->dt, &cfg->dt, &dt_set));
  static const char *const guesses[] = {"inertial", "free_fall"}; /* cfg->free_fall_guess 0, 1 */
  int guess = cfg->free_fall_guess;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-dynamic_guess",
                                      "a dynamic frame's first iterate: x^n + dt v^n (inertial) or x^n + dt v^n + dt^2 g (free_fall)", "guess ", guesses, 2,
                                      &guess, &set));
  PetscCheck(!set || cfg->mode == PBNG_MODE_DYNAMIC, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-dynamic_guess is for -mode dynamic");
  cfg->free_fall_guess = guess;
  static const char *const qs_guesses[] = {"previous", "secant"}; /* cfg->secant_guess 0, 1 */
  int qs_guess = cfg->secant_guess < 0 ? 1 : cfg->secant_guess;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-quasistatic_guess",
                                      "a quasistatic frame's first iterate for the free nodes: the previous frame's end x_k (previous) or "
                                      "x_k + (x_k - x_{k-1}), the last frame's change again (secant; the default for pbng and newton frames to a tolerance without "
                                      "-contact)", "guess ", qs_guesses, 2, &qs_guess, &set));
  PetscCheck(!set || cfg->mode == PBNG_MODE_QUASISTATIC, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-quasistatic_guess is for -mode quasistatic");
  if (set) cfg->secant_guess = qs_guess;
  PetscCall(PetscOptionsInt("-frames", "number of frames", NULL, frames, &frames, &frames_set));
  pbng_config_scene_step(cfg, dt_set, &frames, frames_set);
  PetscBool iters_set;
  PetscCall(PetscOptionsInt("-iters", "maximum iterations per frame (with a tolerance: a cap)", NULL, iters, &iters, &iters_set));
  const double shown = cfg->rtol >= 0 ? cfg->rtol : cfg->mode == PBNG_MODE_QUASISTATIC ? PBNG_RTOL_DEFAULT : 0; /* -help: not the unset mark */
  double rtol = shown;
  PetscCall(PetscOptionsReal("-rtol", "end a frame when the relative residual reaches this (0: run -iters; default 1e-3 in quasistatic mode)", NULL,
                             shown, &rtol, &set));
  if (set) cfg->rtol = rtol;
  PetscCheck(!set || cfg->rtol >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rtol %g: must be in [0, 1)", cfg->rtol);
  pbng_config_resolve_tolerance(cfg, iters_set, &iters);
  PetscCall(PetscOptionsReal("-atol", "with -rtol: a frame also ends once the residual is at most this (0: off)", NULL, cfg->atol, &cfg->atol, &set));
  PetscCheck(cfg->atol >= 0 && isfinite(cfg->atol), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-atol %g: must be >= 0", cfg->atol);
  if (set) cfg->atol_floor = 0; /* -atol given replaces the default tolerance's floor */
  PetscCheck(!set || cfg->atol == 0 || cfg->rtol > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-atol is for -rtol (the residual is evaluated to check them)");
  PetscCall(PetscOptionsInt("-residual_every", "with -rtol: evaluate the residual every k iterations (default: after every multilevel cycle or Newton step; "
                            "after sweeps 1..8, then a quarter of the sweeps so far apart, at most 10)", NULL, every, &every, &every_set));
  PetscCheck(!every_set || cfg->rtol > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-residual_every is for -rtol (without it the residual is evaluated once per frame, or every iteration with -monitor)");
  PetscInt initial_frame = -1;
  PetscCall(PetscOptionsString("-initial", "start from a frame of an earlier pbng result of the same mesh and mode (dynamic: the velocity from the frame before)", NULL, cfg->initial,
                               cfg->initial, sizeof(cfg->initial), &set));
  PetscCall(PetscOptionsInt("-initial_frame", "with -initial: the frame to start from (-1: the last)", NULL, initial_frame, &initial_frame, &set));
  PetscCheck(!set || cfg->initial[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-initial_frame needs -initial FILE");
  PetscCheck(initial_frame >= -1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-initial_frame %d: must be >= 0 (or -1: the last)", (int)initial_frame);
  cfg->initial_frame = (int)initial_frame;
  PetscCall(PetscOptionsString("-initial_state", "rest | flat (squashed onto the plane y = centre) | inverted (mirrored in x): where the free nodes start",
                               NULL, cfg->initial_state, cfg->initial_state, sizeof(cfg->initial_state), &set));
  PetscCheck(!strcmp(cfg->initial_state, "rest") || !strcmp(cfg->initial_state, "flat") || !strcmp(cfg->initial_state, "inverted"),
             PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-initial_state: unknown state \"%s\" (known: rest, flat, inverted)", cfg->initial_state);
  PetscCheck(!strcmp(cfg->initial_state, "rest") || !cfg->initial[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-initial_state %s and -initial %s both say where the nodes start: give one", cfg->initial_state, cfg->initial);
  PetscCall(PetscOptionsReal("-time_budget", "end a frame once its iterations took this many seconds (slowest rank; 0: no limit)", NULL,
                             cfg->time_budget, &cfg->time_budget, &set));
  PetscCall(PetscOptionsBool("-monitor", "print the residual after every iteration", NULL, cfg->monitor, &cfg->monitor, &set));
  PetscCall(PetscOptionsBool("-dry_run", "validate every option and build the mesh, boundary sets and solver; write no file, run no iteration", NULL,
                             cfg->dry_run, &cfg->dry_run, &set));
  PetscCall(PetscOptionsBool("-strict", "a frame that stops at -iters before reaching -rtol (or -atol) is an error", NULL, cfg->strict, &cfg->strict, &set));
  PetscCheck(!cfg->strict || cfg->rtol > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-strict needs a tolerance (-rtol > 0): without one every frame runs to -iters");
  PetscCall(PetscOptionsReal("-divergence_limit", "stop with an error when the relative residual exceeds this (or is not finite)", NULL,
                             cfg->divergence_limit, &cfg->divergence_limit, &set));
  PetscCheck(cfg->divergence_limit > 1 && !isnan(cfg->divergence_limit), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-divergence_limit %g: must be > 1", cfg->divergence_limit);
  PetscCall(PetscOptionsInt("-threads", "OpenMP threads per rank (0: OMP_NUM_THREADS)", NULL, threads, &threads, &set));
  PetscCheck(cfg->dt > 0 && isfinite(cfg->dt), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dt %g: must be > 0", cfg->dt);
  PetscCheck(frames >= 0 && frames <= 999999, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-frames %d: must be 0..999999", (int)frames);
  PetscCheck(iters >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-iters %d: must be >= 1", (int)iters);
  PetscCheck(cfg->rtol >= 0 && cfg->rtol < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rtol %g: must be in [0, 1)", cfg->rtol);
  PetscCheck(cfg->time_budget >= 0 && isfinite(cfg->time_budget), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-time_budget %g: must be >= 0", cfg->time_budget);
  PetscCheck(!every_set || every >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-residual_every %d: must be >= 1", (int)every);
  PetscCheck(threads >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-threads %d: must be >= 0", (int)threads);
  cfg->frames = (int)frames, cfg->iters = (int)iters, cfg->residual_every = (int)every, cfg->threads = (int)threads;
  PetscFunctionReturn(0);
}

static PetscErrorCode read_checkpoint_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  PetscBool set;
  PetscInt every = cfg->checkpoint_every;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-checkpoint", "checkpoint file (default <output>.checkpoint.h5), written on SIGTERM/SIGUSR1 and by -checkpoint_every", NULL,
                               cfg->checkpoint, cfg->checkpoint, sizeof(cfg->checkpoint), &set));
  PetscCall(PetscOptionsInt("-checkpoint_every", "also write a checkpoint after every K frames (0: only when stopped by a signal)", NULL, every, &every, &set));
  PetscCheck(every >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-checkpoint_every %d: must be >= 0", (int)every);
  cfg->checkpoint_every = (int)every;
  PetscCall(PetscOptionsString("-restart", "continue from a checkpoint FILE, or auto: from the checkpoint file if there is one", NULL, cfg->restart,
                               cfg->restart, sizeof(cfg->restart), &set));
  PetscCheck(!(cfg->restart[0] && cfg->initial[0]), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-restart and -initial exclude each other");
  PetscInt after = 0;
  PetscCall(PetscOptionsInt("-test_signal_after", "testing aid: rank 0 sends itself SIGUSR1 after N iterations of this run", NULL, after, &after, &set));
  PetscCheck(after >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-test_signal_after %d: must be >= 0", (int)after);
  cfg->test_signal_after = (int)after;
  PetscCall(PetscOptionsReal("-failure_timeout", "seconds a rank that failed alone waits for the others before aborting every rank", NULL,
                             cfg->failure_timeout, &cfg->failure_timeout, &set));
  PetscCheck(cfg->failure_timeout > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-failure_timeout %g: must be > 0", cfg->failure_timeout);
  PetscInt fail_rank = cfg->test_fail_rank;
  PetscCall(PetscOptionsInt("-test_fail_rank", "testing aid: this rank fails alone (see -test_fail_at)", NULL, fail_rank, &fail_rank, &set));
  cfg->test_fail_rank = (int)fail_rank;
  PetscCall(PetscOptionsString("-test_fail_at", "testing aid: setup | iteration", NULL, cfg->test_fail_at, cfg->test_fail_at,
                               sizeof(cfg->test_fail_at), &set));
  PetscFunctionReturn(0);
}

/* PETSc options read only at PetscFinalize (so still unused when pbng checks). */
static int read_at_finalize(const char *name)
{
  static const char *const names[] = {"options_left", "malloc_dump", "memory_view", "objects_dump", "malloc_view", "check_pointer_intensity"};
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
    if (!strcmp(name, names[k])) return 1;
  return !strncmp(name, "log_view", 8);
}

/* Options of the PETSc objects the configured solver creates (read when it sets up). */
static int is_deferred_option(const pbng_config *cfg, const char *name)
{
  return pbng_solver_owns_petsc_option(pbng_solver_resolve(cfg->solver, &cfg->solver_opt), name);
}

/* The solver kind whose PETSc objects read options like `name` (the first in the registry), or NULL. */
static const pbng_solver_ops *petsc_option_owner(const char *name)
{
  for (int k = 0; k < pbng_solver_count(); ++k)
    if (pbng_solver_owns_petsc_option(pbng_solver_at(k), name)) return pbng_solver_at(k);
  return NULL;
}

/* ---- the restart key ------------------------------------------------------------------------------ */

/* Options that do not change the states a run computes: where results go and what is printed,
 * how the mesh is partitioned (-partitioner: bitwise the same results), resources, how long the run goes on (-frames: a restart may continue further), testing aids and
 * PETSc's diagnostics. Every other option (physics, mesh, boundary sets with their geometry and
 * motions, solver and its parameters, PETSc options of the solvers) is part of the restart key. */
static int outside_restart_key(const char *name)
{
  static const char *const names[] = {"dry_run", "output",   "partitioner", "summary",         "monitor",          "threads",        "frames",          "time_budget",
                                      "checkpoint", "checkpoint_every", "restart",         "failure_timeout", "divergence_limit", "help",
                                      "options_file", "options_monitor", "info",           "history"};
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
    if (!strcmp(name, names[k])) return 1;
  return read_at_finalize(name) || !strncmp(name, "test_", 5) || strstr(name, "monitor") || strstr(name, "_view") || !strncmp(name, "log_", 4);
}

typedef struct {
  char *name, *value;
} option_pair;

static int cmp_option_pair(const void *a, const void *b) { return strcmp(((const option_pair *)a)->name, ((const option_pair *)b)->name); }

/* The options database as "-name value" tokens (PetscOptionsGetAll) split into pairs: a token is a
 * name when it starts with '-' and a letter; the tokens up to the next name are its value. The pairs
 * point into text. */
static int split_options(char *text, option_pair *pairs, int max)
{
  int n = 0;
  char *save = NULL;
  for (char *tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const int is_name = tok[0] == '-' && ((tok[1] >= 'a' && tok[1] <= 'z') || (tok[1] >= 'A' && tok[1] <= 'Z'));
    if (is_name && n < max) pairs[n++] = (option_pair){tok + 1, NULL};
    else if (!is_name && n > 0 && !pairs[n - 1].value) pairs[n - 1].value = tok;
    else if (!is_name && n > 0) tok[-1] = ' '; /* a value with spaces: rejoin it */
  }
  return n;
}

#define RESTART_KEY_MAX_OPTIONS 512

PetscErrorCode pbng_config_make_restart_key(pbng_config *cfg)
{
  char *all;
  option_pair *pairs;
  size_t used = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  PetscCall(PetscMalloc1(RESTART_KEY_MAX_OPTIONS, &pairs));
  const int n = split_options(all, pairs, RESTART_KEY_MAX_OPTIONS);
  qsort(pairs, (size_t)n, sizeof(*pairs), cmp_option_pair);
  cfg->restart_key[0] = 0;
  for (int k = 0; k < n && used < sizeof(cfg->restart_key); ++k)
    if (!outside_restart_key(pairs[k].name))
      used += (size_t)snprintf(cfg->restart_key + used, sizeof(cfg->restart_key) - used, "%s-%s%s%s", used ? " " : "", pairs[k].name,
                               pairs[k].value ? " " : "", pairs[k].value ? pairs[k].value : "");
  PetscCall(PetscFree(pairs));
  PetscCall(PetscFree(all));
  PetscCheck(n < RESTART_KEY_MAX_OPTIONS && used < sizeof(cfg->restart_key), PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ,
             "too many options for a checkpoint's restart key (at most %d options, %d characters)", RESTART_KEY_MAX_OPTIONS - 1,
             (int)sizeof(cfg->restart_key) - 1);
  PetscFunctionReturn(0);
}

/* The first option nobody read, or "" (copied into first[size]): with deferred_only, only the
 * solver's own PETSc options count; otherwise every option but those read at PetscFinalize and the
 * solver's own. */
static PetscErrorCode first_unused_option(const pbng_config *cfg, PetscBool deferred_only, char *first, size_t size)
{
  PetscInt n;
  char **names, **values;

  PetscFunctionBeginUser;
  first[0] = 0;
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt k = 0; k < n && !first[0]; ++k) {
    const char *name = names[k];
    const int counts = deferred_only ? is_deferred_option(cfg, name) : !read_at_finalize(name) && !is_deferred_option(cfg, name);
    if (counts) PetscCall(PetscStrncpy(first, name, size));
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  PetscFunctionReturn(0);
}

/* Options nobody read (a typo such as -fram) are errors rather than silently ignored. */
PetscErrorCode pbng_config_reject_unused_options(const pbng_config *cfg)
{
  char first[256];

  PetscFunctionBeginUser;
  PetscCall(first_unused_option(cfg, PETSC_FALSE, first, sizeof(first)));
  const pbng_solver_ops *owner = first[0] ? petsc_option_owner(first) : NULL;
  PetscCheck(!owner || !owner->kind.selectable, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "option -%s is for %s (the solver is %s)", first,
             owner ? owner->kind.chosen_by : "", cfg->solver);
  PetscCheck(!owner, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "option -%s is for %s", first, owner ? owner->kind.chosen_by : "");
  PetscCheck(!first[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "unknown option -%s (pbng -help lists the options)", first);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_reject_unused_solver_options(const pbng_config *cfg)
{
  char first[256];

  PetscFunctionBeginUser;
  PetscCall(first_unused_option(cfg, PETSC_TRUE, first, sizeof(first)));
  PetscCheck(!first[0] || pbng_solver_resolve(cfg->solver, &cfg->solver_opt) != &pbng_solver_newton_ops, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "option -%s was not used by the Newton solver (misspelt, or meant for another preconditioner?)", first);
  PetscCheck(!first[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "option -%s was not used by the multilevel solver (misspelt, or meant for a level or solver type that does not exist?)", first);
  PetscFunctionReturn(0);
}

/* Every option, in the order -help lists them. */
static PetscErrorCode read_all_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg, char *scene, size_t scene_len)
{
  PetscBool set;

  PetscFunctionBeginUser;
  char names[512];
  pbng_scene_names(" | ", names, sizeof(names));
  PetscCall(PetscOptionsString("-scene", names, NULL, scene, scene, scene_len, &set));
  PetscCall(pbng_config_read_scene_options(PetscOptionsObject, cfg));
  PetscCall(read_mesh_options(PetscOptionsObject, cfg));
  PetscCall(read_fixed_sets(PetscOptionsObject, cfg));
  for (int k = 0; k < PBNG_USER_BCS; ++k) PetscCall(read_moving_set(PetscOptionsObject, cfg, k));
  PetscCall(read_choices(PetscOptionsObject, cfg));
  PetscCall(read_physics(PetscOptionsObject, cfg));
  PetscCall(read_solver_controls(PetscOptionsObject, cfg));
  PetscCall(pbng_config_read_contact_options(PetscOptionsObject, cfg));
  resolve_quasistatic_guess(cfg);
  PetscCall(pbng_config_read_sheet_options(PetscOptionsObject, cfg));
  PetscCall(PetscOptionsString("-output", "result file (HDF5; an .xdmf is written beside it)", NULL, cfg->output, cfg->output, sizeof(cfg->output), &set));
  PetscCall(PetscOptionsString("-summary", "write the closing summary as JSON to this file", NULL, cfg->summary, cfg->summary, sizeof(cfg->summary), &set));
  PetscCall(read_checkpoint_options(PetscOptionsObject, cfg));
  PetscFunctionReturn(0);
}

/* A solver whose frames have a fixed number of iterations (the seed's XPBD, dynamic: its substeps)
 * sets -iters; an explicit -iters that differs, -rtol or -time_budget (either would cut a frame
 * short) is an error. */
static PetscErrorCode fix_frame_iterations(pbng_config *cfg)
{
  const pbng_solver_ops *ops = pbng_solver_find(cfg->solver, 1);
  PetscBool given;

  PetscFunctionBeginUser;
  if (!ops || !ops->kind.frame_iterations) PetscFunctionReturn(0);
  const int n = ops->kind.frame_iterations(&cfg->solver_opt, cfg->mode == PBNG_MODE_DYNAMIC, cfg->iters);
  if (n == 0) PetscFunctionReturn(0);
  PetscCall(PetscOptionsHasName(NULL, NULL, "-iters", &given));
  PetscCheck(!given || n == cfg->iters, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "%s -mode dynamic: every frame is %d iterations (its substeps), so -iters %d cannot differ; leave -iters out",
             ops->kind.chosen_by, n, cfg->iters);
  PetscBool rtol_given, budget_given;
  PetscCall(PetscOptionsHasName(NULL, NULL, "-rtol", &rtol_given));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-time_budget", &budget_given));
  PetscCheck(!(rtol_given && cfg->rtol != 0) && !(budget_given && cfg->time_budget != 0), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "%s -mode dynamic: -rtol and -time_budget would end a frame before its last substep; leave them out", ops->kind.chosen_by);
  cfg->rtol = cfg->atol = cfg->time_budget = 0; /* a scene's tolerance is for the solvers that iterate to it */
  cfg->tolerance_default = cfg->atol_floor = 0;
  cfg->iters = n;
  if (ops->kind.set_frame_iterations) ops->kind.set_frame_iterations(&cfg->solver_opt, n);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_from_options(pbng_config *cfg)
{
  char scene[64] = "none";
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-scene", scene, sizeof(scene), &set));
  PetscCall(pbng_config_scene_defaults(scene, cfg));
  PetscErrorCode ierr = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "pbng: Position-Based Nonlinear Gauss-Seidel", NULL);
  if (!ierr) ierr = read_all_options(PetscOptionsObject, cfg, scene, sizeof(scene));
  PetscOptionsEnd(); /* reached on errors too: it frees what PetscOptionsBegin allocated */
  PetscCall(ierr);
  PetscCall(pbng_config_choose_fast_solver(cfg));
  PetscCall(pbng_solver_options_read(&cfg->solver_opt, cfg->solver)); /* each solver's own section */
  if (cfg->solver_opt.xpbd.pseudo_dt == 0) cfg->solver_opt.xpbd.pseudo_dt = cfg->dt; /* XPBD-QS: pseudo step = frame step unless given */
  PetscCall(fix_frame_iterations(cfg));
  PetscCheck(cfg->output[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-output: empty file name");
  if (!cfg->checkpoint[0]) {
    PetscCheck(strlen(cfg->output) + 16 < sizeof(cfg->checkpoint), PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "-output: file name too long");
    PetscCall(PetscStrncpy(cfg->checkpoint, cfg->output, sizeof(cfg->checkpoint)));
    PetscCall(PetscStrlcat(cfg->checkpoint, ".checkpoint.h5", sizeof(cfg->checkpoint)));
  }
  PetscCall(pbng_config_reject_unused_options(cfg));
  PetscBool help;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (!help) { /* options that act on nothing: those on a mesh file's contents once it is read (run.c) */
    pbng_mesh_facts mesh;
    pbng_config_generated_mesh_facts(cfg, &mesh);
    PetscCall(pbng_config_check_option_effects(cfg, &mesh));
  }
  PetscCall(pbng_config_make_restart_key(cfg)); /* before any solver adds defaults of its own to the options */
  PetscFunctionReturn(0);
}
