#include "solvers/solver.h"
#include <string.h>

static const pbng_solver_ops *const solver_table[] = {&pbng_solver_pbng_ops, &pbng_solver_newton_ops, &pbng_solver_pbd_ops,
                                                      &pbng_solver_xpbd_ops, &pbng_solver_xpbd_qs_ops, &pbng_solver_multilevel_ops};

PetscErrorCode pbng_solver_create(const char *name, pbng_problem *pb, const pbng_solver_options *opt, pbng_solver *s)
{
  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  for (size_t k = 0; k < sizeof(solver_table) / sizeof(solver_table[0]); ++k)
    if (!strcmp(name, solver_table[k]->name)) s->ops = solver_table[k];
  PetscCheck(s->ops, PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown solver \"%s\" (known: pbng, newton, pbd, xpbd, xpbd_qs, multilevel)", name);
  s->pb = pb;
  s->opt = *opt;
  PetscCall(s->ops->create(s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_solver_begin_frame(pbng_solver *s) { return s->ops->begin_frame(s); }
PetscErrorCode pbng_solver_iterate(pbng_solver *s, int l) { return s->ops->iterate(s, l); }

PetscErrorCode pbng_solver_destroy(pbng_solver *s)
{
  PetscFunctionBeginUser;
  if (s->ops) PetscCall(s->ops->destroy(s));
  memset(s, 0, sizeof(*s));
  PetscFunctionReturn(0);
}

int pbng_solver_uses_constraint_colors(const char *name)
{
  return !strcmp(name, "pbd") || !strcmp(name, "xpbd") || !strcmp(name, "xpbd_qs");
}

PetscErrorCode pbng_option_default(const char *name, const char *value)
{
  PetscBool given;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasName(NULL, NULL, name, &given));
  if (!given) PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscFunctionReturn(0);
}
