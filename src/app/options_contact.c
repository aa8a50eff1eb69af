/* The contact options (issue 17; docs/contact.md, docs/options.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "app/config.h"

PetscErrorCode pbng_options_parse_obstacles(const char *option, const char *text, int max, pbng_obstacle *obstacle, int *n)
{
  char buf[1024], *save = NULL;

  PetscFunctionBeginUser;
  PetscCheck(strlen(text) < sizeof(buf), PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "%s: the list is longer than %d characters", option, (int)sizeof(buf) - 1);
  PetscCall(PetscStrncpy(buf, text, sizeof(buf)));
  *n = 0;
  for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
    while (*tok == ' ') ++tok;
    if (!*tok) continue;
    PetscCheck(*n < max, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s: more than %d obstacles", option, max);
    const char *err = pbng_obstacle_parse(tok, &obstacle[*n]);
    PetscCheck(!err, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s \"%s\": %s", option, tok, err);
    ++*n;
  }
  PetscCheck(*n > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s: no obstacle given (e.g. plane:0,0,0,0,1,0)", option);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_contact_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  pbng_contact_options *o = &cfg->contact_opt;
  PetscBool on = cfg->contact, set_on, given[11] = {0}, self = o->detect.self ? PETSC_TRUE : PETSC_FALSE, ccd = o->detect.ccd ? PETSC_TRUE : PETSC_FALSE;
  const pbng_solver_ops *ops = pbng_solver_resolve(cfg->solver, &cfg->solver_opt);
  const int every_default = cfg->mode == PBNG_MODE_QUASISTATIC && ops ? (ops->kind.contact_every > 0 ? ops->kind.contact_every : 1) : 0;
  PetscInt every = cfg->contact_every >= 0 ? cfg->contact_every : every_default;
  const char *const models[] = {"spring", "unilateral"};
  int model = o->unilateral;
  char obstacles[1024] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsBool("-contact", "collisions: surface vertices against surface triangles and obstacles, as weak constraints (docs/contact.md)",
                             NULL, on, &on, &set_on));
  PetscCall(PetscOptionsReal("-contact_distance", "contact: a vertex closer than this to a surface (either side) gets a contact (0: half the mean "
                             "surface edge)", NULL, o->detect.distance, &o->detect.distance, &given[0]));
  PetscCall(PetscOptionsReal("-contact_stiffness", "contact: k_n, the stiffness along the normal (paper: 1e8)", NULL, o->k_n, &o->k_n, &given[1]));
  PetscCall(PetscOptionsReal("-contact_tangential_stiffness", "contact: k_t, the stiffness across the normal (paper: 0)", NULL, o->k_t, &o->k_t,
                             &given[2]));
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-contact_model",
                                      "spring (the paper's: rebuilt at every detection) | unilateral (energy only while the vertex is on the wrong side)",
                                      "contact model ", models, 2, &model, &given[3]));
  PetscCall(PetscOptionsInt("-contact_every", "contact: also detect every K iterations within a frame (0: at frame starts only; default quasistatic: the solver's, 10 (pbng, pbd, xpbd_qs, xpbd_ho) or 1 (newton); dynamic: 0)", NULL, every, &every,
                            &given[4]));
  PetscCall(PetscOptionsBool("-contact_self", "contact: also within one body (self-contact)", NULL, self, &self, &given[5]));
  PetscCall(PetscOptionsString("-obstacle", "contact: analytic obstacles, ';'-separated: plane:px,py,pz,nx,ny,nz | box:lx,ly,lz,hx,hy,hz | "
                               "container:lx,ly,lz,hx,hy,hz | sphere:cx,cy,cz,r", NULL, obstacles, obstacles, sizeof(obstacles), &given[6]));
  PetscCall(PetscOptionsReal("-contact_thickness", "contact: h, the gap kept between a vertex and a sheet (two-sided: either side; 0 <= h < "
                             "-contact_distance; default: half the contact distance)", NULL, o->detect.sheet_offset, &o->detect.sheet_offset, &given[7]));
  PetscCall(PetscOptionsReal("-contact_freeze", "contact: no detection every -contact_every iterations once the frame's residual is within F times "
                             "its tolerance: the frame converges on a fixed set, then its end is checked by a detection (0: never frozen; "
                             "default 10, 0 when -contact_every is given)", NULL, cfg->contact_freeze, &cfg->contact_freeze, &given[8]));
  PetscCall(PetscOptionsBool("-contact_ccd", "contact: also pair a vertex that a step carried through another body's surface since the previous "
                             "detection (continuous detection over the step), and keep it paired while it is behind that surface "
                             "(docs/contact.md#crossings)", NULL, ccd, &ccd, &given[10]));
  PetscBool backoff = cfg->contact_backoff > 0 || (cfg->contact_backoff < 0 && !given[4]) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-contact_backoff", "contact: in frames to a tolerance, the periodic detections after K, 2K, 4K, ... iterations "
                             "(K = -contact_every) instead of every K (default: on, off when -contact_every is given)", NULL, backoff, &backoff, &given[9]));
  cfg->contact_backoff = backoff ? 1 : 0;
  if (given[4] && !given[8]) cfg->contact_freeze = 0; /* -contact_every K alone: a detection every K iterations to the frame's end */
  int any_given = 0;
  for (int k = 0; k < 11; ++k) any_given |= given[k];
  PetscCheck(!(set_on && !on && any_given), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-contact 0 with contact options: leave -contact out or the others");
  cfg->contact = on || any_given;
  if (given[6]) PetscCall(pbng_options_parse_obstacles("-obstacle", obstacles, PBNG_MAX_OBSTACLES, o->detect.obstacle, &o->detect.nobstacles));
  o->unilateral = model;
  o->detect.self = self ? 1 : 0;
  o->detect.ccd = ccd ? 1 : 0;
  PetscCheck(o->detect.distance >= 0 && isfinite(o->detect.distance), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-contact_distance %g: must be >= 0 (0: half the mean surface edge)", o->detect.distance);
  PetscCheck(!given[7] || (o->detect.sheet_offset >= 0 && isfinite(o->detect.sheet_offset)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-contact_thickness %g: must be >= 0 (and below the contact distance)", o->detect.sheet_offset);
  PetscCheck(o->k_n > 0 && isfinite(o->k_n), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-contact_stiffness %g: must be > 0", o->k_n);
  PetscCheck(o->k_t >= 0 && isfinite(o->k_t), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-contact_tangential_stiffness %g: must be >= 0", o->k_t);
  PetscCheck(!(o->unilateral && o->k_t > 0), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-contact_model unilateral acts along the normal only: -contact_tangential_stiffness %g must be 0", o->k_t);
  PetscCheck(every >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-contact_every %d: must be >= 0", (int)every);
  cfg->contact_every = (int)every;
  PetscCheck(cfg->contact_freeze >= 0 && isfinite(cfg->contact_freeze), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-contact_freeze %g: must be >= 0 (0: detections every -contact_every iterations up to the frame's end)", cfg->contact_freeze);
  PetscFunctionReturn(0);
}
