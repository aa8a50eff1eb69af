/* Everything a pbng run is configured with: a scene's defaults, overridden by explicit options. */
#ifndef PBNG_APP_CONFIG_H
#define PBNG_APP_CONFIG_H

#include "core/plasticity.h"
#include <petscsys.h>
#include "core/material.h"
#include "core/sheet_material.h"
#include "problem/pd_terms.h"
#include "mesh/boundary.h"
#include "mesh/coarsen.h"
#include "mesh/generate.h"
#include "mesh/generate_slice.h"
#include <mpi.h>
#include "mesh/mesh.h"
#include "parallel/weak_levels.h"
#include "problem/problem.h"
#include "methods/solver.h"

typedef enum {
  PBNG_MESH_RES_BOX,
  PBNG_MESH_BAR,
  PBNG_MESH_STACKED_BLOCKS,
  PBNG_MESH_FILE,
  PBNG_MESH_COLLIDING_BLOCKS,
  PBNG_MESH_OBJECTS,
  PBNG_MESH_SHEET, /* a generated sheet (issue 18): its shape is the scene's (pbng_sheet_shape) */
  PBNG_MESH_MUSCLES /* the muscles scene's arm (mesh/generate_muscles.h): coarse levels made from it as from a file */
} pbng_mesh_source;

/* The shape of a scene's generated sheet (PBNG_MESH_SHEET). */
typedef enum {
  PBNG_SHEET_SHAPE_NONE,       /* the scene generates no sheet */
  PBNG_SHEET_SHAPE_SQUARE,     /* -res x -res vertices spanning -sheet_size */
  PBNG_SHEET_SHAPE_SCALED,     /* a square of round(20 s) + 1 vertices per side (-scale s) */
  PBNG_SHEET_SHAPE_PROJECTILE, /* the scaled square and an icosphere shell behind it (one mesh, two bodies) */
  PBNG_SHEET_SHAPE_CYLINDER    /* an open cylinder (-scale s: vertices around and along) */
} pbng_sheet_shape;

/* The sheet options (-sheet_*, docs/cloth.md#options): the membrane law and its parameters, thickness,
 * bending stiffness, weft axis and density of every tri3/bend4 term; the generated sheet's size and plane. */
typedef struct {
  int orthotropic;                                   /* -sheet_membrane orthotropic (else isotropic) */
  double youngs, poisson;                            /* isotropic: -sheet_youngs, -sheet_poisson */
  double k_weft, k_warp, k_shear, nu_weft, nu_warp;  /* orthotropic: -sheet_k_weft ... -sheet_nu_warp */
  double thickness, bending_stiffness, density, weft[3];
  double size;                                       /* -sheet_size: the generated sheet's side */
  double stiffening;                                 /* -sheet_stiffening: -sheet_model cloth6's beta (core/cloth6.h) */
  double origin[3], e_u[3], e_v[3];                  /* the generated sheet: origin + s e_u + t e_v (scene's choice) */
} pbng_sheet_options;

/* A physical group of sheets with its own material (-sheetK_group NAME and -sheetK_* overrides of the
 * -sheet_* values; docs/cloth.md#sheet-materials-per-group). */
#define PBNG_MAX_SHEET_GROUPS 8
typedef struct {
  int k;                    /* its K in -sheetK_* */
  char name[64];            /* the node set (Gmsh physical group) whose triangles it takes */
  pbng_sheet_options opt;
  pbng_sheet_material mat;
} pbng_sheet_group;

#define PBNG_MAX_LEVELS 10 /* -multilevel: levels including the finest */
/* Coarse levels made from a mesh file (run_levels.c; docs/multilevel.md#automatic-levels): -multilevel auto coarsens
 * until the coarsest level has at most PBNG_AUTO_COARSEST_NODES nodes (at least one coarse level); a coarsening must
 * reduce the nodes by PBNG_COARSEN_MIN_RATIO, with the relaxed collapse limits when the run's do not reach it. */
