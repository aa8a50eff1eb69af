/* A pbng run as a whole: setup (run_mesh.c, run_start.c), the frame loop with its stopping rules
 * (residual, time budget, divergence, signals), and the agreement of the ranks after an error. */
#include "app/run_state.h"
#include "core/adjacency.h"
#include <malloc.h>
#include <signal.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "app/signals.h"

static PetscErrorCode register_events(run_events *ev)
{
  PetscClassId id;

  PetscFunctionBeginUser;
  PetscCall(PetscClassIdRegister("pbng", &id));
  PetscCall(PetscLogEventRegister("PBNGSetup", id, &ev->setup));
  PetscCall(PetscLogEventRegister("PBNGIterate", id, &ev->iterate));
  PetscCall(PetscLogEventRegister("PBNGResidual", id, &ev->residual));
  PetscCall(PetscLogEventRegister("PBNGOutput", id, &ev->output));
  PetscCall(PetscLogEventRegister("PBNGSetupMesh", id, &ev->mesh));
  PetscCall(PetscLogEventRegister("PBNGSetupCoarsen", id, &ev->coarsen));
  PetscCall(PetscLogEventRegister("PBNGSetupSubdomain", id, &ev->subdomain));
  PetscCall(PetscLogEventRegister("PBNGSetupMeshOut", id, &ev->mesh_output));
  PetscCall(PetscLogEventRegister("PBNGSetupProblem", id, &ev->problem));
  PetscCall(PetscLogEventRegister("PBNGSetupLevels", id, &ev->levels));
  PetscCall(PetscLogEventRegister("PBNGSetupSolver", id, &ev->solver));
  PetscFunctionReturn(0);
}

static PetscErrorCode evaluate_residual(run_state *st, double *r, double *energy)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.residual, 0, 0, 0, 0));
  PetscCall(pbng_problem_residual(&st->pb, r, energy));
  PetscCall(PetscLogEventEnd(st->ev.residual, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static double relative(double r, double r0) { return r0 > 0 ? r / r0 : 0.0; }

/* The energy of the current iterate, evaluated only where it is reported (-monitor lines, the frame's end,
 * checkpoints) rather than at every residual check: *known says whether *energy describes the iterate. A
 * NaN energy makes the residual NaN too (pbng_problem_residual's rule: divergence is seen). */
static PetscErrorCode know_energy(run_state *st, double *r, double *energy, int *known)
{
  PetscFunctionBeginUser;
  if (*known) PetscFunctionReturn(0);
  PetscCall(pbng_problem_energy(&st->pb, NULL, energy));
  if (isnan(*energy)) *r = *energy = NAN;
  *known = 1;
  PetscFunctionReturn(0);
}

/* The residual after an iteration (nothing changed the problem since): the one the solver's iteration left
 * (a multilevel cycle ends evaluating the forces), else evaluated. */
static PetscErrorCode residual_after_iteration(run_state *st, double *r)
{
  PetscBool known = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (st->solver.ops->current_residual) {
    PetscCall(PetscLogEventBegin(st->ev.residual, 0, 0, 0, 0));
    PetscCall(st->solver.ops->current_residual(&st->solver, r, &known));
    PetscCall(PetscLogEventEnd(st->ev.residual, 0, 0, 0, 0));
  }
  if (!known) PetscCall(evaluate_residual(st, r, NULL));
  PetscFunctionReturn(0);
}

typedef struct {
  int iterations;
  long long linear_iterations; /* Krylov iterations in this frame (Newton) */
  double seconds, residual, relative_residual, energy, residual0;
  double contact_seconds[2];   /* detection and recoloring in this frame (slowest rank per update) */
  int64_t plastic_changed;     /* elements whose plastic strain the frame's start updated */
  int converged;               /* pbng_frame_info's: 1 reached the tolerance, 0 stopped before it, -1 no tolerance */
} frame_result;

/* After the solver's first iteration (the Newton or multilevel solver's SNES/KSP/PC options have all
 * been read by then), or at the end of a run without any: such an option nobody read is a misspelling. */
static PetscErrorCode check_solver_options(run_state *st)
{
  PetscFunctionBeginUser;
  if (st->solver_options_checked) PetscFunctionReturn(0);
  st->solver_options_checked = PETSC_TRUE;
  PetscCall(pbng_config_reject_unused_solver_options(st->cfg));
  PetscFunctionReturn(0);
}

/* -time_budget: whether the frame's iterations have used it up, as the slowest rank measured (every
 * rank takes the same decision). */
static PetscErrorCode budget_spent(const run_state *st, double seconds, PetscBool *spent)
{
  double slowest;

  PetscFunctionBeginUser;
  *spent = PETSC_FALSE;
  if (st->cfg->time_budget <= 0) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, st->comm));
  *spent = slowest >= st->cfg->time_budget;
  PetscFunctionReturn(0);
}

/* The solver's own suffix of an iteration line (Newton: "  linear N", its Krylov iterations so far in
 * the frame), else "". */
static const char *linear_suffix(const run_state *st, long long linear, char *buf, size_t size)
{
  buf[0] = 0;
  if (st->solver.ops->kind.iteration_suffix) st->solver.ops->kind.iteration_suffix(linear, buf, size);
  return buf;
}

/* -quasistatic_guess secant, at a frame's start (the held nodes placed, the free ones still at the previous frame's end
 * x_k): whether the guess applies (collective: the same on every rank): x_{k-1} is known and the held nodes moved since
 * the last frame's start (a frame whose prescribed nodes stay, a constant load, starts at x_k: x_k is already its
 * equilibrium, and the guess would double the last change). */
static PetscErrorCode secant_guess_applies(const run_state *st, int *applies)
{
  const pbng_dmesh *dm = &st->dm;
  const double *x = st->pb.x, *last = st->x_last_frame;
  int held_moved = 0, any;

  PetscFunctionBeginUser;
  for (int64_t k = 3 * (int64_t)dm->nfree; k < 3 * (int64_t)dm->nowned && !held_moved; ++k) held_moved = x[k] != last[k];
  PetscCallMPI(MPI_Allreduce(&held_moved, &any, 1, MPI_INT, MPI_MAX, st->comm));
  *applies = st->have_last_frame > 0 && any;
  PetscFunctionReturn(0);
}

/* The free nodes to the secant guess x_k + (x_k - x_{k-1}) when `applies` (secant_guess_applies), and x_k kept as the next
 * frame's x_{k-1}. A flexing arm's frame so starts where the last frame's motion leads instead of from muscles left behind
 * by their moved tendons (docs/muscles.md). */
static PetscErrorCode secant_guess(run_state *st, int applies)
{
  const pbng_dmesh *dm = &st->dm;
  double *x = st->pb.x, *last = st->x_last_frame;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < 3 * (int64_t)dm->nowned; ++k) {
    const double now = x[k];
    if (applies && k < 3 * (int64_t)dm->nfree) x[k] += now - last[k];
    last[k] = now;
  }
  st->have_last_frame = 1;
  if (applies) PetscCall(pbng_problem_update_ghosts(&st->pb));
  PetscFunctionReturn(0);
}

