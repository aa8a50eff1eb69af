/* The state of a pbng run shared by its modules (private to src/app/run*.c): run.c (the frame loop and
 * the run as a whole), run_mesh.c (mesh input, distribution, mesh output), run_start.c (where a run
 * starts: -initial, -initial_state, checkpoints and -restart). */
#ifndef PBNG_APP_RUN_STATE_H
#define PBNG_APP_RUN_STATE_H

#include "app/run.h"
#include "io/checkpoint.h"
#include "io/output.h"
#include "parallel/partition.h"

/* -log_view's events: the setup as a whole and its phases (the global mesh on rank 0, the coarse meshes made from
 * it, the fine subdomains, the mesh output, the problem, the coarse levels, the solver), the iterations, the
 * residual checks, the frames' output. */
typedef struct {
  PetscLogEvent setup, iterate, residual, output;
  PetscLogEvent mesh, coarsen, subdomain, mesh_output, problem, levels, solver;
} run_events;

typedef struct {
  MPI_Comm comm;
  int rank;
  const pbng_config *cfg;
  run_events ev;
  pbng_dmesh dm;
  pbng_problem pb;
  pbng_solver solver;
  pbng_comm_counts iteration_comm; /* communication inside the solver's iterations, this rank (since the start or restart) */
  pbng_output *out;
  pbng_halo halo;
  pbng_hierarchy hierarchy; /* -multilevel: the coarse levels */
  pbng_contacts contacts;   /* -contact: the dynamic weak constraints (dm set when on) */
  double contact_seconds[3]; /* detection, recoloring, the rest of the updates: summed over the run (slowest rank per update) */
  int64_t contacts_max;      /* most contacts in force after an update */
  pbng_mesh *made_levels;   /* rank 0, -multilevel with -mesh alone: coarse meshes made from the fine one, [multilevel - 1] */
  double extent;            /* the finest mesh's largest extent */
  double atol;              /* -atol, or the default tolerance's floor (pbng_config_default_atol) */
  uint8_t *sheet_material;  /* [dm.nelems] each element's entry in the sheet material table (-sheetK_group: mesh/sheet_groups.h), or NULL */
  int64_t *node_rows;  /* owned nodes' global ids, increasing (the order node data is written in) */
  int32_t *node_order; /* the local index of each of them */
  double time0;        /* time of frame 0: 0, or the time of the -initial frame */
  PetscBool solver_options_checked; /* the solver's PETSc options checked once it has set up */
  const char *command_line;
  char restart[PETSC_MAX_PATH_LEN]; /* the checkpoint this run continues from, or "" */
  pbng_checkpoint_counters resume;  /* its counters */
  int stopped_by;                   /* the signal that stopped the run (after a checkpoint), or 0 */
  int iterations_here;              /* iterations run by this process (-test_signal_after) */
  char diverged[160];               /* where the solution diverged (status attribute), or "" */
  double *x_last_frame;             /* [nowned][3] (-quasistatic_guess secant): the positions at the previous frame's end */
  double have_last_frame;           /* 1 when x_last_frame holds them (a double: a checkpoint scalar) */
  int guesses_taken, guesses_declined; /* -quasistatic_guess secant: frames started from it, frames it multiplied the energy of */
} run_state;

/* Time of frame `frame`. */
static inline double run_frame_time(const run_state *st, int frame) { return st->time0 + frame * st->cfg->dt; }

/* What every rank knows of the global mesh before the pieces are distributed. */
typedef struct {
  int64_t nnodes, nelems;
  const pbng_element_type *etype; /* the one kind; NULL when kinds mix */
  int nen;                        /* nodes per element row */
  int64_t kind_count[PBNG_ELEMENT_KIND_COUNT]; /* elements of each kind */
  int64_t nweak;  /* weak constraints */
  double extent; /* largest bounding-box extent (boundary boxes are matched relative to it) */
} mesh_header;

/* Collective: an error of rank 0's (ierr) becomes an error on every rank, so that no rank waits in a
 * collective call for a rank that gave up. Rank 0 keeps its own error and message. */
