/* Options with no effect are errors (issue 39 item 5; docs/options.md#options-with-no-effect): an option given
 * that acts on nothing in this run (the Poisson ratio of volume elements on a mesh of sheets, a time step of
 * quasistatic frames that do not depend on time, the weak-constraint order of a mesh without weak constraints,
 * ...) would change nothing, so the run is refused before any work, naming the option and the one that would act.
 *
 * The rules are one table, `rules` below: an option, a condition under which it acts, and a hint (an option
 * with several conditions has a row for each, checked in order). Each condition carries what the run lacks
 * when it does not hold, which is the error's reason. Rules of
 * an option family with an index (-bcK_*, a sheet group's -sheetK_*) are written with "%s" for the family's
 * prefix (-bc3, -sheet3; -sheet for the run's own sheet material).
 *
 * Checked twice: with the options (pbng_config_from_options), where a generated mesh's element kinds are known
 * from the scene, and once the mesh is read (setup), before the output file is created. Until the mesh is
 * known a condition on it holds (the check is conservative), so nothing is refused that could act.
 *
 * Not here: the options refused by the module that reads them, because they belong to another solver, mode or
 * setting (-omega without -accel sor, -newton_* without -solver newton, -gpbd_* without -solver gpbd,
 * -multilevel_coarsen_* without coarse meshes made from -mesh, -res with -mesh, -pd_* without -sheet_model
 * peridynamic, -atol without a tolerance, ...): docs/options.md lists them too. */
#include <stdio.h>
#include <string.h>
#include "app/config.h"

typedef struct {
  const pbng_config *cfg;
  pbng_mesh_facts mesh;
  const pbng_sheet_options *law; /* sheet-material rules: the material of the prefix (-sheet or -sheetK) */
  int run_law;                   /* ... 1 for the run's own (-sheet_*), which every group starts from */
  int bc;                        /* boundary-set rules: the index of set bcK in cfg->bcs (-1: no such set) */
} effect_context;

/* ---- what the mesh has (a mesh not read yet: anything) ------------------------------------------------------- */

static int has_volume(const effect_context *c) { return !c->mesh.known || c->mesh.has_volume; }
static int has_sheets(const effect_context *c) { return !c->mesh.known || c->mesh.has_sheets; }
static int has_weak(const effect_context *c) { return !c->mesh.known || c->mesh.has_weak; }
static int has_weak_or_contacts(const effect_context *c) { return has_weak(c) || c->cfg->contact; }
static int binds_bodies(const effect_context *c) { return c->cfg->bind_distance > 0; }

/* ---- the run's physics ---------------------------------------------------------------------------------------- */

static int any_gravity(const pbng_config *cfg) { return cfg->gravity[0] != 0 || cfg->gravity[1] != 0 || cfg->gravity[2] != 0; }

static int motion_moves(const pbng_motion *m)
{
  for (int d = 0; d < 3; ++d)
    if (m->velocity[d] != 0 || m->scale_rate[d] != 0) return 1;
  return m->rotation_rate != 0;
}

/* The constraint solvers (pbd, xpbd_qs, xpbd_ho, continuum_pbd, gpbd) step quasistatic frames in pseudo time,
 * weighting every correction by the nodes' masses: their frames depend on the step and on the densities. */
static int pseudo_time_solver(const pbng_config *cfg) { return pbng_solver_uses_constraint_colors(cfg->solver); }

/* Masses act through inertia (dynamic), gravity loads (m g) and the constraint solvers' pseudo time; quasistatic
 * frames without gravity solved by PBNG or Newton see no mass (Eq. 16 without g). */
static int masses_act(const effect_context *c)
{
  return c->cfg->mode == PBNG_MODE_DYNAMIC || any_gravity(c->cfg) || pseudo_time_solver(c->cfg);
}

/* The frame step acts on dynamic frames (backward Euler), and on quasistatic ones through the time a frame is
 * at: moving or released boundary sets (t = frame x dt), plasticity's creep rate, the constraint solvers'
 * pseudo-time step. */
