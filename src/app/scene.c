/* The paper's scenes (Sec. 10) as configuration defaults. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "app/config.h"
#include "app/errors.h"
#include "contact/bindings.h"
#include "io/mesh_h5.h"
#include "io/weak_file_shares.h"
#include "mesh/generate.h"
#include "mesh/generate_muscles.h"
#include "mesh/generate_objects.h"
#include "mesh/generate_shapes.h"
#include "mesh/sheet.h"
#include "parallel/transfer.h"
#include "problem/assembly.h"

static void base_defaults(pbng_config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  strcpy(cfg->scene, "none");
  cfg->mesh_source = PBNG_MESH_FILE;
  cfg->res = 16;
  cfg->bar_length = 4;
  cfg->material = PBNG_MATERIAL_NEOHOOKEAN;
  cfg->youngs = 1e5;
  cfg->poisson = 0.3;
  cfg->density = 10;
  pbng_solver_options_defaults(&cfg->solver_opt); /* each method's own (its module), single-level */
  cfg->mode = PBNG_MODE_QUASISTATIC;
  cfg->dt = 0.033;
  cfg->frames = 10;
  cfg->iters = 40;                           /* the paper's fixed iterations (with -rtol 0), and dynamic frames' */
  cfg->rtol = PBNG_RTOL_UNSET;                /* quasistatic: PBNG_RTOL_DEFAULT, at most tolerance_iters a frame */
  cfg->tolerance_iters = PBNG_TOLERANCE_ITERS;
  cfg->residual_every = 0; /* automatic: run.c residual_check_due */
  cfg->weak_stiffness = 1e8;
  cfg->bind_k[0] = cfg->bind_k[1] = 1e8; /* the paper's connective tissue (Sec. 10.2.2): isotropic, k = 1e8 */
  cfg->scale = 1;
  cfg->objects = 40;
  cfg->contact_opt = (pbng_contact_options){.detect = {.distance = 0.0, .sheet_offset = -1, .self = 1, .ccd = 0}, .k_n = 1e8, .k_t = 0.0, .unilateral = 0}; /* the paper's (Sec. 10.2) */
  cfg->contact_every = -1; /* quasistatic: 10, dynamic: 0 (pbng_config_read_contact_options) */
  cfg->secant_guess = -1;  /* -quasistatic_guess: secant for PBNG and Newton frames to a tolerance, previous otherwise (options.c) */
  cfg->contact_backoff = -1; /* on unless -contact_every is given (pbng_config_read_contact_options) */
  cfg->contact_freeze = 10; /* docs/contact.md#quasistatic-frames-in-contact */
  cfg->divergence_limit = 1e6;
  strcpy(cfg->initial_state, "rest");
  cfg->failure_timeout = PBNG_FAILURE_TIMEOUT_DEFAULT;
  cfg->test_fail_rank = -1;
  cfg->plasticity = (pbng_plasticity){.yield = 0.01, .creep = 1.0, .max = 0.5}; /* when -plasticity is asked without values */
  cfg->release_penalty = 1e3; /* 1e6 leaves PBNG a residual floor of ~1e-8 relative: the spring's roundoff */
  strcpy(cfg->test_fail_at, "setup");
  strcpy(cfg->output, "out/pbng.h5");
  cfg->coarsen = pbng_coarsen_defaults();
  /* sheets: a cloth-like isotropic membrane (E h = 1000 N/m, areal mass 0.2 kg/m^2) with bending k_b ~ E h^3 / 12 */
  cfg->sheet_opt = (pbng_sheet_options){.youngs = 1e6, .poisson = 0.3, .k_weft = 1e6, .k_warp = 5e5, .k_shear = 2e5, .nu_weft = 0.3, .nu_warp = 0.15,
                                        .thickness = 1e-3, .bending_stiffness = 1e-4, .density = 200, .weft = {1, 0, 0}, .size = 1,
                                        .e_u = {1, 0, 0}, .e_v = {0, 1, 0}};
  /* peridynamic membranes (-sheet_model peridynamic): the stretching model with s0 ~ the membrane's shear modulus
   * E / (2 (1 + nu)) (Psi ~ s0 sum_m (lambda_m - 1)^2 near rest), bending k_b = 0.005 s0 (the seed's projectile sheet) */
  cfg->pd = (pbng_pd_options){.model = PBNG_SHEET_MODEL_FEM, .mat = {.kind = PBNG_PD_STRETCHING, .s0 = 4e5, .s1 = 4e5}, .k_b = 2e3, .thickness = 0,
                                .contact = {.eps = 0.1, .mu = 1.0, .iterations = 10, .rest_exclusion = -1}};
}

/* Sec. 10.1: both ends of the Res-N box clamped, stretched, squeezed and twisted in opposite
 * directions; rho = 10, E = 1e5, nu = 0.3, no gravity, quasistatic. */
static PetscErrorCode scene_box_stretch_twist(pbng_config *cfg)
{
  const double left[6] = {0, 0, 0, 0, 1, 1}, right[6] = {1, 0, 0, 1, 1, 1};
  pbng_motion ml = {.velocity = {-0.5, 0, 0}, .rotation_rate = -1.5, .axis = {1, 0, 0},
                    .center = {0, 0.5, 0.5}, .scale_rate = {0, -0.5, -0.5}};
  pbng_motion mr = ml;

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_RES_BOX;
  cfg->res = 32;
  cfg->fast_multilevel = 1; /* Res-32 to 1e-3: 3.4 s (4 levels, Chebyshev smoother) vs 13 s single-level Chebyshev (docs/options.md) */
  cfg->fast_smoother = PBNG_ACCEL_CHEBYSHEV;
  mr.velocity[0] = 0.5;
  mr.rotation_rate = 1.5;
  mr.center[0] = 1;
  PetscCall(pbng_bc_add_box(&cfg->bcs, "left_end", left, &ml));
  PetscCall(pbng_bc_add_box(&cfg->bcs, "right_end", right, &mr));
  PetscFunctionReturn(0);
}

/* The paper's soft-body setting (Sec. 10.4, 10.5): rho = 10, E = 1000, gravity -9.8 y, the x = 0 side
 * clamped at rest (set name `clamp`). */
static PetscErrorCode soft_body_clamped_at_x0(pbng_config *cfg, const char *clamp)
{
  const double x0_side[6] = {0, 0, 0, 0, 1, 1};

  PetscFunctionBeginUser;
  cfg->youngs = 1000;
  cfg->gravity[1] = -9.8;
  PetscCall(pbng_bc_add_box(&cfg->bcs, clamp, x0_side, NULL));
  PetscFunctionReturn(0);
}

/* Sec. 10.4: a bar with its x = 0 end clamped sags under gravity, quasistatic. */
static PetscErrorCode scene_bar_gravity(pbng_config *cfg)
{
  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_BAR;
  cfg->res = 6;
  cfg->frames = 1;
  cfg->iters = 500;
  cfg->tolerance_iters = 20000; /* plain PBNG reaches 1e-3 in ~19 000 sweeps; the default, multilevel, in ~10 cycles */
  cfg->fast_multilevel = 1;     /* plain smoother: Chebyshev's diverges on the bending bar (docs/multilevel.md) */
  PetscCall(soft_body_clamped_at_x0(cfg, "clamped_end"));
  PetscFunctionReturn(0);
}

/* Sec. 10.5: a Res-16 block with one side clamped falls under gravity and oscillates (backward Euler). */
static PetscErrorCode scene_block_drop_dynamic(pbng_config *cfg)
{
  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_RES_BOX;
  cfg->res = 16;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->frames = 30;
  cfg->iters = 40;
  PetscCall(soft_body_clamped_at_x0(cfg, "clamped_side"));
  PetscFunctionReturn(0);
}

/* Sec. 10.3 (Fig. 4): the upper block clamped at its top, the lower block hanging beneath it by weak
 * constraints of stiffness k = 1e8 (-weak_stiffness) across a one-cell gap; rho = 10, E = 1000,
 * gravity -9.8 y, quasistatic. */
static PetscErrorCode scene_two_blocks_hanging(pbng_config *cfg)
{
  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_STACKED_BLOCKS;
  cfg->res = 6;
  cfg->youngs = 1000;
  cfg->gravity[1] = -9.8;
  cfg->frames = 1;
  cfg->iters = 200;
  PetscCall(pbng_bc_add_group(&cfg->bcs, "clamped_top", "upper_top", NULL));
  PetscFunctionReturn(0);
}

/* Sec. 10.2.1 (Fig. 13): two blocks, one face of each clamped, driven towards each other until they
 * collide; backward Euler, dt = 0.002, rho = 10, E = 1000, contacts with k_n = 1e8, k_t = 0. The blocks
 * are unit cubes of Res-N (8) stacked along y across a gap of one cell (the lower one's bottom face and
 * the upper one's top face clamped, moving at 2.5 towards each other), no gravity. The clamped faces'
 * motion reaches the facing faces as an elastic wave (sqrt(E / rho) = 10: a block's height in 50 frames),
 * so that the facing faces come within the contact distance at frame 44-50: 80 frames show the collision
 * (30, before, ended before it). */
