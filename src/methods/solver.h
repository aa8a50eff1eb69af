/* One small interface for every iterative method on a pbng_problem:
 * create (by name) -> begin_frame -> iterate ... -> destroy. The residual is the problem's
 * (pbng_problem_residual), identical for every solver. */
#ifndef PBNG_METHODS_SOLVER_H
#define PBNG_METHODS_SOLVER_H

#include "problem/problem.h"
#include "core/state.h"
#include "problem/hierarchy.h"
#include "methods/pbng/sweep.h"

/* How the multilevel solver scales each interpolated coarse correction d (x <- x + alpha d):
 *   none    alpha = 1 (plain FAS);
 *   energy  backtracking on the level's objective E(x) - b.x (Armijo), from alpha = 1, with the
 *           quadratic model of E along d; where the energy change is below its round-off, the
 *           secant rule below decides;
 *   secant  alpha from the directional derivative (F(x) - b).d at x and at x + d. */
typedef enum { PBNG_CORRECTION_NONE = 0, PBNG_CORRECTION_ENERGY = 1, PBNG_CORRECTION_SECANT = 2 } pbng_correction_search;

/* -multilevel_ngmres's default: the last 4 iterates combined (measured on five meshes against 0, 1, 3 and 6:
 * 2.1-3.8x fewer cycles than plain FAS cycles, 3.0x on a P2 tube; 6 hardly fewer; docs/multilevel.md#nonlinear-gmres-over-the-cycles) */
#define PBNG_MULTILEVEL_NGMRES_DEFAULT 4

/* -multilevel_coarse_reuse auto (PBNG_COARSE_REUSE_AUTO, the default): the coarsest level's matrix kept over the Newton
 * steps of one cycle (M = 1) where that level has at least 1 / PBNG_COARSE_REUSE_SHARE of the finest level's nodes (its
 * factorisations then are much of a cycle's cost: a 3.4K-node beam over 486 coarse nodes 0.68x the time), else assembled
 * at every step (M = 0: a 27K-node beam over 556 coarse nodes took 1.16x the time with M = 1; measured in
 * docs/multilevel.md#the-coarse-matrix-kept-over-newton-steps) */
#define PBNG_COARSE_REUSE_AUTO  (-1)
#define PBNG_COARSE_REUSE_SHARE 10

/* -multilevel_aggregation N: levels below the coarsest mesh level made by aggregation of its matrix (PETSc's
 * PCGAMG with the 12 linear fields, unsmoothed; CG) inside its Newton solve, in place of the direct factorisation (0: none).
 * PBNG_AGGREGATION_AUTO (the default): where the coarse meshes stop short of -multilevel L (edge collapses stall on
 * thin walls, shells, several bodies) the levels left; under -multilevel auto, as many as GAMG makes when the collapses
 * stall with the coarsest mesh above PBNG_AGGREGATION_DIRECT_NODES nodes (PBNG_AGGREGATION_ANY); else 0. */
#define PBNG_AGGREGATION_AUTO         (-1)
#define PBNG_AGGREGATION_ANY          (-2)
#define PBNG_AGGREGATION_DIRECT_NODES 2000