PetscErrorCode run_agree_on_rank0(MPI_Comm comm, PetscErrorCode ierr);

/* Rank 0 generates or reads the mesh (the others keep an empty one); every rank gets its header. */
PetscErrorCode run_global_mesh_on_rank0(run_state *st, pbng_mesh *mesh, mesh_header *head);

/* Whether -mesh names a partitioned mesh file (rank 0 looks; every rank learns); an HDF5 file that is
 * not one pbng can read is an error saying what it is. */
PetscErrorCode run_is_partitioned_input(run_state *st, int *partitioned);
/* The same for any mesh file path (option: the option that named it, for messages). */
PetscErrorCode run_is_partitioned_file(run_state *st, const char *option, const char *path, int *partitioned);

/* Every rank reads its own part of a partitioned mesh file (collective HDF5 reads). */
PetscErrorCode run_read_partitioned_input(run_state *st, pbng_submesh *sub, mesh_header *head);

/* -partitioner ptscotch: the ranks generate the grid in slices and partition it together (no rank holds the whole
 * mesh); every rank gets its piece and the header, the global mesh stays empty. */
PetscErrorCode run_partition_in_parallel(run_state *st, pbng_mesh *mesh, pbng_submesh *sub, mesh_header *head);
/* The same for level k's grid (0 the finest): the rank's piece, the grid's extent and kind; a coarse level with the
 * finest level's weak constraints carried to it (carried: this rank's share of their springs, or NULL; name: the
 * level's, for messages). */
PetscErrorCode run_partition_grid_in_parallel(run_state *st, int k, const pbng_weak_springs *carried, const char *name, pbng_submesh *sub, double *extent,
                                              const pbng_element_type **etype);

/* Creates the result file "<output>.partial" (fails here, before any work, when it cannot be written). */
PetscErrorCode run_open_output(run_state *st, const mesh_header *mesh, const char *command_line);

/* Every rank's piece (from rank 0's global mesh, or read from a partitioned file) -> boundary sets ->
 * subdomain and halo plan: st->dm, st->halo (and st->sheet_material with -sheetK_group). */
PetscErrorCode run_build_subdomain(run_state *st, pbng_mesh *mesh, const mesh_header *head, pbng_submesh *sub_in);
/* The same for any level (name: for messages, e.g. "level 1 (Res-16 box)"; extent: the finest mesh's,
 * which sizes the boundary boxes' tolerance on every level; need_cc: the PBD/XPBD colors too;
 * min_nodes_per_rank > 0: a mesh cut here with fewer nodes per rank goes to fewer ranks, the others get an empty piece;
 * sheet_material: the elements' sheet materials from the -sheetK_group sets, or NULL). */
/* The -multilevel_min_nodes_per_rank threshold for level k (k coarsenings of the finest; cut on the fly): 0 for the
 * finest (every rank) and with the option 0; INT_MAX (one rank) for the coarsest when its Newton solve factorises (no
 * aggregation levels): its factorisation is whole on each rank holding it anyway, and on one rank the Newton line
 * search's PETSc dot products and norms are those of one rank, so the positions are bitwise rank-independent
 * (docs/multilevel.md#levels-on-fewer-ranks); else the option's value. */
int run_level_min_nodes_per_rank(const pbng_config *cfg, int k);
PetscErrorCode run_build_level_subdomain(run_state *st, pbng_mesh *mesh, double extent, pbng_submesh *sub_in, int need_cc, int min_nodes_per_rank,
                                         const char *name, uint8_t **sheet_material, pbng_dmesh *dm, pbng_halo *halo);

/* The sheet material table of cfg's groups (mesh/sheet_groups.h) into table (at most 256); returns its size. */
int run_sheet_table(const pbng_config *cfg, pbng_sheet_material *table);

/* Rank 0, before the fine mesh is distributed: with -multilevel L > 1 and -mesh FILE without -mesh_levels,
 * coarsens the fine mesh L-1 times (pbng_mesh_coarsen) into st->made_levels. A partitioned -mesh has no
 * global mesh to coarsen: an error asking for -mesh_levels. Under -multilevel auto (cfg->multilevel_auto) it settles
 * cfg's levels: as many as the coarsening made, or single-level PBNG with the reason in cfg->default_note.
 * cfg: the run's configuration (st->cfg), completed here. Collective. */
