/* One small interface for every iterative method on a pbng_problem:
 * create (by name) -> begin_frame -> iterate ... -> destroy. The residual is the problem's
 * (pbng_problem_residual), identical for every solver. */
#ifndef PBNG_METHODS_SOLVER_H
#define PBNG_METHODS_SOLVER_H

#include "parallel/reduce.h"
#include "problem/problem.h"
#include "core/state.h"
#include "problem/hierarchy.h"
#include "methods/gpbd/gpbd.h"
#include "methods/multilevel/multilevel.h"
#include "methods/newton/newton.h"
#include "methods/pbd/pbd_options.h"
#include "methods/pbng/pbng.h"
#include "methods/sissm/sissm.h"

/* What a solver is given: the levels (the run builds them, so the shared part) and each method's own options, each
 * a struct of its own folder with its defaults and set_from_options registered with the method (its kind's
 * options_defaults and set_from_options below). A method reads its own part; the app sets scene defaults in them. */
typedef struct {
  int multilevel;                  /* PBNG: levels including the finest (-multilevel; 1: single-level) */
  const pbng_hierarchy *hierarchy; /* the coarse levels of a multilevel run (set by the run) */
  pbng_sweep_options sweep;        /* methods/pbng: PBNG's sweep (-accel, -omega, -rho, -gamma, -weak_blocks), also the
                                      multilevel smoother and Newton's -newton_npc */
  pbng_multilevel_options ml;      /* methods/multilevel */
  pbng_newton_options newton;      /* methods/newton */
  pbng_xpbd_options xpbd;          /* methods/pbd: pbd, xpbd, xpbd_qs */
  pbng_xpbd_ho_options xpbd_ho;    /* methods/pbd: the seed's XPBD */
  pbng_continuum_pbd_options cpbd; /* methods/pbd: the continuum seed's solver */
  pbng_gpbd_options gpbd;          /* methods/gpbd */
  pbng_sissm_options sissm;        /* methods/sissm */
} pbng_solver_options;

typedef struct pbng_solver pbng_solver;

/* The work one level of a multilevel solver did so far (its callbacks: SNES function, NGS, objective,
 * Jacobian), for the report. */
typedef struct {
  double seconds;
  long long sweeps, functions, objectives, jacobians;
  double halo_seconds;   /* of the seconds: in its sweeps' per-color halo exchanges */
  pbng_comm_counts comm; /* its communication (this rank): reductions, messages, bytes */
  pbng_work_meter transfer;      /* the transfers between it and the next coarser level (restriction, interpolation, injection) */
  pbng_work_meter coarse_factor; /* on the coarsest level: its factorisations and solves */
} pbng_level_stats;