#define PBNG_AUTO_COARSEST_NODES 500
#define PBNG_COARSEN_MIN_RATIO 1.5
#define PBNG_COARSEN_RELAXED_QUALITY 0.03
#define PBNG_COARSEN_RELAXED_ANGLE 60.0
#define PBNG_USER_BCS 8     /* -bcK_* boundary sets: K = 0..7 */

/* The default tolerance of quasistatic frames (issue 21, docs/options.md#the-default-tolerance-and-solver) */
#define PBNG_RTOL_UNSET (-1.0)       /* a scene that names no tolerance: PBNG_RTOL_DEFAULT in quasistatic mode, 0 in dynamic */
#define PBNG_RTOL_DEFAULT 1e-3       /* relative residual a quasistatic frame stops at */
#define PBNG_GUESS_ENERGY_FACTOR 4   /* -quasistatic_guess secant: a guess with more than this times the energy at x_k is declined */
#define PBNG_ATOL_FLOOR_STRAIN 1e-10 /* the absolute floor: the force E L^2 s of a strain s over the body's size L */
#define PBNG_TOLERANCE_ITERS 1000    /* the -iters cap with the default tolerance (scenes may raise it) */
#define PBNG_RESIDUAL_EVERY_MAX 10   /* sweeps between two residual checks at most (run.c residual_check_due) */

