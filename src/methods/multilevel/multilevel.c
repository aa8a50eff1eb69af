/* Multilevel PBNG (-solver pbng -multilevel L): PETSc's nonlinear multigrid SNESFAS with PBNG's color
 * sweep as the smoother on every level (src/methods/pbng/level.c: SNESSetNGS) and, by default, the Newton
 * baseline's projected Newton on the coarsest level. One iteration of the run is one FAS cycle.
 *
 * FAS (Brandt; Brune et al. 2015) on levels l = L-1 (finest) .. 0 (coarsest): level l solves
 * F_l(x) = b_l (b = 0 on the finest). A cycle pre-smooths, then corrects with the coarser level:
 *     b_{l-1} = F_{l-1}(Q x) - R (F_l(x) - b_l)        (the tau correction; R = P^T restricts residuals,
 *                                                      Q injects the solution)
 *     solve F_{l-1}(y) = b_{l-1} from y = Q x           (recursively: a cycle on level l-1)
 *     x <- x + alpha P (y - Q x)                        (the interpolated coarse correction)
 * and post-smooths. At a solution of level l the coarse problem is solved by y = Q x, so the cycle
 * leaves it unchanged (the FAS fixed point). The levels' meshes are independent (non-nested, each
 * partitioned on its own); P and Q are built by point location (src/parallel/transfer.c) and act on
 * each coordinate (MatCreateMAIJ). alpha is chosen by a line search on the level's objective
 * E_l(x) - b_l.x (-multilevel_linesearch; PETSc 3.18's multiplicative FAS has no line search of its
 * own there): the interpolation matrix given to FAS is a shell whose MatMultAdd, the operation FAS
 * applies the correction with, scales the correction before adding it. */
#include <malloc.h>
#include <math.h>
#include <petscdm.h>
#include <stdio.h>
#include <petsc/private/snesimpl.h> /* SNES's work vectors (free_work_vectors) */
#include <string.h>
#include "contact/contact_levels.h"
#include "parallel/ordered_factor.h"
#include "parallel/ordered_product.h"
#include "parallel/reduce.h"
#include "parallel/transfer.h"
#include "methods/pbng/level.h"
#include "methods/solver.h"

typedef struct multilevel_data multilevel_data;

/* The interpolation from level l-1 to level l, as FAS sees it. */
typedef struct {
  multilevel_data *ml;
  int l;     /* the finer of the two levels */
  Mat P;     /* the 3-dof interpolation (MAIJ) */
  Vec d;     /* the interpolated correction (level l), when the cycle SNES has no update vector to hold it */
} correction;

struct multilevel_data {
  int nlevels;
  pbng_level *level;     /* [nlevels], PETSc's numbering: [nlevels - 1] is the run's problem */
  Mat *P, *Q;            /* [nlevels]: scalar interpolation / injection between levels l and l-1 (l >= 1) */
  Mat *P3, *Q3, *shell;  /* their 3-dof versions; the shell applies P3 with the line search */
  Vec *rscale;           /* [nlevels]: 1 / (column sums of P3), the restriction's scaling for solutions */
  correction *corr;      /* [nlevels] */
  SNES fas;
  Vec X;
  pbng_correction_search search;    /* this frame's: the configured one, or the secant after the guard undid a cycle */
  pbng_correction_search configured;
  Vec safe;                         /* full corrections' guard: the fine positions before the cycle (NULL: no guard) */
  double guard_growth;              /* -multilevel_guard G */
  int coarse_hessian;    /* the coarse Newton's matrix (pbng_hessian_kind) */
  int aggregation;       /* -multilevel_aggregation: smoothed-aggregation levels in the coarsest level's Newton solve (0: a factorisation) */
  PetscBool aggregation_check; /* -multilevel_aggregation_check: once, how well the aggregation's first prolongator reproduces the modes */
  int coarse_reuse;      /* -multilevel_coarse_reuse M: that matrix made at the first step of cycles 0, M, 2M, ... of a frame */
  PetscBool function_current; /* the FAS SNES's function vector holds F at the fine positions */
  PetscBool f2_current;       /* and last_f2 is its |F|^2 (nonlinear GMRES reduced it): the residual check needs no reduction */
  pbng_contact_level *contacts; /* [nlevels - 1]: the fine contacts carried to each coarse level, or NULL */
  int carried_version;   /* the fine contacts' version they were carried from */
  double last_alpha[16]; /* the last correction's alpha per level (monitor) */
  long long corrections, damped, rejected;
  pbng_work_meter *transfer;   /* [nlevels]: the products with P3[l] and Q3[l] (restriction, interpolation, injection), at l >= 1 */
  pbng_work_meter coarse_factor; /* the coarsest level's factorisations and solves (the ordered factorisation; not with aggregation) */
  /* -multilevel_ngmres m: the last m iterates x_i and their residuals F_i (oldest first), their Gram matrix
   * G_ij = F_i . F_j, and the two vectors of the cycle's own result kept while a combination is tried */
  int ngmres_m, nh;
  double last_f2;      /* |F|^2 of the newest kept iterate */
  double last_e;       /* its energy (NaN: not evaluated) */
  Vec *xh, *fh, xm, fm;
  double *hist;        /* the arrays of xh[0..m-1], fh[0..m-1] ([2m][free nodes][3]; checkpoints keep them) */
  double *kept;        /* nh, last_f2, last_e, then the Gram matrix [m][m] (a checkpoint's scalars) */
  double *gram;        /* kept + 3 */
  long long combined, declined;
};

/* ---- the line search along an interpolated correction -------------------------------------- */

#define CORRECTION_ALPHA_MAX 4.0 /* the longest step along a correction (coarse levels are stiffer: alpha > 1 is common) */

/* The secant rule: the minimiser of the quadratic whose slopes along d are s0 at 0 and s1 at 1,
 * within [0, CORRECTION_ALPHA_MAX]; a correction that is not a descent direction, or whose full step
 * gives non-finite forces, is rejected (alpha = 0). */
static double secant_alpha(double s0, double s1)
{
  if (!(s0 < 0) || !isfinite(s1)) return 0.0; /* not a descent direction, or forces not finite at the full step */
  if (!(s1 > s0)) return CORRECTION_ALPHA_MAX; /* no positive curvature seen: the longest step allowed */
  const double a = -s0 / (s1 - s0);
  return a > CORRECTION_ALPHA_MAX ? CORRECTION_ALPHA_MAX : a;
}

/* alpha for x + alpha d on level c->l: F = F_l(x) - b_l at x (left by FAS in the level's function
 * vector). Trial points are evaluated in place (pbng_level_*_along), without a trial vector; F is not
 * needed after the slope at 0 (s0) and holds x meanwhile when x is the finest level's solution. */