static int time_step_acts(const effect_context *c)
{
  const pbng_config *cfg = c->cfg;
  if (cfg->mode == PBNG_MODE_DYNAMIC || cfg->plastic || pseudo_time_solver(cfg)) return 1;
  for (int b = 0; b < cfg->bcs.count; ++b)
    if (motion_moves(&cfg->bcs.bc[b].motion) || cfg->bcs.bc[b].release > 0) return 1;
  return 0;
}

static int any_released_set(const effect_context *c)
{
  for (int b = 0; b < c->cfg->bcs.count; ++b)
    if (c->cfg->bcs.bc[b].release > 0) return 1;
  return 0;
}

static int load_has_force(const effect_context *c)
{
  const double *f = c->cfg->load.force;
  return f[0] != 0 || f[1] != 0 || f[2] != 0;
}

/* ---- sheets --------------------------------------------------------------------------------------------------- */

static int fem_sheets(const effect_context *c) { return c->cfg->pd.model != PBNG_SHEET_MODEL_PERIDYNAMIC; }
static int cloth6_sheets(const effect_context *c) { return c->cfg->pd.model == PBNG_SHEET_MODEL_CLOTH6; }

/* Whether some sheet material has this membrane law: the prefix's own, or (for the run's -sheet_*, which every
 * -sheetK_group starts from) any group's. */
static int some_law_is(const effect_context *c, int orthotropic)
{
  if (c->law->orthotropic == orthotropic) return 1;
  for (int g = 0; c->run_law && g < c->cfg->nsheet_groups; ++g)
    if (c->cfg->sheet_group[g].opt.orthotropic == orthotropic) return 1;
  return 0;
}
static int isotropic_law(const effect_context *c) { return some_law_is(c, 0); }
static int orthotropic_law(const effect_context *c) { return some_law_is(c, 1); }

static int any_orthotropic(const effect_context *c)
{
  if (c->cfg->sheet_opt.orthotropic) return 1;
  for (int g = 0; g < c->cfg->nsheet_groups; ++g)
    if (c->cfg->sheet_group[g].opt.orthotropic) return 1;
  return 0;
}

/* The generated square sheets that -sheet_size sizes (a cylinder has its own size). */
static int generated_square_sheet(const effect_context *c)
{
  return c->cfg->mesh_source == PBNG_MESH_SHEET && c->cfg->sheet_shape != PBNG_SHEET_SHAPE_CYLINDER;
}

static int pd_neohookean(const effect_context *c) { return c->cfg->pd.mat.kind == PBNG_PD_NEOHOOKEAN; }
static int pd_contact_step_on(const effect_context *c) { return c->cfg->pd.contact.on; }
static int pd_contact_gradient_steps(const effect_context *c) { return !(c->cfg->pd.contact.kappa > 0); }

/* ---- solvers -------------------------------------------------------------------------------------------------- */

/* The registry's capability flags of the run's solver. */
static const pbng_solver_kind *solver_kind(const effect_context *c)
{
  const pbng_solver_ops *ops = pbng_solver_find(c->cfg->solver, 1);
  return ops ? &ops->kind : NULL;
}
static int solver_assembles_rings(const effect_context *c) { return solver_kind(c) && solver_kind(c)->ring_matrices; }
static int solver_barrier_contact(const effect_context *c) { return solver_kind(c) && solver_kind(c)->barrier_contact; }
static int sissm_chebyshev(const effect_context *c) { return c->cfg->solver_opt.sissm.chebyshev; }
static int no_monitor(const effect_context *c) { return !c->cfg->monitor; }

static int solver_makes_guess(const effect_context *c)
{
  const pbng_solver_ops *ops = pbng_solver_find(c->cfg->solver, 1);
  return !ops || !ops->kind.own_guess;
}

/* continuum_pbd's inversion handling is written for StVK's elastic energy (not applied with plasticity). */
static int elastic_stvk_volume(const effect_context *c) { return has_volume(c) && c->cfg->material == PBNG_MATERIAL_STVK && !c->cfg->plastic; }

static int test_fail_rank_given(const effect_context *c) { return c->cfg->test_fail_rank >= 0; }

/* ---- boundary sets -bcK_* --------------------------------------------------------------------------------------- */

