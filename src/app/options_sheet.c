/* The sheet options (issue 18; docs/cloth.md#options): the run's material for its tri3 membranes and
 * bend4 stencils, and up to PBNG_MAX_SHEET_GROUPS physical groups with materials of their own. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "app/config.h"
#include "core/vec3.h"

/* "<prefix>_<name>" into buf (prefix "-sheet" or "-sheetK"). */
static const char *option_name(char *buf, size_t len, const char *prefix, const char *name)
{
  snprintf(buf, len, "%s_%s", prefix, name);
  return buf;
}

/* A real option <prefix>_<name>; *given |= set. */
static PetscErrorCode read_real(PetscOptionItems *PetscOptionsObject, const char *prefix, const char *name, const char *help, double *v, PetscBool *given)
{
  char opt[64];
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal(option_name(opt, sizeof(opt), prefix, name), help, NULL, *v, v, &set));
  *given = (PetscBool)(*given || set);
  PetscFunctionReturn(0);
}

/* <prefix>_membrane isotropic | orthotropic, the parameters of the laws, thickness, bending stiffness
 * and density: the material options a group may set for its sheets too. */
static PetscErrorCode read_material(PetscOptionItems *PetscOptionsObject, const char *prefix, pbng_sheet_options *o, PetscBool *given)
{
  const char *const names[] = {"isotropic", "orthotropic"};
  char opt[64];
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, option_name(opt, sizeof(opt), prefix, "membrane"), "membrane law of the tri3 elements (StVK, plane stress)",
                                      "membrane law ", names, 2, &o->orthotropic, &set));
  *given = (PetscBool)(*given || set);
  PetscCall(read_real(PetscOptionsObject, prefix, "youngs", "isotropic membrane: Young's modulus (Pa)", &o->youngs, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "poisson", "isotropic membrane: Poisson ratio in [0, 0.5)", &o->poisson, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "k_weft", "orthotropic membrane: Young's modulus along the weft (Pa)", &o->k_weft, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "k_warp", "orthotropic membrane: Young's modulus along the warp (Pa)", &o->k_warp, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "k_shear", "orthotropic membrane: in-plane shear modulus (Pa)", &o->k_shear, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "nu_weft", "orthotropic membrane: Poisson ratio nu_weft in [0, 1)", &o->nu_weft, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "nu_warp", "orthotropic membrane: Poisson ratio nu_warp in [0, 1)", &o->nu_warp, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "thickness", "sheet thickness (m; the membrane energy's and the mass's factor)", &o->thickness, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "bending_stiffness", "isometric bending stiffness k_b (N m; -sheet_bending_stiffness 0: no bend4 stencils)",
                      &o->bending_stiffness, given));
  PetscCall(read_real(PetscOptionsObject, prefix, "density", "sheet density (kg/m^3; a triangle's mass is density x thickness x area)", &o->density, given));
  PetscFunctionReturn(0);
}

/* The material of options o (weft axis: m->weft, set by the caller), each impossible value an error
 * naming <prefix>_<option>. */
