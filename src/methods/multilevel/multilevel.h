/* Multilevel PBNG's options (-multilevel_*; docs/multilevel.md#options): its own part of pbng_solver_options,
 * its defaults and set_from_options registered with pbng_solver_multilevel_ops (multilevel.c). The number of
 * levels (-multilevel L) is the shared options' `multilevel`: the run builds the levels. */
#ifndef PBNG_METHODS_MULTILEVEL_MULTILEVEL_H
#define PBNG_METHODS_MULTILEVEL_MULTILEVEL_H

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

/* -multilevel_min_nodes_per_rank N: a coarse level with fewer than N nodes per rank is partitioned over fewer ranks,
 * floor(nodes / N) of them (at least one), spread evenly over the ranks; the others hold no part of it and the transfers
 * move the data (0: every level on every rank). The default is the model's robust choice (docs/scaling.md#multilevel): at
 * 1,024 ranks within 8 % of the best threshold for a typical rank and the best for the worst (noisy) rank. */
#define PBNG_LEVEL_MIN_NODES_PER_RANK 200

typedef struct {
  pbng_correction_search correction_search; /* -multilevel_linesearch: how each coarse correction is scaled */
  int correction_search_given;               /* -multilevel_linesearch was given or a scene chose it (else none with contacts) */
  int coarse_hessian;        /* -multilevel_coarse_hessian: the coarse Newton's matrix (a pbng_hessian_kind) */
  int ngmres;                /* -multilevel_ngmres m: the last m cycles' iterates combined by nonlinear GMRES (0: none) */
  int aggregation;           /* -multilevel_aggregation N: aggregation levels in the coarsest level's Newton solve */
  int aggregation_check;     /* -multilevel_aggregation_check: a testing aid (multilevel.c check_aggregation) */
  double guard_growth;       /* -multilevel_guard G: with full corrections, a cycle that multiplies the residual by more than G is
                                undone and the frame goes on with the secant line search (0: no guard) */
  int coarse_reuse;          /* -multilevel_coarse_reuse M: the coarse Newton's matrix serves the steps of M cycles (0: each step its own;
                                PBNG_COARSE_REUSE_AUTO: by the levels' sizes) */
  int min_nodes_per_rank;    /* -multilevel_min_nodes_per_rank N: coarse levels with fewer nodes per rank on fewer ranks (0: all ranks) */
} pbng_multilevel_options;

#endif