/* -quasistatic_guess secant at a frame's start: when it applies (secant_guess_applies), the free nodes go to the secant guess unless its energy,
 * with the contacts detected there, is more than PBNG_GUESS_ENERGY_FACTOR times the energy at x_k (the held nodes
 * moved, x_k's contacts): then they go back to x_k, and the contacts to x_k's detection (before_start: what that
 * detection came after, or NULL without contacts). A guess that carries a thin muscle's vertices through a neighbour
 * lands them behind faces whose k_n = 1e8 springs multiply the energy (-scale 0.4: 14-850x; where the guess helps,
 * -scale 1, at most 2.1x; docs/muscles.md#quasistatic-frames-in-contact). The residual at x_k stays the reference of -rtol;
 * *r: the residual where the frame starts. */
static PetscErrorCode start_from_secant_guess(run_state *st, int applies, double residual_xk, const pbng_contacts_history *before_start, double *r)
{
  const pbng_dmesh *dm = &st->dm;
  double energy_xk = 0, energy_guess;

  PetscFunctionBeginUser;
  if (applies) PetscCall(pbng_problem_energy(&st->pb, NULL, &energy_xk));
  PetscCall(secant_guess(st, applies));
  if (!applies) PetscFunctionReturn(0);
  PetscCall(run_detect_contacts(st)); /* the contacts of the guess */
  PetscCall(evaluate_residual(st, r, &energy_guess));
  if (st->cfg->monitor)
    PetscCall(PetscPrintf(st->comm, "    secant guess: energy %.6e, at x_k %.6e: %s\n", energy_guess, energy_xk,
                          energy_guess <= PBNG_GUESS_ENERGY_FACTOR * energy_xk ? "taken" : "declined"));
  if (energy_guess <= PBNG_GUESS_ENERGY_FACTOR * energy_xk) {
    ++st->guesses_taken;
    PetscFunctionReturn(0);
  }
  memcpy(st->pb.x, st->x_last_frame, 3 * (size_t)dm->nfree * sizeof(double)); /* back to x_k (secant_guess kept it) */
  PetscCall(pbng_problem_update_ghosts(&st->pb));
  if (before_start) { /* the frame start's detection again: the guess's pairs must not hold on (a spring's hysteresis) */
    PetscCall(pbng_contacts_history_restore(&st->contacts, before_start));
    PetscCall(run_detect_contacts(st));
  }
  *r = residual_xk;
  ++st->guesses_declined;
  PetscFunctionReturn(0);
}

static PetscErrorCode print_iteration(run_state *st, int frame, int l, double r, double r0, double energy, const frame_result *fr)
{
  char linear[48], seconds[32] = "", extra[192] = "";

  PetscFunctionBeginUser;
  if (l > 0) snprintf(seconds, sizeof(seconds), "  %.3f s", fr->seconds); /* iteration 0: the frame's start, no time yet */
  if (l > 0 && st->solver.ops->monitor) PetscCall(st->solver.ops->monitor(&st->solver, extra, sizeof(extra))); /* e.g. XPBD's residuals */
  char contacts[128] = "";
  const pbng_contacts_stats *cs = &st->contacts.stats;
  if (st->cfg->contact && cs->deep)
    snprintf(contacts, sizeof(contacts), "  contacts %" PRId64 " (deep %" PRId64 ", the deepest %.3g at its detection)", cs->contacts, cs->deep, cs->deepest);
  else if (st->cfg->contact) snprintf(contacts, sizeof(contacts), "  contacts %" PRId64, cs->contacts);
  PetscCall(PetscPrintf(st->comm, "    frame %d iter %4d  residual %.6e  relative %.6e  energy %.15e%s%s%s%s\n", frame, l, r, relative(r, r0), energy,
                        seconds, l > 0 ? linear_suffix(st, fr->linear_iterations, linear, sizeof(linear)) : "", extra, contacts));
  PetscFunctionReturn(0);
}

/* Whether a stop was requested (SIGTERM / SIGUSR1) on any rank: every rank takes the same decision. */
static PetscErrorCode stop_requested(run_state *st, PetscBool *stop)
{
  int mine = pbng_signals_received(), any;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, st->comm));
  st->stopped_by = any;
  *stop = any != 0;
  PetscFunctionReturn(0);
}

/* -test_fail_rank R -test_fail_at WHERE: rank R fails alone here (tests of the failure handling). */
static PetscErrorCode test_failure(const run_state *st, const char *where)
{
  PetscFunctionBeginUser;
  PetscCheck(st->rank != st->cfg->test_fail_rank || strcmp(st->cfg->test_fail_at, where), PETSC_COMM_SELF, PETSC_ERR_LIB,
             "test failure on rank %d during %s (-test_fail_rank)", st->rank, where);
  PetscFunctionReturn(0);
}

/* The solver's count of elements outside the model's domain (inverted; -1: not counted). */
static long long solver_inverted(const run_state *st) { return st->solver.ops->inverted ? st->solver.ops->inverted(&st->solver) : -1; }

/* A frame recovering from inverted elements: while an iteration leaves some inverted, and fewer than before it (the
 * frame's start or the iteration before), the residual of such a state (the stress extrapolated below the model's
 * domain, e.g. the log barrier's guard) says nothing about divergence, so no ratio of it is judged (a non-finite one
 * still stops the run); the first iteration that leaves none after such iterations becomes the reference when its
 * residual is larger than the frame's first. An iteration that leaves more inverted than before is judged as always. */
typedef struct {
  long long inverted; /* after the last iteration (or at the frame's start); -1: not counted */
  int recovering;     /* the last iteration left some, fewer than before it */
  int skipped;        /* an iteration of the frame was not judged */
  int first_clean;    /* the last iteration is the first to leave none after skipped ones */
} recovery;

static void recovery_after_iteration(recovery *rec, long long now)
{
  rec->recovering = now > 0 && rec->inverted >= 0 && now < rec->inverted;
  rec->first_clean = now == 0 && rec->skipped == 1;
  if (rec->recovering) rec->skipped = 1;
  if (rec->first_clean) rec->skipped = 2; /* once per frame */
  rec->inverted = now;
}

/* What a frame's iterations are judged by besides the iterate (solve_frame): kept in a checkpoint, so that a frame
 * continued from one stops, detects and judges divergence as the uninterrupted frame does. */
typedef struct {
  double diverge_ref; /* what the divergence limit is relative to */
  int detected;       /* a detection since the last iteration (the frame start's) */
  int redetections;   /* detections at the frame's end so far */
  recovery rec;
} frame_judgement;

/* The frame's state at iteration l, as a checkpoint keeps it. */
static void frame_counters(const run_state *st, const pbng_run_summary *sum, int frame, int l, const frame_result *fr, double r,
                           double energy, int fresh, const frame_judgement *fj, pbng_checkpoint_counters *c)
{
  *c = (pbng_checkpoint_counters){.next_frame = frame, .next_iteration = l, .time0 = st->time0, .residual0 = fr->residual0,
                                  .residual = r, .energy = energy, .fresh = fresh, .seconds = fr->seconds,
                                  .linear = (double)fr->linear_iterations, .iterations = sum->iterations,
                                  .linear_iterations = (double)sum->linear_iterations, .solver_seconds = sum->solver_seconds,
                                  .diverge_ref = fj->diverge_ref, .detected = fj->detected, .redetections = fj->redetections,
                                  .recovery_inverted = (double)fj->rec.inverted, .recovering = fj->rec.recovering,
                                  .recovery_skipped = fj->rec.skipped};
}