static PetscErrorCode choose_alpha(correction *c, Vec x, Vec d, double *alpha)
{
  multilevel_data *ml = c->ml;
  pbng_level *lev = &ml->level[c->l];
  SNES snes;
  Vec F;
  PetscReal s0, s1, phi0, phi1;

  PetscFunctionBeginUser;
  *alpha = 1.0;
  if (ml->search == PBNG_CORRECTION_NONE) PetscFunctionReturn(0);
  PetscCall(SNESFASGetCycleSNES(ml->fas, c->l, &snes));
  PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
  if (ml->search == PBNG_CORRECTION_SECANT) PetscCall(pbng_exact_dots(F, 1, &d, &s0));
  else PetscCall(pbng_level_objective_and_slope(lev, snes, x, F, d, &phi0, &s0)); /* one reduction for both (issue 42, item 3) */
  /* Trial points are written into the positions. When x is stored there (the finest level's solution),
   * it is kept meanwhile in F, which FAS does not read again before the level evaluates it anew (every
   * PETSc 3.18 cycle post-smooths after a correction, and the smoother's function vector is F). */
  if (x == lev->home) PetscCall(pbng_level_displace_home(lev, F));
  if (ml->search == PBNG_CORRECTION_SECANT) {
    PetscCall(pbng_level_slope_along(lev, snes, x, 1.0, d, &s1));
    *alpha = secant_alpha(s0, s1);
    PetscFunctionReturn(0);
  }
  PetscCall(pbng_level_objective_along(lev, snes, x, 1.0, d, &phi1));
  const double noise = 1e-13 * (fabs(phi0) + fabs(phi1));
  if (fabs(phi1 - phi0) <= noise && fabs(s0) <= noise) { /* the energy cannot tell: ask the gradient */
    PetscCall(pbng_level_slope_along(lev, snes, x, 1.0, d, &s1));
    *alpha = secant_alpha(s0, s1);
    PetscFunctionReturn(0);
  }
  const double curvature = phi1 - phi0 - s0; /* phi(t) ~ phi0 + s0 t + curvature t^2 */
  if (isfinite(phi1) && phi1 <= phi0 + 1e-4 * fmin(s0, 0.0)) { /* Armijo at 1: accepted; longer if the model says so */
    const double best = (s0 < 0 && curvature > 0) ? -s0 / (2 * curvature) : 1.0;
    *alpha = 1.0;
    if (best > 1.25) {
      const double a = fmin(best, CORRECTION_ALPHA_MAX);
      PetscReal phi;
      PetscCall(pbng_level_objective_along(lev, snes, x, a, d, &phi));
      if (isfinite(phi) && phi < phi1) *alpha = a;
    }
    PetscFunctionReturn(0);
  }
  double a = 1.0, phi = phi1;
  for (int k = 0; k < 8; ++k) { /* backtrack: the model's minimiser, kept within [a/10, a/2] */
    const double cur = (phi - phi0 - a * s0) / (a * a);
    double next = (s0 < 0 && cur > 0 && isfinite(phi)) ? -s0 / (2 * cur) : 0.5 * a;
    a = fmin(fmax(next, 0.1 * a), 0.5 * a);
    PetscCall(pbng_level_objective_along(lev, snes, x, a, d, &phi));
    if (isfinite(phi) && phi <= phi0 + 1e-4 * a * fmin(s0, 0.0)) break;
    if (k == 7) a = 0.0; /* no decrease found: skip the correction */
  }
  *alpha = a;
  PetscFunctionReturn(0);
}

/* Where the interpolated correction d = P e goes: the level's cycle SNES's solution-update vector,
 * which FAS's multiplicative cycle and the NGS smoother leave unused and nothing reads between the
 * coarse solve and this correction (one fine vector less per level); a vector of our own if the
 * SNES has none. */
static PetscErrorCode correction_vector(correction *c, Vec *d)
{
  SNES snes;

  PetscFunctionBeginUser;
  PetscCall(SNESFASGetCycleSNES(c->ml->fas, c->l, &snes));
  PetscCall(SNESGetSolutionUpdate(snes, d));
  if (!*d) {
    if (!c->d) PetscCall(pbng_level_create_vec(&c->ml->level[c->l], &c->d));
    *d = c->d;
  }
  PetscFunctionReturn(0);
}

/* FAS applies the coarse correction as MatInterpolateAdd(I, e, x, w): w = x + I e. Here
 * w = x + alpha P e with alpha from the line search. */
static PetscErrorCode correction_mult_add(Mat A, Vec e, Vec x, Vec w)
{
  correction *c;
  double alpha;
  Vec d;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &c));
  PetscCall(correction_vector(c, &d));
  PetscCall(MatMult(c->P, e, d));
  PetscCall(choose_alpha(c, x, d, &alpha));
  if (w != x) PetscCall(VecCopy(x, w));
  PetscCall(VecAXPY(w, alpha, d));
  c->ml->last_alpha[c->l < 16 ? c->l : 15] = alpha;
  c->ml->corrections++;
  if (alpha == 0) c->ml->rejected++;
  else if (alpha != 1) c->ml->damped++;
  PetscFunctionReturn(0);
}

