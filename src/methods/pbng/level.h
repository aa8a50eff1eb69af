/* PBNG as a PETSc SNES on one problem (one level of the multilevel solver, or the fine problem under
 * a Newton solver with PBNG as nonlinear preconditioner). The unknowns are the free nodes' positions
 * in the Newton baseline's numbering and Vec layout (pbng_dof_map: rank r owns its owned free nodes,
 * three entries each). Callbacks set on an SNES (on its DM, so that FAS smoothers and nonlinear
 * preconditioners sharing the DM see them too):
 *   function   F(x) = -(f_int(x) + f_ext) [+ inertia], the energy gradient (SNESSetFunction; PETSc
 *              subtracts the right-hand side b itself);
 *   NGS        PBNG sweeps solving F(x) = b: each node step solves f_i(x) + b_i = 0 (SNESSetNGS; as
 *              many sweeps as the SNESNGS's -snes_ngs_sweeps, each a full color sweep with weak
 *              blocks and the configured SOR/Chebyshev acceleration);
 *   objective  E(x) - b.x, whose gradient is F(x) - b (SNESSetObjective; used by line searches);
 *   Jacobian   the PSD-projected stiffness of the Newton baseline, when the level has one. */
#ifndef PBNG_METHODS_PBNG_LEVEL_H
#define PBNG_METHODS_PBNG_LEVEL_H

#include <petscsnes.h>
#include "parallel/dofs.h"
#include "parallel/reduce.h"
#include "problem/assembly.h"
#include "methods/pbng/sweep.h"

typedef struct {
  pbng_problem *pb;
  int index;                 /* PETSc's level number (0: coarsest), -1 for a single level */
  pbng_dof_map map;          /* the free unknowns' global numbering */
  pbng_sweeper sweeper;      /* PBNG's sweep: the nonlinear Gauss-Seidel */
  Mat K;                     /* projected stiffness for a Newton solver on this level, or NULL */
  pbng_hessian_kind hessian; /* how K is made PSD */
  PetscLogStage stage;       /* -log_view: this level's callbacks ("PBNG level l"; -1: none) */
  Vec home;                  /* the vector whose storage is the problem's positions (pbng_level_create_home_vec), or NULL */
  double *home_save;         /* home's values while another vector's positions are loaded (made on first need) */
  const double *home_aside;  /* where home's values are while they are not in the positions (home_save or a scratch
                                vector's storage), or NULL */
  int contact_version;       /* the contacts' version K and map.node_dof's contact ghosts were made for */
  int K_current;             /* K holds a matrix assembled since it was made (0: the next Jacobian call assembles) */
  int K_keep;                /* the Jacobian callback keeps a current K (its factorisation too) instead of assembling anew */
  int K_linear_modes;        /* K's near-null space: the 12 linear fields (aggregation below it), else the 6 rigid modes */
  pbng_work_meter work;      /* wall time and communication in this level's callbacks (this rank) */
  long long sweeps, functions, objectives, jacobians;
} pbng_level;

/* Collective. The problem must have its halo. index: PETSc's level number, or -1 for a problem that is
 * not one level of several (no log stage of its own). */
PetscErrorCode pbng_level_create(pbng_problem *pb, const pbng_sweep_options *opt, int index, pbng_level *lev);
PetscErrorCode pbng_level_destroy(pbng_level *lev);

/* A vector of the level's unknowns (block size 3). */
PetscErrorCode pbng_level_create_vec(const pbng_level *lev, Vec *v);

/* A vector of the level's unknowns whose storage is the problem's own positions (owned free nodes
 * come first there): a solver's solution vector without a copy of the positions. Loading another
 * vector moves home's values aside first (into home_save, allocated then), and loading home brings
 * them back, so home always holds its own values. At most one per level; destroy it before the level. */
PetscErrorCode pbng_level_create_home_vec(pbng_level *lev, Vec *v);

/* Keeps home's values in `scratch` (a vector of the level's layout whose values are not needed until
 * home is loaded next), so that trial points along a direction can be written into the positions
 * without allocating home_save. Nothing else may write scratch until then. */
PetscErrorCode pbng_level_displace_home(pbng_level *lev, Vec scratch);

/* The problem's positions <- X (owned free nodes, then every ghost), and X <- the positions. */
PetscErrorCode pbng_level_load(pbng_level *lev, Vec X);
PetscErrorCode pbng_level_store(const pbng_level *lev, Vec X);

/* Along a direction D from X, at X + alpha D, without a trial vector (the line search on coarse
 * corrections): the objective E - b.x, and the slope (F - b).D, b the SNES's right-hand side
 * (collective; sums independent of the rank and thread counts). The trial point is written into the
 * positions: when X is home it is displaced first (pbng_level_displace_home avoids the copy). */
PetscErrorCode pbng_level_objective_along(pbng_level *lev, SNES snes, Vec X, PetscReal alpha, Vec D, PetscReal *obj);
PetscErrorCode pbng_level_slope_along(pbng_level *lev, SNES snes, Vec X, PetscReal alpha, Vec D, PetscReal *slope);
/* The objective at X (as the SNES objective callback) and F.D for a given function vector F, in one reduction: a
 * line search's start (both exact sums, independent of the rank and thread counts). */
PetscErrorCode pbng_level_objective_and_slope(pbng_level *lev, SNES snes, Vec X, Vec F, Vec D, PetscReal *obj, PetscReal *slope);

/* Sets function, NGS and objective on snes (its DM); and the Jacobian when the level has K. */
PetscErrorCode pbng_level_set_callbacks(pbng_level *lev, SNES snes);

/* Gives the level a stiffness matrix (projected as `kind`) and sets it as snes's Jacobian: for a
 * Newton-type solver on this level (the coarse solve, by default). */
PetscErrorCode pbng_level_set_jacobian(pbng_level *lev, pbng_hessian_kind kind, SNES snes);

/* With contacts, after a detection changed them (their version), for a level with K: the contact ghosts'
 * global unknowns and a new K with the new couplings, set as snes's Jacobian (collective). */
PetscErrorCode pbng_level_refresh_contacts(pbng_level *lev, SNES snes);

#endif