typedef struct {
  char scene[64];
  pbng_mesh_source mesh_source;
  pbng_sheet_shape sheet_shape; /* the generated sheet's (the scene's); PBNG_SHEET_SHAPE_NONE without one */
  int res;
  double bar_length;   /* bar scene: length along x (cross-section 1 x 1) */
  pbng_grid_elements elements; /* -element, -tet_split: the generated box's and bar's elements */
  int cells[3];                /* -cells NX,NY,NZ: the generated box's or bar's cells per axis (0: from -res) */
  char mesh_file[PETSC_MAX_PATH_LEN];
  int ptscotch; /* -partitioner ptscotch: the ranks generate and partition a generated grid together (parallel/distributed_partition.h) */
  char weak_file[PETSC_MAX_PATH_LEN]; /* -weak: weak constraints to add (docs/weak_constraints.md) */
  double bind_distance;               /* -bind_distance d: connective tissue between bodies within d at rest (0: none; contact/bindings.h) */
  double bind_k[2];                   /* -bind_stiffness k or k_n,k_t of those bindings */
  char bind_apart[256];               /* -bind_apart SET,SET,..: nodes of two different of these sets are not bound ("": none) */
  PetscBool bind_snap;                /* -bind_snap: bound vertices moved onto the surfaces they bind to, zero-length bindings */
  int nmesh_levels;                   /* -mesh_levels C1,C2,...: coarser meshes of -mesh, finest first */
  pbng_coarsen_options coarsen;       /* -multilevel with -mesh alone: how its coarse meshes are made */
  char mesh_levels[PBNG_MAX_LEVELS - 1][PETSC_MAX_PATH_LEN];
  double weak_stiffness;              /* two_blocks_hanging: stiffness k of the bindings */
  double scale;                       /* -scale s: objects_dropping's cells per object size grow by s (nodes by ~s^3) */
  int objects;                        /* -objects N: objects_dropping's object count */
  pbng_bc_list bcs;
  pbng_material_kind material;
  double youngs, poisson, density, gravity[3];
  pbng_point_load load;               /* -load_box, -load_force: a constant force shared by the nodes of a box */
  PetscBool plastic;                  /* -plasticity (or any -plastic_*): elastoplastic StVK (seed Sec. 4.2) */
  pbng_plasticity plasticity;         /* -plastic_yield, -plastic_creep, -plastic_max */
  double release_penalty;             /* -release_penalty: a released set's spring over its nodes' own stiffness */
  char solver[32];
  pbng_solver_options solver_opt;
  pbng_mode mode;
  double dt;
  int free_fall_guess;                /* -dynamic_guess free_fall: dynamic frames start from x^n + dt v^n + dt^2 g */
  int secant_guess;                   /* -quasistatic_guess secant: quasistatic frames start from x_k + (x_k - x_{k-1}) */
  int frames, iters;
  double rtol;        /* < 0 (PBNG_RTOL_UNSET): the default tolerance, resolved by pbng_config_resolve_tolerance */
  int tolerance_default;  /* the default tolerance is in effect: PBNG_RTOL_DEFAULT with the floor -atol (options_defaults.c) */
  int tolerance_iters;    /* ... and the -iters cap then (the scene's choice; -iters given replaces it) */
  int atol_floor;         /* the default tolerance's -atol: pbng_config_default_atol (unless -atol is given) */
  int fast_multilevel;    /* the scene's fastest measured configuration: multilevel PBNG with automatic levels ... */
  pbng_accel fast_smoother; /* ... and this acceleration in its smoothing steps, when no solver option is given */
  int fast_levels;          /* the levels that configuration chose (0: not in effect; a mesh file's are chosen at setup) */
  int multilevel_auto;      /* -multilevel auto given; after the defaults: the levels are chosen per run (a mesh file's at setup, run_levels.c) */
  char default_note[192];   /* the defaults: line's account when the default is single-level PBNG for a reason (else empty) */
  double atol;        /* -atol: with -rtol, a frame also ends once the residual is at most this (a frame that starts at
                         equilibrium, e.g. after a quasistatic release, cannot cut its residual by -rtol) */
  int residual_every;     /* -residual_every K, or 0: automatic (run.c residual_check_due) */
  double time_budget; /* seconds of iterations per frame (0: no limit); at least one iteration runs */
  PetscBool monitor;
  PetscBool strict;        /* -strict: a frame stopped at -iters before -rtol is an error */
  PetscBool dry_run;       /* -dry_run: validate the options and build the problem, write nothing, run no iteration */
  char initial[PETSC_MAX_PATH_LEN]; /* -initial: start from a frame of an earlier result (quasistatic) */
  int initial_frame;                 /* -initial_frame: that frame, -1 = the last */
  char initial_state[16];            /* -initial_state rest | flat | inverted: the free nodes' start */
  int initial_velocity_on;           /* a scene's initial velocity (projectile_sheet): the free nodes inside */
  double initial_velocity_box[6];    /* this box (lo, hi) start (dynamic mode) with */
  double initial_velocity[3];        /* this velocity (run_apply_initial_state) */
  char checkpoint[PETSC_MAX_PATH_LEN]; /* -checkpoint: the checkpoint file ("<output>.checkpoint.h5") */
  int checkpoint_every;               /* -checkpoint_every K: a checkpoint after every K frames (0: only on a signal) */
  char restart[PETSC_MAX_PATH_LEN];   /* -restart FILE | auto: continue from a checkpoint */
  double divergence_limit;            /* -divergence_limit: a relative residual above it stops the run */
  int test_signal_after;
  double failure_timeout;             /* -failure_timeout: how long a failed rank waits for the others to fail too */
  int test_fail_rank;                 /* -test_fail_rank R: rank R fails alone (tests), -1: none */
  char test_fail_at[16];              /* -test_fail_at setup | iteration */              /* -test_signal_after N: rank 0 sends itself SIGUSR1 after N iterations (tests) */
  PetscBool contact;                  /* collisions (issue 17): -contact, a contact scene, or any -contact_* / -obstacle option */
  pbng_contact_options contact_opt;   /* distance, self-contact, obstacles, stiffness, model */
  int contact_every;                  /* -contact_every K: detect every K iterations within a frame too (0: at frame starts only) */
  int contact_backoff;                /* -contact_backoff: periodic detections after K, 2K, 4K, ... iterations (frames to a tolerance; default on unless -contact_every is given) */
  double contact_freeze;              /* -contact_freeze F: no detection every K once a frame's residual is within F times its tolerance (0: never) */
  pbng_sheet_options sheet_opt;      /* tri3/bend4 terms (issue 18) */
  pbng_sheet_material sheet;          /* ... and the material made from them (pbng_config_read_sheet_options) */
  int nsheet_groups;                  /* -sheetK_group NAME (K = 0..7): sheets of a physical group with their own material */
  pbng_sheet_group sheet_group[PBNG_MAX_SHEET_GROUPS];
  pbng_pd_options pd;                 /* -sheet_model peridynamic and its -pd_* material (issue 20, docs/peridynamics.md) */
  char output[PETSC_MAX_PATH_LEN];
  char summary[PETSC_MAX_PATH_LEN];
  int threads; /* 0: OpenMP default (OMP_NUM_THREADS) */
  char restart_key[8192]; /* pbng_config_make_restart_key */
} pbng_config;