static PetscErrorCode correction_mult(Mat A, Vec e, Vec y)
{
  correction *c;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &c));
  PetscCall(MatMult(c->P, e, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode correction_mult_transpose(Mat A, Vec x, Vec y)
{
  correction *c;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &c));
  PetscCall(MatMultTranspose(c->P, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode create_correction_shell(multilevel_data *ml, int l)
{
  correction *c = &ml->corr[l];
  PetscInt m, n, M, N;

  PetscFunctionBeginUser;
  c->ml = ml, c->l = l, c->P = ml->P3[l];
  PetscCall(MatGetLocalSize(c->P, &m, &n));
  PetscCall(MatGetSize(c->P, &M, &N));
  PetscCall(MatCreateShell(ml->level[l].pb->dm->comm, m, n, M, N, c, &ml->shell[l]));
  PetscCall(MatShellSetOperation(ml->shell[l], MATOP_MULT, (void (*)(void))correction_mult));
  PetscCall(MatShellSetOperation(ml->shell[l], MATOP_MULT_TRANSPOSE, (void (*)(void))correction_mult_transpose));
  PetscCall(MatShellSetOperation(ml->shell[l], MATOP_MULT_ADD, (void (*)(void))correction_mult_add));
  PetscFunctionReturn(0);
}

/* ---- nonlinear GMRES over the cycles (Oosterlee and Washio 2000; PETSc's SNESNGMRES) ----------------- */

/* The kept iterates' vectors over arrays of our own (a checkpoint writes and reads them as node fields). */
static PetscErrorCode ngmres_create(multilevel_data *ml, const pbng_dmesh *dm)
{
  const int m = ml->ngmres_m;
  const PetscInt n = 3 * (PetscInt)dm->nfree;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(2 * (size_t)m * n + 1, &ml->hist));
  PetscCall(PetscCalloc1(3 + (size_t)m * m, &ml->kept));
  ml->gram = ml->kept + 3;
  PetscCall(PetscMalloc2(m, &ml->xh, m, &ml->fh));
  for (int i = 0; i < 2 * m; ++i) PetscCall(VecCreateMPIWithArray(dm->comm, 1, n, PETSC_DECIDE, ml->hist + (size_t)i * n, i < m ? &ml->xh[i] : &ml->fh[i - m]));
  PetscCall(VecDuplicate(ml->X, &ml->xm));
  PetscCall(VecDuplicate(ml->X, &ml->fm));
  PetscFunctionReturn(0);
}

static PetscErrorCode ngmres_destroy(multilevel_data *ml)
{
  PetscFunctionBeginUser;
  for (int i = 0; i < ml->ngmres_m; ++i) {
    PetscCall(VecDestroy(&ml->xh[i]));
    PetscCall(VecDestroy(&ml->fh[i]));
  }
  PetscCall(PetscFree2(ml->xh, ml->fh));
  PetscCall(VecDestroy(&ml->xm));
  PetscCall(VecDestroy(&ml->fm));
  PetscCall(PetscFree(ml->hist));
  PetscCall(PetscFree(ml->kept));
  PetscFunctionReturn(0);
}

/* Forgets the iterates (a new frame, other contacts: F changed). */
static void ngmres_forget(multilevel_data *ml) { ml->nh = 0; }

/* Appends the iterate x with residual F (dropping the oldest when m are kept) and its row of the Gram matrix. */
/* known: F's dots with the kept residuals F_0 .. F_{nh-1} and with itself ([nh + 1], as ngmres_combine reduced them
 * before this push's rotation), or NULL: reduced here. */
static PetscErrorCode ngmres_push(multilevel_data *ml, Vec x, Vec F, const double *known)
{
  const int m = ml->ngmres_m;
  double *G = ml->gram, dots[64];
  int shift = 0; /* the kept residuals dropped from the front */

  PetscFunctionBeginUser;
  if (ml->nh == m) { /* drop the oldest: rotate the vectors, shift the Gram matrix */
    shift = 1;
    Vec x0 = ml->xh[0], f0 = ml->fh[0];
    for (int i = 0; i + 1 < m; ++i) ml->xh[i] = ml->xh[i + 1], ml->fh[i] = ml->fh[i + 1];
    ml->xh[m - 1] = x0, ml->fh[m - 1] = f0;
    for (int i = 0; i + 1 < m; ++i)
      for (int j = 0; j + 1 < m; ++j) G[m * i + j] = G[m * (i + 1) + j + 1];
    ml->nh = m - 1;
  }
  const int k = ml->nh;
  PetscCall(VecCopy(x, ml->xh[k]));
  PetscCall(VecCopy(F, ml->fh[k]));
  if (known) { /* F . F_i of the kept ones, then F . F (exact sums: the values a reduction here would give) */
    for (int i = 0; i < k; ++i) dots[i] = known[i + shift];
    dots[k] = known[k + shift];
  } else PetscCall(pbng_exact_dots(F, k + 1, ml->fh, dots));
  for (int i = 0; i <= k; ++i) G[m * k + i] = G[m * i + k] = dots[i];
  ml->nh = k + 1;
  PetscFunctionReturn(0);
}

/* Solves the n x n symmetric system A a = b by Cholesky with a relative shift; 0 if A is not positive definite. */
static int solve_spd(int n, double *A, double *b)
{
  double tr = 0;
  for (int i = 0; i < n; ++i) tr += A[n * i + i];
  if (!(tr > 0)) return 0;
  for (int i = 0; i < n; ++i) A[n * i + i] += 1e-12 * tr;
  for (int j = 0; j < n; ++j) {
    double d = A[n * j + j];
    for (int k = 0; k < j; ++k) d -= A[n * j + k] * A[n * j + k];
    if (!(d > 1e-14 * tr)) return 0;
    A[n * j + j] = sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double v = A[n * i + j];
      for (int k = 0; k < j; ++k) v -= A[n * i + k] * A[n * j + k];
      A[n * i + j] = v / A[n * j + j];
    }
  }
  for (int i = 0; i < n; ++i) { /* L y = b, then L^T a = y */
    for (int k = 0; k < i; ++k) b[i] -= A[n * i + k] * b[k];
    b[i] /= A[n * i + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) b[i] -= A[n * k + i] * b[k];
    b[i] /= A[n * i + i];
  }
  return 1;
}

#define NGMRES_FAST_CYCLE 0.3 /* a cycle reducing |F| below this factor is not combined (measured: 0.06 on the boxes, 0.6-0.9 where combining pays) */

/* Whether the combination x_A is better than the cycle's x_M: a lower energy (the merit of a minimisation: a lower
 * residual alone can hold the iterates in a loop above the minimum), or, where the energies agree to round-off, a
 * lower residual. */
static int combination_better(double ea, double em, double fa, double fm)
{
  const double noise = 1e-13 * (fabs(ea) + fabs(em));
  if (!isfinite(ea) || !isfinite(fa)) return 0;
  return ea < em - noise || (fabs(ea - em) <= noise && fa < fm);
}

/* After a cycle gave x_M with F_M = F(x_M) (X and FAS's function vector): the combination
 * x_A = x_M + sum_i a_i (x_i - x_M) whose linearised residual |F_M + sum_i a_i (F_i - F_M)| is least over the kept
 * iterates; taken when it is better (combination_better), else x_M. The taken iterate joins the kept ones; F stays
 * current (the next cycle need not evaluate it). A cycle that lowered |F| NGMRES_FAST_CYCLE-fold is taken as it is. */
static PetscErrorCode ngmres_combine(multilevel_data *ml)
{
  const int n = ml->nh, m = ml->ngmres_m;
  double b[64], A[64 * 64], dots[65], fmm, fa, sum = 0;
  PetscReal em, ea;
  Vec F;

  PetscFunctionBeginUser;
  PetscCall(SNESGetFunction(ml->fas, &F, NULL, NULL));
  /* F's dots with the kept residuals and itself in one reduction (issue 42, item 3): the combination and the push
   * that follows use them ([n] = F . F) */
  Vec with[65];
  for (int i = 0; i < n; ++i) with[i] = ml->fh[i];
  with[n] = F;
  PetscCall(pbng_exact_dots(F, n + 1, with, dots));
  fmm = dots[n];
  const double alone[1] = {fmm}; /* the push after the kept residuals are forgotten */
  const double kept_f2 = ml->last_f2, kept_e = ml->last_e;
  ml->last_f2 = fmm, ml->last_e = NAN;
  /* a cycle that lowered the residual NGMRES_FAST_CYCLE-fold or more (the boxes: ~15-fold) is kept as it is: a
   * combination would cost its three evaluations for nothing there */
  if (n == 0 || fmm < NGMRES_FAST_CYCLE * NGMRES_FAST_CYCLE * kept_f2) PetscFunctionReturn(ngmres_push(ml, ml->X, F, dots));
  PetscCall(SNESComputeObjective(ml->fas, ml->X, &em));
  ml->last_e = em;
  if (fmm >= kept_f2 && isfinite(kept_e) && !(em < kept_e - 1e-13 * (fabs(em) + fabs(kept_e)))) {
    /* the cycle from the last taken iterate lowered neither |F| nor the energy (beyond round-off): the kept iterates
     * lead nowhere (PETSc's restart on a rising F_M, here only where the energy cannot tell), start again */
    ngmres_forget(ml);
    PetscFunctionReturn(ngmres_push(ml, ml->X, F, alone));
  }
  for (int i = 0; i < n; ++i) { /* D_i = F_i - F_M: (D^T D) a = -D^T F_M */
    b[i] = fmm - dots[i];
    for (int j = 0; j < n; ++j) A[n * i + j] = ml->gram[m * i + j] - dots[i] - dots[j] + fmm;
  }
  if (!solve_spd(n, A, b)) {
    ngmres_forget(ml);
    PetscFunctionReturn(ngmres_push(ml, ml->X, F, alone));
  }
  PetscCall(VecCopy(ml->X, ml->xm));
  PetscCall(VecCopy(F, ml->fm));
  for (int i = 0; i < n; ++i) sum += b[i];
  PetscCall(VecScale(ml->X, 1.0 - sum));
  PetscCall(VecMAXPY(ml->X, n, b, ml->xh));
  PetscCall(SNESComputeFunction(ml->fas, ml->X, F));
  PetscCall(SNESComputeObjective(ml->fas, ml->X, &ea));
  PetscCall(pbng_exact_dots(F, 1, &F, &fa));
  if (combination_better(ea, em, fa, fmm)) {
    ml->combined++;
    ml->last_f2 = fa, ml->last_e = ea;
    PetscFunctionReturn(ngmres_push(ml, ml->X, F, NULL)); /* a new F: its dots reduced there */
  }
  ml->declined++; /* x_M, and the kept iterates stay (forgetting them here took 41 cycles on the panel, 30 keeping them) */
  PetscCall(VecCopy(ml->xm, ml->X));
  PetscCall(VecCopy(ml->fm, F));
  PetscFunctionReturn(ngmres_push(ml, ml->X, F, dots)); /* F_M again: the dots from the start */
}

/* ---- set-up ----------------------------------------------------------------------------------- */

static const char *level_name(const pbng_solver *s, int l)
{
  const pbng_hierarchy *h = s->opt.hierarchy;
  return l == h->nlevels - 1 ? h->fine_name : h->coarse[l].name;
}

/* rscale = 1 / (P^T 1): restricting a field with rscale * P^T averages it (FAS uses the injection Q
 * for solutions; rscale also sizes its coarse vectors). A coarse unknown no fine node sees gets 1. */
static PetscErrorCode create_rscale(Mat P3, Vec *rscale)
{
  Vec ones;
  PetscScalar *r;
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(P3, rscale, &ones));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMultTranspose(P3, ones, *rscale));
  PetscCall(VecGetLocalSize(*rscale, &n));
  PetscCall(VecGetArray(*rscale, &r));
  for (PetscInt k = 0; k < n; ++k) r[k] = r[k] > 0 ? 1.0 / r[k] : 1.0;
  PetscCall(VecRestoreArray(*rscale, &r));
  PetscCall(VecDestroy(&ones));
  PetscFunctionReturn(0);
}