static PetscErrorCode scene_two_blocks_colliding(pbng_config *cfg)
{
  const double bottom[6] = {0, 0, 0, 1, 0, 1};
  const pbng_motion up = {.velocity = {0, 2.5, 0}, .axis = {1, 0, 0}}, down = {.velocity = {0, -2.5, 0}, .axis = {1, 0, 0}};

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_COLLIDING_BLOCKS;
  cfg->res = 8;
  cfg->youngs = 1000;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = 0.002;
  cfg->frames = 80;
  cfg->iters = 40;
  cfg->contact = PETSC_TRUE;
  PetscCall(pbng_bc_add_box(&cfg->bcs, "lower_bottom", bottom, &up));
  PetscCall(pbng_bc_add_group(&cfg->bcs, "upper_top", "upper_top", &down));
  PetscFunctionReturn(0);
}

/* Sec. 10.2.3 (Fig. 12): 40 simple shapes (boxes, balls, cylinders, tori; -objects N) dropped under
 * gravity into a glass box, backward Euler, rho = 10, E = 3000, contacts k_n = 1e8, k_t = 0. The
 * objects sit at the points of a jittered lattice, none touching (mesh/generate_objects.h); the glass
 * box is the container obstacle around the lattice. The paper's time step 0.002 (Sec. 10.2: "detect
 * collision every time step": a detection at each frame start); -scale s refines every object (nodes
 * ~ s^3; docs/contact.md#scenes gives the counts). */
static PetscErrorCode scene_objects_dropping(pbng_config *cfg)
{
  pbng_obstacle *glass = &cfg->contact_opt.detect.obstacle[0];

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_OBJECTS;
  cfg->youngs = 3000;
  cfg->gravity[1] = -9.8;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = 0.002;
  cfg->frames = 500; /* t = 1: the top layer has landed by t ~ 0.65 and the pile has settled */
  cfg->iters = 100;
  cfg->rtol = 1e-6;
  cfg->free_fall_guess = 1; /* a falling object's frame is solved by its first iterate (else ~90 sweeps at -scale 5.22) */
  cfg->contact = PETSC_TRUE;
  glass->kind = PBNG_OBSTACLE_CONTAINER;
  pbng_objects_container(glass->p);
  cfg->contact_opt.detect.nobstacles = 1;
  PetscFunctionReturn(0);
}

#define FOLD_LENGTH 8.0  /* L */
#define FOLD_TURN_TIME 2.0 /* the end face turns by pi in this time, then is held */

/* Self-contact: a bar [0, L] x [0, 1] x [0, 1] (L = 8, res 4) clamped at x = 0 whose x = L end face
 * turns by pi about the z axis through (4.5, 0.7, 0.5) in the first FOLD_TURN_TIME time units and is
 * then held: it lands upside down at x = 1 with y in [0.4, 1.4], 0.6 below the top of the undeformed
 * bar, so the bar folds into a U (a racket: its loop at x ~ 3.7) whose halves press against each other
 * near the ends (contacts within one body, -contact_self). Backward Euler (dt 0.01,
 * 300 frames: the turn and a second held), E = 1e4, rho = 10, no gravity: PBNG's quasistatic frames stall
 * on this slender bar and E = 1000 lets the fold crush elements (docs/contact.md#scenes, measured). */
static PetscErrorCode scene_bar_fold(pbng_config *cfg)
{
  const double end[6] = {FOLD_LENGTH, 0, 0, FOLD_LENGTH, 1, 1}, start[6] = {0, 0, 0, 0, 1, 1};
  const pbng_motion turn = {.axis = {0, 0, 1}, .center = {4.5, 0.7, 0.5}, .rotation_rate = PETSC_PI / FOLD_TURN_TIME, .until = FOLD_TURN_TIME};

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_BAR;
  cfg->bar_length = FOLD_LENGTH;
  cfg->res = 4;
  cfg->youngs = 1e4;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = 0.01;
  cfg->frames = 300;
  cfg->iters = 100;
  cfg->rtol = 1e-6;
  cfg->contact = PETSC_TRUE;
  cfg->contact_opt.detect.self = 1;
  PetscCall(pbng_bc_add_box(&cfg->bcs, "clamped_end", start, NULL));
  PetscCall(pbng_bc_add_box(&cfg->bcs, "turned_end", end, &turn));
  PetscFunctionReturn(0);
}

/* Issue 18, the seed's Fig. 7: a 1 m x 1 m sheet in the x-y plane (-res N vertices per side), its x = 0
 * edge held and its x = 1 edge pulled along +x by 0.2 m over 10 quasistatic frames (20 % stretch, reached at
 * t = 1 and held after); no gravity. The free edges contract laterally by the Poisson effect (-sheet_poisson 0.1 / 0.3 / 0.499). */
static PetscErrorCode scene_cloth_stretch(pbng_config *cfg)
{
  const double left[6] = {0, 0, 0, 0, 1, 0}, right[6] = {1, 0, 0, 1, 1, 0};
  const pbng_motion pull = {.velocity = {0.2, 0, 0}, .axis = {1, 0, 0}, .until = 1.0}; /* then held: dynamic runs settle */

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_SHEET;
  cfg->res = 21;
  cfg->dt = 0.1;
  cfg->frames = 10;
  cfg->iters = 200;
  cfg->fast_multilevel = 1; /* to 1e-3: 0.08 s (3 levels) vs 0.13 s single-level Chebyshev, 0.66 s plain */
  PetscCall(pbng_bc_add_box(&cfg->bcs, "held_edge", left, NULL));
  PetscCall(pbng_bc_add_box(&cfg->bcs, "pulled_edge", right, &pull));
  PetscFunctionReturn(0);
}

/* Issue 18's drape: a horizontal 1 m x 1 m sheet (the x-z plane at y = 0, -res N vertices per side)
 * falls under gravity -9.8 y (backward Euler, dt 0.1 / (res - 1) s: 0.005 at the default res 21, for 1 s;
 * options.c drape_step_for_res) onto (-drape):
 *   sphere  (default) a sphere of radius 0.25 centred 0.3 below the sheet's centre (top 0.05 below it);
 *   table   a table (a solid box obstacle) whose top is 0.05 below the sheet and whose edge runs under
 *           the sheet's middle (x = 0.5): half the sheet hangs over it;
 *   corners no obstacle: the sheet is held at its two corners on z = 0 and swings.
 * The obstacles are contacts (issue 17) of the sheet's vertices, unilateral (the spring model would hold
 * what touched once), k_n 1e4 (the sheet weighs 0.2 kg: a node ~5e-4 N, so ~5e-8 m deep); the sheet
 * collides with itself too (two-sided, kept -contact_thickness apart). docs/cloth.md#the-drape. */
static PetscErrorCode drape_choice(char *choice, size_t len)
{
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(choice, "sphere", len));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-drape", choice, len, &set));
  PetscCheck(!strcmp(choice, "sphere") || !strcmp(choice, "table") || !strcmp(choice, "corners"), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "-drape: unknown \"%s\" (known: sphere, table, corners)", choice);
  PetscFunctionReturn(0);
}

