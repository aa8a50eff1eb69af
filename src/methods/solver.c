/* The solver registry: the one list of solver kinds, lookups by name, the options pass over every
 * kind, and the generic create/iterate/destroy. */
#include "methods/solver.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pbng_solver_ops *const solver_table[] = {&pbng_solver_pbng_ops, &pbng_solver_newton_ops, &pbng_solver_pbd_ops,
                                                      &pbng_solver_xpbd_ops, &pbng_solver_xpbd_qs_ops, &pbng_solver_xpbd_ho_ops,
                                                      &pbng_solver_continuum_pbd_ops, &pbng_solver_gpbd_ops, &pbng_solver_sissm_ops,
                                                      &pbng_solver_multilevel_ops};

int pbng_solver_count(void) { return (int)(sizeof(solver_table) / sizeof(solver_table[0])); }

const pbng_solver_ops *pbng_solver_at(int k) { return k >= 0 && k < pbng_solver_count() ? solver_table[k] : NULL; }

const pbng_solver_ops *pbng_solver_find(const char *name, int selectable_only)
{
  for (int k = 0; k < pbng_solver_count(); ++k)
    if (!strcmp(name, solver_table[k]->name) && (solver_table[k]->kind.selectable || !selectable_only)) return solver_table[k];
  return NULL;
}

void pbng_solver_names(char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = 0;
  for (int k = 0; k < pbng_solver_count() && used < len; ++k)
    if (solver_table[k]->kind.selectable) used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", solver_table[k]->name);
}

const pbng_solver_ops *pbng_solver_resolve(const char *name, const pbng_solver_options *opt)
{
  const pbng_solver_ops *ops = pbng_solver_find(name, 1);
  if (ops == &pbng_solver_pbng_ops && opt->multilevel > 1) return &pbng_solver_multilevel_ops;
  return ops;
}

/* Whether an earlier kind shares k's set_from_options (pbd, xpbd and xpbd_qs read one set). */
static int reads_shared_options(int k)
{
  for (int j = 0; j < k; ++j)
    if (solver_table[j]->kind.set_from_options == solver_table[k]->kind.set_from_options) return 1;
  return 0;
}

void pbng_solver_options_defaults(pbng_solver_options *opt)
{
  memset(opt, 0, sizeof(*opt));
  opt->multilevel = 1;
  for (int k = 0; k < pbng_solver_count(); ++k)
    if (solver_table[k]->kind.options_defaults) solver_table[k]->kind.options_defaults(opt);
}

PetscErrorCode pbng_solver_options_read(pbng_solver_options *opt, const char *selected)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < pbng_solver_count(); ++k) {
    const pbng_solver_kind *kind = &solver_table[k]->kind;
    if (!kind->set_from_options || reads_shared_options(k)) continue;
    char title[128];
    snprintf(title, sizeof(title), "%s: %s", kind->chosen_by, kind->help);
    PetscErrorCode ierr = 0;
    PetscOptionsBegin(PETSC_COMM_WORLD, NULL, title, NULL);
    ierr = kind->set_from_options(PetscOptionsObject, opt, selected);
    PetscOptionsEnd(); /* reached on errors too: it frees what PetscOptionsBegin allocated */
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

int pbng_solver_owns_petsc_option(const pbng_solver_ops *ops, const char *name)
{
  const char *p = ops ? ops->kind.petsc_prefixes : NULL;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    const size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (n > 0 && !strncmp(name, p, n)) return 1;
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

PetscErrorCode pbng_solver_create(const pbng_solver_ops *ops, pbng_problem *pb, const pbng_solver_options *opt, pbng_solver *s)
{
  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCheck(ops, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "no solver");
  PetscCheck(!(pb->plastic_strain || pb->handle) || ops->kind.plasticity, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "%s does not handle plasticity (-plastic_*) or released sets (-bcK_release) yet: use -solver pbng (single-level or -multilevel L), newton or "
             "continuum_pbd (docs/cloth.md#plasticity)", ops->kind.chosen_by);
  PetscCheck(!pb->pd || ops->kind.peridynamics, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "%s does not handle peridynamic membranes (-sheet_model peridynamic) yet: use -solver sissm or newton (docs/peridynamics.md)", ops->kind.chosen_by);
  PetscCheck(!(pbng_element_kinds_mask(pb->dm->etype, pb->dm->kind, pb->dm->nelems) & (1u << PBNG_ELEMENT_CLOTH6)) || ops->kind.cloth_stencils,
             PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "%s does not handle the six-dimensional cloth stencils (-sheet_model cloth6): use -solver pbng (single-level), newton or gpbd (docs/cloth.md)",
             ops->kind.chosen_by);
  s->ops = ops;
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
  const pbng_solver_ops *ops = pbng_solver_find(name, 1);
  return ops && ops->kind.constraint_colors;
}

int pbng_parse_auto_or_integer(const char *value, long *n)
{
  char *end;
  if (!strcmp(value, "auto")) return 1;
  *n = strtol(value, &end, 10);
  return end != value && !*end ? 0 : -1;
}

PetscErrorCode pbng_options_named_choice(PetscOptionItems *PetscOptionsObject, const char *option, const char *help, const char *noun,
                                         const char *const *names, int n, int *value, PetscBool *set)
{
  char name[64], known[256] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(name, names[*value], sizeof(name)));
  PetscCall(PetscOptionsString(option, help, NULL, name, name, sizeof(name), set));
  for (int k = 0; k < n; ++k)
    if (!strcmp(name, names[k])) {
      *value = k;
      PetscFunctionReturn(0);
    }
  for (int k = 0; k < n; ++k) snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", k ? ", " : "", names[k]);
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "%s: unknown %s\"%s\" (known: %s)", option, noun, name, known);
}

PetscErrorCode pbng_option_default(const char *name, const char *value)
{
  PetscBool given;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasName(NULL, NULL, name, &given));
  if (!given) PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscFunctionReturn(0);
}