/* P, Q between every pair of neighbouring levels (collective; errors name the levels). */
static PetscErrorCode create_transfers(pbng_solver *s)
{
  multilevel_data *ml = s->data;

  PetscFunctionBeginUser;
  for (int l = 1; l < ml->nlevels; ++l) {
    const pbng_level *fine = &ml->level[l], *coarse = &ml->level[l - 1];
    PetscCall(pbng_transfer_create(fine->pb->dm, &fine->map, level_name(s, l), coarse->pb->dm, &coarse->map, level_name(s, l - 1),
                                   PBNG_TRANSFER_RADIUS, &ml->P[l], &ml->Q[l]));
    /* applied to the three coordinates with every sum in the input's order (bitwise on any partition) */
    PetscCall(pbng_ordered_product_create(ml->P[l], 3, fine->pb->dm->global_node, coarse->pb->dm->global_node, &ml->P3[l]));
    PetscCall(pbng_ordered_product_create(ml->Q[l], 3, coarse->pb->dm->global_node, fine->pb->dm->global_node, &ml->Q3[l]));
    PetscCall(pbng_ordered_product_set_meter(ml->P3[l], &ml->transfer[l]));
    PetscCall(pbng_ordered_product_set_meter(ml->Q3[l], &ml->transfer[l]));
    PetscCall(MatDestroy(&ml->P[l])); /* the products keep their own copies */
    PetscCall(MatDestroy(&ml->Q[l]));
    PetscCall(create_rscale(ml->P3[l], &ml->rscale[l]));
    PetscCall(create_correction_shell(ml, l));
  }
  PetscFunctionReturn(0);
}

/* The levels below the coarsest mesh level (-multilevel_aggregation): its Newton systems solved by CG preconditioned
 * with aggregation AMG of the matrix (PCGAMG: aggregates of the node graph, the prolongator a QR factor per aggregate of
 * the 12 linear fields the matrix carries as its near-null space, so that it reproduces every linear field and rigid
 * motion exactly; not smoothed: on the medium beam's 4,447-node level as fast as rigid modes smoothed once, 26.6 against
 * 29.7 s), n levels below it (PBNG_AGGREGATION_ANY: as many as GAMG makes). The linear solves go to 1e-8: the
 * aggregates depend on the partition, so the results do to that tolerance. */
static PetscErrorCode configure_aggregation(KSP ksp, PC pc, int n)
{
  PetscFunctionBeginUser;
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, 0.0, PETSC_DEFAULT, 500));
  PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(PCGAMGSetType(pc, PCGAMGAGG));
  PetscCall(PCGAMGSetNSmooths(pc, 0));
  if (n > 0) {
    PetscCall(PCGAMGSetNlevels(pc, n + 1));
    PetscCall(PCGAMGSetCoarseEqLim(pc, 12)); /* the levels asked for, however small: GAMG stops at 50 unknowns by default */
  }
  PetscFunctionReturn(0);
}

/* The coarsest level's default solver: the Newton baseline's energy line search with the level's
 * matrix (-multilevel_coarse_hessian), each linear system solved exactly by a sparse Cholesky
 * factorisation that every rank computes in full (PCREDUNDANT: the result does not depend on the
 * partition; MUMPS's where PETSc has it: PETSc's own took 4.8 s on a 1,651-node coarsest level of two bound
 * blocks, MUMPS 0.28 s, CHOLMOD 0.37 s; alike on 150 nodes), a few steps per visit. Set on the objects, so that any -fas_coarse_snes_* / _ksp_* /
 * _pc_* option overrides it when FAS sets the level up. */
static PetscErrorCode configure_coarse_solve(multilevel_data *ml)
{
  SNES coarse, cycle;
  DM dm;
  KSP ksp;
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(SNESFASGetCoarseSolve(ml->fas, &coarse));
  PetscCall(SNESFASGetCycleSNES(ml->fas, 0, &cycle));
  PetscCall(SNESGetDM(cycle, &dm));
  PetscCall(SNESSetDM(coarse, dm)); /* FAS would set it later; the Jacobian callback lives on the DM */
  ml->level[0].K_linear_modes = ml->aggregation != 0; /* the aggregation's prolongator reproduces every linear field */
  PetscCall(pbng_level_set_jacobian(&ml->level[0], (pbng_hessian_kind)ml->coarse_hessian, coarse));
  PetscCall(SNESSetTolerances(coarse, 0.0, 1e-2, 0.0, 4, PETSC_DEFAULT));
  PetscCall(SNESSetMaxLinearSolveFailures(coarse, PETSC_MAX_INT));
  PetscCall(SNESSetMaxNonlinearStepFailures(coarse, PETSC_MAX_INT));
  PetscCall(SNESGetKSP(coarse, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  if (ml->aggregation != 0) PetscFunctionReturn(configure_aggregation(ksp, pc, ml->aggregation));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  const pbng_level *c = &ml->level[0];
  PetscCall(pbng_ordered_factor_set(pc, 3, c->map.first, c->pb->dm->nfree, c->pb->dm->global_node, &ml->coarse_factor));
  PetscFunctionReturn(0);
}

#define SMOOTHER_SWEEPS 3 /* PBNG sweeps per smoothing step (measured best of 1-4 at Res-32, docs/multilevel.md) */

/* PBNG sweeps (SNESNGS with our callback, SMOOTHER_SWEEPS per smoothing step) as the smoothers of every
 * level above the coarsest, unless -fas_levels_snes_type / -fas_levels_snes_ngs_sweeps say otherwise
 * (read when FAS sets the smoothers up). They compute no residual norms of their own: FAS evaluates
 * the residual it needs after each smoothing anyway. */
static PetscErrorCode configure_smoothers(multilevel_data *ml)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_option_default("-fas_levels_snes_norm_schedule", "none"));
  for (int l = 1; l < ml->nlevels; ++l) {
    SNES cycle, down, up;
    PetscCall(SNESFASGetCycleSNES(ml->fas, l, &cycle));
    PetscCall(SNESFASCycleGetSmootherDown(cycle, &down));
    PetscCall(SNESFASCycleGetSmootherUp(cycle, &up));
    PetscCall(SNESSetType(down, SNESNGS));
    PetscCall(SNESNGSSetSweeps(down, SMOOTHER_SWEEPS));
    if (up && up != down) {
      PetscCall(SNESSetType(up, SNESNGS));
      PetscCall(SNESNGSSetSweeps(up, SMOOTHER_SWEEPS));
    }
  }
  PetscFunctionReturn(0);
}

/* Frees a SNES's work vectors (PETSc has no public call for it: SNESSetWorkVecs needs at least one). */
static PetscErrorCode free_work_vectors(SNES snes)
{
  PetscFunctionBeginUser;
  if (snes->work) PetscCall(VecDestroyVecs(snes->nwork, &snes->work));
  snes->nwork = 0;
  PetscFunctionReturn(0);
}

/* A level's smoothers share its cycle SNES's solution-update vector: SNESSolve gives every SNES
 * without one a vector of its own, but the smoothers are set up (and take the cycle's) before the
 * cycle's first solve makes it. The cycle's holds the interpolated correction (correction_vector)
 * only between the coarse solve and the post-smoothing; a smoother that uses the vector (a Newton-type
 * -fas_levels_snes_type) does so only while it smooths. */
static PetscErrorCode share_update_vector(SNES cycle)
{
  SNES smoother[2];

  PetscFunctionBeginUser;
  if (!cycle->vec_sol_update) PetscCall(VecDuplicate(cycle->vec_sol, &cycle->vec_sol_update));
  PetscCall(SNESFASCycleGetSmootherDown(cycle, &smoother[0]));
  PetscCall(SNESFASCycleGetSmootherUp(cycle, &smoother[1]));
  for (int k = 0; k < 2; ++k) {
    if (!smoother[k] || smoother[k] == cycle || smoother[k]->vec_sol_update == cycle->vec_sol_update) continue;
    PetscCall(PetscObjectReference((PetscObject)cycle->vec_sol_update));
    PetscCall(VecDestroy(&smoother[k]->vec_sol_update));
    smoother[k]->vec_sol_update = cycle->vec_sol_update;
  }
  PetscFunctionReturn(0);
}

/* Sets FAS up now (with the run's positions as the finest solution, pbng_level_create_home_vec) and
 * returns what PETSc 3.18's FAS allocates but never uses: a level's work[1] (read by the additive cycle
 * only; work[0] of a level is the finer level's restricted solution, so the finest level's is not
 * needed either), a smoother's solution-update vector of its own (share_update_vector) and the vector
 * each level's DM keeps after handing out work vectors. On the finest level of 2 million nodes each
 * is 50 MB. */
