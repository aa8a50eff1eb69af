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

/* What the multilevel default was measured on (docs/multilevel.md, docs/options.md): quasistatic frames of a
 * generated mesh of linear tetrahedra (or sheets), no point load, released set, plasticity or contacts, and a
 * material the Chebyshev smoother is stable with (not StVK). */
static int fast_solver_applies(const pbng_config *cfg)
{
  if (!cfg->fast_multilevel || cfg->mode != PBNG_MODE_QUASISTATIC || cfg->mesh_source == PBNG_MESH_FILE) return 0;
  if (cfg->mesh_source != PBNG_MESH_SHEET && cfg->elements.kind != PBNG_ELEMENT_TET4) return 0;
  if (cfg->load.active || cfg->plastic || cfg->contact || cfg->material == PBNG_MATERIAL_STVK || cfg->weak_file[0]) return 0;
  for (int b = 0; b < cfg->bcs.count; ++b)
    if (cfg->bcs.bc[b].release > 0) return 0;
  return strcmp(cfg->solver, "pbng") == 0;
}

/* Levels down to the coarsest generated mesh with at least 3 nodes per axis (the Res-32 box: 32, 16, 8, 4 —
 * measured fastest, docs/options.md). */
static int automatic_levels(const pbng_config *cfg)
{
  int levels = 1;
  while (levels < PBNG_MAX_LEVELS && pbng_config_coarse_res(cfg, levels) >= 3) ++levels;
  return levels;
}

PetscErrorCode pbng_config_choose_fast_solver(pbng_config *cfg)
{
  static const char *const solver_options[] = {"-solver", "-accel", "-multilevel", "-mesh_levels", "-omega", "-rho", "-gamma", NULL};
  PetscBool given;

  PetscFunctionBeginUser;
  cfg->fast_levels = 0;
  if (!fast_solver_applies(cfg) || cfg->rtol <= 0) PetscFunctionReturn(0); /* fixed iterations (-rtol 0): the paper's single level */
  PetscCall(any_option_given(solver_options, &given));
  if (given) PetscFunctionReturn(0);
  const int levels = automatic_levels(cfg);
  if (levels < 2) PetscFunctionReturn(0);
  cfg->fast_levels = levels;
  cfg->solver_opt.multilevel = levels;
  cfg->solver_opt.sweep.accel = cfg->fast_smoother;
  PetscCall(PetscOptionsHasName(NULL, NULL, "-residual_every", &given));
  if (!given && cfg->rtol > 0) cfg->residual_every = 1; /* a cycle costs far more than a residual */
  PetscFunctionReturn(0);
}