/* How a solver kind is chosen and configured (the registry's part of pbng_solver_ops). */
typedef struct {
  int selectable;          /* a value of -solver (0: chosen otherwise, e.g. multilevel by -solver pbng -multilevel L) */
  const char *chosen_by;   /* how a user selects it, for messages: "-solver newton" */
  const char *help;        /* one line for -solver's -help entry */
  int constraint_colors;   /* needs the constraint coloring of the elements and weak constraints (Sec. 6) */
  int own_guess;           /* starts each (pseudo) step from its own x~ = x + dt v + dt^2 g (PBD's; -dynamic_guess does not apply) */
  int contacts;            /* handles contacts (the problem's dynamic weak constraints, issue 17) */
  int plasticity;          /* handles the elastoplastic state and released boundary sets (issue 18) */
  int peridynamics;        /* handles peridynamic membranes (-sheet_model peridynamic, issue 20) */
  int cloth_stencils;      /* handles the six-dimensional cloth stencils (-sheet_model cloth6, issue 43) */
  int multilevel;          /* runs multilevel with -multilevel L > 1 (pbng_solver_resolve), so the fast default applies */
  int costly_iterations;   /* an iteration costs far more than a residual evaluation (a Newton step, a multilevel cycle):
                              the run checks the residual after every one */
  int ring_matrices;       /* assembles the peridynamic rings' matrices (-pd_hessian acts) */
  int barrier_contact;     /* runs the peridynamic membranes' barrier contact step (-pd_contact*, -pd_obstacle act) */
  int contact_every;       /* quasistatic: its default -contact_every (iterations between detections within a frame) */
  /* Prefixes of the options of PETSc objects the solver creates and reads only when it sets up
   * ("newton_"), each followed by a comma; NULL: none. */
  const char *petsc_prefixes;
  /* Reads the solver's own options (called for every kind, in its own -help section, so that -help
   * lists them all): selected is the -solver value; an option given for another solver is an error
   * naming it. */
  PetscErrorCode (*set_from_options)(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
  /* Sets the defaults of the method's own part of the options (before the scene's and the user's). */
  void (*options_defaults)(pbng_solver_options *opt);
  /* Reporting: the suffix of each -monitor line and the extra summary line, from the Krylov
   * iterations of the frame / run (NULL: nothing to add). */
  void (*iteration_suffix)(long long linear, char *buf, size_t len);
  void (*summary_line)(long long linear, int iterations, char *buf, size_t len);
  /* optional: the iterations every frame must run, given the options, the mode and -iters (0: any
   * number, -iters at most, fewer with -rtol); the run refuses a different explicit -iters and -rtol. */
  int (*frame_iterations)(const pbng_solver_options *opt, int dynamic, int iters);
  /* with frame_iterations: records the resolved n (e.g. as substeps = n / iterations per substep) */
  void (*set_frame_iterations)(pbng_solver_options *opt, int n);
} pbng_solver_kind;

typedef struct {
  const char *name;
  pbng_solver_kind kind;
  PetscErrorCode (*create)(pbng_solver *s);
  PetscErrorCode (*begin_frame)(pbng_solver *s);
  PetscErrorCode (*iterate)(pbng_solver *s, int l); /* iteration l (0-based) of the current frame */
  PetscErrorCode (*destroy)(pbng_solver *s);
  PetscErrorCode (*monitor)(pbng_solver *s, char *buf, size_t len); /* optional -monitor suffix (collective) */
  /* optional: the state a checkpoint must keep between iterations (pointers into the solver), and
   * what to do once it was read back (e.g. refresh ghosts) */
  PetscErrorCode (*state)(pbng_solver *s, pbng_state_field *fields, int *nfields);
  PetscErrorCode (*restored)(pbng_solver *s);
  /* optional (multilevel): level l's work so far (l = 0 the coarsest) */
  PetscErrorCode (*level_stats)(pbng_solver *s, int l, pbng_level_stats *stats);
  /* optional: the residual of the current positions when the last iteration ended evaluating the forces there
   * (*known; bitwise pbng_problem_residual's, from the same forces), so that the run's check need not evaluate them
   * again; *known = PETSC_FALSE otherwise (collective). */
  PetscErrorCode (*current_residual)(pbng_solver *s, double *residual, PetscBool *known);
  /* optional: whether a checkpoint may be taken before iteration l of the frame (state the checkpoint does not keep is
   * then rebuilt exactly on a restart); a stop requested elsewhere waits for the next such iteration. NULL: always. */
  int (*stop_allowed)(const pbng_solver *s, int l);
  /* optional: the elements outside the model's domain (inverted: det F <= 0, all ranks) that the last iteration left,
   * or at the frame's start before its first iteration; -1 when not counted. The run's divergence check does not take
   * a residual ratio of such states while their count falls (docs/options.md -divergence_limit). NULL: never counted. */
  long long (*inverted)(const pbng_solver *s);
} pbng_solver_ops;

struct pbng_solver {
  const pbng_solver_ops *ops;
  pbng_problem *pb;
  pbng_solver_options opt;
  double halo_seconds; /* wall time spent in halo exchanges (part of the iterations' time) */
  long long linear_iterations; /* Krylov iterations so far, over all frames (Newton; 0 for PBNG) */
  void *data;
};

/* The registry: every solver kind, in -help order (src/methods/solver.c holds the one list). */
int pbng_solver_count(void);
const pbng_solver_ops *pbng_solver_at(int k);
/* The kind named `name` (selectable ones only with selectable_only), or NULL. */
const pbng_solver_ops *pbng_solver_find(const char *name, int selectable_only);
/* "pbng, newton, pbd, xpbd, xpbd_qs, xpbd_ho": the values of -solver, for messages and -help. */
void pbng_solver_names(char *buf, size_t len);
/* The solver a run with -solver `name` and these options uses (-solver pbng -multilevel L > 1: the
 * multilevel one). NULL for an unknown name. */
const pbng_solver_ops *pbng_solver_resolve(const char *name, const pbng_solver_options *opt);
/* Every kind's options_defaults: the options before a scene or the user set any. */
void pbng_solver_options_defaults(pbng_solver_options *opt);
/* Every kind's set_from_options, each in its own options section (collective on PETSC_COMM_WORLD). */
PetscErrorCode pbng_solver_options_read(pbng_solver_options *opt, const char *selected);
/* Whether option `name` (without its dash) belongs to a PETSc object of `ops` (its petsc_prefixes). */
int pbng_solver_owns_petsc_option(const pbng_solver_ops *ops, const char *name);

/* Creates the solver `ops` resolves to (pbng_solver_resolve). */
PetscErrorCode pbng_solver_create(const pbng_solver_ops *ops, pbng_problem *pb, const pbng_solver_options *opt, pbng_solver *s);
PetscErrorCode pbng_solver_begin_frame(pbng_solver *s);
PetscErrorCode pbng_solver_iterate(pbng_solver *s, int l);
PetscErrorCode pbng_solver_destroy(pbng_solver *s);

/* 1 for the constraint-based solvers (pbd, xpbd, xpbd_qs, xpbd_ho): they need the constraint colors. */
int pbng_solver_uses_constraint_colors(const char *name);

/* An option whose value is one of names[0..n): *value its index (unchanged when not given; its name is
 * the shown default). Anything else is an error: "<option>: unknown <noun>"X" (known: a, b, c)" (noun
 * "" or e.g. "acceleration "). */
PetscErrorCode pbng_options_named_choice(PetscOptionItems *PetscOptionsObject, const char *option, const char *help, const char *noun,
                                         const char *const *names, int n, int *value, PetscBool *set);

/* An option value that is "auto" or an integer (-multilevel, -multilevel_coarse_reuse): 1 for "auto", 0 for an integer
 * (in *n), -1 for anything else (the caller's message names what it takes). */
int pbng_parse_auto_or_integer(const char *value, long *n);

/* Sets a PETSc option unless the user gave it: a solver's default that any explicit option overrides. */
PetscErrorCode pbng_option_default(const char *name, const char *value);


extern const pbng_solver_ops pbng_solver_pbng_ops;
extern const pbng_solver_ops pbng_solver_newton_ops;
extern const pbng_solver_ops pbng_solver_pbd_ops, pbng_solver_xpbd_ops, pbng_solver_xpbd_qs_ops, pbng_solver_xpbd_ho_ops;
extern const pbng_solver_ops pbng_solver_continuum_pbd_ops;
extern const pbng_solver_ops pbng_solver_gpbd_ops;
extern const pbng_solver_ops pbng_solver_sissm_ops;
extern const pbng_solver_ops pbng_solver_multilevel_ops;

#endif