static PetscErrorCode set_up_fas(multilevel_data *ml)
{
  SNESFASType type;

  PetscFunctionBeginUser;
  PetscCall(SNESSetSolution(ml->fas, ml->X));
  PetscCall(SNESSetUp(ml->fas));
  PetscCall(SNESFASGetType(ml->fas, &type));
  for (int l = 0; l < ml->nlevels; ++l) {
    SNES cycle;
    DM dm;
    PetscCall(SNESFASGetCycleSNES(ml->fas, l, &cycle));
    if (type != SNES_FAS_ADDITIVE) PetscCall(l == ml->nlevels - 1 ? free_work_vectors(cycle) : SNESSetWorkVecs(cycle, 1));
    if (l > 0) PetscCall(share_update_vector(cycle));
    PetscCall(SNESGetDM(cycle, &dm));
    PetscCall(DMClearGlobalVectors(dm));
  }
  malloc_trim(0); /* hand the freed vectors back (Open MPI keeps malloc from doing it) */
  PetscFunctionReturn(0);
}

static PetscErrorCode create_fas(pbng_solver *s)
{
  multilevel_data *ml = s->data;
  const int L = ml->nlevels;
  DM dm;
  PetscInt levels;

  PetscFunctionBeginUser;
  PetscCall(SNESCreate(s->pb->dm->comm, &ml->fas));
  PetscCall(SNESSetType(ml->fas, SNESFAS));
  PetscCall(SNESGetDM(ml->fas, &dm));
  PetscCall(DMSetRefineLevel(dm, L - 1)); /* SNESSetFromOptions takes FAS's level count from the fine DM */
  PetscCall(SNESFASSetLevels(ml->fas, L, NULL));
  for (int l = 0; l < L; ++l) {
    SNES cycle, smoother;
    PetscCall(SNESFASGetCycleSNES(ml->fas, l, &cycle));
    PetscCall(pbng_level_set_callbacks(&ml->level[l], cycle));
    PetscCall(SNESFASGetSmoother(ml->fas, l, &smoother)); /* created now, so that its type can be set */
    if (l > 0) {
      PetscCall(SNESFASSetInterpolation(ml->fas, l, ml->shell[l]));
      PetscCall(SNESFASSetRestriction(ml->fas, l, ml->P3[l]));
      PetscCall(SNESFASSetRScale(ml->fas, l, ml->rscale[l]));
      PetscCall(SNESFASSetInjection(ml->fas, l, ml->Q3[l]));
    }
  }
  PetscCall(configure_coarse_solve(ml));
  PetscCall(SNESSetTolerances(ml->fas, 0.0, 0.0, 0.0, 1, PETSC_DEFAULT)); /* one cycle per iteration of the run */
  PetscCall(SNESSetConvergenceTest(ml->fas, SNESConvergedSkip, NULL, NULL));
  PetscCall(SNESSetFromOptions(ml->fas));
  PetscCall(SNESFASGetLevels(ml->fas, &levels));
  PetscCheck(levels == L, s->pb->dm->comm, PETSC_ERR_ARG_INCOMP, "-snes_fas_levels %d disagrees with -multilevel %d", (int)levels, L);
  PetscCall(configure_smoothers(ml));
  PetscCall(SNESSetTolerances(ml->fas, 0.0, 0.0, 0.0, 1, PETSC_DEFAULT));
  PetscFunctionReturn(0);
}

/* With contacts: a carried set on every coarse level, attached to its problem (before its level is made:
 * the positions grow room for contact ghosts). */
static PetscErrorCode create_contact_levels(pbng_solver *s)
{
  multilevel_data *ml = s->data;
  pbng_hierarchy *h = (pbng_hierarchy *)s->opt.hierarchy;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(ml->nlevels - 1, &ml->contacts));
  for (int l = 0; l < ml->nlevels - 1; ++l) {
    pbng_coarse_level *c = &h->coarse[l];
    PetscCall(pbng_contact_level_create(&c->dm, &c->halo, &s->pb->contacts->opt, &ml->contacts[l]));
    PetscCall(pbng_problem_attach_contacts(&c->pb, &ml->contacts[l].set));
  }
  ml->carried_version = -1;
  PetscFunctionReturn(0);
}

static PetscErrorCode multilevel_create(pbng_solver *s)
{
  multilevel_data *ml;
  const pbng_hierarchy *h = s->opt.hierarchy;
  
  PetscFunctionBeginUser;
  PetscCheck(h && h->nlevels >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "the multilevel solver needs the coarse levels");
  PetscCall(PetscNew(&ml));
  s->data = ml;
  ml->nlevels = h->nlevels;
  ml->search = s->opt.ml.correction_search;
  /* With contacts the energy along a correction rises at any coarse mismatch normal to a contact (k_n
   * times its square) which the post-smoothing's contact step removes at once: backtracking then takes
   * steps of 1e-3 and stalls, full corrections converge (docs/contact.md#multilevel) */
  if (s->pb->contacts && !s->opt.ml.correction_search_given) ml->search = PBNG_CORRECTION_NONE;
  ml->configured = ml->search;
  ml->coarse_hessian = s->opt.ml.coarse_hessian;
  ml->coarse_reuse = s->opt.ml.coarse_reuse;
  ml->aggregation_check = s->opt.ml.aggregation_check;
  ml->aggregation = s->opt.ml.aggregation == PBNG_AGGREGATION_AUTO ? 0 : s->opt.ml.aggregation;
  if (ml->coarse_reuse == PBNG_COARSE_REUSE_AUTO) /* the levels' sizes: PBNG_COARSE_REUSE_SHARE */
    ml->coarse_reuse = PBNG_COARSE_REUSE_SHARE * h->coarse[0].dm.nglobal_nodes >= s->pb->dm->nglobal_nodes;
  PetscCall(PetscCalloc1(ml->nlevels, &ml->level));
  PetscCall(PetscCalloc5(ml->nlevels, &ml->P, ml->nlevels, &ml->Q, ml->nlevels, &ml->P3, ml->nlevels, &ml->Q3, ml->nlevels, &ml->shell));
  PetscCall(PetscCalloc1(ml->nlevels, &ml->corr));
  PetscCall(PetscCalloc1(ml->nlevels, &ml->rscale));
  PetscCall(PetscCalloc1(ml->nlevels, &ml->transfer));
  PetscCall(PetscLogEventRegister("PBNGTransfer", PETSC_OBJECT_CLASSID, &ml->transfer[0].event));
  for (int l = 1; l < ml->nlevels; ++l) ml->transfer[l].event = ml->transfer[0].event;
  PetscCall(PetscLogEventRegister("PBNGCoarseFactor", PETSC_OBJECT_CLASSID, &ml->coarse_factor.event));
  if (s->pb->contacts) PetscCall(create_contact_levels(s));
  for (int l = 0; l < ml->nlevels; ++l) {
    pbng_problem *pb = l == ml->nlevels - 1 ? s->pb : &((pbng_hierarchy *)h)->coarse[l].pb;
    PetscCall(pbng_level_create(pb, &s->opt.sweep, l, &ml->level[l]));
  }
  PetscCall(create_transfers(s));
  for (int l = 1; l < ml->nlevels; ++l) PetscCall(pbng_dof_map_forget_nodes(&ml->level[l].map)); /* only the coarsest level assembles a matrix */
  malloc_trim(0); /* the point location's buffers */
  PetscCall(create_fas(s));
  PetscCall(pbng_level_create_home_vec(&ml->level[ml->nlevels - 1], &ml->X));
  ml->guard_growth = s->opt.ml.guard_growth;
  if (ml->search == PBNG_CORRECTION_NONE && ml->guard_growth > 0) PetscCall(VecDuplicate(ml->X, &ml->safe));
  PetscCall(set_up_fas(ml));
  ml->ngmres_m = s->opt.ml.ngmres;
  if (ml->ngmres_m > 0) PetscCall(ngmres_create(ml, s->pb->dm));
  PetscFunctionReturn(0);
}

/* ---- frames and cycles ------------------------------------------------------------------------ */

