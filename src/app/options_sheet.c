/* The sheet options (issue 18; docs/cloth.md#options): one material for every tri3 membrane and bend4
 * stencil of a run. */
#include <math.h>
#include <string.h>
#include "app/config.h"
#include "core/vec3.h"

/* -sheet_membrane isotropic | orthotropic and the parameters of the chosen law. */
static PetscErrorCode read_membrane_law(PetscOptionItems *PetscOptionsObject, pbng_sheet_options *o)
{
  const char *const names[] = {"isotropic", "orthotropic"};
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-sheet_membrane", "membrane law of the tri3 elements (StVK, plane stress)", "membrane law ",
                                      names, 2, &o->orthotropic, &set));
  PetscCall(PetscOptionsReal("-sheet_youngs", "isotropic membrane: Young's modulus (Pa)", NULL, o->youngs, &o->youngs, &set));
  PetscCall(PetscOptionsReal("-sheet_poisson", "isotropic membrane: Poisson ratio in [0, 0.5)", NULL, o->poisson, &o->poisson, &set));
  PetscCall(PetscOptionsReal("-sheet_k_weft", "orthotropic membrane: Young's modulus along the weft (Pa)", NULL, o->k_weft, &o->k_weft, &set));
  PetscCall(PetscOptionsReal("-sheet_k_warp", "orthotropic membrane: Young's modulus along the warp (Pa)", NULL, o->k_warp, &o->k_warp, &set));
  PetscCall(PetscOptionsReal("-sheet_k_shear", "orthotropic membrane: in-plane shear modulus (Pa)", NULL, o->k_shear, &o->k_shear, &set));
  PetscCall(PetscOptionsReal("-sheet_nu_weft", "orthotropic membrane: Poisson ratio nu_weft in [0, 1)", NULL, o->nu_weft, &o->nu_weft, &set));
  PetscCall(PetscOptionsReal("-sheet_nu_warp", "orthotropic membrane: Poisson ratio nu_warp in [0, 1)", NULL, o->nu_warp, &o->nu_warp, &set));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_sheet_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_sheet_options *o = &cfg->sheet_opt;
  pbng_sheet_material *m = &cfg->sheet;
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(read_membrane_law(PetscOptionsObject, o));
  PetscCall(PetscOptionsReal("-sheet_thickness", "sheet thickness (m; the membrane energy's and the mass's factor)", NULL, o->thickness, &o->thickness, &set));
  PetscCall(PetscOptionsReal("-sheet_bending_stiffness", "isometric bending stiffness k_b (N m; 0: no bend4 stencils)", NULL, o->bending_stiffness,
                             &o->bending_stiffness, &set));
  PetscCall(PetscOptionsReal("-sheet_density", "sheet density (kg/m^3; a triangle's mass is density x thickness x area)", NULL, o->density, &o->density,
                             &set));
  PetscCall(pbng_options_read_vector3(PetscOptionsObject, "-sheet_weft", "weft axis wx,wy,wz (projected onto each rest triangle)", o->weft));
  PetscCall(PetscOptionsReal("-sheet_size", "generated sheet: side length (m)", NULL, o->size, &o->size, &set));
  const char *err = o->orthotropic ? pbng_membrane_orthotropic(o->k_weft, o->k_warp, o->k_shear, o->nu_weft, o->nu_warp, o->thickness, &m->membrane)
                                   : pbng_membrane_isotropic(o->youngs, o->poisson, o->thickness, &m->membrane);
  PetscCheck(!err, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_membrane %s: %s", o->orthotropic ? "orthotropic" : "isotropic", err);
  PetscCheck(o->bending_stiffness >= 0 && isfinite(o->bending_stiffness), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-sheet_bending_stiffness %g: must be >= 0", o->bending_stiffness);
  PetscCheck(o->density > 0 && isfinite(o->density), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_density %g: must be > 0", o->density);
  PetscCheck(o->size > 0 && isfinite(o->size), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_size %g: must be > 0", o->size);
  const double w = vec3_norm(o->weft);
  PetscCheck(w > 0 && isfinite(w), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sheet_weft %g,%g,%g: must be a non-zero vector", o->weft[0], o->weft[1],
             o->weft[2]);
  for (int d = 0; d < 3; ++d) m->weft[d] = o->weft[d] / w;
  m->bending_stiffness = o->bending_stiffness;
  m->density = o->density;
  PetscFunctionReturn(0);
}