/* The loop's state where a checkpoint left it (first_clean is the last iteration's, already acted on). */
static frame_judgement frame_judgement_resumed(const pbng_checkpoint_counters *c)
{
  return (frame_judgement){.diverge_ref = c->diverge_ref, .detected = (int)c->detected, .redetections = (int)c->redetections,
                      .rec = {.inverted = (long long)c->recovery_inverted, .recovering = (int)c->recovering, .skipped = (int)c->recovery_skipped}};
}

/* No silent divergence: a non-finite residual, or a relative residual above -divergence_limit, stops
 * the run (every rank sees the same global residual). */
static PetscErrorCode check_divergence(run_state *st, int frame, int l, double r, double r0)
{
  const double rel = relative(r, r0); /* r0: the frame's first residual, or larger after a detection added contacts */

  PetscFunctionBeginUser;
  if (isfinite(r) && rel <= st->cfg->divergence_limit) PetscFunctionReturn(0);
  snprintf(st->diverged, sizeof(st->diverged), "diverged at frame %d, iteration %d", frame, l);
  SETERRQ(st->comm, PBNG_ERR_DIVERGED,
          "frame %d, iteration %d: the solution diverged (%s); the output keeps frames 0..%d, its status attribute says where it stopped",
          frame, l, isfinite(r) ? "relative residual above -divergence_limit" : "non-finite positions or residual", frame - 1);
}

/* At most this many detections at the end of one frame (the contact set of a frame need not settle: a
 * vertex on the edge between two triangles may take either as its closest at each detection). */
#define PBNG_CONTACT_SETTLE_DETECTIONS 2

/* A frame's end by tolerance: the relative residual at most -rtol, or the residual at most -atol. */
static int frame_converged(const run_state *st, double r, double r0) { return relative(r, r0) <= st->cfg->rtol || r <= st->atol; }

/* An iteration that costs far more than a residual evaluation: a multilevel cycle or a Newton step. */
static int iteration_is_costly(const run_state *st)
{
  return st->solver.ops->kind.costly_iterations;
}

/* Whether the residual is evaluated after iteration `done` (1, 2, ...) of a frame, to check -rtol. -residual_every K:
 * every K-th. By default after every costly iteration; after sweeps, at 1..8 and then each check a quarter of the
 * iterations so far after the last (at most PBNG_RESIDUAL_EVERY_MAX apart): a frame that reached the tolerance just
 * after a check runs at most 1.25x the iterations it needed, and the checks cost O(log n) residuals. The schedule
 * depends on `done` alone, so a frame continued from a checkpoint checks where the uninterrupted one did. */
static int residual_check_due(const run_state *st, int done)
{
  const int every = st->cfg->residual_every;
  if (every > 0) return done % every == 0;
  if (iteration_is_costly(st)) return 1;
  int check = 1;
  while (check < done) {
    const int step = check / 4;
    check += step < 1 ? 1 : step > PBNG_RESIDUAL_EVERY_MAX ? PBNG_RESIDUAL_EVERY_MAX : step;
  }
  return check == done;
}

/* -contact: a frame that reached -rtol is done only if it still has after a detection there (the
 * contacts of its end state in force: a vertex that passed a surface during the iterations gets its
 * contact, and the frame goes on until the residual with it is below -rtol again). r and energy are
 * then the state's with the contacts found. *detected: a detection since the last iteration. */
static PetscErrorCode contacts_settled(run_state *st, double r0, double *r, int *energy_known, int *detected, int *redetections, PetscBool *settled)
{
  PetscFunctionBeginUser;
  *settled = PETSC_TRUE;
  if (!st->cfg->contact || *detected || *redetections >= PBNG_CONTACT_SETTLE_DETECTIONS) PetscFunctionReturn(0);
  ++*redetections;
  const int version = st->contacts.version;
  PetscCall(run_detect_contacts(st));
  *detected = 1;
  if (st->contacts.version == version) PetscFunctionReturn(0);
  PetscCall(evaluate_residual(st, r, NULL));
  *energy_known = 0;
  *settled = frame_converged(st, *r, r0);
  PetscFunctionReturn(0);
}

/* Whether the periodic detections (-contact_every) are stopped for the rest of a frame: its last residual r is within
 * -contact_freeze times the tolerance (relative or absolute). Near convergence a detection that adds a contact or turns a
 * record's normal changes the problem the iterations converge to, by more than what is left of the residual: with
 * detections every K iterations up to the end a frame can chase its contact set for ever (two_blocks_colliding,
 * quasistatic, -rtol 1e-6). Frozen, the frame converges on one set, and contacts_settled then checks that set by a
 * detection at the end (docs/contact.md#quasistatic-frames-in-contact). */
static int contacts_frozen(const run_state *st, double r, double r0)
{
  const double f = st->cfg->contact_freeze;
  return f > 0 && st->cfg->rtol > 0 && (relative(r, r0) <= f * st->cfg->rtol || r <= f * st->atol);
}

/* Whether a periodic detection follows iteration `done` (1, 2, ...) of a frame: every -contact_every K iterations, or
 * with -contact_backoff (quasistatic frames to a tolerance) after K, 2K, 4K, 8K, ... iterations: each window on one
 * contact set twice as long as the last, so that a solver that needs more than K iterations to settle a set gets them
 * (single-level PBNG on two_blocks_colliding: with a detection every 10 sweeps its first contact frame oscillates at
 * relative residual ~3e-2 through 20 000 sweeps; docs/contact.md#quasistatic-frames-in-contact). */
static int periodic_detection_due(const run_state *st, int done)
{
  const int every = st->cfg->contact_every;
  if (every <= 0 || done % every || done >= st->cfg->iters) return 0;
  if (!st->cfg->contact_backoff || st->cfg->rtol <= 0) return 1;
  const int windows = done / every;
  return (windows & (windows - 1)) == 0;
}

/* Iterates one frame: stops after cfg->iters iterations or when the relative residual reaches rtol.
 * With resume, continues a frame a checkpoint stopped in (its start is not repeated). When a stop is
 * requested, writes a checkpoint after the current iteration and sets *stopped. */