/* Dynamic mode: each coarse level's inertial target x_hat is the fine one injected level by level. */
static PetscErrorCode inject_inertial_targets(multilevel_data *ml)
{
  PetscFunctionBeginUser;
  for (int l = ml->nlevels - 1; l > 0; --l) {
    Vec fine, coarse;
    pbng_problem *pf = ml->level[l].pb, *pc = ml->level[l - 1].pb;
    PetscCall(pbng_level_create_vec(&ml->level[l], &fine));
    PetscCall(pbng_level_create_vec(&ml->level[l - 1], &coarse));
    PetscCall(VecPlaceArray(fine, pf->x_hat));
    PetscCall(VecPlaceArray(coarse, pc->x_hat));
    PetscCall(MatMult(ml->Q3[l], fine, coarse));
    PetscCall(VecResetArray(fine));
    PetscCall(VecResetArray(coarse));
    PetscCall(VecDestroy(&fine));
    PetscCall(VecDestroy(&coarse));
  }
  PetscFunctionReturn(0);
}

/* The coarse levels' prescribed nodes (Eq. 12) and inertial targets of the frame at s->pb->time. */
static PetscErrorCode set_coarse_frames(pbng_solver *s)
{
  multilevel_data *ml = s->data;

  PetscFunctionBeginUser;
  ml->function_current = PETSC_FALSE; /* the prescribed nodes moved */
  ml->f2_current = PETSC_FALSE;
  for (int l = 0; l < ml->nlevels - 1; ++l) PetscCall(pbng_problem_begin_frame(ml->level[l].pb, s->pb->time));
  if (s->pb->mode == PBNG_MODE_DYNAMIC) PetscCall(inject_inertial_targets(ml));
  PetscFunctionReturn(0);
}

static PetscErrorCode multilevel_begin_frame(pbng_solver *s)
{
  multilevel_data *ml = s->data;

  PetscFunctionBeginUser;
  ml->search = ml->configured;
  ngmres_forget(s->data);
  PetscCall(set_coarse_frames(s));
  PetscFunctionReturn(0);
}

/* -multilevel_ngmres: the kept iterates and residuals (free nodes) and the Gram matrix with their count. */
static PetscErrorCode multilevel_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  multilevel_data *ml = s->data;
  const int32_t nfree = s->pb->dm->nfree;
  char name[40];

  PetscFunctionBeginUser;
  if (ml->ngmres_m == 0) PetscFunctionReturn(0);
  ml->kept[0] = ml->nh, ml->kept[1] = ml->last_f2, ml->kept[2] = ml->last_e;
  for (int i = 0; i < ml->ngmres_m; ++i) {
    double *x, *f, *a;
    PetscCall(VecGetArray(ml->xh[i], &a)); /* arrays of our own (ngmres_create): they stay where they are */
    x = a;
    PetscCall(VecRestoreArray(ml->xh[i], &a));
    PetscCall(VecGetArray(ml->fh[i], &a));
    f = a;
    PetscCall(VecRestoreArray(ml->fh[i], &a));
    snprintf(name, sizeof(name), "ngmres_x%d", i);
    pbng_state_add(fields, n, name, PBNG_FIELD_NODES, 3, nfree, nfree, x);
    snprintf(name, sizeof(name), "ngmres_f%d", i);
    pbng_state_add(fields, n, name, PBNG_FIELD_NODES, 3, nfree, nfree, f);
  }
  pbng_state_add(fields, n, "ngmres", PBNG_FIELD_SCALARS, 3 + ml->ngmres_m * ml->ngmres_m, 1, 1, ml->kept);
  PetscFunctionReturn(0);
}

/* After a restart in the middle of a frame: the coarse levels' prescribed nodes (and inertial
 * targets) of the frame being continued, which begin_frame would have set, and the kept iterates. */
static PetscErrorCode multilevel_restored(pbng_solver *s)
{
  multilevel_data *ml = s->data;

  PetscFunctionBeginUser;
  PetscCall(set_coarse_frames(s));
  if (ml->ngmres_m == 0) PetscFunctionReturn(0);
  ml->nh = (int)ml->kept[0], ml->last_f2 = ml->kept[1], ml->last_e = ml->kept[2]; /* the kept iterates as the checkpoint left them */
  for (int i = 0; i < ml->ngmres_m; ++i) { /* their arrays were written behind PETSc's back */
    PetscCall(PetscObjectStateIncrease((PetscObject)ml->xh[i]));
    PetscCall(PetscObjectStateIncrease((PetscObject)ml->fh[i]));
  }
  PetscFunctionReturn(0);
}

/* After a detection changed the fine contacts: each coarse level's carried set again, the coarsest
 * level's matrix made for its new couplings, and F at the fine positions evaluated anew. */
static PetscErrorCode carry_contacts(pbng_solver *s)
{
  multilevel_data *ml = s->data;
  pbng_contacts *fine = s->pb->contacts;
  double *X;
  SNES coarse;

  PetscFunctionBeginUser;
  if (!fine || ml->carried_version == fine->version) PetscFunctionReturn(0);
  ml->carried_version = fine->version;
  ml->function_current = PETSC_FALSE;
  ml->f2_current = PETSC_FALSE;
  ngmres_forget(ml);
  PetscCall(pbng_contact_rest_positions(fine, &X));
  for (int l = 0; l < ml->nlevels - 1; ++l) PetscCall(pbng_contact_level_carry(&ml->contacts[l], fine, X, ml->level[l].pb->x));
  PetscCall(PetscFree(X));
  PetscCall(SNESFASGetCoarseSolve(ml->fas, &coarse));
  PetscCall(pbng_level_refresh_contacts(&ml->level[0], coarse));
  PetscFunctionReturn(0);
}

/* -multilevel_coarse_reuse M: before cycle l of a frame, whether the coarsest level's Newton assembles its matrix (and
 * factors it) at its first step or keeps the one it has. A function of l alone, so that a restart at a cycle l with
 * l % M = 0 (multilevel_stop_allowed) repeats the run exactly; M = 0: every Newton step assembles (each a fresh
 * factorisation: on 486 coarse nodes 10 ms, most of a small mesh's run). */
static void keep_coarse_matrix(multilevel_data *ml, int l)
{
  pbng_level *coarse = &ml->level[0];
  coarse->K_keep = ml->coarse_reuse > 0;
  if (ml->coarse_reuse > 0 && l % ml->coarse_reuse == 0) coarse->K_current = 0;
}

/* A checkpoint keeps no matrix: only where the next cycle assembles a fresh one. */
static int multilevel_stop_allowed(const pbng_solver *s, int l)
{
  const multilevel_data *ml = s->data;
  return ml->coarse_reuse <= 1 || l % ml->coarse_reuse == 0;
}

/* -multilevel_aggregation_check (a testing aid): after the first cycle, the largest relative distance of a near-null-space
 * mode v of the coarsest mesh level's matrix (the 12 linear fields) from the range of the aggregation's first prolongator P,
 * |P P^T v - v| / |v| (P's columns orthonormal: a QR factor per aggregate; with the prolongator smoothed,
 * -fas_coarse_pc_gamg_agg_nsmooths > 0, this is not the distance). Printed once. */
static PetscErrorCode check_aggregation(multilevel_data *ml)
{
  SNES coarse;
  KSP ksp;
  PC pc;
  PetscBool gamg;
  PetscInt nl, nv;
  Mat P;
  MatNullSpace nsp;
  const Vec *vs;
  Vec c, u;
  double worst = 0.0;

  PetscFunctionBeginUser;
  PetscCall(SNESFASGetCoarseSolve(ml->fas, &coarse));
  PetscCall(SNESGetKSP(coarse, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCGAMG, &gamg));
  PetscCheck(gamg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONGSTATE, "-multilevel_aggregation_check: the coarse solve has no aggregation levels");
  PetscCall(PCMGGetLevels(pc, &nl));
  PetscCheck(nl > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONGSTATE, "-multilevel_aggregation_check: GAMG made no level below the mesh");
  PetscCall(PCMGGetInterpolation(pc, nl - 1, &P));
  PetscCall(MatGetNearNullSpace(ml->level[0].K, &nsp));
  PetscCall(MatNullSpaceGetVecs(nsp, NULL, &nv, &vs));
  PetscCall(MatCreateVecs(P, &c, &u));
  for (PetscInt k = 0; k < nv; ++k) {
    PetscReal e, n;
    PetscCall(MatMultTranspose(P, vs[k], c));
    PetscCall(MatMult(P, c, u));
    PetscCall(VecAXPY(u, -1.0, vs[k]));
    PetscCall(VecNorm(u, NORM_2, &e));
    PetscCall(VecNorm(vs[k], NORM_2, &n));
    worst = PetscMax(worst, e / n);
  }
  PetscCall(VecDestroy(&c));
  PetscCall(VecDestroy(&u));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "aggregation check: %d modes, %d levels below the mesh; largest relative distance from the prolongator's range %.3e\n",
                        (int)nv, (int)nl - 1, worst));
  ml->aggregation_check = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode multilevel_current_residual(pbng_solver *s, double *residual, PetscBool *known);