static const pbng_motion *bc_motion(const effect_context *c) { return &c->cfg->bcs.bc[c->bc].motion; }
static int bc_exists(const effect_context *c) { return c->bc >= 0; }
static int bc_rotates(const effect_context *c) { return bc_exists(c) && bc_motion(c)->rotation_rate != 0; }
static int bc_moves(const effect_context *c) { return bc_exists(c) && motion_moves(bc_motion(c)); }

static int bc_rotates_or_scales(const effect_context *c)
{
  if (!bc_exists(c)) return 0;
  const pbng_motion *m = bc_motion(c);
  return m->rotation_rate != 0 || m->scale_rate[0] != 0 || m->scale_rate[1] != 0 || m->scale_rate[2] != 0;
}

/* ---- the table ------------------------------------------------------------------------------------------------ */

/* A condition under which options act, and what the run lacks when it does not hold ("%s": the rule's prefix). */
typedef struct {
  int (*holds)(const effect_context *c);
  const char *lacking;
} condition;

static const condition VOLUME = {has_volume, "the mesh has no volume elements"};
static const condition SHEETS = {has_sheets, "the mesh has no sheet elements (tri3)"};
static const condition WEAK = {has_weak, "the mesh has no weak constraints"};
static const condition BINDINGS = {binds_bodies, "no bodies are bound (-bind_distance)"};
static const condition WEAK_OR_CONTACTS = {has_weak_or_contacts, "the mesh has no weak constraints and the run no contacts"};
static const condition MASSES = {masses_act, "quasistatic frames without gravity have no load from the masses (and the solver no pseudo time)"};
static const condition TIME = {time_step_acts,
                               "the quasistatic frames do not depend on time (no boundary set moves or is released, no plasticity, no "
                               "pseudo-time solver)"};
static const condition RELEASED = {any_released_set, "no boundary set is released (-bcK_release)"};
static const condition LOAD_FORCE = {load_has_force, "the point load's force is zero"};
static const condition FEM_SHEETS = {fem_sheets, "the sheets are peridynamic membranes (-sheet_model peridynamic)"};
static const condition CLOTH6_SHEETS = {cloth6_sheets, "the sheets are not the six-dimensional cloth stencils (-sheet_model cloth6)"};
static const condition ISOTROPIC = {isotropic_law, "the membrane law is orthotropic (%s_membrane)"};
static const condition ORTHOTROPIC = {orthotropic_law, "the membrane law is isotropic (%s_membrane)"};
static const condition ANY_ORTHOTROPIC = {any_orthotropic, "no membrane law is orthotropic (an isotropic membrane has no weft)"};
static const condition SQUARE_SHEET = {generated_square_sheet,
                                       "the mesh is not a generated square sheet (the scenes with one: pbng -help)"};
static const condition PD_NEOHOOKEAN = {pd_neohookean, "the peridynamic material is -pd_material stretching, which has no s1"};
static const condition PD_CONTACT_STEP = {pd_contact_step_on, "the contact local step is off"};
static const condition PD_CONTACT_GRADIENT = {pd_contact_gradient_steps,
                                              "-pd_contact_kappa > 0 puts the barrier in the frame's energy: the projection takes no gradient steps"};
static const condition SISSM = {solver_barrier_contact, "the contact local step is SISSM's and the solver is not -solver sissm"};
static const condition NEWTON = {solver_assembles_rings, "the ring matrices are Newton's and the solver is not -solver newton"};
static const condition SISSM_CHEBYSHEV = {sissm_chebyshev, "-sissm_chebyshev is off"};
static const condition NO_MONITOR = {no_monitor, "-monitor evaluates the residual after every iteration"};
static const condition SOLVER_GUESS = {solver_makes_guess, "the solver starts each step from its own prediction x + dt v + dt^2 g"};
static const condition ELASTIC_STVK = {elastic_stvk_volume,
                                       "it handles inverted StVK elements, and the run has no volume elements of -material stvk without plasticity"};
static const condition FAIL_RANK = {test_fail_rank_given, "no rank is made to fail (-test_fail_rank)"};
static const condition BC_SET = {bc_exists, "there is no boundary set %s"};
static const condition BC_ROTATES = {bc_rotates, "set %s does not rotate"};
static const condition BC_ROTATES_OR_SCALES = {bc_rotates_or_scales, "set %s neither rotates nor scales"};
static const condition BC_MOVES = {bc_moves, "set %s does not move"};