typedef struct {
  pbng_sweep_options sweep; /* PBNG's sweep: -accel, -omega, -rho, -gamma, -weak_blocks */
  int weak_first;   /* PBD/XPBD: project the weak constraints before the elements (-xpbd_order weak_first) */
  double pseudo_dt; /* XPBD-QS: pseudo-time step */
  int substeps;     /* XPBD-QS: iterations per pseudo-time step */
  int ho_split;     /* the seed's XPBD: -xpbd_ho_split (a pbng_split_kind) */
  int ho_substeps;  /* the seed's XPBD, dynamic: substeps per frame (-xpbd_ho_substeps; 0: not given) */
  double ho_dt;     /* the seed's XPBD, quasistatic: pseudo-time step (-xpbd_ho_dt; 0: not given, -dt) */
  int ho_iterations; /* the seed's XPBD: solver iterations per (pseudo) step, n_it of Alg. 1 (-xpbd_ho_iterations) */
  int cpbd_substeps;   /* the continuum seed's solver, dynamic: substeps per frame (-continuum_pbd_substeps; 0: not given) */
  double cpbd_dt;      /* ..., quasistatic: pseudo-time step (-continuum_pbd_dt; 0: -dt) */
  int cpbd_iterations; /* ...: constraint sweeps per (pseudo) step (-continuum_pbd_iterations) */
  double cpbd_damping; /* ...: velocities scaled by 1 - damping after each step (Alg. 1 line 12; -continuum_pbd_damping) */
  int cpbd_inversion;  /* ...: StVK's inversion handling (-continuum_pbd_inversion) */
  int multilevel;   /* PBNG: levels including the finest (-multilevel; 1: single-level) */
  const pbng_hierarchy *hierarchy; /* the coarse levels of a multilevel run (set by the run) */
  pbng_correction_search correction_search; /* -multilevel_linesearch: how each coarse correction is scaled */
  int correction_search_given;               /* -multilevel_linesearch was given (else none with contacts) */
  int coarse_hessian;        /* -multilevel_coarse_hessian: the coarse Newton's matrix (a pbng_hessian_kind) */
  int multilevel_ngmres;     /* -multilevel_ngmres m: the last m cycles' iterates combined by nonlinear GMRES (0: none) */
  int coarse_aggregation;    /* -multilevel_aggregation N: smoothed-aggregation levels in the coarsest level's Newton solve */
  PetscBool aggregation_check; /* -multilevel_aggregation_check: a testing aid (multilevel.c check_aggregation) */
  int coarse_reuse;          /* -multilevel_coarse_reuse M: the coarse Newton's matrix serves the steps of M cycles (0: each step its own;
                                PBNG_COARSE_REUSE_AUTO: by the levels' sizes) */
  char newton_preconditioner[32]; /* -newton_preconditioner: the linear solver preset ("": the default) */
  int newton_hessian;        /* -newton_projection / -newton_exact_hessian (a pbng_hessian_kind; 0: the default) */
  int newton_npc;            /* -newton_npc pbng */
  int gpbd_form;             /* GPBD: -gpbd_form (0 jacobi, 1 gs) */
  double gpbd_omega;         /* GPBD Jacobi: over-relaxation in [1, 2) (-gpbd_omega; 0: not read yet, 1) */
  int gpbd_newton_max;       /* GPBD: local Newton steps at most (-gpbd_newton_max; 0: not read yet, 20) */
  int gpbd_hessian_fix;      /* GPBD: -gpbd_hessian_fix (0 qr_gershgorin, 1 eigen_clamp, 2 qr_when_indefinite) */
  int gpbd_seed_drift;       /* GPBD: -gpbd_subspace_projection 0 (the seed's rule: d_i not projected on its subspace) */
  int gpbd_sheet_projection_off; /* GPBD: -gpbd_sheet_projection 0 (sheet terms not projected as -gpbd_subspace_projection does for tetrahedra) */
  double gpbd_uninvert_min;  /* GPBD: -gpbd_uninvert_min (< 0: no inverted-element projection; 0 in the options: not read yet) */
  double gpbd_dt;            /* GPBD quasistatic: pseudo-time step (-gpbd_dt; 0: -dt) */
  int gpbd_substeps;         /* GPBD quasistatic: iterations per pseudo-time step (-gpbd_substeps; 0: not given, 1) */
  int sissm_form;            /* SISSM: -sissm_form (0 exact, 1 seed) */
  int sissm_step_length;     /* SISSM: -sissm_step_length (Eq. 33 on; 0: alpha = 1) */
  int sissm_chebyshev;       /* SISSM: -sissm_chebyshev */
  double sissm_rho;          /* SISSM: -sissm_rho, Chebyshev's spectral radius estimate */
  int sissm_check_energy;    /* SISSM: -sissm_check_energy (count vertex steps that raise E_i; tests) */
  int sissm_d_every;         /* SISSM exact form: -sissm_d_every, D rebuilt every N iterations of a frame (1: every one) */
} pbng_solver_options;

typedef struct pbng_solver pbng_solver;

/* The work one level of a multilevel solver did so far (its callbacks: SNES function, NGS, objective,
 * Jacobian), for the report. */
typedef struct {
  double seconds;
  long long sweeps, functions, objectives, jacobians;
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
  int contact_every;       /* quasistatic: its default -contact_every (iterations between detections within a frame) */
  /* Prefixes of the options of PETSc objects the solver creates and reads only when it sets up
   * ("newton_"), each followed by a comma; NULL: none. */
  const char *petsc_prefixes;
  /* Reads the solver's own options (called for every kind, in its own -help section, so that -help
   * lists them all): selected is the -solver value; an option given for another solver is an error
   * naming it. */
  PetscErrorCode (*set_from_options)(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
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

/* Each kind's own options (their modules): */
PetscErrorCode pbng_pbng_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_xpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_newton_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_xpbd_ho_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_sissm_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_gpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);
PetscErrorCode pbng_multilevel_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected);

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