/* Full corrections' guard (-multilevel_linesearch none, the default with contacts): the residual before the cycle (F
 * evaluated here when the last cycle did not leave it: FAS then starts from it, so it costs nothing) and the positions. */
static PetscErrorCode guard_before(pbng_solver *s, double *r)
{
  multilevel_data *ml = s->data;
  PetscBool known;
  Vec F;

  PetscFunctionBeginUser;
  if (!ml->function_current) {
    PetscCall(SNESGetFunction(ml->fas, &F, NULL, NULL));
    PetscCall(SNESComputeFunction(ml->fas, ml->X, F));
    ml->function_current = PETSC_TRUE;
    ml->f2_current = PETSC_FALSE;
  }
  PetscCall(multilevel_current_residual(s, r, &known));
  PetscCall(VecCopy(ml->X, ml->safe));
  PetscFunctionReturn(0);
}

/* A cycle of full corrections that multiplied the residual by more than -multilevel_guard G (4; new contacts can make a coarse
 * correction far too long: at the muscles' paper size frame 7's residual went 4.1e4, 1.2e3, 1.4e4, 3.0e5, 1.3e6 and
 * 2.2e12, the divergence limit, in 6 cycles; a normal cycle lowers it) is undone,
 * and the frame goes on with the secant line search (multilevel_begin_frame restores full corrections). */
static PetscErrorCode guard_after(pbng_solver *s, double r_before)
{
  multilevel_data *ml = s->data;
  PetscBool known;
  double r;

  PetscFunctionBeginUser;
  PetscCall(multilevel_current_residual(s, &r, &known));
  if (!known || r <= ml->guard_growth * r_before) PetscFunctionReturn(0);
  PetscCall(VecCopy(ml->safe, ml->X));
  ml->function_current = PETSC_FALSE;
  ml->f2_current = PETSC_FALSE;
  ngmres_forget(ml);
  ml->search = PBNG_CORRECTION_SECANT;
  PetscCall(PetscPrintf(s->pb->dm->comm, "multilevel: a cycle of full corrections took the residual from %.3g to %.3g (more than -multilevel_guard %g "
                                         "times): undone; the secant line search for the rest of the frame\n", r_before, r, ml->guard_growth));
  PetscFunctionReturn(0);
}

static PetscErrorCode multilevel_iterate(pbng_solver *s, int l)
{
  multilevel_data *ml = s->data;
  pbng_level *fine = &ml->level[ml->nlevels - 1];
  const int guard = ml->safe && ml->search == PBNG_CORRECTION_NONE;
  double r_before = 0;

  PetscFunctionBeginUser;
  SNESConvergedReason reason;
  Vec F;

  PetscCall(carry_contacts(s));
  keep_coarse_matrix(ml, l);
  PetscCall(pbng_level_store(fine, ml->X));
  if (guard) PetscCall(guard_before(s, &r_before));
  if (ml->function_current) { /* F at these positions, left by the last cycle: FAS need not evaluate it again */
    PetscCall(SNESGetFunction(ml->fas, &F, NULL, NULL));
    PetscCall(SNESSetInitialFunction(ml->fas, F));
  }
  PetscCall(SNESSolve(ml->fas, NULL, ml->X));
  PetscCall(SNESGetConvergedReason(ml->fas, &reason));
  ml->function_current = reason > 0 || reason == SNES_DIVERGED_MAX_IT; /* a whole cycle ran: it ended evaluating F */
  ml->f2_current = PETSC_FALSE;
  if (ml->ngmres_m > 0 && ml->function_current) {
    PetscCall(ngmres_combine(ml));
    ml->f2_current = PETSC_TRUE; /* every way out of it leaves last_f2 = |F|^2 of the F it leaves (issue 42, item 3) */
  }
  if (guard) PetscCall(guard_after(s, r_before));
  if (ml->aggregation_check) PetscCall(check_aggregation(ml));
  PetscCall(pbng_level_load(fine, ml->X));
  s->halo_seconds = 0;
  for (int k = 0; k < ml->nlevels; ++k) s->halo_seconds += ml->level[k].sweeper.halo_seconds;
  PetscFunctionReturn(0);
}

/* The residual |F| from the function vector the last cycle left at the fine positions (level_function: F = -f at
 * each free node, f as pbng_problem_residual computes it), summed as it sums |f|^2: bitwise the same value. */