PetscErrorCode run_make_coarse_meshes(run_state *st, pbng_config *cfg, const pbng_mesh *fine, const mesh_header *head, int partitioned);

/* -multilevel L > 1: the coarse levels (st->hierarchy), each generated, read or made from the fine mesh,
 * partitioned on its own, with its boundary sets and problem; one report line per level. */
PetscErrorCode run_build_levels(run_state *st);

/* The /mesh group (rest positions, elements, node sets, colors, partition, weak constraints). */
PetscErrorCode run_write_mesh_output(run_state *st);
/* /mesh/node_loads: the point load's share of every node (-load_box), when there is one (not on a restart). */
PetscErrorCode run_write_node_loads(run_state *st);
/* run_plastic.c: -plasticity and released sets (-bcK_release): the problem's state, /mesh/handle_stiffness. */
PetscErrorCode run_setup_plasticity(run_state *st);
/* The plastic update at a frame's start (from the previous frame's positions); changed: elements that flowed. */
PetscErrorCode run_plastic_update(run_state *st, int64_t *changed);
/* /frames/N/plastic_strain and /frames/N/handle_targets (while a released set holds). */
PetscErrorCode run_write_frame_plasticity(run_state *st, int frame);

/* The owned nodes in increasing global order: node data is passed to the writer in that order, so
 * that it writes from our buffer instead of sorting a copy. */
PetscErrorCode run_build_node_output_order(run_state *st);

/* ncomp values per owned node, from local order to the output order. */
PetscErrorCode run_gather_for_output(const run_state *st, int ncomp, const double *local, double **out);

/* Owned and ghost nodes per rank (min/max), neighbours and halo volume, for the report. */
PetscErrorCode run_summarize_partition(run_state *st, pbng_run_summary *sum);

/* -initial: the owned nodes' positions (and the start time) from a frame of an earlier result. */
PetscErrorCode run_load_initial_state(run_state *st);

/* -initial_state flat | inverted (the seeds' recovery tests): the free nodes squashed onto the plane
 * y = centre of the mesh, or mirrored in x about its centre (every element inverted). Every rank
 * moves its owned and ghost copies alike. */
PetscErrorCode run_apply_initial_state(run_state *st);

/* -contact: the contacts of the subdomain attached to the problem (before the solver is made), or nothing. */
PetscErrorCode run_setup_contacts(run_state *st);
/* -contact: a detection at the current positions (collective; its figures added to the run's). */
PetscErrorCode run_detect_contacts(run_state *st);
/* -contact: frame `frame`'s contacts, the nodes in contact and the current node colors into the output. */
PetscErrorCode run_write_frame_contacts(run_state *st, int frame);
/* -contact: the contacts' checkpoint fields appended to fields[*n] (buf: their scalars, freed by the caller;
 * NULL without contacts), and the set rebuilt from a checkpoint being read (st->restart). */
PetscErrorCode run_contact_state_fields(run_state *st, pbng_state_field *fields, int *n, double **buf);
PetscErrorCode run_load_contact_state(run_state *st);
/* -contact: the run's contact figures into the summary. */
void run_summarize_contacts(const run_state *st, pbng_run_summary *sum);

/* Writes the checkpoint (-checkpoint, default <output>.checkpoint.h5) with counters c. */
PetscErrorCode run_write_checkpoint(run_state *st, const pbng_checkpoint_counters *c);

/* -restart: the state of st->restart (whose counters were read) into the problem and solver. */
PetscErrorCode run_load_checkpoint(run_state *st);

/* -restart FILE, or auto: the checkpoint file when it exists (rank 0 looks, every rank learns). */
PetscErrorCode run_resolve_restart(run_state *st);

/* The output of a restarted run: the earlier run's "<output>.partial", frames after the checkpoint
 * dropped. */
PetscErrorCode run_resume_output(run_state *st, const mesh_header *mesh);

#endif
