/* A run's elastoplastic state and released sets (issue 18, docs/cloth.md#plasticity): set up, the
 * plastic update at each frame's start, and what the output holds of them. */
#include "app/run_state.h"

PetscErrorCode run_setup_plasticity(run_state *st)
{
  const pbng_config *cfg = st->cfg;

  PetscFunctionBeginUser;
  if (cfg->plastic) PetscCall(pbng_problem_set_plasticity(&st->pb, &cfg->plasticity, cfg->dt));
  PetscCall(pbng_problem_set_handles(&st->pb, st->extent, cfg->release_penalty));
  if (!st->pb.handle || st->restart[0] || !st->out) PetscFunctionReturn(0); /* a restarted run's file has them; -dry_run: no file */
  double *k;
  PetscCall(run_gather_for_output(st, 1, st->pb.handle_k, &k));
  PetscCall(pbng_output_write_nodes_double(st->out, "/mesh/handle_stiffness", 1, st->dm.nowned, st->node_rows, k));
  PetscCall(PetscFree(k));
  PetscFunctionReturn(0);
}

PetscErrorCode run_plastic_update(run_state *st, int64_t *changed)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_plastic_update(&st->pb, st->cfg->dt, changed));
  PetscFunctionReturn(0);
}

/* /frames/N/plastic_strain (the owned elements' eps_p, which frame N was solved with) and, while a released
 * set holds, /frames/N/handle_targets (x_D of its nodes, zeros elsewhere). */
PetscErrorCode run_write_frame_plasticity(run_state *st, int frame)
{
  const pbng_dmesh *dm = &st->dm;
  const pbng_problem *pb = &st->pb;

  PetscFunctionBeginUser;
  if (pb->plastic_strain)
    PetscCall(pbng_output_write_frame_cells_double(st->out, frame, "plastic_strain", 6, dm->nowned_elems, dm->global_elem, pb->plastic_strain));
  if (!pbng_problem_handles_active(pb)) PetscFunctionReturn(0);
  double *targets;
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nowned + 1, &targets));
  for (int32_t k = 0; k < dm->nowned; ++k) (void)pbng_problem_handle_target(pb, st->node_order[k], &targets[3 * k]);
  PetscCall(pbng_output_write_frame_nodes_double(st->out, frame, "handle_targets", 3, dm->nowned, st->node_rows, targets));
  PetscCall(PetscFree(targets));
  PetscFunctionReturn(0);
}