static PetscErrorCode multilevel_current_residual(pbng_solver *s, double *residual, PetscBool *known)
{
  multilevel_data *ml = s->data;
  const PetscScalar *F;
  pbng_exact_sum sum;
  Vec Fv;
  double r2;

  PetscFunctionBeginUser;
  *known = ml->function_current;
  if (!*known) PetscFunctionReturn(0);
  if (ml->f2_current) { /* reduced by nonlinear GMRES as this sum would be (exact, node by node): one reduction fewer a cycle */
    *residual = sqrt(ml->last_f2);
    PetscFunctionReturn(0);
  }
  PetscCall(SNESGetFunction(ml->fas, &Fv, NULL, NULL));
  PetscCall(VecGetArrayRead(Fv, &F));
  pbng_exact_sum_zero(&sum);
  for (int32_t i = 0; i < s->pb->dm->nfree; ++i) {
    const double *f = &F[3 * (int64_t)i];
    pbng_exact_sum_add(&sum, f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  }
  PetscCall(VecRestoreArrayRead(Fv, &F));
  PetscCall(pbng_exact_sum_allreduce(s->pb->dm->comm, &sum, &r2));
  *residual = sqrt(r2);
  PetscFunctionReturn(0);
}

/* "  alpha a_{L-1},...,a_1": the last cycle's correction scalings, finest pair first. */
static PetscErrorCode multilevel_monitor(pbng_solver *s, char *buf, size_t len)
{
  multilevel_data *ml = s->data;
  size_t used = 0;

  PetscFunctionBeginUser;
  buf[0] = 0;
  if (ml->search == PBNG_CORRECTION_NONE) PetscFunctionReturn(0);
  used += (size_t)snprintf(buf, len, "  alpha");
  for (int l = ml->nlevels - 1; l >= 1 && used < len; --l)
    used += (size_t)snprintf(buf + used, len - used, "%s%.3g", l == ml->nlevels - 1 ? " " : ",", ml->last_alpha[l < 16 ? l : 15]);
  PetscFunctionReturn(0);
}

static PetscErrorCode multilevel_level_stats(pbng_solver *s, int l, pbng_level_stats *st)
{
  const multilevel_data *ml = s->data;
  const pbng_level *lev = &ml->level[l];

  *st = (pbng_level_stats){.seconds = lev->work.seconds, .sweeps = lev->sweeps, .functions = lev->functions, .objectives = lev->objectives,
                           .jacobians = lev->jacobians, .halo_seconds = lev->sweeper.halo_seconds, .comm = lev->work.comm,
                           .transfer = l > 0 ? ml->transfer[l] : (pbng_work_meter){.event = -1}, .coarse_factor = l == 0 ? ml->coarse_factor : (pbng_work_meter){.event = -1}};
  return 0;
}

static PetscErrorCode multilevel_destroy(pbng_solver *s)
{
  multilevel_data *ml = s->data;

  PetscFunctionBeginUser;
  if (!ml) PetscFunctionReturn(0);
  PetscCall(SNESDestroy(&ml->fas));
  PetscCall(VecDestroy(&ml->X));
  PetscCall(VecDestroy(&ml->safe));
  if (ml->ngmres_m > 0) PetscCall(ngmres_destroy(ml));
  for (int l = 0; l < ml->nlevels; ++l) {
    PetscCall(MatDestroy(&ml->shell[l]));
    PetscCall(MatDestroy(&ml->P3[l]));
    PetscCall(MatDestroy(&ml->Q3[l]));
    PetscCall(MatDestroy(&ml->P[l]));
    PetscCall(MatDestroy(&ml->Q[l]));
    PetscCall(VecDestroy(&ml->rscale[l]));
    PetscCall(VecDestroy(&ml->corr[l].d));
    if (ml->level[l].pb) PetscCall(pbng_level_destroy(&ml->level[l]));
  }
  if (ml->contacts) /* detach from the coarse problems (which outlive the solver) first */
    for (int l = 0; l < ml->nlevels - 1; ++l) {
      PetscCall(pbng_problem_detach_contacts(&((pbng_hierarchy *)s->opt.hierarchy)->coarse[l].pb));
      PetscCall(pbng_contact_level_destroy(&ml->contacts[l]));
    }
  PetscCall(PetscFree(ml->contacts));
  PetscCall(PetscFree5(ml->P, ml->Q, ml->P3, ml->Q3, ml->shell));
  PetscCall(PetscFree(ml->corr));
  PetscCall(PetscFree(ml->rscale));
  PetscCall(PetscFree(ml->transfer));
  PetscCall(PetscFree(ml->level));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* ---- options ---------------------------------------------------------------------------------- */

/* the energy line search, projected coarse Newton, nonlinear GMRES over 4 cycles, automatic aggregation and reuse */
static void multilevel_defaults(pbng_solver_options *o) { o->ml = (pbng_multilevel_options){.correction_search = PBNG_CORRECTION_ENERGY, .coarse_hessian = PBNG_HESSIAN_PSD_STRESS, .ngmres = PBNG_MULTILEVEL_NGMRES_DEFAULT, .aggregation = PBNG_AGGREGATION_AUTO, .coarse_reuse = PBNG_COARSE_REUSE_AUTO, .guard_growth = 4.0, .min_nodes_per_rank = PBNG_LEVEL_MIN_NODES_PER_RANK}; }

/* -multilevel_linesearch and -multilevel_coarse_hessian (-multilevel itself shapes the run's mesh
 * hierarchy and is read with the meshes). */
static PetscErrorCode pbng_multilevel_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  static const char *const searches[] = {"none", "energy", "secant"}; /* pbng_correction_search order */
  static const char *const hessians[] = {"modified", "stress", "element", "exact"};
  static const pbng_hessian_kind hessian_kinds[] = {PBNG_HESSIAN_MODIFIED, PBNG_HESSIAN_PSD_STRESS, PBNG_HESSIAN_PSD_ELEMENT, PBNG_HESSIAN_EXACT};
  int search = (int)o->ml.correction_search, hessian = 0;
  PetscBool search_set, hessian_set;

  PetscFunctionBeginUser;
  (void)selected;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-multilevel_linesearch", "scaling of each coarse correction: none | energy | secant", "",
                                      searches, 3, &search, &search_set));
  o->ml.correction_search = (pbng_correction_search)search;
  o->ml.correction_search_given = search_set || o->ml.correction_search_given; /* given, or a scene's choice */
  PetscCheck(!search_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_linesearch is for -multilevel L with L > 1");
  PetscBool guard_set;
  PetscCall(PetscOptionsReal("-multilevel_guard", "with full corrections (-multilevel_linesearch none): a cycle that multiplies the residual by more "
                             "than G is undone and the frame goes on with the secant search (0: no guard)", "", o->ml.guard_growth, &o->ml.guard_growth,
                             &guard_set));
  PetscCheck(o->ml.guard_growth >= 0 && isfinite(o->ml.guard_growth), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-multilevel_guard %g: must be >= 0",
             o->ml.guard_growth);
  PetscCheck(!guard_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_guard is for -multilevel L with L > 1");
  while (hessian_kinds[hessian] != (pbng_hessian_kind)o->ml.coarse_hessian) ++hessian;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-multilevel_coarse_hessian",
                                      "the coarsest level's Newton matrix: modified (PBNG's Eq. 37 as element matrices) | stress | element (PSD projections) | exact",
                                      "", hessians, 4, &hessian, &hessian_set));
  o->ml.coarse_hessian = (int)hessian_kinds[hessian];
  PetscBool ngmres_set;
  PetscCall(PetscOptionsRangeInt("-multilevel_ngmres", "the last m cycles' iterates combined by nonlinear GMRES (0: plain FAS cycles)", "",
                                 o->ml.ngmres, &o->ml.ngmres, &ngmres_set, 0, 32));
  PetscCheck(!ngmres_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_ngmres is for -multilevel L with L > 1");
  PetscCheck(!hessian_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_coarse_hessian is for -multilevel L with L > 1");
  char reuse[16] = "auto";
  PetscBool reuse_set;
  if (o->ml.coarse_reuse >= 0) snprintf(reuse, sizeof(reuse), "%d", o->ml.coarse_reuse);
  PetscCall(PetscOptionsString("-multilevel_coarse_reuse",
                               "the coarsest level's Newton matrix (and factorisation) serves the steps of M cycles (0: each step assembles its own; "
                               "auto: 1 where the coarsest level has >= 1/10 of the finest's nodes, else 0)",
                               "", reuse, reuse, sizeof(reuse), &reuse_set));
  if (reuse_set) {
    long m = 0;
    const int kind = pbng_parse_auto_or_integer(reuse, &m);
    PetscCheck(kind == 1 || (kind == 0 && m >= 0 && m <= 1000), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-multilevel_coarse_reuse %s: must be auto or an integer in 0..1000", reuse);
    o->ml.coarse_reuse = kind == 1 ? PBNG_COARSE_REUSE_AUTO : (int)m;
  }
  PetscCheck(!reuse_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_coarse_reuse is for -multilevel L with L > 1");
  PetscBool aggregation_set;
  PetscInt aggregation = o->ml.aggregation < 0 ? 0 : o->ml.aggregation;
  PetscCall(PetscOptionsRangeInt("-multilevel_aggregation",
                                 "levels below the coarsest mesh level by aggregation (PCGAMG) in its Newton solve (0: a direct factorisation; "
                                 "default: the levels the coarse meshes could not make)",
                                 "", aggregation, &aggregation, &aggregation_set, 0, 20));
  if (aggregation_set) o->ml.aggregation = (int)aggregation;
  PetscBool check = o->ml.aggregation_check ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-multilevel_aggregation_check",
                             "testing aid: after the first cycle, print how far the linear fields lie from the aggregation's first prolongator's range", "",
                             check, &check, NULL));
  o->ml.aggregation_check = check;
  PetscCheck(!aggregation_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_aggregation is for -multilevel L with L > 1");
  PetscBool subset_set;
  PetscInt min_nodes = o->ml.min_nodes_per_rank;
  PetscCall(PetscOptionsRangeInt("-multilevel_min_nodes_per_rank",
                                 "a coarse level with fewer nodes per rank is partitioned over floor(nodes / N) ranks (at least one; 0: every level "
                                 "on every rank)",
                                 "", min_nodes, &min_nodes, &subset_set, 0, 100000000));
  o->ml.min_nodes_per_rank = (int)min_nodes;
  PetscCheck(!subset_set || o->multilevel > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-multilevel_min_nodes_per_rank is for -multilevel L with L > 1");
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_multilevel_ops = {
  .name = "multilevel",
  .kind = {.costly_iterations = 1, .contacts = 1, .plasticity = 1, .contact_every = 1, .chosen_by = "the multilevel solver (-solver pbng -multilevel L with L > 1)",
           .help = "PBNG as the smoother of PETSc's FAS (and every -snes_*, -fas_* option of it)", .petsc_prefixes = "snes_,fas_,",
           .set_from_options = pbng_multilevel_set_from_options, .options_defaults = multilevel_defaults},
  .create = multilevel_create, .begin_frame = multilevel_begin_frame, .iterate = multilevel_iterate, .destroy = multilevel_destroy,
  .monitor = multilevel_monitor, .state = multilevel_state, .restored = multilevel_restored, .level_stats = multilevel_level_stats,
  .current_residual = multilevel_current_residual, .stop_allowed = multilevel_stop_allowed};