typedef enum {
  FOR_RUN,           /* an option of its own */
  FOR_BC,            /* -bcK_*, K = 0..7: "%s" is -bcK */
  FOR_SHEET_MATERIAL /* the run's -sheet_* and each named group's -sheetK_*: "%s" is -sheet or -sheetK */
} rule_family;

/* Option -> a condition under which it acts -> a hint: what would act, or what to add (NULL: "leave it out").
 * An option with several conditions has a row for each, checked in order. */
typedef struct {
  rule_family family;
  const char *option;
  const condition *when;
  const char *hint;
} effect_rule;

static const effect_rule rules[] = {
  /* connective tissue (contact/bindings.h) */
  {FOR_RUN, "-bind_stiffness", &BINDINGS, "give -bind_distance"},
  {FOR_RUN, "-bind_apart", &BINDINGS, "give -bind_distance"},
  {FOR_RUN, "-bind_snap", &BINDINGS, "give -bind_distance"},
  /* the volume material (Sec. 5), masses and loads */
  {FOR_RUN, "-material", &VOLUME, "sheets: -sheet_membrane, -sheet_model"},
  {FOR_RUN, "-youngs", &VOLUME, "sheets: -sheet_youngs (peridynamic membranes: -pd_s0)"},
  {FOR_RUN, "-poisson", &VOLUME, "sheets: -sheet_poisson"},
  {FOR_RUN, "-density", &VOLUME, "sheets: -sheet_density"},
  {FOR_RUN, "-density", &MASSES, "give -gravity, or use -mode dynamic"},
  {FOR_RUN, "-dt", &TIME, "leave it out, or use -mode dynamic"},
  {FOR_RUN, "-release_penalty", &RELEASED, NULL},
  {FOR_RUN, "-load_box", &LOAD_FORCE, "give -load_force fx,fy,fz"},
  /* sheet materials (docs/cloth.md#options): the run's -sheet_* and each group's -sheetK_* */
  {FOR_SHEET_MATERIAL, "%s_membrane", &SHEETS, "volume elements: -material"},
  {FOR_SHEET_MATERIAL, "%s_membrane", &FEM_SHEETS, "their material: -pd_material"},
  {FOR_SHEET_MATERIAL, "%s_youngs", &SHEETS, "volume elements: -youngs"},
  {FOR_SHEET_MATERIAL, "%s_youngs", &FEM_SHEETS, "their modulus: -pd_s0"},
  {FOR_SHEET_MATERIAL, "%s_youngs", &ISOTROPIC, "orthotropic moduli: %s_k_weft, %s_k_warp, %s_k_shear"},
  {FOR_SHEET_MATERIAL, "%s_poisson", &SHEETS, "volume elements: -poisson"},
  {FOR_SHEET_MATERIAL, "%s_poisson", &FEM_SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_poisson", &ISOTROPIC, "orthotropic ratios: %s_nu_weft, %s_nu_warp"},
  {FOR_SHEET_MATERIAL, "%s_k_weft", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_k_weft", &FEM_SHEETS, "their modulus: -pd_s0"},
  {FOR_SHEET_MATERIAL, "%s_k_weft", &ORTHOTROPIC, "give %s_membrane orthotropic, or use %s_youngs"},
  {FOR_SHEET_MATERIAL, "%s_k_warp", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_k_warp", &FEM_SHEETS, "their modulus: -pd_s0"},
  {FOR_SHEET_MATERIAL, "%s_k_warp", &ORTHOTROPIC, "give %s_membrane orthotropic, or use %s_youngs"},
  {FOR_SHEET_MATERIAL, "%s_k_shear", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_k_shear", &FEM_SHEETS, "their modulus: -pd_s0"},
  {FOR_SHEET_MATERIAL, "%s_k_shear", &ORTHOTROPIC, "give %s_membrane orthotropic, or use %s_youngs"},
  {FOR_SHEET_MATERIAL, "%s_nu_weft", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_nu_weft", &FEM_SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_nu_weft", &ORTHOTROPIC, "give %s_membrane orthotropic, or use %s_poisson"},
  {FOR_SHEET_MATERIAL, "%s_nu_warp", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_nu_warp", &FEM_SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_nu_warp", &ORTHOTROPIC, "give %s_membrane orthotropic, or use %s_poisson"},
  {FOR_SHEET_MATERIAL, "%s_bending_stiffness", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_bending_stiffness", &FEM_SHEETS, "their bending: -pd_kb"},
  {FOR_SHEET_MATERIAL, "%s_thickness", &SHEETS, NULL},
  {FOR_SHEET_MATERIAL, "%s_density", &SHEETS, "volume elements: -density"},
  {FOR_SHEET_MATERIAL, "%s_density", &MASSES, "give -gravity, or use -mode dynamic"},
  /* the rest of the sheet options (docs/cloth.md#options, docs/peridynamics.md#options) */
  {FOR_RUN, "-sheet_weft", &SHEETS, NULL},
  {FOR_RUN, "-sheet_weft", &FEM_SHEETS, NULL},
  {FOR_RUN, "-sheet_weft", &ANY_ORTHOTROPIC, "give -sheet_membrane orthotropic"},
  {FOR_RUN, "-sheet_size", &SQUARE_SHEET, NULL},
  {FOR_RUN, "-sheet_model", &SHEETS, NULL},
  {FOR_RUN, "-sheet_stiffening", &SHEETS, NULL},
  {FOR_RUN, "-sheet_stiffening", &CLOTH6_SHEETS, "-sheet_model cloth6"},
  {FOR_RUN, "-pd_s1", &PD_NEOHOOKEAN, "give -pd_material neohookean"},
  {FOR_RUN, "-pd_hessian", &NEWTON, NULL},
  {FOR_RUN, "-pd_contact", &SISSM, NULL},
  {FOR_RUN, "-pd_obstacle", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_thickness", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_thickness", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_dhat", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_dhat", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_eps", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_eps", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_mu", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_mu", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_mu", &PD_CONTACT_GRADIENT, "give -pd_contact_kappa 0"},
  {FOR_RUN, "-pd_contact_rest_exclusion", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_rest_exclusion", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_iterations", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_iterations", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_iterations", &PD_CONTACT_GRADIENT, "give -pd_contact_kappa 0"},
  {FOR_RUN, "-pd_contact_fresh_pairs", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_fresh_pairs", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  {FOR_RUN, "-pd_contact_kappa", &SISSM, NULL},
  {FOR_RUN, "-pd_contact_kappa", &PD_CONTACT_STEP, "give -pd_contact (or -pd_obstacle)"},
  /* contacts (docs/contact.md) */
  {FOR_RUN, "-contact_thickness", &SHEETS, "volume surfaces: -contact_distance"},
  /* the motions of boundary sets -bcK_* */
  {FOR_BC, "%s_velocity", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_rotation_rate", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_scale_rate", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_release", &BC_SET, "give %s_box"},
  {FOR_BC, "%s_axis", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_axis", &BC_ROTATES, "give %s_rotation_rate"},
  {FOR_BC, "%s_center", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_center", &BC_ROTATES_OR_SCALES, "give %s_rotation_rate or %s_scale_rate"},
  {FOR_BC, "%s_until", &BC_SET, "give %s_box or %s_group"},
  {FOR_BC, "%s_until", &BC_MOVES, "give %s_velocity, %s_rotation_rate or %s_scale_rate"},
  /* solver controls and the solvers' own options */
  {FOR_RUN, "-residual_every", &NO_MONITOR, NULL},
  {FOR_RUN, "-dynamic_guess", &SOLVER_GUESS, NULL},
  {FOR_RUN, "-weak_blocks", &WEAK_OR_CONTACTS, NULL},
  {FOR_RUN, "-xpbd_order", &WEAK, NULL},
  {FOR_RUN, "-xpbd_ho_split", &VOLUME, NULL},
  {FOR_RUN, "-continuum_pbd_inversion", &ELASTIC_STVK, NULL},
  {FOR_RUN, "-gpbd_subspace_projection", &VOLUME, "sheets: -gpbd_sheet_projection"},
  {FOR_RUN, "-gpbd_uninvert_min", &VOLUME, NULL},
  {FOR_RUN, "-gpbd_uninvert_passes", &VOLUME, NULL},
  {FOR_RUN, "-gpbd_uninvert_joint", &VOLUME, NULL},
  {FOR_RUN, "-gpbd_uninvert_body", &VOLUME, NULL},
  {FOR_RUN, "-gpbd_sheet_projection", &SHEETS, "tetrahedra: -gpbd_subspace_projection"},
  {FOR_RUN, "-sissm_rho", &SISSM_CHEBYSHEV, "give -sissm_chebyshev"},
  {FOR_RUN, "-test_fail_at", &FAIL_RANK, NULL},
};

/* ---- checking ------------------------------------------------------------------------------------------------- */

/* fmt with every "%s" the prefix (at most four). */
static void format_with_prefix(char *buf, size_t len, const char *fmt, const char *prefix)
{
  snprintf(buf, len, fmt, prefix, prefix, prefix, prefix);
}

/* Rule r for the option family member `prefix` (context c): an error when its option is given and its
 * condition does not hold. */
static PetscErrorCode check_rule(const effect_rule *r, const effect_context *c, const char *prefix)
{
  char option[64], lacking[256], hint[256];
  PetscBool given;

  PetscFunctionBeginUser;
  format_with_prefix(option, sizeof(option), r->option, prefix);
  PetscCall(PetscOptionsHasName(NULL, NULL, option, &given));
  if (!given || r->when->holds(c)) PetscFunctionReturn(0);
  format_with_prefix(lacking, sizeof(lacking), r->when->lacking, prefix);
  format_with_prefix(hint, sizeof(hint), r->hint ? r->hint : "leave it out", prefix);
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "%s has no effect in this run: %s; %s", option, lacking, hint);
}

/* The index of boundary set -bcK_* in cfg->bcs, or -1. */
static int bc_index(const pbng_config *cfg, int k)
{
  char name[16];
  snprintf(name, sizeof(name), "bc%d", k);
  for (int b = 0; b < cfg->bcs.count; ++b)
    if (!strcmp(cfg->bcs.bc[b].name, name)) return b;
  return -1;
}

/* Every member of r's family. */
static PetscErrorCode check_family(const effect_rule *r, effect_context c)
{
  char prefix[16];

  PetscFunctionBeginUser;
  switch (r->family) {
  case FOR_RUN: PetscCall(check_rule(r, &c, "")); break;
  case FOR_BC:
    for (int k = 0; k < PBNG_USER_BCS; ++k) {
      snprintf(prefix, sizeof(prefix), "-bc%d", k);
      c.bc = bc_index(c.cfg, k);
      PetscCall(check_rule(r, &c, prefix));
    }
    break;
  case FOR_SHEET_MATERIAL:
    c.law = &c.cfg->sheet_opt, c.run_law = 1;
    PetscCall(check_rule(r, &c, "-sheet"));
    for (int g = 0; g < c.cfg->nsheet_groups; ++g) { /* a group not named: its options are refused when read */
      snprintf(prefix, sizeof(prefix), "-sheet%d", c.cfg->sheet_group[g].k);
      c.law = &c.cfg->sheet_group[g].opt, c.run_law = 0;
      PetscCall(check_rule(r, &c, prefix));
    }
    break;
  }
  PetscFunctionReturn(0);
}

void pbng_config_generated_mesh_facts(const pbng_config *cfg, pbng_mesh_facts *facts)
{
  const int sheet = cfg->mesh_source == PBNG_MESH_SHEET;
  *facts = (pbng_mesh_facts){.known = cfg->mesh_source != PBNG_MESH_FILE, .has_volume = !sheet, .has_sheets = sheet,
                             .has_weak = cfg->mesh_source == PBNG_MESH_STACKED_BLOCKS || cfg->weak_file[0] || cfg->bind_distance > 0};
}

PetscErrorCode pbng_config_check_option_effects(const pbng_config *cfg, const pbng_mesh_facts *mesh)
{
  const effect_context c = {.cfg = cfg, .mesh = *mesh, .law = &cfg->sheet_opt, .run_law = 1, .bc = -1};

  PetscFunctionBeginUser;
  for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); ++r) PetscCall(check_family(&rules[r], c));
  PetscFunctionReturn(0);
}