static PetscErrorCode solve_frame(run_state *st, int frame, const pbng_checkpoint_counters *resume, const pbng_run_summary *sum,
                                  frame_result *fr, PetscBool *stopped)
{
  const pbng_config *cfg = st->cfg;
  double r = 0, energy = 0;
  int fresh = 1, l0 = 0; /* fresh: r describes the current iterate */
  int energy_known = 0;  /* energy describes it (know_energy) */

  PetscFunctionBeginUser;
  memset(fr, 0, sizeof(*fr));
  *stopped = PETSC_FALSE;
  if (resume) {
    fr->residual0 = resume->residual0, fr->seconds = resume->seconds, fr->linear_iterations = (long long)resume->linear;
    r = resume->residual, energy = resume->energy, fresh = energy_known = (int)resume->fresh;
    l0 = fr->iterations = (int)resume->next_iteration;
  } else {
    PetscCall(run_plastic_update(st, &fr->plastic_changed)); /* Sec. 4.2, from the previous frame's positions */
    PetscCall(pbng_problem_begin_frame(&st->pb, run_frame_time(st, frame)));
    pbng_problem_place_held_handles(&st->pb);
    int guess = 0; /* -quasistatic_guess secant: the guess is tried in this frame */
    if (st->x_last_frame) PetscCall(secant_guess_applies(st, &guess));
    pbng_contacts_history before_start; /* what the frame start's detection came after, put back if the guess is declined */
    const int keep_history = guess && cfg->contact;
    if (keep_history) PetscCall(pbng_contacts_history_save(&st->contacts, &before_start));
    PetscCall(run_detect_contacts(st));
    PetscCall(pbng_solver_begin_frame(&st->solver));
    PetscCall(evaluate_residual(st, &fr->residual0, NULL));
    r = fr->residual0;
    if (cfg->mode == PBNG_MODE_DYNAMIC && cfg->free_fall_guess && !st->solver.ops->kind.own_guess) {
      /* -dynamic_guess free_fall: the iterations start from x^n + dt v^n + dt^2 g; the residual at the
       * inertial predictor stays the reference of -rtol (a body in free fall has no residual left) */
      PetscCall(pbng_problem_add_free_fall(&st->pb));
      PetscCall(evaluate_residual(st, &r, NULL));
    }
    if (st->x_last_frame) PetscCall(start_from_secant_guess(st, guess, fr->residual0, keep_history ? &before_start : NULL, &r));
    if (keep_history) PetscCall(pbng_contacts_history_free(&before_start));
    if (cfg->monitor) {
      PetscCall(know_energy(st, &r, &energy, &energy_known));
      PetscCall(print_iteration(st, frame, 0, r, fr->residual0, energy, fr));
    }
    PetscCall(check_divergence(st, frame, 0, r, r));
  }
  const long long linear0 = st->solver.linear_iterations - fr->linear_iterations;
  frame_judgement fj = resume ? frame_judgement_resumed(resume)
                         : (frame_judgement){.diverge_ref = fr->residual0, .detected = 1, .rec = {.inverted = solver_inverted(st)}};
  for (int l = l0; l < cfg->iters; ++l) {
    PetscBool spent, stop, settled = PETSC_TRUE;
    if (cfg->rtol > 0 && fresh && frame_converged(st, r, fr->residual0)) {
      PetscCall(contacts_settled(st, fr->residual0, &r, &energy_known, &fj.detected, &fj.redetections, &settled));
      if (settled) break;
    }
    PetscCall(budget_spent(st, fr->seconds, &spent));
    if (spent) break;
    PetscCall(PetscLogEventBegin(st->ev.iterate, 0, 0, 0, 0));
    const double t0 = MPI_Wtime();
    pbng_comm_counts c0, c1;
    pbng_comm_counts_now(&c0);
    PetscCall(pbng_solver_iterate(&st->solver, l));
    pbng_comm_counts_now(&c1);
    pbng_comm_counts_add_since(&st->iteration_comm, &c0, &c1);
    PetscCall(test_failure(st, "iteration"));
    fr->seconds += MPI_Wtime() - t0;
    PetscCall(PetscLogEventEnd(st->ev.iterate, 0, 0, 0, 0));
    fr->iterations = l + 1;
    fr->linear_iterations = st->solver.linear_iterations - linear0;
    recovery_after_iteration(&fj.rec, solver_inverted(st));
    fj.detected = 0;
    if (periodic_detection_due(st, l + 1) && !contacts_frozen(st, r, fr->residual0)) {
      PetscCall(run_detect_contacts(st));
      fj.detected = 1, fresh = 0;
      if (st->contacts.stats.new_contacts > 0) { /* new contacts add their own forces: divergence is judged from here */
        double rc;
        PetscCall(evaluate_residual(st, &rc, NULL));
        if (rc > fj.diverge_ref) fj.diverge_ref = rc;
      }
    }
    PetscCall(check_solver_options(st));
    fresh = energy_known = 0;
    if (cfg->monitor || (cfg->rtol > 0 && residual_check_due(st, l + 1)) || fj.rec.first_clean) {
      if (fj.detected) PetscCall(evaluate_residual(st, &r, NULL)); /* the contacts changed since the iteration */
      else PetscCall(residual_after_iteration(st, &r));
      if (cfg->monitor) PetscCall(know_energy(st, &r, &energy, &energy_known));
      fresh = 1;
      if (cfg->monitor) PetscCall(print_iteration(st, frame, l + 1, r, fr->residual0, energy, fr));
      if (fj.rec.first_clean) fj.diverge_ref = fmax(fj.diverge_ref, r); /* judged from the first state back in the model's domain */
      PetscCall(check_divergence(st, frame, l + 1, r, fj.rec.recovering ? INFINITY : fj.diverge_ref));
    }
    if (cfg->test_signal_after > 0 && st->rank == 0 && ++st->iterations_here == cfg->test_signal_after) raise(SIGUSR1);
    PetscCall(stop_requested(st, &stop));
    if (stop && st->solver.ops->stop_allowed && !st->solver.ops->stop_allowed(&st->solver, l + 1)) stop = PETSC_FALSE; /* at its next one */
    if (stop) {
      pbng_checkpoint_counters c;
      if (fresh) PetscCall(know_energy(st, &r, &energy, &energy_known));
      frame_counters(st, sum, frame, l + 1, fr, r, energy, fresh, &fj, &c);
      PetscCall(run_write_checkpoint(st, &c));
      *stopped = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
  }
  if (!fresh) PetscCall(evaluate_residual(st, &r, &energy));
  else PetscCall(know_energy(st, &r, &energy, &energy_known));
  PetscCall(check_divergence(st, frame, fr->iterations, r, fj.rec.recovering ? INFINITY : fj.diverge_ref));
  pbng_problem_end_frame(&st->pb);
  fr->residual = r;
  fr->relative_residual = relative(r, fr->residual0);
  fr->energy = energy;
  fr->converged = cfg->rtol > 0 ? frame_converged(st, r, fr->residual0) : -1;
  PetscFunctionReturn(0);
}

static PetscErrorCode write_frame(run_state *st, int frame, const frame_result *fr)
{
  const pbng_frame_info info = {run_frame_time(st, frame), fr->iterations, fr->residual, fr->relative_residual, fr->seconds, fr->energy, fr->converged};

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.output, 0, 0, 0, 0));
  double *positions;
  PetscCall(run_gather_for_output(st, 3, st->pb.x, &positions));
  PetscCall(pbng_output_write_frame(st->out, frame, st->dm.nowned, st->node_rows, positions, &info));
  PetscCall(PetscFree(positions));
  PetscCall(run_write_frame_contacts(st, frame));
  PetscCall(run_write_frame_plasticity(st, frame));
  PetscCall(PetscLogEventEnd(st->ev.output, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* A dynamic run's starting velocity as frame 0's "velocity" field (owned nodes; the checker's inertia at frame 1):
 * a scene's initial velocity, or the velocity a run continued with -initial took from the earlier result. */
static PetscErrorCode write_initial_velocity(run_state *st)
{
  double *v;

  PetscFunctionBeginUser;
  PetscCall(run_gather_for_output(st, 3, st->pb.velocity, &v));
  PetscCall(pbng_output_write_frame_nodes_double(st->out, 0, "velocity", 3, st->dm.nowned, st->node_rows, v));
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}

/* -strict: a frame that stopped before the tolerance ends the run with an error (it is written: the output keeps
 * frames 0..frame, its status attribute says where it stopped). */
static PetscErrorCode check_strict(run_state *st, int frame, const frame_result *fr)
{
  PetscFunctionBeginUser;
  if (!st->cfg->strict || fr->converged) PetscFunctionReturn(0);
  snprintf(st->diverged, sizeof(st->diverged), "stopped at frame %d: -strict, the frame ended before -rtol", frame);
  SETERRQ(st->comm, PBNG_ERR_DIVERGED,
          "-strict: frame %d stopped after %d iterations at relative residual %.3e, above -rtol %g (raise -iters, or drop -strict); the output keeps "
          "frames 0..%d, its status attribute says where it stopped",
          frame, fr->iterations, fr->relative_residual, st->cfg->rtol, frame);
}

static PetscErrorCode print_frame_line(run_state *st, int frame, int first, const frame_result *fr, double elapsed)
{
  const int F = st->cfg->frames;
  const double eta = elapsed / (frame - first + 1) * (F - frame); /* from this process's frames */

  PetscFunctionBeginUser;
  char linear[48], contacts[128] = "", deep[48] = "", plastic[48] = "";
  if (st->pb.plastic_strain) snprintf(plastic, sizeof(plastic), "  plastic flow in %" PRId64 " elements", fr->plastic_changed);
  if (st->contacts.stats.deep) snprintf(deep, sizeof(deep), "%" PRId64 " deep, ", st->contacts.stats.deep);
  if (st->cfg->contact)
    snprintf(contacts, sizeof(contacts), "  contacts %" PRId64 " (%sdetection %.3g s, recoloring %.3g s)", st->contacts.stats.contacts, deep,
             fr->contact_seconds[0], fr->contact_seconds[1]);
  const char *state = fr->converged > 0 ? "  converged" : fr->converged == 0 ? "  NOT converged" : "";
  PetscCall(PetscPrintf(st->comm, "frame %4d/%-4d  iters %5d%s  rel.residual %.3e  residual %.3e  %8.3f s  ETA %8.1f s%s%s%s\n", frame, F,
                        fr->iterations, linear_suffix(st, fr->linear_iterations, linear, sizeof(linear)), fr->relative_residual, fr->residual,
                        fr->seconds, eta, contacts, plastic, state));
  PetscFunctionReturn(0);
}

/* A checkpoint at the start of frame `frame` (the previous ones done and written). */
static PetscErrorCode checkpoint_between_frames(run_state *st, const pbng_run_summary *sum, int frame)
{
  pbng_checkpoint_counters c;
  frame_result none;

  PetscFunctionBeginUser;
  memset(&none, 0, sizeof(none));
  const frame_judgement start = {.detected = 1, .rec = {.inverted = -1}}; /* unused: a frame starting afresh sets its own */
  frame_counters(st, sum, frame, 0, &none, 0, 0, 1, &start, &c);
  PetscCall(pbng_output_flush(st->out)); /* the output's frames on disk match the checkpoint */
  PetscCall(run_write_checkpoint(st, &c));
  PetscFunctionReturn(0);
}

static PetscErrorCode frame_loop(run_state *st, pbng_run_summary *sum)
{
  frame_result fr;
  const double t0 = MPI_Wtime();
  const int restarting = st->restart[0] != 0;
  const int first = restarting ? (int)st->resume.next_frame : 1;

  PetscFunctionBeginUser;
  memset(&fr, 0, sizeof(fr));
  if (restarting) {
    sum->frames = first - 1, sum->iterations = (int)st->resume.iterations;
    sum->linear_iterations = (long long)st->resume.linear_iterations, sum->solver_seconds = st->resume.solver_seconds;
  } else { /* frame 0: the initial configuration */
    PetscCall(pbng_problem_begin_frame(&st->pb, run_frame_time(st, 0)));
    if (st->pb.mode == PBNG_MODE_DYNAMIC) { /* not a step: the start itself (its first guess x + dt v undone), its residual
                                              * without inertia (the forces at the start; frame 1's begin_frame sets x_hat again) */
      memcpy(st->pb.x, st->pb.x_prev, sizeof(double) * 3 * (size_t)st->dm.nfree);
      memcpy(st->pb.x_hat, st->pb.x_prev, sizeof(double) * 3 * (size_t)st->dm.nfree);
      PetscCall(pbng_problem_update_ghosts(&st->pb));
    }
    PetscCall(run_detect_contacts(st));
    PetscCall(evaluate_residual(st, &fr.residual, &fr.energy));
    fr.relative_residual = 1.0;
    fr.converged = st->cfg->rtol > 0 ? 1 : -1; /* the start: nothing to solve */
    PetscCall(write_frame(st, 0, &fr));
    if ((st->cfg->initial_velocity_on || st->cfg->initial[0]) && st->pb.mode == PBNG_MODE_DYNAMIC) PetscCall(write_initial_velocity(st));
  }
  for (int frame = first; frame <= st->cfg->frames; ++frame) {
    const int resume_mid_frame = restarting && frame == first && st->resume.next_iteration > 0;
    PetscBool stopped, stop;
    const double detect0 = st->contact_seconds[0], recolor0 = st->contact_seconds[1];
    PetscCall(solve_frame(st, frame, resume_mid_frame ? &st->resume : NULL, sum, &fr, &stopped));
    if (stopped) PetscFunctionReturn(0);
    fr.contact_seconds[0] = st->contact_seconds[0] - detect0, fr.contact_seconds[1] = st->contact_seconds[1] - recolor0;
    PetscCall(write_frame(st, frame, &fr));
    sum->frames = frame;
    sum->iterations += fr.iterations;
    sum->linear_iterations += fr.linear_iterations;
    sum->solver_seconds += fr.seconds;
    sum->final_residual = fr.residual;
    sum->final_relative_residual = fr.relative_residual;
    sum->capped_frames += fr.converged == 0;
    sum->guesses_taken = st->guesses_taken, sum->guesses_declined = st->guesses_declined;
    PetscCall(print_frame_line(st, frame, first, &fr, MPI_Wtime() - t0));
    PetscCall(check_strict(st, frame, &fr));
    if (frame == st->cfg->frames) break;
    PetscCall(stop_requested(st, &stop));
    if (stop || (st->cfg->checkpoint_every > 0 && frame % st->cfg->checkpoint_every == 0)) PetscCall(checkpoint_between_frames(st, sum, frame + 1));
    if (stop) PetscFunctionReturn(0);
  }
  PetscCall(check_solver_options(st));
  PetscFunctionReturn(0);
}


/* The banner's material: the volume material (when the mesh has volume elements) and the sheet
 * material (when it has sheet elements). */
static void sheet_material_label(const run_state *st, char *buf, size_t len)
{
  const pbng_config *cfg = st->cfg;
  const pbng_sheet_options *o = &cfg->sheet_opt;
  int used = 0;
  if (!st->pb.geo.sheet || pbng_element_kinds_mask(st->dm.etype, st->dm.kind, st->dm.nelems) & ~PBNG_SHEET_KINDS_MASK)
    used = snprintf(buf, len, "%s, E %g, nu %g", pbng_material_kind_name(cfg->material), cfg->youngs, cfg->poisson);
  if (!st->pb.geo.sheet || used < 0 || (size_t)used >= len) return;
  if (st->pb.pd) {
    const pbng_pd_options *p = &cfg->pd;
    if (p->mat.kind == PBNG_PD_NEOHOOKEAN)
      snprintf(buf + used, len - (size_t)used, "%speridynamic sheet neohookean s0 %g s1 %g, k_b %g, xi %g, h %g", used ? ", " : "", p->mat.s0, p->mat.s1,
               p->k_b, p->thickness > 0 ? p->thickness : o->thickness, o->thickness);
    else
      snprintf(buf + used, len - (size_t)used, "%speridynamic sheet stretching s0 %g, k_b %g, xi %g, h %g", used ? ", " : "", p->mat.s0, p->k_b,
               p->thickness > 0 ? p->thickness : o->thickness, o->thickness);
    return;
  }
  if (cfg->pd.model == PBNG_SHEET_MODEL_CLOTH6) {
    const pbng_cloth6_material *c = &cfg->sheet.cloth6;
    snprintf(buf + used, len - (size_t)used, "%scloth6 stencils k_weft %g k_warp %g k_shear %g N/m, beta %g, k_bend %g", used ? ", " : "", c->k_weft,
             c->k_warp, c->k_shear, c->stiffening, c->k_bend);
    return;
  }
  if (o->orthotropic)
    used += snprintf(buf + used, len - (size_t)used, "%ssheet orthotropic k_weft %g k_warp %g, h %g, k_b %g", used ? ", " : "", o->k_weft, o->k_warp,
                     o->thickness, o->bending_stiffness);
  else
    used += snprintf(buf + used, len - (size_t)used, "%ssheet E %g, nu %g, h %g, k_b %g", used ? ", " : "", o->youngs, o->poisson, o->thickness,
                     o->bending_stiffness);
  for (int g = 0; g < cfg->nsheet_groups && used > 0 && (size_t)used < len; ++g)
    used += snprintf(buf + used, len - (size_t)used, "%s%s", g ? ", " : " (groups with their own: ", cfg->sheet_group[g].name);
  if (cfg->nsheet_groups && used > 0 && (size_t)used + 1 < len) snprintf(buf + used, len - (size_t)used, ")");
}

/* The summary's element kind (or kinds) and visits per element and quadrature point. */
static void summarize_kinds(const mesh_header *head, pbng_run_summary *sum)
{
  double node_visits, point_visits;
  unsigned mask = 0;
  pbng_element_kind_visits(head->kind_count, &node_visits, &point_visits);
  sum->nodes_per_element = head->nelems ? node_visits / (double)head->nelems : 0.0;
  sum->quad_points = node_visits > 0 ? point_visits / node_visits : 1.0;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) mask |= head->kind_count[k] ? 1u << k : 0u;
  pbng_element_kinds_label(mask, sum->element, sizeof(sum->element));
}

/* What multilevel PBNG does not carry to the coarse levels of a mesh with sheet elements (tri3, bend4):
 * contacts (contact/contact_levels.c carries them to tetrahedra only). docs/sheets_multilevel.md. */
static PetscErrorCode check_multilevel_sheets(const run_state *st, const mesh_header *head)
{
  const pbng_config *cfg = st->cfg;

  PetscFunctionBeginUser;
  if (cfg->solver_opt.multilevel == 1 || !(head->kind_count[PBNG_ELEMENT_TRI3] + head->kind_count[PBNG_ELEMENT_BEND4] + head->kind_count[PBNG_ELEMENT_CLOTH6])) PetscFunctionReturn(0);
  PetscCheck(!head->kind_count[PBNG_ELEMENT_CLOTH6], st->comm, PETSC_ERR_SUP,
             "-multilevel %d with -sheet_model cloth6: coarse sheets are tri3/bend4 (docs/sheets_multilevel.md); use -multilevel 1", cfg->solver_opt.multilevel);
  PetscCheck(!cfg->contact, st->comm, PETSC_ERR_SUP,
             "-multilevel %d with contacts on a mesh with sheets: contacts are carried to coarse tetrahedra only, not to coarse sheets "
             "(docs/sheets_multilevel.md); use -multilevel 1",
             cfg->solver_opt.multilevel);
  PetscFunctionReturn(0);
}

/* Options that act on nothing in this mesh (e.g. -poisson on a mesh file of sheets): refused before the
 * output file is created (options_effects.c). */
static PetscErrorCode check_option_effects(const run_state *st, const mesh_header *head)
{
  const int64_t sheets = head->kind_count[PBNG_ELEMENT_TRI3] + head->kind_count[PBNG_ELEMENT_BEND4] + head->kind_count[PBNG_ELEMENT_CLOTH6];
  const pbng_mesh_facts mesh = {.known = 1, .has_volume = head->nelems > sheets, .has_sheets = head->kind_count[PBNG_ELEMENT_TRI3] + head->kind_count[PBNG_ELEMENT_CLOTH6] > 0,
                                .has_weak = head->nweak > 0};

  PetscFunctionBeginUser;
  PetscCall(pbng_config_check_option_effects(st->cfg, &mesh));
  PetscFunctionReturn(0);
}

static double default_atol(const pbng_config *cfg, const mesh_header *head)
{
  const int64_t sheets = head->kind_count[PBNG_ELEMENT_TRI3] + head->kind_count[PBNG_ELEMENT_BEND4] + head->kind_count[PBNG_ELEMENT_CLOTH6];
  return pbng_config_default_atol(cfg, head->extent, head->nelems > sheets, sheets > 0);
}

/* What the defaults chose (issue 21): the tolerance a frame stops at and the scene's fastest configuration. */
static PetscErrorCode print_default_choices(const run_state *st)
{
  const pbng_config *cfg = st->cfg;

  PetscFunctionBeginUser;
  if (cfg->fast_levels) {
    char ngmres[64] = "";
    if (cfg->solver_opt.ml.ngmres > 0) snprintf(ngmres, sizeof(ngmres), ", nonlinear GMRES over %d cycles", cfg->solver_opt.ml.ngmres);
    const char *agg = cfg->solver_opt.ml.aggregation == PBNG_AGGREGATION_ANY ? " and aggregation below them" : "";
    PetscCall(PetscPrintf(st->comm, "defaults: multilevel PBNG, %d levels%s, %s smoother%s (-multilevel auto; any of -solver, -accel, -multilevel replaces it)\n",
                          cfg->fast_levels, agg, cfg->solver_opt.sweep.accel == PBNG_ACCEL_NONE ? "plain PBNG" : pbng_accel_name(cfg->solver_opt.sweep.accel),
                          ngmres));
  }
  if (cfg->default_note[0]) PetscCall(PetscPrintf(st->comm, "defaults: single-level PBNG, not multilevel: %s\n", cfg->default_note));
  if (cfg->tolerance_default)
    PetscCall(PetscPrintf(st->comm, "defaults: each frame to -rtol %g or -atol %.3g%s, at most -iters %d; -rtol 0 -iters 40 runs the paper's fixed iterations\n",
                          cfg->rtol, st->atol, cfg->atol_floor ? " (the floor: 1e-10 E L^2)" : "", cfg->iters));
  PetscFunctionReturn(0);
}

/* cfg: the run's configuration (st->cfg), which the coarse levels of -multilevel auto complete. */
static PetscErrorCode setup(run_state *st, pbng_config *cfg, const char *command_line, pbng_run_summary *sum)
{
  pbng_mesh mesh;
  pbng_submesh sub;
  mesh_header head = {0};
  pbng_material mat;
  int partitioned;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(st->ev.setup, 0, 0, 0, 0));
  PetscCall(run_is_partitioned_input(st, &partitioned));
  PetscCall(PetscLogEventBegin(st->ev.mesh, 0, 0, 0, 0));
  if (partitioned) PetscCall(run_read_partitioned_input(st, &sub, &head));
  else if (cfg->ptscotch) PetscCall(run_partition_in_parallel(st, &mesh, &sub, &head));
  else PetscCall(run_global_mesh_on_rank0(st, &mesh, &head));
  PetscCall(PetscLogEventEnd(st->ev.mesh, 0, 0, 0, 0));
  sum->nodes = head.nnodes;
  sum->elements = head.nelems;
  summarize_kinds(&head, sum);
  PetscCall(check_option_effects(st, &head));
  st->extent = head.extent;
  PetscCall(PetscLogEventBegin(st->ev.coarsen, 0, 0, 0, 0));
  PetscCall(run_make_coarse_meshes(st, cfg, &mesh, &head, partitioned)); /* before rank 0 hands the fine mesh out */
  PetscCall(PetscLogEventEnd(st->ev.coarsen, 0, 0, 0, 0));
  PetscCall(check_multilevel_sheets(st, &head));
  st->atol = cfg->atol_floor ? default_atol(cfg, &head) : cfg->atol;
  sum->absolute_tolerance = cfg->rtol > 0 ? st->atol : 0;
  if (!cfg->dry_run) PetscCall(run_resolve_restart(st));
  if (!st->restart[0] && !cfg->dry_run) PetscCall(run_open_output(st, &head, command_line)); /* an unwritable output fails before any work */
  PetscCall(PetscLogEventBegin(st->ev.subdomain, 0, 0, 0, 0));
  PetscCall(run_build_subdomain(st, &mesh, &head, partitioned || cfg->ptscotch ? &sub : NULL));
  PetscCall(PetscLogEventEnd(st->ev.subdomain, 0, 0, 0, 0));
  malloc_trim(0); /* hand the setup's freed memory back (Open MPI keeps malloc from doing it) */
  PetscCall(test_failure(st, "setup"));
  if (st->restart[0]) PetscCall(run_resume_output(st, &head));
  else if (!cfg->dry_run) { /* before the problem's arrays exist: its buffers do not add to the peak */
    PetscCall(PetscLogEventBegin(st->ev.mesh_output, 0, 0, 0, 0));
    PetscCall(run_write_mesh_output(st));
    PetscCall(PetscLogEventEnd(st->ev.mesh_output, 0, 0, 0, 0));
  }
  malloc_trim(0);
  pbng_material_init(&mat, cfg->material, cfg->youngs, cfg->poisson);
  PetscCall(PetscLogEventBegin(st->ev.problem, 0, 0, 0, 0));
  PetscCall(pbng_problem_create(&st->dm, &cfg->bcs, &mat, &cfg->sheet, cfg->density, cfg->gravity, cfg->mode, cfg->dt, &st->pb));
  if (cfg->mode == PBNG_MODE_QUASISTATIC && cfg->secant_guess) PetscCall(PetscCalloc1(3 * (int64_t)st->dm.nowned + 1, &st->x_last_frame));
  if (st->sheet_material) {
    pbng_sheet_material table[256];
    PetscCall(pbng_problem_set_sheet_materials(&st->pb, run_sheet_table(cfg, table), table, st->sheet_material));
  }
  PetscCall(pbng_problem_set_peridynamics(&st->pb, &cfg->pd));
  st->pb.halo = &st->halo;
  PetscCall(pbng_problem_set_point_load(&st->pb, &cfg->load, st->extent));
  PetscCall(run_write_node_loads(st));
  PetscCall(run_setup_plasticity(st));
  PetscCall(run_setup_contacts(st));
  if (cfg->initial[0]) PetscCall(run_load_initial_state(st));
  PetscCall(run_apply_initial_state(st));
  PetscCall(PetscLogEventEnd(st->ev.problem, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(st->ev.levels, 0, 0, 0, 0));
  PetscCall(run_build_levels(st));
  PetscCall(PetscLogEventEnd(st->ev.levels, 0, 0, 0, 0));
  pbng_solver_options opt = cfg->solver_opt;
  opt.hierarchy = &st->hierarchy;
  PetscCall(PetscLogEventBegin(st->ev.solver, 0, 0, 0, 0));
  PetscCall(pbng_solver_create(pbng_solver_resolve(cfg->solver, &cfg->solver_opt), &st->pb, &opt, &st->solver));
  PetscCall(PetscLogEventEnd(st->ev.solver, 0, 0, 0, 0));
  if (st->restart[0]) PetscCall(run_load_checkpoint(st));
  sum->ncolors = st->dm.ncolors;
  const int64_t mine = st->dm.adj_start[st->dm.nfree] - st->dm.adj_start[0];
  PetscCallMPI(MPI_Allreduce(&mine, &sum->free_visits_per_iteration, 1, MPI_INT64_T, MPI_SUM, st->comm));
  PetscCall(PetscLogEventEnd(st->ev.setup, 0, 0, 0, 0));
  PetscCall(run_summarize_partition(st, sum));
  char weak[64] = "", colors[96] = "";
  if (st->dm.nglobal_weak > 0) snprintf(weak, sizeof(weak), ", %" PRId64 " weak constraints", st->dm.nglobal_weak);
  sum->constraint_colors = st->dm.elem_color ? st->dm.nelem_colors + st->dm.nweak_colors : 0;
  if (st->dm.elem_color)
    snprintf(colors, sizeof(colors), " (PBNG node colors), %d constraint colors (%d element + %d weak)", sum->constraint_colors,
             st->dm.nelem_colors, st->dm.nweak_colors);
  char elements[96] = "tetrahedra";
  if (!st->dm.etype || st->dm.etype->kind != PBNG_ELEMENT_TET4) snprintf(elements, sizeof(elements), "%s elements", sum->element);
  char material[192];
  sheet_material_label(st, material, sizeof(material));
  PetscCall(PetscPrintf(st->comm, "pbng: %s, %" PRId64 " nodes, %" PRId64 " %s%s, %d colors%s, %s, %s, %s, %d rank(s) x %d thread(s)\n", cfg->scene,
                        sum->nodes, sum->elements, elements, weak, sum->ncolors, colors, cfg->solver, material,
                        cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic", sum->ranks, sum->threads));
  PetscCall(print_default_choices(st));
  PetscFunctionReturn(0);
}

/* Multilevel: every level's size and work (seconds: the slowest rank's). */
static PetscErrorCode summarize_levels(run_state *st, pbng_run_summary *sum)
{
  const pbng_hierarchy *h = &st->hierarchy;

  PetscFunctionBeginUser;
  sum->nlevels = h->nlevels > 1 ? h->nlevels : 1;
  if (h->nlevels <= 1 || !st->solver.ops->level_stats) PetscFunctionReturn(0);
  for (int l = 0; l < h->nlevels; ++l) {
    pbng_level_report *r = &sum->level[l];
    const pbng_dmesh *dm = l == h->nlevels - 1 ? &st->dm : &h->coarse[l].dm;
    pbng_level_stats stats;
    PetscCall(st->solver.ops->level_stats(&st->solver, l, &stats));
    PetscCall(PetscStrncpy(r->name, l == h->nlevels - 1 ? h->fine_name : h->coarse[l].name, sizeof(r->name)));
    r->nodes = dm->nglobal_nodes, r->elements = dm->nglobal_elems;
    int holds = dm->nowned > 0;
    PetscCallMPI(MPI_Allreduce(&holds, &r->ranks, 1, MPI_INT, MPI_SUM, st->comm));
    r->sweeps = stats.sweeps, r->functions = stats.functions, r->objectives = stats.objectives, r->jacobians = stats.jacobians;
    const pbng_comm_counts *tc = &stats.transfer.comm, *fc = &stats.coarse_factor.comm;
    const double mine[13] = {stats.seconds, stats.halo_seconds, stats.comm.reductions, stats.comm.messages, stats.comm.bytes,
                             stats.transfer.seconds, tc->reductions, tc->messages, tc->bytes,
                             stats.coarse_factor.seconds, fc->reductions, fc->messages, fc->bytes};
    double most[13];
    PetscCallMPI(MPI_Allreduce(mine, most, 13, MPI_DOUBLE, MPI_MAX, st->comm));
    r->seconds = most[0], r->halo_seconds = most[1], r->comm = (pbng_comm_counts){most[2], most[3], most[4]};
    r->transfer_seconds = most[5], r->transfer_comm = (pbng_comm_counts){most[6], most[7], most[8]};
    r->factor_seconds = most[9], r->factor_comm = (pbng_comm_counts){most[10], most[11], most[12]};
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode teardown(run_state *st)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_solver_destroy(&st->solver));
  PetscCall(pbng_hierarchy_destroy(&st->hierarchy));
  for (int k = 0; st->made_levels && k < st->cfg->solver_opt.multilevel - 1; ++k) PetscCall(pbng_mesh_destroy(&st->made_levels[k])); /* an early error */
  PetscCall(PetscFree(st->made_levels));
  PetscCall(pbng_problem_destroy(&st->pb));
  PetscCall(PetscFree(st->x_last_frame));
  PetscCall(pbng_contacts_destroy(&st->contacts));
  PetscCall(pbng_halo_destroy(&st->halo));
  PetscCall(pbng_dmesh_destroy(&st->dm));
  PetscCall(PetscFree(st->sheet_material));
  PetscCall(PetscFree(st->node_rows));
  PetscCall(PetscFree(st->node_order));
  PetscFunctionReturn(0);
}

static PetscErrorCode memory_usage(MPI_Comm comm, pbng_run_summary *sum)
{
  struct rusage ru;
  double mine;

  PetscFunctionBeginUser;
  getrusage(RUSAGE_SELF, &ru);
  mine = (double)ru.ru_maxrss * 1024.0; /* Linux reports KiB */
  PetscCallMPI(MPI_Allreduce(&mine, &sum->peak_rss_bytes_max, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&mine, &sum->peak_rss_bytes_sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

/* -threads N, else OMP_NUM_THREADS, else the node's cores shared among the ranks on the node. */
static PetscErrorCode choose_thread_count(MPI_Comm comm, int requested)
{
  MPI_Comm node;
  int local_ranks;

  PetscFunctionBeginUser;
  if (requested > 0) {
    omp_set_num_threads(requested);
    PetscFunctionReturn(0);
  }
  if (getenv("OMP_NUM_THREADS")) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &local_ranks));
  PetscCallMPI(MPI_Comm_free(&node));
  const int threads = omp_get_num_procs() / local_ranks;
  omp_set_num_threads(threads > 0 ? threads : 1);
  PetscFunctionReturn(0);
}

/* A rank that failed alone: says why, removes a fresh run's partial output and aborts every rank. */
static void abort_alone(const run_state *st, PetscErrorCode ierr)
{
  char partial[PETSC_MAX_PATH_LEN + 16];
  snprintf(partial, sizeof(partial), "%s.partial", st->cfg->output);
  if (!st->restart[0]) remove(partial); /* a restarted run's .partial holds the earlier frames: kept */
  pbng_abort_alone(st->comm, ierr, st->cfg->failure_timeout, "pbng");
}

PetscErrorCode pbng_run(MPI_Comm comm, pbng_config *cfg, const char *command_line, pbng_run_summary *sum)
{
  run_state st;
  PetscErrorCode ierr;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  memset(&st, 0, sizeof(st));
  memset(sum, 0, sizeof(*sum));
  st.comm = comm;
  st.cfg = cfg;
  st.command_line = command_line;
  pbng_signals_install();
  PetscCallMPI(MPI_Comm_rank(comm, &st.rank));
  PetscCallMPI(MPI_Comm_size(comm, &sum->ranks));
  PetscCall(choose_thread_count(comm, cfg->threads));
  sum->threads = omp_get_max_threads();
  PetscCall(register_events(&st.ev));
  MPI_Comm failure_comm;
  PetscCallMPI(MPI_Comm_dup(comm, &failure_comm)); /* only for the agreement after an error */
  ierr = setup(&st, cfg, command_line, sum);
  if (!ierr && !cfg->dry_run) ierr = frame_loop(&st, sum);
  if (ierr && !pbng_all_ranks_failed(failure_comm, cfg->failure_timeout)) abort_alone(&st, ierr);
  PetscCallMPI(MPI_Comm_free(&failure_comm));
  if (ierr) {
    if (st.out && st.diverged[0]) { /* keep the frames before the divergence, saying where it stopped */
      pbng_output_root_string(st.out, "status", st.diverged);
      pbng_output_close(&st.out, PETSC_TRUE);
    }
    if (st.out) pbng_output_close(&st.out, PETSC_FALSE); /* leave no partial output under the requested name */
    teardown(&st);
    return ierr;
  }
  PetscCallMPI(MPI_Allreduce(&st.solver.halo_seconds, &sum->halo_seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  const double comm_mine[3] = {st.iteration_comm.reductions, st.iteration_comm.messages, st.iteration_comm.bytes};
  double comm_most[3];
  PetscCallMPI(MPI_Allreduce(comm_mine, comm_most, 3, MPI_DOUBLE, MPI_MAX, comm));
  sum->iteration_comm = (pbng_comm_counts){comm_most[0], comm_most[1], comm_most[2]};
  PetscCall(summarize_levels(&st, sum));
  run_summarize_contacts(&st, sum);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum->solver_seconds, 1, MPI_DOUBLE, MPI_MAX, comm)); /* the slowest rank's */
  sum->stopped_by_signal = st.stopped_by;
  if (cfg->dry_run) PetscCall(PetscPrintf(comm, "pbng: dry run: the options and the problem are valid; no file written, no iteration run\n"));
  else if (st.stopped_by) PetscCall(pbng_output_suspend(&st.out)); /* kept as <output>.partial for -restart */
  else {
    PetscCall(pbng_output_root_string(st.out, "status", "complete"));
    PetscCall(pbng_output_close(&st.out, PETSC_TRUE));
    if (st.rank == 0 && access(cfg->checkpoint, F_OK) == 0) remove(cfg->checkpoint); /* the run is complete: nothing to continue */
  }
  PetscCall(teardown(&st));
  sum->total_seconds = MPI_Wtime() - t0;
  sum->visits_per_second =
    sum->solver_seconds > 0 ? sum->nodes_per_element * (double)sum->elements * sum->iterations / sum->solver_seconds : 0;
  PetscCall(memory_usage(comm, sum));
  PetscFunctionReturn(0);
}