static PetscErrorCode make_material(const char *prefix, const pbng_sheet_options *o, pbng_sheet_material *m)
{
  PetscFunctionBeginUser;
  const char *err = o->orthotropic ? pbng_membrane_orthotropic(o->k_weft, o->k_warp, o->k_shear, o->nu_weft, o->nu_warp, o->thickness, &m->membrane)
                                   : pbng_membrane_isotropic(o->youngs, o->poisson, o->thickness, &m->membrane);
  PetscCheck(!err, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s_membrane %s: %s", prefix, o->orthotropic ? "orthotropic" : "isotropic", err);
  PetscCheck(o->bending_stiffness >= 0 && isfinite(o->bending_stiffness), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "%s_bending_stiffness %g: must be >= 0", prefix, o->bending_stiffness);
  PetscCheck(o->density > 0 && isfinite(o->density), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s_density %g: must be > 0", prefix, o->density);
  m->bending_stiffness = o->bending_stiffness;
  m->density = o->density;
  err = pbng_cloth6_material_from_membrane(m->membrane.C, o->thickness, o->stiffening, o->bending_stiffness, &m->cloth6);
  PetscCheck(!err, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s: the cloth6 moduli: %s (-sheet_stiffening %g)", prefix, err, o->stiffening);
  PetscFunctionReturn(0);
}

/* The material options' names after their prefix (read_material's). */
static const char *const material_options[] = {"membrane", "youngs", "poisson", "k_weft", "k_warp", "k_shear", "nu_weft", "nu_warp", "thickness",
                                               "bending_stiffness", "density"};

/* -sheetK_group NAME and its -sheetK_* overrides of the run's sheet material; overrides without the
 * group are an error. -help lists -sheet0_group, and a group's overrides once it is named. */
static PetscErrorCode read_sheet_group(PetscOptionItems *PetscOptionsObject, pbng_config *cfg, int k)
{
  char prefix[16], opt[64], name[64] = "";
  PetscBool named, given = PETSC_FALSE;
  pbng_sheet_group g = {.k = k, .opt = cfg->sheet_opt};

  PetscFunctionBeginUser;
  snprintf(prefix, sizeof(prefix), "-sheet%d", k);
  option_name(opt, sizeof(opt), prefix, "group");
  if (k == 0)
    PetscCall(PetscOptionsString(opt, "sheets of this physical group (node set) take the -sheetK_* material (K = 0..7; docs/cloth.md)", NULL, name, name,
                                 sizeof(name), &named));
  else PetscCall(PetscOptionsGetString(NULL, NULL, opt, name, sizeof(name), &named));
  if (!named) {
    for (size_t j = 0; j < sizeof(material_options) / sizeof(material_options[0]); ++j) {
      PetscCall(PetscOptionsHasName(NULL, NULL, option_name(opt, sizeof(opt), prefix, material_options[j]), &given));
      PetscCheck(!given, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s_* material options without %s_group NAME (the physical group they are for)", prefix,
                 prefix);
    }
    PetscFunctionReturn(0);
  }
  PetscCall(read_material(PetscOptionsObject, prefix, &g.opt, &given));
  PetscCheck(name[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s_group: empty group name", prefix);
  for (int j = 0; j < cfg->nsheet_groups; ++j)
    PetscCheck(strcmp(cfg->sheet_group[j].name, name), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s_group %s: -sheet%d_group names it already", prefix,
               name, cfg->sheet_group[j].k);
  PetscCheck(g.opt.bending_stiffness == 0 || cfg->sheet_opt.bending_stiffness > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "%s_bending_stiffness %g with -sheet_bending_stiffness 0: the run has no bending stencils (give the run a k_b > 0, and 0 to the groups "
             "without bending)", prefix, g.opt.bending_stiffness);
  PetscCall(PetscStrncpy(g.name, name, sizeof(g.name)));
  for (int d = 0; d < 3; ++d) g.mat.weft[d] = cfg->sheet.weft[d];
  PetscCall(make_material(prefix, &g.opt, &g.mat));
  cfg->sheet_group[cfg->nsheet_groups++] = g;
  PetscFunctionReturn(0);
}

/* The contact local step's options (-pd_contact*, -pd_obstacle; docs/peridynamics.md#contact-local-step). */
static PetscErrorCode read_contact_local_step(PetscOptionItems *PetscOptionsObject, pbng_pd_contact_options *c, PetscBool *given)
{
  PetscBool set, on = c->on ? PETSC_TRUE : PETSC_FALSE, fresh = c->fresh_pairs ? PETSC_TRUE : PETSC_FALSE;
  PetscInt iterations = c->iterations;
  char obstacles[1024] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsBool("-pd_contact", "peridynamic membranes: the contact local step (Alg. 2) after each SISSM iteration", NULL, on, &on, &set));
  *given = (PetscBool)(*given || set);
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "thickness", "contact: no pair of primitives closer than this (m; 0: -pd_thickness, else -sheet_thickness)",
                      &c->thickness, given));
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "dhat", "contact: the barrier acts on gaps below this (m, Eq. 3; 0: 4 x the thickness)", &c->dhat, given));
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "eps", "contact: minimal separation multiplier of Eq. 51, in (0, 1)", &c->eps, given));
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "mu", "contact: barrier weight mu of Eq. 47 (> 0)", &c->mu, given));
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "rest_exclusion",
                      "contact: pairs of one body closer than this at rest are left out (m; < 0: thickness + dhat, the barrier's reach)", &c->rest_exclusion, given));
  PetscCall(read_real(PetscOptionsObject, "-pd_contact", "kappa",
                      "contact: the barrier's weight in the frame's energy (J/m^2; 0: the seed's local step alone, > 0: frames in contact can end at -rtol)",
                      &c->kappa, given));
  PetscCall(PetscOptionsInt("-pd_contact_iterations", "contact: gradient steps per local step at most", NULL, iterations, &iterations, &set));
  *given = (PetscBool)(*given || set);
  PetscCall(PetscOptionsBool("-pd_contact_fresh_pairs", "contact (tests): every stage's pairs from a fresh broad phase, no candidate list kept, every distance computed", NULL, fresh,
                             &fresh, &set));
  *given = (PetscBool)(*given || set);
  c->fresh_pairs = fresh;
  PetscCall(PetscOptionsString("-pd_obstacle", "contact: analytic obstacles, ';'-separated (the forms of -obstacle)", NULL, obstacles, obstacles, sizeof(obstacles), &set));
  if (set) PetscCall(pbng_options_parse_obstacles("-pd_obstacle", obstacles, PBNG_PD_MAX_OBSTACLES, c->obstacle, &c->nobstacles));
  *given = (PetscBool)(*given || set);
  c->on = on || c->nobstacles > 0;
  PetscCheck(c->thickness >= 0 && isfinite(c->thickness), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_thickness %g: must be >= 0", c->thickness);
  PetscCheck(c->dhat >= 0 && isfinite(c->dhat), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_dhat %g: must be >= 0", c->dhat);
  PetscCheck(c->eps > 0 && c->eps < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_eps %g: must be in (0, 1)", c->eps);
  PetscCheck(c->mu > 0 && isfinite(c->mu), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_mu %g: must be > 0", c->mu);
  PetscCheck(isfinite(c->rest_exclusion), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_rest_exclusion %g: must be finite", c->rest_exclusion);
  PetscCheck(c->kappa >= 0 && isfinite(c->kappa), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_kappa %g: must be >= 0 (0: off)", c->kappa);
  PetscCheck(iterations >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-pd_contact_iterations %d: must be >= 0", (int)iterations);
  c->iterations = (int)iterations;
  PetscFunctionReturn(0);
}

/* -sheet_model fem | peridynamic | cloth6 and the peridynamic material (docs/peridynamics.md#options); the -pd_*
 * options without -sheet_model peridynamic are an error. */
static PetscErrorCode read_peridynamic_options(PetscOptionItems *PetscOptionsObject, pbng_pd_options *o)
{
  const char *const models[] = {"fem", "peridynamic", "cloth6"}, *const materials[] = {"neohookean", "stretching"};
  int model = (int)o->model, material = (int)o->mat.kind;
  PetscBool set, given = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-sheet_model",
                                      "fem (tri3 membranes + bend4 stencils) | peridynamic (one-ring peridynamic membranes, issue 20) | cloth6 (the "
                                      "GPBD seed's six-dimensional cloth stencils with a strain-stiffening energy, issue 43)",
                                      "sheet model ", models, 3, &model, &set));
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-pd_material", "peridynamic membranes: neohookean (Eq. 36) | stretching (A_3, Eq. 39)",
                                      "material ", materials, 2, &material, &given));
  PetscCall(read_real(PetscOptionsObject, "-pd", "s0", "peridynamic membranes: s0 of Eq. 36 / 39 (Pa)", &o->mat.s0, &given));
  PetscCall(read_real(PetscOptionsObject, "-pd", "s1", "peridynamic membranes: s1 of Eq. 36 (Pa; neohookean)", &o->mat.s1, &given));
  PetscCall(read_real(PetscOptionsObject, "-pd", "kb", "peridynamic membranes: bending constant k_b of Eq. 42 (Pa)", &o->k_b, &given));
  PetscCall(read_real(PetscOptionsObject, "-pd", "thickness", "peridynamic membranes: virtual bond length xi of Eq. 13 (m; 0: -sheet_thickness)",
                      &o->thickness, &given));
  PetscCall(read_contact_local_step(PetscOptionsObject, &o->contact, &given));
  {
    const char *const hessians[] = {"fixed_normal", "fd"};
    PetscBool hset;
    PetscCall(pbng_options_named_choice(PetscOptionsObject, "-pd_hessian",
                                        "Newton's ring matrices: fixed_normal (analytic, the virtual bond held fixed) | fd (central differences of the exact gradient)",
                                        "ring Hessian ", hessians, 2, &o->hessian_fd, &hset));
    given = (PetscBool)(given || hset);
  }
  o->model = (pbng_sheet_model)model;
  o->mat.kind = (pbng_pd_material_kind)material;
  PetscCheck(!given || o->model == PBNG_SHEET_MODEL_PERIDYNAMIC, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-pd_material, -pd_s0, -pd_s1, -pd_kb, -pd_thickness, -pd_hessian, -pd_contact* and -pd_obstacle are for -sheet_model peridynamic");
  PetscCall(pbng_pd_options_check(o));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_sheet_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_sheet_options *o = &cfg->sheet_opt;
  pbng_sheet_material *m = &cfg->sheet;
  PetscBool set = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(read_material(PetscOptionsObject, "-sheet", o, &set));
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, "-sheet_weft", "weft axis wx,wy,wz (projected onto each rest triangle)", o->weft));
  PetscCall(PetscOptionsReal("-sheet_size", "generated sheet: side length (m)", NULL, o->size, &o->size, &set));
  PetscCall(PetscOptionsReal("-sheet_stiffening", "-sheet_model cloth6: the stiffening factor beta >= 0 (tangent stiffness k (1 + 3 beta s^2); 0: linear)",
                             NULL, o->stiffening, &o->stiffening, &set));
  PetscCall(make_material("-sheet", o, m));
  PetscCheck(o->size > 0 && isfinite(o->size), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_size %g: must be > 0", o->size);
  const double w = vec3_norm(o->weft);
  PetscCheck(w > 0 && isfinite(w), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_weft %g,%g,%g: must be a non-zero vector", o->weft[0], o->weft[1],
             o->weft[2]);
  for (int d = 0; d < 3; ++d) m->weft[d] = o->weft[d] / w;
  cfg->nsheet_groups = 0;
  for (int k = 0; k < PBNG_MAX_SHEET_GROUPS; ++k) PetscCall(read_sheet_group(PetscOptionsObject, cfg, k));
  PetscCall(read_peridynamic_options(PetscOptionsObject, &cfg->pd));
  PetscCheck(cfg->pd.model != PBNG_SHEET_MODEL_CLOTH6 || cfg->nsheet_groups == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-sheet_model cloth6 with -sheet%d_group %s: the six-dimensional cloth stencils take the run's -sheet_* material only (docs/cloth.md)",
             cfg->nsheet_groups ? cfg->sheet_group[0].k : 0, cfg->nsheet_groups ? cfg->sheet_group[0].name : "");
  PetscFunctionReturn(0);
}