/* cfg->restart_key: the options a restart must repeat exactly, as one string: every option given
 * (command line, -options_file, PETSC_OPTIONS), sorted, except those that do not change the computed
 * states (output, reporting, resources, -frames, testing aids; docs/checkpoint.md lists them). Made
 * by pbng_config_from_options, before any solver sets defaults of its own. */
PetscErrorCode pbng_config_make_restart_key(pbng_config *cfg);

/* The scenes (src/app/scene.c: one table, docs/options.md#scenes): the configuration's defaults for -scene NAME
 * (its defaults function, default solver and sheet shape); an unknown name is an error listing the table's. */
PetscErrorCode pbng_config_scene_defaults(const char *scene, pbng_config *cfg);
/* The table's names joined by sep, into buf (truncated to len). */
void pbng_scene_names(const char *sep, char *buf, size_t len);
/* -help: the table, a line per scene (name, what it is, default solver). */
PetscErrorCode pbng_scene_print_help(MPI_Comm comm);
/* The options of one scene (-drape), read in -help's order; an error when given to another scene. */
PetscErrorCode pbng_config_read_scene_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg);
/* A scene's rule for its time step once -res is known (cloth_drape: dt = 0.1 / (res - 1) and 1 s of frames), unless
 * -dt (and -frames) are given. */
void pbng_config_scene_step(pbng_config *cfg, PetscBool dt_set, PetscInt *frames, PetscBool frames_set);

/* -bind_distance and -bind_stiffness (pbng and pbng-partition alike). */
PetscErrorCode pbng_config_read_binding_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg);

/* The configured mesh: a generated scene mesh or a mesh file (pbng_mesh_read), with the weak
 * constraints of -weak FILE and the bindings of -bind_distance added (on one process, the whole mesh). */
PetscErrorCode pbng_config_build_mesh(const pbng_config *cfg, pbng_mesh *mesh);

/* -res of generated coarse level k (k = 1, 2, ...: coarsenings of the finest): about half the nodes
 * per axis each time, r -> (r + 1) / 2 (Res-33 -> 17 -> 9 is nested, Res-32 -> 16 -> 8 is not);
 * 0 when the level would have fewer than 2 nodes per axis. High-order kinds (-element tet10, tet20,
 * hex27) first coarsen the order: level 1 is the linear mesh of the same cells (p-multigrid), then
 * the grid halves. Coarse generated levels are of the fine kind's linear kind: tet4 of the same split,
 * or hex8 (docs/multilevel.md). */
int pbng_config_coarse_res(const pbng_config *cfg, int k);

/* Whether the coarse levels of -multilevel are made from the fine mesh by edge collapses (mesh/coarsen.h) rather than
 * generated or read: a mesh file without -mesh_levels, and the muscles scene's arm. */
int pbng_config_coarsens_fine_mesh(const pbng_config *cfg);
/* With -cells: level k's cells per axis (each axis coarsened as -res is). */
void pbng_config_coarse_cells(const pbng_config *cfg, int k, int cells[3]);

/* Coarse level k's mesh when it comes from the configuration alone: a generated scene's mesh at
 * pbng_config_coarse_res (the stacked blocks keep the finest level's gap), or -mesh_levels' k-th
 * file; without weak constraints (the caller carries the fine level's to it:
 * pbng_mesh_add_weak_springs). *made = 0 when the level must be made from the fine mesh instead. */