static PetscErrorCode scene_cloth_drape(pbng_config *cfg)
{
  const double corner0[6] = {0, 0, 0, 0, 0, 0}, corner1[6] = {1, 0, 0, 1, 0, 0};
  char drape[16];

  PetscFunctionBeginUser;
  PetscCall(drape_choice(drape, sizeof(drape)));
  cfg->mesh_source = PBNG_MESH_SHEET;
  cfg->res = 21;
  cfg->sheet_opt.e_v[1] = 0, cfg->sheet_opt.e_v[2] = 1; /* the x-z plane */
  cfg->gravity[1] = -9.8;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = 0.01;
  cfg->frames = 100;
  cfg->iters = 100;
  cfg->rtol = 1e-6;
  if (!strcmp(drape, "corners")) {
    PetscCall(pbng_bc_add_box(&cfg->bcs, "corner_a", corner0, NULL));
    PetscCall(pbng_bc_add_box(&cfg->bcs, "corner_b", corner1, NULL));
    PetscFunctionReturn(0);
  }
  const char *obstacle = !strcmp(drape, "sphere") ? "sphere:0.5,-0.3,0.5,0.25" : "box:-1,-1,-1,0.5,-0.05,2";
  PetscCheck(!pbng_obstacle_parse(obstacle, &cfg->contact_opt.detect.obstacle[0]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the drape's obstacle");
  cfg->contact_opt.detect.nobstacles = 1;
  cfg->contact_opt.unilateral = 1;
  cfg->contact_opt.k_n = 1e4;
  cfg->contact = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Issue 18, the seed's Fig. 5: a StVK beam [0, 4] x [0, 1] x [0, 1] (the bar, res 6), its x = 0 end held
 * and its x = 4 end pulled along +x by a constant 100 N shared by the end face's nodes; E = 1000 (the
 * seed's k), nu = 0.3, rho = 10, no gravity; quasistatic, one frame solved to 1e-8 (the seed lets its
 * dynamic simulation come to rest: -mode dynamic with damping, bench/seed_continuum). The total strain
 * at rest is the study's measure. */
static PetscErrorCode scene_beam_pull(pbng_config *cfg)
{
  const double start[6] = {0, 0, 0, 0, 1, 1};

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_BAR;
  cfg->res = 6;
  cfg->material = PBNG_MATERIAL_STVK;
  cfg->youngs = 1000;
  cfg->frames = 1;
  cfg->iters = 5000;
  cfg->rtol = 1e-8;
  cfg->solver_opt.sweep.accel = PBNG_ACCEL_CHEBYSHEV; /* plain PBNG: 5.3e-6 after 5000 sweeps; Chebyshev 1e-8 in ~3 100 */
  cfg->load = (pbng_point_load){.active = 1, .box = {4, 0, 0, 4, 1, 1}, .force = {100, 0, 0}};
  PetscCall(pbng_bc_add_box(&cfg->bcs, "held_end", start, NULL));
  PetscFunctionReturn(0);
}

/* Issue 18, the seed's Fig. 8: an elastoplastic StVK beam [0, 4] x [0, 1] x [0, 1] (the bar, res 6; E = 1e4,
 * nu = 0.3, no gravity), its x = 0 end held, its x = 4 end twisted about the beam's axis by 90 degrees
 * over t in [0, 1] and held there until the release at t = 1.4 (a released set: -bc1_release), then
 * let go; quasistatic frames of 0.2, 12 of them, solved by Newton to 1e-8 (after the release the beam
 * is a cantilever whose soft modes single-level PBNG takes ~10^4 sweeps per frame to settle;
 * -solver pbng -multilevel 3 reaches Newton's answer (5.6e-9) 2.4x sooner: docs/cloth.md). The seed's
 * parameter set (a) as we chose it (its figure gives no values): gamma_yield 0.02, gamma_creep 2 per
 * unit time, gamma_max 0.2 (docs/cloth.md#plasticity). */
static PetscErrorCode scene_plastic_twist(pbng_config *cfg)
{
  const double held[6] = {0, 0, 0, 0, 1, 1}, twisted[6] = {4, 0, 0, 4, 1, 1};
  const pbng_motion twist = {.axis = {1, 0, 0}, .center = {4, 0.5, 0.5}, .rotation_rate = 0.5 * PETSC_PI, .until = 1.0};

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_BAR;
  cfg->res = 6;
  cfg->material = PBNG_MATERIAL_STVK;
  cfg->youngs = 1e4;
  cfg->dt = 0.2;
  cfg->frames = 12;
  cfg->iters = 3000;
  cfg->rtol = 1e-8;
  cfg->atol = 1e-7; /* frames after the release start at equilibrium: 1e-8 of their residual is roundoff */
  cfg->solver_opt.sweep.accel = PBNG_ACCEL_CHEBYSHEV; /* -solver pbng */
  cfg->plastic = PETSC_TRUE;
  cfg->plasticity = (pbng_plasticity){.yield = 0.02, .creep = 2.0, .max = 0.2};
  PetscCall(pbng_bc_add_box(&cfg->bcs, "held_end", held, NULL));
  PetscCall(pbng_bc_add_box(&cfg->bcs, "twisted_end", twisted, &twist));
  PetscCall(pbng_bc_set_release(&cfg->bcs, 1, 1.4));
  PetscFunctionReturn(0);
}

/* Issue 20, the peridynamic seed's Sec. 7.1 (Fig. 10, Table 1 "Twisting Cylinder"): an open cylindrical sheet
 * about the x axis (radius CYL_RADIUS, x in [0, CYL_LENGTH]), its two end rings twisted about the axis in
 * opposite directions at 1 rad/s each (the seed's omega = 1 rad/s), no gravity (Table 1: g x 0), backward
 * Euler. The seed's material: peridynamic membranes (stretching model, Eq. 39) with s0 = 1200, k_b = 0.1 s0,
 * xi = the sheet's thickness 3.2 mm (-sheet_thickness 1.6e-3: Fig. 10 right), solved by SISSM. The seed gives
 * neither the cylinder's size nor its density: its 0.32M vertices and edge lengths 0.0075..0.0108 fit a
 * grid of near-square cells of side ~0.0077 on ~18.7 m^2, i.e. radius x length = 3; we take radius 1 and length 3
 * (800 x 400 vertices at -scale 20) and rho = 1000 kg/m^3 (the seed's Sec. 7.2). Default 40 x 20 vertices
 * (-scale s: round(40 s) rounded up to even around, round(20 s) along). Frames of 0.01 s (the seed's step is
 * 1e-3: -dt 1e-3 -frames 3750), 375 of them: at t = 3.75 s the ends are 7.5 rad = 2.39 pi apart, Fig. 10's
 * "phase difference"; SISSM with Chebyshev, up to 500 iterations a frame to -rtol 1e-6 (docs/peridynamics.md). */
#define CYL_RADIUS 1.0
#define CYL_LENGTH 3.0
#define CYL_AROUND 40
#define CYL_ALONG 20
#define CYL_ITERS 500
#define CYL_RTOL 1e-6

static int is_cylinder(const pbng_config *cfg) { return cfg->mesh_source == PBNG_MESH_SHEET && cfg->sheet_shape == PBNG_SHEET_SHAPE_CYLINDER; }

/* The cylinder's vertices around and along at coarse level k (0: the finest; -scale s): around round(40 s)
 * rounded up to even (>= 4), along round(20 s) (>= 2), each coarser level halving them (around kept even; a level
 * with fewer than 4 around, 2 along or no fewer along than the finer one is not made: pbng_config_coarse_res). */
static void cylinder_counts(const pbng_config *cfg, int k, int64_t *around, int64_t *along)
{
  int64_t m = (int64_t)llround(cfg->scale * CYL_AROUND), n = (int64_t)llround(cfg->scale * CYL_ALONG);
  m = m < 4 ? 4 : m + m % 2, n = n < 2 ? 2 : n;
  for (int j = 0; j < k; ++j) m = m / 2 + (m / 2) % 2, n = (n + 1) / 2;
  *around = m, *along = n;
}

static PetscErrorCode scene_cylinder_twist(pbng_config *cfg)
{
  const double r = CYL_RADIUS, left[6] = {0, -2 * r, -2 * r, 0, 2 * r, 2 * r}, right[6] = {CYL_LENGTH, -2 * r, -2 * r, CYL_LENGTH, 2 * r, 2 * r};
  const pbng_motion back = {.axis = {1, 0, 0}, .center = {0, 0, 0}, .rotation_rate = -1.0};
  const pbng_motion forth = {.axis = {1, 0, 0}, .center = {CYL_LENGTH, 0, 0}, .rotation_rate = 1.0};

  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_SHEET;
  cfg->res = CYL_ALONG; /* only named by the multilevel report's level 0 ("res"): the vertices along at -scale 1 */
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = 0.01;
  cfg->frames = 375;
  cfg->iters = CYL_ITERS;
  cfg->rtol = CYL_RTOL;
  cfg->solver_opt.sissm.chebyshev = 1; /* the seed's acceleration (Sec. 7.4): ~45 % fewer iterations here (-sissm_chebyshev 0: plain) */
  cfg->sheet_opt.thickness = 3.2e-3;
  cfg->sheet_opt.density = 1000;
  cfg->pd.model = PBNG_SHEET_MODEL_PERIDYNAMIC; /* the rest of cfg->pd (its contact step) keeps base_defaults' values */
  cfg->pd.mat = (pbng_pd_material){.kind = PBNG_PD_STRETCHING, .s0 = 1200, .s1 = 1200};
  cfg->pd.k_b = 120;
  cfg->pd.thickness = 0; /* xi = -sheet_thickness */
  PetscCall(pbng_bc_add_box(&cfg->bcs, "left_ring", left, &back));
  PetscCall(pbng_bc_add_box(&cfg->bcs, "right_ring", right, &forth));
  PetscFunctionReturn(0);
}

/* Issue 20, the peridynamic seed's Sec. 7.2 / Fig. 7 (Table 1 "Antependium Drop on Table"): a 1 m x 1 m sheet (the
 * x-z plane at y = 0, TBL_RES x TBL_RES vertices; -scale s: round(20 s) + 1, -scale 10 the seed's 201 x 201 with
 * edges 0.005 / 0.0071) falls under gravity -9.8 y onto a table (a solid box obstacle, top 0.6 m x 0.6 m at
 * y = -0.1, centred under the sheet: 0.2 m hang over each side) with three books on it (boxes, the highest top at
 * y = -0.02), all obstacles of the contact local step (-pd_contact; -pd_obstacle replaces them). Peridynamic
 * membranes (stretching, Eq. 39) s0 = 8000, k_b = 24 (0.003 s0, Fig. 7 upper right; -pd_kb 0 / 24 / 240 / 2400 is
 * Table 1's 0 / 0.003 / 0.03 / 0.3 s0), xi = sheet thickness = contact thickness = 1.4 mm, dhat = 4 xi, rho = 1000;
 * backward Euler dt = 1e-3 (Table 1's h) solved by SISSM with Chebyshev (docs/peridynamics.md). */
#define TBL_ITERS 50 /* a cap: with the barrier in the frame's energy frames in contact end at -rtol within it (measured: 41-50) */
#define TBL_RTOL 1e-6
#define TBL_KAPPA 100.0 /* -pd_contact_kappa (J/m^2): its barrier holds the sheet at 2.4 xi from the books (3.8 xi with 1000), see
                           docs/peridynamics.md#the-barrier-in-the-frames-residual */

/* A scaled square sheet (cloth_on_table), -scale sizing it. */
static int is_table(const pbng_config *cfg) { return cfg->mesh_source == PBNG_MESH_SHEET && cfg->sheet_shape == PBNG_SHEET_SHAPE_SCALED; }

/* Issue 20, the seed's Sec. 7.2 / Fig. 11 (Table 1 "Shooting Panda"): a closed elastic shell (an icosphere of radius
 * PRJ_RADIUS centred PRJ_GAP behind the sheet, level PRJ_LEVEL: 162 vertices; the seed's panda) shot at 15 m/s (+z)
 * into a vertical 1 m x 1 m sheet (the x-y plane at z = 0, x, y in [-0.5, 0.5], PRJ_RES x PRJ_RES vertices) held
 * along its top edge (y = 0.5, set `top_edge`); -scale s: sheet round(20 s) + 1 per side, the shell's level
 * 2 + round(log2 s). Both bodies are one mesh and one material: stretching s0 = 8000 / xi = 1.31e6 Pa (the seed's 8000
 * read per unit area, below; -pd_s0 3.28e5 / 1.31e6 / 6.56e6 with -pd_kb 0.005 s0: Fig. 11's 2000 / 8000 / 40000),
 * k_b = 0.005 s0, xi = thickness = contact thickness = 6.1 mm, dhat = 4 xi, rho = 1000,
 * gravity -9.8 y (Table 1: g x 1.0), h = 5e-4, 200 frames (0.1 s), 20 SISSM iterations a frame; the contact local step
 * (3 gradient steps) between the two bodies (and each with itself). The shell's free nodes start with velocity
 * (0, 0, 15) (cfg->initial_velocity). pbng's s0 is per volume (V_i = thickness x area / 3): the seed's 8000 taken
 * literally (-pd_s0 8000 -pd_kb 40) makes both bodies so soft (wave speed sqrt(s0 / rho) = 2.8 m/s) that the shell
 * drags the sheet along, is crushed, and a ring inverts within ~10 frames; read per unit area (s0 xi = 8000 N/m) the
 * shell bounces off (docs/peridynamics.md#scenes-cloth_on_table-and-projectile_sheet). */
#define PRJ_RES 21
#define PRJ_LEVEL 2
#define PRJ_RADIUS 0.15
#define PRJ_GAP 0.05
#define PRJ_SPEED 15.0
#define PRJ_XI 6.1e-3
#define PRJ_S0 (8000 / PRJ_XI) /* the seed's 8000 read per unit area (N/m): pbng's s0 is per volume */
#define PRJ_ITERS 20              /* SISSM iterations a frame (each followed by the contact local step) */
#define PRJ_CONTACT_ITERATIONS 3 /* the local step's gradient steps (the default 10 costs ~2x; same bounce to ~10 %) */

static int is_projectile(const pbng_config *cfg) { return cfg->mesh_source == PBNG_MESH_SHEET && cfg->sheet_shape == PBNG_SHEET_SHAPE_PROJECTILE; }

/* The sheet's vertices per side of cloth_on_table and projectile_sheet: round(20 s) + 1 (>= 2), -scale s. */
static int scaled_sheet_res(const pbng_config *cfg)
{
  const long n = lround(20 * cfg->scale) + 1;
  return n < 2 ? 2 : (int)n;
}

/* projectile_sheet's icosphere level: 2 + round(log2 s), in 0..7. */
static int projectile_level(const pbng_config *cfg)
{
  const long l = PRJ_LEVEL + lround(log2(cfg->scale));
  return l < 0 ? 0 : l > 7 ? 7 : (int)l;
}

/* The peridynamic, SISSM, contact settings both scenes share (xi the thickness of everything). */
static void seed_contact_scene(pbng_config *cfg, double xi, double s0, double k_b, double dt)
{
  cfg->mesh_source = PBNG_MESH_SHEET;
  cfg->mode = PBNG_MODE_DYNAMIC;
  cfg->dt = dt;
  cfg->gravity[1] = -9.8;
  cfg->solver_opt.sissm.chebyshev = 1;
  cfg->sheet_opt.thickness = xi;
  cfg->sheet_opt.density = 1000;
  cfg->pd.model = PBNG_SHEET_MODEL_PERIDYNAMIC;
  cfg->pd.mat = (pbng_pd_material){.kind = PBNG_PD_STRETCHING, .s0 = s0, .s1 = s0};
  cfg->pd.k_b = k_b;
  cfg->pd.thickness = 0; /* xi = -sheet_thickness */
  cfg->pd.contact.on = 1;
  cfg->pd.contact.thickness = xi;
}

static PetscErrorCode scene_cloth_on_table(pbng_config *cfg)
{
  static const char *const obstacles[] = {"box:0.2,-1,0.2,0.8,-0.1,0.8",         /* the table */
                                          "box:0.28,-0.1,0.3,0.48,-0.06,0.56",   /* a book */
                                          "box:0.55,-0.1,0.26,0.73,-0.05,0.46",  /* a book */
                                          "box:0.57,-0.05,0.29,0.71,-0.02,0.43"}; /* a book on it */

  PetscFunctionBeginUser;
  seed_contact_scene(cfg, 1.4e-3, 8000, 24, 1e-3);
  cfg->res = 21; /* the multilevel report's level 0 only: the size is scaled_sheet_res */
  cfg->sheet_opt.e_v[1] = 0, cfg->sheet_opt.e_v[2] = 1; /* the x-z plane */
  cfg->frames = 400; /* t = 0.4 s */
  cfg->iters = TBL_ITERS;
  cfg->rtol = TBL_RTOL;
  for (int k = 0; k < 4; ++k) PetscCheck(!pbng_obstacle_parse(obstacles[k], &cfg->pd.contact.obstacle[k]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the table's obstacles");
  cfg->pd.contact.nobstacles = 4;
  cfg->pd.contact.kappa = TBL_KAPPA; /* the barrier in the frame's energy: frames in contact end at -rtol (issue 43) */
  PetscFunctionReturn(0);
}

static PetscErrorCode scene_projectile_sheet(pbng_config *cfg)
{
  const double top[6] = {-1, 0.5, -1, 1, 0.5, 1}, c = -(PRJ_RADIUS + PRJ_GAP), r = PRJ_RADIUS * 1.01;
  const double shell[6] = {-r, -r, c - r, r, r, c + r};

  PetscFunctionBeginUser;
  seed_contact_scene(cfg, PRJ_XI, PRJ_S0, 0.005 * PRJ_S0, 5e-4);
  cfg->res = PRJ_RES;
  cfg->sheet_opt.origin[0] = -0.5, cfg->sheet_opt.origin[1] = -0.5; /* the x-y plane at z = 0 (e_u, e_v: x, y) */
  cfg->frames = 200; /* t = 0.1 s */
  cfg->iters = PRJ_ITERS;
  cfg->pd.contact.iterations = PRJ_CONTACT_ITERATIONS;
  cfg->rtol = TBL_RTOL;
  PetscCall(pbng_bc_add_box(&cfg->bcs, "top_edge", top, NULL));
  cfg->initial_velocity_on = 1;
  for (int d = 0; d < 6; ++d) cfg->initial_velocity_box[d] = shell[d];
  cfg->initial_velocity[2] = PRJ_SPEED;
  PetscFunctionReturn(0);
}

/* Issue 41, the PBNG paper's flagship (Sec. 10.2.2, Fig. 1, 2, 10): an upper arm of PBNG_ARM_MUSCLES fusiform muscles
 * around the humerus (mesh/generate_muscles.h), bound to each other by connective tissue (-bind_distance: 0.2 times the
 * cell across a belly, k = 1e8 isotropic; -bind_snap: zero-length bindings between touching surfaces; -bind_apart: none
 * between the two rigid sets) and pressed together by contacts (k_n = 1e8, k_t = 0, -contact_distance the bindings'
 * distance); the bones and the tendons are rigid sets: "upper_arm" held, "forearm" turned about the elbow's axis (z through the origin) by -flexion
 * degrees (90) over t in [0, 1], held after. Corotated, E = 1e5, nu = 0.3, rho = 1000 (the paper's), no gravity,
 * quasistatic frames of 0.1: 10 frames to the full flexion. -scale s refines the mesh (nodes ~ s^3; docs/muscles.md). */
#define ARM_FLEXION 90.0 /* degrees */
#define ARM_FLEXION_TIME 1.0
#define ARM_BIND_FRACTION 0.2     /* the bindings' distance, in cells across a belly */
#define ARM_CONTACT_FRACTION 0.2 /* the contact distance, in cells across a belly: the bindings' (the default, half the mean surface
                                   edge, is ~0.55 of it: records of near-touching neighbours beyond the bound strip drew them
                                   together; at 0.25 the paper-size arm's frame 2 diverged) */

static PetscErrorCode scene_muscles(pbng_config *cfg)
{
  double flexion = ARM_FLEXION, scale = 1;
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-flexion", &flexion, &set));
  PetscCheck(flexion >= 0 && flexion <= 150, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-flexion %g: must be in [0, 150] degrees", flexion);
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-scale", &scale, &set)); /* checked with the other mesh parameters */
  const pbng_motion flex = {.axis = {0, 0, 1}, .center = {0, 0, 0}, .rotation_rate = flexion * PETSC_PI / 180 / ARM_FLEXION_TIME, .until = ARM_FLEXION_TIME};
  cfg->mesh_source = PBNG_MESH_MUSCLES;
  cfg->material = PBNG_MATERIAL_COROTATED;
  cfg->youngs = 1e5;
  cfg->poisson = 0.3;
  cfg->density = 1000;
  cfg->dt = 0.1;
  cfg->frames = 10;
  cfg->contact = PETSC_TRUE;
  const double h = scale > 0 && isfinite(scale) ? pbng_arm_cell_size(scale) : 0;
  cfg->bind_distance = ARM_BIND_FRACTION * h;
  /* no binding between the two rigid sets: a flexor's distal tendon turning with the forearm would tear those to its held
     extensor neighbour's */
  PetscCall(PetscStrncpy(cfg->bind_apart, "upper_arm,forearm", sizeof(cfg->bind_apart)));
  cfg->bind_snap = PETSC_TRUE; /* bound surfaces that touch: zero-length bindings, which do not resist the muscles' turning (with
                                  the rest offsets fixed in space the flexors' turning bindings sheared their elements) */
  cfg->contact_opt.detect.distance = ARM_CONTACT_FRACTION * h;
  PetscCall(pbng_bc_add_group(&cfg->bcs, "upper_arm", "upper_arm", NULL));
  PetscCall(pbng_bc_add_group(&cfg->bcs, "forearm", "forearm", &flex));
  PetscFunctionReturn(0);
}

/* -flexion: read by the scene's defaults; registered here for -help, an error with another scene. */
static PetscErrorCode read_flexion_option(PetscOptionItems *PetscOptionsObject, const pbng_config *cfg, int mine)
{
  PetscReal flexion = ARM_FLEXION;
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-flexion", "muscles: the elbow's flexion at t = 1, degrees (0..150)", NULL, flexion, &flexion, &set));
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-flexion is for -scene muscles (not %s)", cfg->scene);
  PetscFunctionReturn(0);
}

/* A plain Res-N unit box with no boundary conditions: add them with -fix_box / -bcK_*. */
static PetscErrorCode scene_box(pbng_config *cfg)
{
  PetscFunctionBeginUser;
  cfg->mesh_source = PBNG_MESH_RES_BOX;
  PetscFunctionReturn(0);
}

/* cloth_drape on its obstacle (sphere, table: a run with contacts): the step follows -res unless -dt is given,
 * dt = 0.1 / (res - 1) (0.01 s at res 11, 0.005 s at the default 21), and 1 s of frames unless -frames is
 * given (-drape corners keeps 0.01 s and 100 frames). Contacts are detected at frame starts: a vertex
 * must not come from beyond the contact distance d = 0.5 / (res - 1) to within the thickness h = d / 2 in
 * one frame, so dt scales with h (2.5 m/s per frame allowed; the sheet meets the sphere at ~1 m/s). At
 * res 21 with dt 0.01 folds of the sheet passed each other between detections and Newton lost the
 * frames (docs/cloth.md#the-drape). */
static void drape_step_for_res(pbng_config *cfg, PetscBool dt_set, PetscInt *frames, PetscBool frames_set)
{
  if (!cfg->contact || cfg->mode != PBNG_MODE_DYNAMIC || cfg->res < 2 || dt_set) return;
  cfg->dt = 0.1 / (cfg->res - 1);
  if (!frames_set) *frames = (PetscInt)lround(1.0 / cfg->dt);
}

/* -drape: read by the scene's defaults (drape_choice); registered here for -help, an error with another scene. */
static PetscErrorCode read_drape_option(PetscOptionItems *PetscOptionsObject, const pbng_config *cfg, int mine)
{
  char drape[16] = "sphere";
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-drape", "cloth_drape: what the sheet falls on: sphere | table | corners (held at two corners)", NULL, drape, drape,
                               sizeof(drape), &set));
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-drape is for -scene cloth_drape (not %s)", cfg->scene);
  PetscFunctionReturn(0);
}

/* The scenes: the one list of them (-scene's values, -help, the unknown-name message; docs/options.md#scenes is
 * checked against it by tests/test_layering.sh). */
typedef struct {
  const char *name;
  const char *help;                             /* one line: what it is and where it comes from */
  PetscErrorCode (*defaults)(pbng_config *cfg); /* the configuration's defaults (NULL: the base defaults alone) */
  const pbng_solver_ops *solver;                /* its default solver */
  pbng_sheet_shape sheet;                       /* its generated sheet's shape */
  /* its own options (NULL: none); `mine` says whether it is the run's scene */
  PetscErrorCode (*options)(PetscOptionItems *PetscOptionsObject, const pbng_config *cfg, int mine);
  void (*step)(pbng_config *cfg, PetscBool dt_set, PetscInt *frames, PetscBool frames_set); /* its time step once -res is known */
} pbng_scene;

static const pbng_scene scenes[] = {
  {"box_stretch_twist", "a Res-32 box stretched, squeezed and twisted by its ends (the paper's Sec. 10.1)", scene_box_stretch_twist,
   &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"bar_gravity", "a bar clamped at one end sagging under gravity (Sec. 10.4)", scene_bar_gravity, &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE,
   NULL, NULL},
  {"block_drop_dynamic", "a Res-16 block clamped on one side falling and oscillating, backward Euler (Sec. 10.5)", scene_block_drop_dynamic,
   &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"two_blocks_hanging", "a block hanging from another by weak constraints (Sec. 10.3, Fig. 4)", scene_two_blocks_hanging, &pbng_solver_pbng_ops,
   PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"two_blocks_colliding", "two blocks driven into each other, contacts, dynamic (Sec. 10.2.1, Fig. 13)", scene_two_blocks_colliding,
   &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"objects_dropping", "40 boxes, balls, cylinders and tori dropped into a glass box, contacts (Sec. 10.2.3, Fig. 12)", scene_objects_dropping,
   &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"bar_fold", "a bar folded into a U by turning its end, self-contact, dynamic", scene_bar_fold, &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL,
   NULL},
  {"cloth_stretch", "a 1 m sheet stretched 20 %, quasistatic (the continuum seed's Fig. 7)", scene_cloth_stretch, &pbng_solver_pbng_ops,
   PBNG_SHEET_SHAPE_SQUARE, NULL, NULL},
  {"cloth_drape", "a sheet falling onto a sphere, a table or held at two corners (-drape), dynamic", scene_cloth_drape, &pbng_solver_newton_ops,
   PBNG_SHEET_SHAPE_SQUARE, read_drape_option, drape_step_for_res},
  {"beam_pull", "a StVK beam pulled by a 100 N end load (the continuum seed's Fig. 5)", scene_beam_pull, &pbng_solver_pbng_ops,
   PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"plastic_twist", "an elastoplastic beam twisted, held, then released (the continuum seed's Fig. 8)", scene_plastic_twist,
   &pbng_solver_newton_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
  {"cylinder_twist", "an open cylindrical sheet twisted by its end rings, peridynamic membranes (the peridynamic seed's Fig. 10)",
   scene_cylinder_twist, &pbng_solver_sissm_ops, PBNG_SHEET_SHAPE_CYLINDER, NULL, NULL},
  {"cloth_on_table", "a sheet dropped onto a table with books, barrier contact (the peridynamic seed's Fig. 7)", scene_cloth_on_table,
   &pbng_solver_sissm_ops, PBNG_SHEET_SHAPE_SCALED, NULL, NULL},
  {"projectile_sheet", "an elastic shell shot into a hanging sheet, barrier contact (the peridynamic seed's Fig. 11)", scene_projectile_sheet,
   &pbng_solver_sissm_ops, PBNG_SHEET_SHAPE_PROJECTILE, NULL, NULL},
  {"muscles", "an upper arm of 8 muscles bound by connective tissue, with contacts, flexed at the elbow, quasistatic (Sec. 10.2.2, Fig. 1, 10)",
   scene_muscles, &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, read_flexion_option, NULL},
  {"box", "a plain Res-N unit box without boundary sets (add -fix_box, -bcK_*)", scene_box, &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL,
   NULL},
  {"none", "no scene: the mesh comes from -mesh FILE", NULL, &pbng_solver_pbng_ops, PBNG_SHEET_SHAPE_NONE, NULL, NULL},
};
#define NSCENES ((int)(sizeof(scenes) / sizeof(scenes[0])))

static const pbng_scene *find_scene(const char *name)
{
  for (int k = 0; k < NSCENES; ++k)
    if (!strcmp(scenes[k].name, name)) return &scenes[k];
  return NULL;
}

void pbng_scene_names(const char *sep, char *buf, size_t len)
{
  size_t used = 0;
  if (len) buf[0] = 0;
  for (int k = 0; k < NSCENES && used < len; ++k) {
    const int n = snprintf(buf + used, len - used, "%s%s", k ? sep : "", scenes[k].name);
    used += n > 0 ? (size_t)n : 0;
  }
}

PetscErrorCode pbng_scene_print_help(MPI_Comm comm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "Scenes (-scene NAME; docs/options.md#scenes):\n"));
  for (int k = 0; k < NSCENES; ++k)
    PetscCall(PetscPrintf(comm, "  %-22s %s [%s]\n", scenes[k].name, scenes[k].help, scenes[k].solver->name));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_scene_defaults(const char *name, pbng_config *cfg)
{
  const pbng_scene *scene = find_scene(name);
  char known[512];

  PetscFunctionBeginUser;
  pbng_scene_names(", ", known, sizeof(known));
  PetscCheck(scene, PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "-scene: unknown scene \"%s\" (known: %s)", name, known);
  base_defaults(cfg);
  PetscCall(PetscStrncpy(cfg->scene, scene->name, sizeof(cfg->scene)));
  PetscCall(PetscStrncpy(cfg->solver, scene->solver->name, sizeof(cfg->solver)));
  cfg->sheet_shape = scene->sheet;
  if (scene->defaults) PetscCall(scene->defaults(cfg));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_read_scene_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < NSCENES; ++k)
    if (scenes[k].options) PetscCall(scenes[k].options(PetscOptionsObject, cfg, !strcmp(cfg->scene, scenes[k].name)));
  PetscFunctionReturn(0);
}

void pbng_config_scene_step(pbng_config *cfg, PetscBool dt_set, PetscInt *frames, PetscBool frames_set)
{
  const pbng_scene *scene = find_scene(cfg->scene);
  if (scene && scene->step) scene->step(cfg, dt_set, frames, frames_set);
}

PetscErrorCode pbng_config_set_grid_elements(pbng_config *cfg, const char *element, const char *split, MPI_Comm comm)
{
  PetscFunctionBeginUser;
  if (element) {
    const pbng_element_type *t = pbng_element_type_by_name(element);
    PetscCheck(t && (t->shape == PBNG_SHAPE_TETRAHEDRON || t->shape == PBNG_SHAPE_HEXAHEDRON), comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "-element: unknown generated element kind \"%s\" (known: tet4, tet10, tet20, hex8, hex27)", element);
    cfg->elements.kind = t->kind;
  }
  if (split) {
    PetscCheck(!strcmp(split, "five") || !strcmp(split, "six"), comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "-tet_split: unknown split \"%s\" (known: five, six)", split);
    cfg->elements.split = !strcmp(split, "six") ? PBNG_TET_SPLIT_SIX : PBNG_TET_SPLIT_FIVE;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_set_grid_cells(pbng_config *cfg, const char *text, MPI_Comm comm)
{
  const char *p = text;
  int n = 0;

  PetscFunctionBeginUser;
  while (*p) {
    char *end;
    const long v = strtol(p, &end, 10);
    PetscCheck(end != p && (*end == ',' || *end == 0) && v >= INT_MIN && v <= INT_MAX, comm, PETSC_ERR_ARG_WRONG,
               "-cells \"%s\": value %d is not an integer (need NX,NY,NZ)", text, n + 1);
    PetscCheck(n < 3, comm, PETSC_ERR_ARG_WRONG, "-cells \"%s\": more than three values (need NX,NY,NZ)", text);
    cfg->cells[n++] = (int)v;
    p = *end ? end + 1 : end;
    PetscCheck(*end == 0 || *p, comm, PETSC_ERR_ARG_WRONG, "-cells \"%s\": ends with a comma (need NX,NY,NZ)", text);
  }
  PetscCheck(n == 3, comm, PETSC_ERR_ARG_WRONG, "-cells \"%s\": %d value%s (need three: NX,NY,NZ)", text, n, n == 1 ? "" : "s");
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_check_mesh_parameters(const pbng_config *cfg, const pbng_mesh_options_given *given, MPI_Comm comm)
{
  const PetscBool res_set = given->res, bar_length_set = given->bar_length, weak_stiffness_set = given->weak_stiffness;
  PetscFunctionBeginUser;
  PetscCheck(cfg->res >= 2 && cfg->res <= 4096, comm, PETSC_ERR_ARG_OUTOFRANGE, "-res %d: must be 2..4096", cfg->res);
  PetscCheck(cfg->bar_length > 0 && cfg->bar_length <= 1e3, comm, PETSC_ERR_ARG_OUTOFRANGE, "-bar_length %g: must be in (0, 1000]", cfg->bar_length);
  PetscCheck(cfg->weak_stiffness > 0 && isfinite(cfg->weak_stiffness), comm, PETSC_ERR_ARG_OUTOFRANGE, "-weak_stiffness %g: must be > 0",
             cfg->weak_stiffness);
  PetscCheck(!res_set || cfg->mesh_source != PBNG_MESH_FILE, comm, PETSC_ERR_ARG_INCOMP,
             "-res %d sizes a generated scene mesh, but the mesh comes from -mesh %s: leave out -res (the file fixes the resolution)", cfg->res,
             cfg->mesh_file);
  PetscCheck(!res_set || cfg->mesh_source != PBNG_MESH_OBJECTS, comm, PETSC_ERR_ARG_INCOMP,
             "-res does not size the objects of -scene objects_dropping: use -scale");
  PetscCheck(!res_set || !is_cylinder(cfg), comm, PETSC_ERR_ARG_INCOMP, "-res does not size the cylinder of -scene cylinder_twist: use -scale");
  PetscCheck(!res_set || cfg->mesh_source != PBNG_MESH_MUSCLES, comm, PETSC_ERR_ARG_INCOMP, "-res does not size the arm of -scene muscles: use -scale");
  PetscCheck(!res_set || (!is_table(cfg) && !is_projectile(cfg)), comm, PETSC_ERR_ARG_INCOMP, "-res does not size the sheet of -scene %s: use -scale",
             cfg->scene);
  PetscCheck(!bar_length_set || (cfg->mesh_source == PBNG_MESH_BAR && strcmp(cfg->scene, "bar_fold")), comm, PETSC_ERR_ARG_INCOMP,
             "-bar_length is for the generated bar of -scene bar_gravity (without -mesh); bar_fold's motion is made for its length %g",
             FOLD_LENGTH);
  PetscCheck(cfg->scale > 0 && cfg->scale <= 32, comm, PETSC_ERR_ARG_OUTOFRANGE, "-scale %g: must be in (0, 32]", cfg->scale);
  PetscCheck(cfg->objects >= 1 && cfg->objects <= PBNG_OBJECTS_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-objects %d: must be 1..%d", cfg->objects,
             PBNG_OBJECTS_MAX);
  PetscCheck(!given->scale || cfg->mesh_source == PBNG_MESH_OBJECTS || cfg->mesh_source == PBNG_MESH_MUSCLES || is_cylinder(cfg) || is_table(cfg) || is_projectile(cfg), comm, PETSC_ERR_ARG_INCOMP,
             "-scale is for the generated objects of -scene objects_dropping, the arm of -scene muscles, the cylinder of -scene cylinder_twist "
             "and the sheets of -scenes cloth_on_table and projectile_sheet (without -mesh)");
  PetscCheck(!given->objects || cfg->mesh_source == PBNG_MESH_OBJECTS, comm, PETSC_ERR_ARG_INCOMP,
             "-objects is for the generated objects of -scene objects_dropping (without -mesh)");
  PetscCheck(!weak_stiffness_set || cfg->mesh_source == PBNG_MESH_STACKED_BLOCKS, comm, PETSC_ERR_ARG_INCOMP,
             "-weak_stiffness is for the generated blocks of -scene two_blocks_hanging (without -mesh); a -weak file gives each "
             "constraint its own stiffness");
  PetscCheck(!given->element || cfg->mesh_source == PBNG_MESH_RES_BOX || cfg->mesh_source == PBNG_MESH_BAR, comm, PETSC_ERR_ARG_INCOMP,
             "-element is for the generated box and bar (scenes box, box_stretch_twist, bar_gravity, block_drop_dynamic without -mesh); a "
             "mesh file gives its own element kind");
  PetscCheck(!given->cells || cfg->mesh_source == PBNG_MESH_RES_BOX || cfg->mesh_source == PBNG_MESH_BAR, comm, PETSC_ERR_ARG_INCOMP,
             "-cells is for the generated box and bar");
  PetscCheck(!given->cells || !given->res, comm, PETSC_ERR_ARG_INCOMP, "-cells and -res both size the generated mesh: give one");
  for (int d = 0; d < 3 && given->cells; ++d)
    PetscCheck(cfg->cells[d] >= 1 && cfg->cells[d] <= 4095, comm, PETSC_ERR_ARG_OUTOFRANGE, "-cells: %d cells along axis %d (need 1..4095, three values)",
               cfg->cells[d], d);
  PetscCheck(!given->tet_split || ((cfg->mesh_source == PBNG_MESH_RES_BOX || cfg->mesh_source == PBNG_MESH_BAR) &&
                                   pbng_element_type_get(cfg->elements.kind)->shape == PBNG_SHAPE_TETRAHEDRON),
             comm, PETSC_ERR_ARG_INCOMP, "-tet_split is for generated tetrahedra (the box and bar with -element tet4, tet10 or tet20)");
  PetscFunctionReturn(0);
}

/* n nodes per axis after k halvings (r -> (r + 1) / 2), after the p-coarsening of a high-order kind. */
static int coarse_nodes(const pbng_config *cfg, int n, int k)
{
  if (k > 0 && pbng_element_type_get(cfg->elements.kind)->order > 1) --k; /* p-coarsening first */
  for (int j = 0; j < k; ++j) n = (n + 1) / 2;
  return n;
}

void pbng_config_coarse_cells(const pbng_config *cfg, int k, int cells[3])
{
  for (int d = 0; d < 3; ++d) cells[d] = coarse_nodes(cfg, cfg->cells[d] + 1, k) - 1;
}

/* Level k's box or bar (0: the finest): -res's Res-N unit cube or bar (pbng_generate_res_box, pbng_generate_bar), or
 * -cells' grid (coarse_nodes(cells[d] + 1, k) corner vertices along axis d); the finest of the configured elements,
 * the coarse levels of their linear kind (tet4 of the same split, hex8). 0 for the other meshes. */
static int grid_of_level(const pbng_config *cfg, int k, pbng_grid *g)
{
  const int bar = cfg->mesh_source == PBNG_MESH_BAR;
  if (!bar && cfg->mesh_source != PBNG_MESH_RES_BOX) return 0;
  memset(g, 0, sizeof(*g));
  g->el = cfg->elements;
  if (k > 0) g->el.kind = pbng_element_corner_type(pbng_element_type_get(cfg->elements.kind))->kind;
  g->hi[0] = bar ? cfg->bar_length : 1.0, g->hi[1] = g->hi[2] = 1.0;
  if (cfg->cells[0] > 0) {
    int cells[3];
    pbng_config_coarse_cells(cfg, k, cells);
    for (int d = 0; d < 3; ++d) g->n[d] = cells[d] + 1;
    snprintf(g->source, sizeof(g->source), "%s of %dx%dx%d cells (%s)", bar ? "bar" : "box", cells[0], cells[1], cells[2],
             pbng_element_type_get(g->el.kind)->name);
    return 1;
  }
  const int res = k == 0 ? cfg->res : pbng_config_coarse_res(cfg, k);
  const int64_t along = (int64_t)llround(cfg->bar_length * (res - 1)); /* the bar: res vertices across */
  g->n[0] = bar ? (along > 0 ? along + 1 : 2) : res, g->n[1] = g->n[2] = res;
  if (bar) snprintf(g->source, sizeof(g->source), "bar (res %d)", res);
  else snprintf(g->source, sizeof(g->source), "Res-%d box", res);
  return 1;
}

/* A generated box or bar as pbng_generate_grid makes it, named as the scene names it. */
static PetscErrorCode generate_grid(const pbng_grid *g, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(g->n, g->lo, g->hi, &g->el, mesh));
  PetscCall(PetscStrncpy(mesh->source, g->source, sizeof(mesh->source)));
  PetscFunctionReturn(0);
}

/* Why -partitioner ptscotch cannot partition the run's weak constraints, or "". */
static void ptscotch_weak_refusal(const pbng_config *cfg, char *why, size_t len)
{
  why[0] = 0;
  if (cfg->bind_distance > 0 && cfg->bind_snap)
    snprintf(why, len, "it does not snap bound vertices (-bind_snap: the moves go body after body over the whole mesh); leave out -bind_snap");
}

const char *pbng_config_ptscotch_file(const pbng_config *cfg, int k, char *why, size_t len)
{
  why[0] = 0;
  if (cfg->mesh_source != PBNG_MESH_FILE) return NULL;
  if (cfg->solver_opt.multilevel > 1 + cfg->nmesh_levels) {
    snprintf(why, len, "-multilevel %d with -mesh %s: its coarse levels are coarsened from the whole mesh on one process; give them as files "
                       "(pbng -mesh_levels: HDF5 meshes or partitioned files) or use -multilevel 1",
             cfg->solver_opt.multilevel, cfg->mesh_file);
    return NULL;
  }
  ptscotch_weak_refusal(cfg, why, len);
  return k == 0 ? cfg->mesh_file : cfg->mesh_levels[k - 1];
}

/* Level k's stacked blocks (0: the finest) as pbng_config_build_mesh and pbng_config_build_coarse_mesh make them: the
 * finest bound (-weak_stiffness) for two_blocks_hanging, the coarse ones at the finest level's gap and unbound (their
 * bindings carried from the finest). 0 for the other meshes. */
static int stacked_blocks_of_level(const pbng_config *cfg, int k, pbng_grid *g)
{
  if (cfg->mesh_source != PBNG_MESH_STACKED_BLOCKS && cfg->mesh_source != PBNG_MESH_COLLIDING_BLOCKS) return 0;
  const int res = k == 0 ? cfg->res : pbng_config_coarse_res(cfg, k);
  memset(g, 0, sizeof(*g));
  for (int d = 0; d < 3; ++d) g->n[d] = res;
  g->el = (pbng_grid_elements){PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};
  g->stacked = 1, g->gap = k == 0 ? 0.0 : 1.0 / (cfg->res - 1);
  g->bind_k = k == 0 && cfg->mesh_source == PBNG_MESH_STACKED_BLOCKS ? cfg->weak_stiffness : 0.0;
  snprintf(g->source, sizeof(g->source), "stacked blocks (res %d)", res);
  return 1;
}

int pbng_config_ptscotch_grid(const pbng_config *cfg, int k, pbng_grid *g, char *why, size_t len)
{
  static const char *what[] = {[PBNG_MESH_FILE] = "mesh files (-mesh)", [PBNG_MESH_OBJECTS] = "the objects of objects_dropping",
                               [PBNG_MESH_SHEET] = "sheets", [PBNG_MESH_MUSCLES] = "the muscles' arm"};
  ptscotch_weak_refusal(cfg, why, len);
  if (!grid_of_level(cfg, k, g) && !stacked_blocks_of_level(cfg, k, g))
    snprintf(why, len, "it partitions generated boxes, bars and stacked blocks and HDF5 mesh files only, not %s", what[cfg->mesh_source]);
  else if (!why[0]) {
    char kind[256];
    if (!pbng_grid_slice_supported(&g->el, kind, sizeof(kind))) snprintf(why, len, "%s", kind);
  }
  return !why[0];
}

/* -bind_distance and the options that shape the bindings. */
static pbng_binding_options binding_options(const pbng_config *cfg)
{
  return (pbng_binding_options){.distance = cfg->bind_distance, .k_n = cfg->bind_k[0], .k_t = cfg->bind_k[1], .apart = cfg->bind_apart, .snap = cfg->bind_snap};
}

/* "bindings: N weak constraints between bodies within d of each other ...", printed once on comm. */
static PetscErrorCode report_bindings(MPI_Comm comm, const pbng_config *cfg, const pbng_binding_stats *st)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "bindings: %" PRId64 " weak constraints between bodies within %g of each other (-bind_distance)", st->bound, cfg->bind_distance));
  if (cfg->bind_apart[0]) PetscCall(PetscPrintf(comm, ", %" PRId64 " pairs left unbound between the sets %s (-bind_apart)", st->separated, cfg->bind_apart));
  if (cfg->bind_snap) PetscCall(PetscPrintf(comm, ", vertices moved onto the surfaces they bind to by at most %.3g (-bind_snap)", st->moved));
  PetscCall(PetscPrintf(comm, "\n"));
  PetscFunctionReturn(0);
}

/* Level k's slice of this process (no weak constraints yet). */
static PetscErrorCode level_slice(MPI_Comm comm, const pbng_config *cfg, int k, pbng_mesh_slice *s, int *read)
{
  pbng_grid grid;
  char why[PETSC_MAX_PATH_LEN + 512];
  int rank, size;

  PetscFunctionBeginUser;
  const char *file = pbng_config_ptscotch_file(cfg, k, why, sizeof(why));
  PetscCheck(!why[0], comm, PETSC_ERR_SUP, "-partitioner ptscotch: %s; use -partitioner metis", why);
  *read = file != NULL;
  if (file) PetscFunctionReturn(pbng_mesh_h5_read_slice(comm, file, s));
  PetscCheck(pbng_config_ptscotch_grid(cfg, k, &grid, why, sizeof(why)), comm, PETSC_ERR_SUP, "-partitioner ptscotch: %s; use -partitioner metis", why);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(pbng_grid_slice_of_process(&grid, rank, size, s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_level_slice(MPI_Comm comm, const pbng_config *cfg, int k, const pbng_weak_springs *carried, const char *name,
                                       pbng_mesh_slice *s, int *read)
{
  PetscFunctionBeginUser;
  PetscCall(level_slice(comm, cfg, k, s, read));
  PetscErrorCode ierr = 0;
  if (k == 0 && cfg->weak_file[0]) ierr = pbng_slice_read_weak_file(comm, cfg->weak_file, s); /* as pbng_config_build_mesh adds them */
  if (!ierr && k == 0 && cfg->bind_distance > 0) {
    const pbng_binding_options o = binding_options(cfg);
    pbng_binding_stats st;
    ierr = pbng_slice_bind_bodies(comm, s, &o, &st);
    if (!ierr) ierr = report_bindings(comm, cfg, &st);
  }
  if (k > 0 && carried) ierr = pbng_slice_add_weak_springs(comm, s, name, carried->n, carried->s, PBNG_TRANSFER_RADIUS);
  if (ierr) PetscCall(pbng_mesh_slice_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The generated sheet: res x res vertices (-res, or a coarse level's) spanning -sheet_size along the
 * scene's e_u and e_v, or cylinder_twist's cylinder at coarse level k (cylinder_counts), with its bending
 * stencils when k_b > 0. */
static PetscErrorCode generate_sheet(const pbng_config *cfg, int res, int k, pbng_mesh *mesh)
{
  const pbng_sheet_options *o = &cfg->sheet_opt;
  pbng_sheet sheet;
  int64_t around = 0, along = 0;

  PetscFunctionBeginUser;
  if (is_cylinder(cfg)) {
    cylinder_counts(cfg, k, &around, &along);
    PetscCall(pbng_sheet_cylinder(CYL_RADIUS, CYL_LENGTH, around, along, &sheet));
  } else if (is_projectile(cfg)) { /* the sheet, then the shell (one mesh of two bodies) */
    const double center[3] = {0, 0, -(PRJ_RADIUS + PRJ_GAP)};
    pbng_sheet plane, ball;
    res = k == 0 ? scaled_sheet_res(cfg) : res;
    PetscCall(pbng_sheet_grid(res, res, o->size, o->size, o->origin, o->e_u, o->e_v, &plane));
    PetscErrorCode ierr = pbng_sheet_icosphere(PRJ_RADIUS, center, projectile_level(cfg), &ball);
    if (!ierr) ierr = pbng_sheet_merge(&plane, &ball, &sheet);
    if (!ierr) ierr = pbng_sheet_destroy(&ball);
    PetscCall(pbng_sheet_destroy(&plane));
    PetscCall(ierr);
  } else {
    if (is_table(cfg) && k == 0) res = scaled_sheet_res(cfg);
    PetscCall(pbng_sheet_grid(res, res, o->size, o->size, o->origin, o->e_u, o->e_v, &sheet));
  }
  PetscErrorCode ierr = pbng_mesh_from_sheet(&sheet, o->bending_stiffness > 0, mesh);
  PetscCall(pbng_sheet_destroy(&sheet));
  PetscCall(ierr);
  if (around) snprintf(mesh->source, sizeof(mesh->source), "cylinder sheet of %" PRId64 " x %" PRId64 " vertices (around x along)", around, along);
  else if (is_projectile(cfg))
    snprintf(mesh->source, sizeof(mesh->source), "sheet of %dx%d vertices and an icosphere of level %d", res, res, projectile_level(cfg));
  else snprintf(mesh->source, sizeof(mesh->source), "sheet of %dx%d vertices", res, res);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_config_build_mesh(const pbng_config *cfg, pbng_mesh *mesh)
{
  pbng_grid grid;

  PetscFunctionBeginUser;
  if (grid_of_level(cfg, 0, &grid)) PetscCall(generate_grid(&grid, mesh));
  else switch (cfg->mesh_source) {
  case PBNG_MESH_RES_BOX:
  case PBNG_MESH_BAR: break; /* grids */
  case PBNG_MESH_STACKED_BLOCKS: PetscCall(pbng_generate_stacked_blocks(cfg->res, 0.0, cfg->weak_stiffness, mesh)); break;
  case PBNG_MESH_COLLIDING_BLOCKS: PetscCall(pbng_generate_stacked_blocks(cfg->res, 0.0, 0.0, mesh)); break; /* a gap of one cell, unbound */
  case PBNG_MESH_OBJECTS: PetscCall(pbng_generate_objects(cfg->objects, cfg->scale, mesh)); break;
  case PBNG_MESH_MUSCLES: PetscCall(pbng_generate_muscles(cfg->scale, mesh)); break;
  case PBNG_MESH_FILE: PetscCall(pbng_mesh_file_read(cfg->mesh_file, mesh)); break;
  case PBNG_MESH_SHEET: PetscCall(generate_sheet(cfg, cfg->res, 0, mesh)); break;
  }
  if (cfg->sheet_opt.bending_stiffness > 0) PetscCall(pbng_mesh_add_bending_stencils(mesh)); /* a file's triangles: their stencils */
  if (cfg->pd.model == PBNG_SHEET_MODEL_CLOTH6) { /* in place of tri3 and bend4 */
    PetscCheck(!cfg->contact, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "-sheet_model cloth6 with -contact: contacts see the sheets' tri3 triangles, which the cloth6 stencils replace (docs/cloth.md)");
    PetscCall(pbng_mesh_cloth_stencils(mesh));
  }
  if (cfg->weak_file[0]) PetscCall(pbng_mesh_read_weak_constraints(cfg->weak_file, mesh));
  if (cfg->bind_distance > 0) {
    const pbng_binding_options o = binding_options(cfg);
    pbng_binding_stats st;
    PetscCall(pbng_mesh_bind_bodies(mesh, &o, &st));
    PetscCall(report_bindings(PETSC_COMM_SELF, cfg, &st));
  }
  PetscFunctionReturn(0);
}

int pbng_config_coarsens_fine_mesh(const pbng_config *cfg)
{
  return (cfg->mesh_source == PBNG_MESH_FILE && cfg->nmesh_levels == 0) || cfg->mesh_source == PBNG_MESH_MUSCLES;
}

int pbng_config_coarse_res(const pbng_config *cfg, int k)
{
  int n = is_table(cfg) || is_projectile(cfg) ? scaled_sheet_res(cfg) : cfg->res;
  if (cfg->mesh_source == PBNG_MESH_OBJECTS || cfg->mesh_source == PBNG_MESH_MUSCLES) return 0; /* no generated coarse levels */
  if (is_cylinder(cfg)) { /* the cylinder's vertices along (around halves alike: cylinder_counts) */
    int64_t around, along, finer_around, finer_along;
    cylinder_counts(cfg, k, &around, &along);
    if (k == 0) return (int)along;
    cylinder_counts(cfg, k - 1, &finer_around, &finer_along);
    return around >= 4 && along >= 2 && along < finer_along ? (int)along : 0;
  }
  if (cfg->mesh_source == PBNG_MESH_SHEET) { /* h-coarsening only (-element is for volumes): res -> (res + 1) / 2 */
    for (int j = 0; j < k; ++j) n = (n + 1) / 2;
    return n >= 2 ? n : 0;
  }
  if (cfg->cells[0] > 0) /* -cells: the smallest axis decides */
    for (int d = 0; d < 3; ++d) n = d == 0 || cfg->cells[d] + 1 < n ? cfg->cells[d] + 1 : n;
  n = coarse_nodes(cfg, n, k);
  return n >= 2 ? coarse_nodes(cfg, cfg->res, k) : 0;
}

PetscErrorCode pbng_config_build_coarse_mesh(const pbng_config *cfg, int k, pbng_mesh *mesh, int *made)
{
  const int res = pbng_config_coarse_res(cfg, k);
  pbng_grid grid;

  PetscFunctionBeginUser;
  *made = 1;
  PetscCheck(pbng_config_coarsens_fine_mesh(cfg) || cfg->mesh_source == PBNG_MESH_FILE || res > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "coarse level %d of a generated mesh with -res %d would have fewer than 2 nodes per axis", k, cfg->res); /* checked with the options */
  if (grid_of_level(cfg, k, &grid)) { /* the coarse levels' elements: the linear kind of the fine one's shape */
    PetscCall(generate_grid(&grid, mesh));
    PetscFunctionReturn(0);
  }
  switch (cfg->mesh_source) {
  case PBNG_MESH_RES_BOX:
  case PBNG_MESH_BAR: break; /* grids */
  case PBNG_MESH_STACKED_BLOCKS: /* the fine level's gap; the bindings are the fine ones carried over (parallel/weak_levels.h) */
  case PBNG_MESH_COLLIDING_BLOCKS:
    PetscCall(pbng_generate_stacked_blocks(res, 1.0 / (cfg->res - 1), 0.0, mesh));
    break;
  case PBNG_MESH_FILE:
    if (k <= cfg->nmesh_levels) PetscCall(pbng_mesh_file_read(cfg->mesh_levels[k - 1], mesh));
    else *made = 0;
    if (k <= cfg->nmesh_levels && cfg->sheet_opt.bending_stiffness > 0) PetscCall(pbng_mesh_add_bending_stencils(mesh)); /* as the fine file's */
    break;
  case PBNG_MESH_OBJECTS: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "the objects of -scene objects_dropping have no coarse levels"); /* refused with the options */
  case PBNG_MESH_MUSCLES: *made = 0; break; /* coarsened from the fine arm (run_levels.c) */
  case PBNG_MESH_SHEET: /* the same sheet at a coarser res, its own stencils (docs/sheets_multilevel.md) */
    PetscCall(generate_sheet(cfg, res, k, mesh));
    break;
  }
  PetscFunctionReturn(0);
}
