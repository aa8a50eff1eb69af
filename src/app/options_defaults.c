/* Accurate answers by default (issue 21; docs/options.md#the-default-tolerance-and-solver): quasistatic
 * frames stop at a tolerance unless -rtol says otherwise, and a scene runs its fastest measured solver
 * configuration unless a solver option is given. */
#include <math.h>
#include <string.h>
#include "app/config.h"
#include "core/element.h"

void pbng_config_resolve_tolerance(pbng_config *cfg, PetscBool iters_given, PetscInt *iters)
{
  if (cfg->rtol >= 0) return; /* -rtol given, or the scene's own tolerance */
  if (cfg->mode == PBNG_MODE_DYNAMIC) {
    cfg->rtol = 0; /* dynamic frames run -iters unless the scene or -rtol says otherwise */
    return;
  }
  cfg->rtol = PBNG_RTOL_DEFAULT;
  cfg->tolerance_default = cfg->atol_floor = 1;
  if (!iters_given) *iters = cfg->tolerance_iters > *iters ? cfg->tolerance_iters : *iters;
}

/* The run's sheet stiffness E h (N/m): the membrane law's modulus times the thickness (pbng_config_default_atol). */
static double sheet_stiffness(const pbng_config *cfg)
{
  const pbng_sheet_options *o = &cfg->sheet_opt;
  if (cfg->pd.model == PBNG_SHEET_MODEL_PERIDYNAMIC) return cfg->pd.mat.s0 * (cfg->pd.thickness > 0 ? cfg->pd.thickness : o->thickness);
  return (o->orthotropic ? fmax(o->k_weft, o->k_warp) : o->youngs) * o->thickness;
}

double pbng_config_default_atol(const pbng_config *cfg, double extent, int has_volume, int has_sheets)
{
  const double volume = has_volume ? cfg->youngs * extent * extent : 0;
  const double sheet = has_sheets && extent > 0 ? sheet_stiffness(cfg) * extent : 0;
  return PBNG_ATOL_FLOOR_STRAIN * (volume > sheet ? volume : sheet);
}

static PetscErrorCode any_option_given(const char *const *names, PetscBool *given)
{
  PetscFunctionBeginUser;
  *given = PETSC_FALSE;
  for (const char *const *n = names; *n && !*given; ++n) PetscCall(PetscOptionsHasName(NULL, NULL, *n, given));
  PetscFunctionReturn(0);
}

/* Why multilevel PBNG cannot run this problem yet (the defaults: line's account), or NULL. What only the mesh tells
 * (a file's element kinds, a partitioned file, sheets in contact) is decided at setup (run_levels.c). */
static const char *multilevel_unavailable(const pbng_config *cfg)
{
  const pbng_element_type *coarse = pbng_element_corner_type(pbng_element_type_get(cfg->elements.kind));
  const int tetrahedral = coarse->shape == PBNG_SHAPE_TETRAHEDRON;
  if (cfg->mesh_source == PBNG_MESH_OBJECTS) return "the objects of objects_dropping have no coarse levels";
  if (cfg->ptscotch && cfg->mesh_source == PBNG_MESH_FILE && !cfg->nmesh_levels)
    return "-partitioner ptscotch does not coarsen a mesh file (that needs the whole mesh on one rank; give -mesh_levels)";
  if (cfg->mesh_source == PBNG_MESH_SHEET && cfg->contact) return "contacts are carried to coarse tetrahedra only, not to coarse sheets";
  if (cfg->mesh_source == PBNG_MESH_SHEET && cfg->nsheet_groups) return "generated coarse sheets have no -sheetK_group groups";
  if (cfg->mesh_source != PBNG_MESH_FILE && !tetrahedral && cfg->contact) return "contacts are carried to tetrahedral coarse levels only";
  if (cfg->mesh_source != PBNG_MESH_FILE && !tetrahedral && cfg->weak_file[0]) return "weak constraints are carried to tetrahedral coarse levels only";
  return NULL;
}

/* Whether the scene's measured smoother (cfg->fast_smoother) applies: the problem it was measured on, quasistatic
 * frames of a generated mesh of linear tetrahedra (or sheets), no point load, released set, plasticity or contacts,
 * and a material the Chebyshev smoother is stable with (not StVK). Else plain PBNG sweeps smooth. */
static int measured_smoother_applies(const pbng_config *cfg)
{
  if (!cfg->fast_multilevel || cfg->mesh_source == PBNG_MESH_FILE) return 0;
  if (cfg->mesh_source != PBNG_MESH_SHEET && cfg->elements.kind != PBNG_ELEMENT_TET4) return 0;
  if (cfg->load.active || cfg->plastic || cfg->contact || cfg->material == PBNG_MATERIAL_STVK || cfg->weak_file[0]) return 0;
  for (int b = 0; b < cfg->bcs.count; ++b)
    if (cfg->bcs.bc[b].release > 0) return 0;
  return 1;
}

/* Levels down to the coarsest generated mesh with at least 3 nodes per axis (the Res-32 box: 32, 16, 8, 4 —
 * measured fastest, docs/options.md). */
static int automatic_levels(const pbng_config *cfg)
{
  int levels = 1;
  while (levels < PBNG_MAX_LEVELS && pbng_config_coarse_res(cfg, levels) >= 3) ++levels;
  return levels;
}

/* Multilevel PBNG with automatic levels wherever it runs (issue 39; docs/multilevel.md#automatic-levels): quasistatic
 * frames to a tolerance, -solver pbng, no solver option given (or -multilevel auto). A generated mesh's levels are
 * chosen here, a mesh file's when it is coarsened (run_levels.c); the smoother is the scene's measured one, else
 * plain PBNG (Chebyshev's diverges on bending: docs/multilevel.md). */
PetscErrorCode pbng_config_choose_fast_solver(pbng_config *cfg)
{
  static const char *const solver_options[] = {"-solver", "-accel", "-multilevel", "-mesh_levels", "-omega", "-rho", "-gamma", NULL};
  PetscBool given;

  PetscFunctionBeginUser;
  cfg->fast_levels = 0;
  cfg->default_note[0] = 0;
  PetscCall(any_option_given(solver_options, &given));
  const int wanted = cfg->multilevel_auto || !given;
  cfg->multilevel_auto = 0;
  const pbng_solver_ops *ops = pbng_solver_find(cfg->solver, 1);
  if (!wanted || cfg->mode != PBNG_MODE_QUASISTATIC || cfg->rtol <= 0 || !ops || !ops->kind.multilevel) PetscFunctionReturn(0); /* -rtol 0: the paper's fixed single level */
  const char *why = multilevel_unavailable(cfg);
  if (!why && !pbng_config_coarsens_fine_mesh(cfg) && automatic_levels(cfg) < 2) why = "the generated mesh has no coarser level of 3 nodes per axis";
  if (why) {
    snprintf(cfg->default_note, sizeof(cfg->default_note), "%s", why);
    PetscFunctionReturn(0);
  }
  PetscCall(PetscOptionsHasName(NULL, NULL, "-accel", &given));
  if (!given) cfg->solver_opt.sweep.accel = measured_smoother_applies(cfg) ? cfg->fast_smoother : PBNG_ACCEL_NONE;
  if (pbng_config_coarsens_fine_mesh(cfg)) { /* the levels of a file's (or the arm's) coarsening: at setup */
    cfg->multilevel_auto = 1;
    cfg->solver_opt.multilevel = PBNG_MAX_LEVELS;
    PetscFunctionReturn(0);
  }
  cfg->fast_levels = cfg->solver_opt.multilevel = automatic_levels(cfg);
  PetscFunctionReturn(0);
}