/* pbng-partition -multilevel L: the options that shape the coarse levels made from -mesh FILE as pbng
 * makes them: the boundary sets (-fix_box, -fix_group, -bcK_*; each level keeps their nodes) and
 * -multilevel_coarsen_*. */
PetscErrorCode pbng_config_read_coarsening_options(pbng_config *cfg);

PetscErrorCode pbng_config_build_coarse_mesh(const pbng_config *cfg, int k, pbng_mesh *mesh, int *made);

/* -partitioner ptscotch: 1 when level k's mesh (0 the finest) is a generated grid that processes can generate in slices
 * (mesh/generate_slice.h), described in g; else 0 and why[len] says why (a mesh file, -bind_snap, scenes of other
 * meshes). */
int pbng_config_ptscotch_grid(const pbng_config *cfg, int k, pbng_grid *g, char *why, size_t len);
/* -partitioner ptscotch: level k's mesh file (-mesh, or -mesh_levels' for k > 0) when the level is read from one, to be
 * read in slices (io/mesh_h5.h), else NULL; why[len] non-empty when such a level cannot be (a coarse level to be
 * coarsened from the whole mesh, a coarse level with -weak, -bind_distance). */
const char *pbng_config_ptscotch_file(const pbng_config *cfg, int k, char *why, size_t len);

/* -partitioner ptscotch: this process's slice (mesh/slice.h) of level k's mesh (0 the finest): the HDF5 mesh file's rows
 * (pbng_config_ptscotch_file) or the generated grid's (pbng_config_ptscotch_grid), with the finest level's weak
 * constraints (the blocks' bindings, -weak FILE read in shares) as pbng_config_build_mesh adds them, or a coarse
 * level's carried from the finest (this process's share of the springs, or NULL: none; name: the level's, for
 * messages) as pbng_mesh_add_weak_springs adds them; *read: whether it was read from a file. Collective; a level it
 * cannot make is an error on every process (the refusals above). */
PetscErrorCode pbng_config_level_slice(MPI_Comm comm, const pbng_config *cfg, int k, const pbng_weak_springs *carried, const char *name,
                                       pbng_mesh_slice *s, int *read);

/* Which of the options that shape a generated mesh were given explicitly. */
typedef struct {
  PetscBool res, bar_length, weak_stiffness, element, tet_split, cells, scale, objects;
} pbng_mesh_options_given;

/* Checks the options that size a generated mesh: their ranges, and that each was given only where
 * such a mesh is generated: -res not with -mesh nor the objects, -bar_length only for bar_gravity's bar,
 * -weak_stiffness only for the two blocks, -element only for the box and bar, -tet_split only with
 * tetrahedra, -scale and -objects only for the objects. comm: where the error is raised. */
PetscErrorCode pbng_config_check_mesh_parameters(const pbng_config *cfg, const pbng_mesh_options_given *given, MPI_Comm comm);

/* -element NAME and -tet_split five | six (either may be NULL: unchanged) into cfg->elements; unknown
 * names are errors listing the known ones. */
PetscErrorCode pbng_config_set_grid_elements(pbng_config *cfg, const char *element, const char *split, MPI_Comm comm);

/* -cells NX,NY,NZ (the option's text) into cfg->cells; anything but comma-separated integers is an
 * error quoting the text (ranges are checked by pbng_config_check_mesh_parameters). Parsed here, not by
 * PetscOptionsIntArray, whose error path in PETSc 3.18 leaks its tokenizer (found by test_fuzz). */
PetscErrorCode pbng_config_set_grid_cells(pbng_config *cfg, const char *text, MPI_Comm comm);

/* -contact, -contact_distance, -contact_stiffness, -contact_tangential_stiffness, -contact_model,
 * -contact_every, -contact_self, -obstacle (docs/contact.md): validated, each naming the problem. */
PetscErrorCode pbng_config_read_contact_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg);
/* OPTION "SPEC;SPEC;...": each SPEC as pbng_obstacle_parse reads it into obstacle[*n] (at most max); errors name
 * OPTION and the bad SPEC. */
PetscErrorCode pbng_options_parse_obstacles(const char *option, const char *text, int max, pbng_obstacle *obstacle, int *n);

/* An option of three comma-separated reals (e.g. -gravity gx,gy,gz) into v when given. */
PetscErrorCode pbng_options_read_vector3(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, double v[3]);

/* -sheet_membrane, -sheet_youngs, -sheet_poisson, -sheet_k_weft, -sheet_k_warp, -sheet_k_shear,
 * -sheet_nu_weft, -sheet_nu_warp, -sheet_thickness, -sheet_bending_stiffness, -sheet_density, -sheet_weft,
 * -sheet_size (docs/cloth.md#options): validated (each naming the problem) into cfg->sheet_opt and cfg->sheet. */
PetscErrorCode pbng_config_read_sheet_options(PetscOptionItems *PetscOptionsObject, pbng_config *cfg);

/* Reads the options database (-scene first, then every explicit option). Validates everything:
 * unknown names, malformed lists and impossible values are errors naming the option. */
PetscErrorCode pbng_config_from_options(pbng_config *cfg);

/* The default tolerance (options_defaults.c): with cfg->rtol unset, PBNG_RTOL_DEFAULT and the -atol floor in
 * quasistatic mode (-iters then caps at cfg->tolerance_iters unless given), none in dynamic mode. */
void pbng_config_resolve_tolerance(pbng_config *cfg, PetscBool iters_given, PetscInt *iters);
/* The scene's fastest measured configuration (multilevel PBNG, automatic levels, cfg->fast_smoother) when no solver
 * option is given and the problem is one it was measured on; sets cfg->fast_levels. */
PetscErrorCode pbng_config_choose_fast_solver(pbng_config *cfg);
/* The absolute floor of the default tolerance: PBNG_ATOL_FLOOR_STRAIN E L^2 (E: the volume Young's modulus, or a
 * sheet's E h / L when the mesh has sheets only, the larger with both; L: the mesh's largest extent). A sheet's E is
 * its membrane law's: -sheet_youngs (isotropic), the larger of -sheet_k_weft and -sheet_k_warp (orthotropic), or
 * -pd_s0 for peridynamic membranes (h: their bond length -pd_thickness, else -sheet_thickness). */
double pbng_config_default_atol(const pbng_config *cfg, double extent, int has_volume, int has_sheets);

/* An error naming the first option nobody read (a typo such as -fram), except PETSc's own options that
 * are read only at PetscFinalize and the options of PETSc objects the configured solver creates when
 * it sets up (-newton_* for -solver newton; -snes_*, -fas_* for -multilevel L > 1), which
 * pbng_config_reject_unused_solver_options checks after the solver's first iteration. */
PetscErrorCode pbng_config_reject_unused_options(const pbng_config *cfg);
PetscErrorCode pbng_config_reject_unused_solver_options(const pbng_config *cfg);

/* What the mesh holds, for the options that act on some of it (known 0: not read yet, when it comes from a file). */
typedef struct {
  int known;
  int has_volume, has_sheets, has_weak; /* volume elements, sheet elements (tri3), weak constraints */
} pbng_mesh_facts;

/* A generated mesh's facts, known from the configuration (a mesh file's: not known). */
void pbng_config_generated_mesh_facts(const pbng_config *cfg, pbng_mesh_facts *facts);

/* Options with no effect are errors (options_effects.c, docs/options.md#options-with-no-effect): an option given
 * that acts on nothing in this run (e.g. -poisson on a mesh of sheets, -dt on quasistatic frames that do not
 * depend on time) is an error naming it, why it acts on nothing, and what would act. Conditions on the mesh are
 * checked once mesh->known (before: assumed to hold). */
PetscErrorCode pbng_config_check_option_effects(const pbng_config *cfg, const pbng_mesh_facts *mesh);

#endif
