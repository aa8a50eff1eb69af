/* The closing summary: printed by rank 0 and optionally written as JSON (temporary name + rename). */
#include <stdio.h>
#include <string.h>
#include "app/run.h"

/* A JSON string literal: quotes, backslashes and control characters escaped. */
static void json_string(FILE *f, const char *text)
{
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static void write_summary_json(FILE *f, const pbng_config *cfg, const pbng_run_summary *s)
{
  fprintf(f, "{\n");
  fprintf(f, "  \"scene\": \"%s\",\n  \"solver\": \"%s\",\n  \"material\": \"%s\",\n", cfg->scene, cfg->solver,
          pbng_material_kind_name(cfg->material));
  fprintf(f, "  \"accel\": \"%s\",\n  \"mode\": \"%s\",\n", pbng_accel_name(cfg->solver_opt.sweep.accel),
          cfg->mode == PBNG_MODE_DYNAMIC ? "dynamic" : "quasistatic");
  fprintf(f, "  \"element\": \"%s\",\n  \"quadrature_points_per_element\": %.9g,\n", s->element, s->quad_points);
  fprintf(f, "  \"nodes\": %lld,\n  \"elements\": %lld,\n  \"colors\": %d,\n  \"constraint_colors\": %d,\n", (long long)s->nodes,
          (long long)s->elements, s->ncolors, s->constraint_colors);
  fprintf(f, "  \"ranks\": %d,\n  \"threads\": %d,\n  \"frames\": %d,\n  \"iterations\": %d,\n", s->ranks, s->threads, s->frames,
          s->iterations);
  fprintf(f, "  \"linear_iterations\": %lld,\n", s->linear_iterations);
  fprintf(f, "  \"solver_seconds\": %.9g,\n  \"total_seconds\": %.9g,\n", s->solver_seconds, s->total_seconds);
  fprintf(f, "  \"seconds_per_iteration\": %.9g,\n", s->iterations ? s->solver_seconds / s->iterations : 0.0);
  fprintf(f, "  \"element_visits_per_second\": %.9g,\n", s->visits_per_second);
  fprintf(f, "  \"quadrature_point_visits_per_second\": %.9g,\n", s->visits_per_second * s->quad_points);
  fprintf(f, "  \"free_node_visits_per_iteration\": %lld,\n", (long long)s->free_visits_per_iteration);
  fprintf(f, "  \"owned_nodes_min\": %lld,\n  \"owned_nodes_max\": %lld,\n", (long long)s->owned_min, (long long)s->owned_max);
  fprintf(f, "  \"ghost_nodes_min\": %lld,\n  \"ghost_nodes_max\": %lld,\n", (long long)s->ghosts_min, (long long)s->ghosts_max);
  fprintf(f, "  \"halo_neighbors_max\": %d,\n  \"halo_bytes_per_iteration\": %lld,\n", s->halo_neighbors_max,
          (long long)s->halo_bytes_per_iteration);
  fprintf(f, "  \"halo_seconds\": %.9g,\n", s->halo_seconds);
  fprintf(f, "  \"multilevel\": %d,\n", s->nlevels);
  fprintf(f, "  \"iteration_reductions\": %.0f,\n  \"iteration_messages\": %.0f,\n  \"iteration_message_bytes\": %.0f,\n", s->iteration_comm.reductions,
          s->iteration_comm.messages, s->iteration_comm.bytes);
  if (s->contact)
    fprintf(f, "  \"contacts_final\": %lld,\n  \"contacts_max\": %lld,\n  \"contact_detect_seconds\": %.9g,\n  \"contact_recolor_seconds\": %.9g,\n"
               "  \"contact_update_seconds\": %.9g,\n",
            (long long)s->contacts_last, (long long)s->contacts_max, s->contact_detect_seconds, s->contact_recolor_seconds, s->contact_update_seconds);
  if (s->nlevels > 1) {
    fprintf(f, "  \"cycles\": %d,\n  \"levels\": [\n", s->iterations);
    for (int l = s->nlevels - 1; l >= 0; --l) {
      const pbng_level_report *r = &s->level[l];
      fprintf(f, "    {\"level\": %d, \"name\": ", l);
      json_string(f, r->name);
      fprintf(f, ", \"nodes\": %lld, \"elements\": %lld, \"ranks\": %d, \"seconds\": %.9g, \"sweeps\": %lld, \"function_evaluations\": %lld, "
                 "\"objective_evaluations\": %lld, \"jacobian_evaluations\": %lld, \"halo_seconds\": %.9g, \"reductions\": %.0f, \"messages\": %.0f, "
                 "\"message_bytes\": %.0f, \"transfer_seconds\": %.9g, \"transfer_reductions\": %.0f, \"transfer_messages\": %.0f, "
                 "\"transfer_message_bytes\": %.0f, \"factor_seconds\": %.9g, \"factor_reductions\": %.0f, \"factor_messages\": %.0f, "
                 "\"factor_message_bytes\": %.0f}%s\n",
              (long long)r->nodes, (long long)r->elements, r->ranks, r->seconds, r->sweeps, r->functions, r->objectives, r->jacobians, r->halo_seconds,
              r->comm.reductions, r->comm.messages, r->comm.bytes, r->transfer_seconds, r->transfer_comm.reductions, r->transfer_comm.messages,
              r->transfer_comm.bytes, r->factor_seconds, r->factor_comm.reductions, r->factor_comm.messages, r->factor_comm.bytes, l ? "," : "");
    }
    fprintf(f, "  ],\n");
  }
  fprintf(f, "  \"final_residual\": %.17g,\n  \"final_relative_residual\": %.17g,\n", s->final_residual, s->final_relative_residual);
  fprintf(f, "  \"tolerance\": %.17g,\n  \"absolute_tolerance\": %.17g,\n  \"capped_frames\": %d,\n", cfg->rtol, s->absolute_tolerance, s->capped_frames);
  fprintf(f, "  \"secant_guesses_taken\": %d,\n  \"secant_guesses_declined\": %d,\n", s->guesses_taken, s->guesses_declined);
  fprintf(f, "  \"peak_rss_bytes_max_rank\": %.0f,\n  \"peak_rss_bytes_total\": %.0f,\n", s->peak_rss_bytes_max, s->peak_rss_bytes_sum);
  fprintf(f, "  \"bytes_per_element\": %.1f,\n  \"output\": ", s->peak_rss_bytes_sum / (double)s->elements);
  json_string(f, cfg->output);
  fprintf(f, "\n}\n");
}

static PetscErrorCode save_summary_json(const pbng_config *cfg, const pbng_run_summary *s)
{
  char tmp[PETSC_MAX_PATH_LEN + 16];
  FILE *f;

  PetscFunctionBeginUser;
  snprintf(tmp, sizeof(tmp), "%s.partial", cfg->summary);
  f = fopen(tmp, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "-summary: cannot write %s", cfg->summary);
  write_summary_json(f, cfg, s);
  const int bad = ferror(f);
  PetscCheck(fclose(f) == 0 && !bad, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "-summary: error writing %s", cfg->summary);
  PetscCheck(rename(tmp, cfg->summary) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "-summary: cannot rename %s", tmp);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_run_report(MPI_Comm comm, const pbng_config *cfg, const pbng_run_summary *s)
{
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscPrintf(comm,
                        "summary: %d frames, %d iterations, solver %.3f s (%.3f ms/iteration), %.2fM element visits/s, %d colors,\n"
                        "         peak memory %.1f MiB (largest rank %.1f MiB, %.0f bytes/element), total %.2f s, %d rank(s) x %d thread(s)\n",
                        s->frames, s->iterations, s->solver_seconds, s->iterations ? 1e3 * s->solver_seconds / s->iterations : 0.0,
                        s->visits_per_second / 1e6, s->ncolors, s->peak_rss_bytes_sum / 1048576.0, s->peak_rss_bytes_max / 1048576.0,
                        s->peak_rss_bytes_sum / (double)s->elements, s->total_seconds, s->ranks, s->threads));
  if (cfg->rtol > 0 && !s->capped_frames) PetscCall(PetscPrintf(comm, "         tolerance -rtol %g: every frame reached it\n", cfg->rtol));
  if (cfg->rtol > 0 && s->capped_frames)
    PetscCall(PetscPrintf(comm, "         tolerance -rtol %g: %d of %d frames stopped before it (at -iters or -time_budget; converged = 0 in the output)\n",
                          cfg->rtol, s->capped_frames, s->frames));
  if (cfg->secant_guess && cfg->mode == PBNG_MODE_QUASISTATIC)
    PetscCall(PetscPrintf(comm, "         -quasistatic_guess secant: %d frame(s) started from the guess, %d declined it (more than %dx the energy of the frame start without it)\n",
                          s->guesses_taken, s->guesses_declined, PBNG_GUESS_ENERGY_FACTOR));
  if (s->quad_points > 1)
    PetscCall(PetscPrintf(comm, "         %s: %.4g quadrature points per element, %.2fM quadrature-point visits/s\n", s->element, s->quad_points,
                          s->visits_per_second * s->quad_points / 1e6));
  const pbng_solver_ops *ops = pbng_solver_resolve(cfg->solver, &cfg->solver_opt);
  if (ops && ops->kind.summary_line) { /* the solver's own line */
    char line[256];
    ops->kind.summary_line(s->linear_iterations, s->iterations, line, sizeof(line));
    PetscCall(PetscPrintf(comm, "         %s\n", line));
  }
  if (s->nlevels > 1) {
    PetscCall(PetscPrintf(comm, "         %d FAS cycles on %d levels; time in each level's own work (slowest rank):\n", s->iterations, s->nlevels));
    for (int l = s->nlevels - 1; l >= 0; --l) {
      const pbng_level_report *r = &s->level[l];
      PetscCall(PetscPrintf(comm, "         %s: %.3f s, %lld sweeps, %lld residuals, %lld energies, %lld matrices", r->name, r->seconds, r->sweeps,
                            r->functions, r->objectives, r->jacobians));
      if (s->ranks > 1)
        PetscCall(PetscPrintf(comm, "; halo %.3f s, %.0f reductions, %.0f messages (%.3f MB)", r->halo_seconds, r->comm.reductions, r->comm.messages,
                              r->comm.bytes / 1e6));
      if (r->ranks < s->ranks) PetscCall(PetscPrintf(comm, "; on %d of %d ranks", r->ranks, s->ranks));
      if (l > 0) PetscCall(PetscPrintf(comm, "; transfers to level %d %.3f s", l - 1, r->transfer_seconds));
      if (l > 0 && s->ranks > 1)
        PetscCall(PetscPrintf(comm, " (%.0f reductions, %.0f messages, %.3f MB)", r->transfer_comm.reductions, r->transfer_comm.messages,
                              r->transfer_comm.bytes / 1e6));
      if (l == 0 && r->factor_seconds > 0) PetscCall(PetscPrintf(comm, "; factorisations and solves %.3f s", r->factor_seconds));
      if (l == 0 && r->factor_seconds > 0 && s->ranks > 1)
        PetscCall(PetscPrintf(comm, " (%.0f reductions, %.0f messages, %.3f MB)", r->factor_comm.reductions, r->factor_comm.messages,
                              r->factor_comm.bytes / 1e6));
      PetscCall(PetscPrintf(comm, "\n"));
    }
    if (s->ranks > 1 && s->iterations > 0) {
      pbng_comm_counts levels = {0, 0, 0};
      double level_seconds = 0;
      for (int l = 0; l < s->nlevels; ++l)
        levels.reductions += s->level[l].comm.reductions, levels.messages += s->level[l].comm.messages, level_seconds += s->level[l].seconds;
      PetscCall(PetscPrintf(comm, "         per cycle (busiest rank): %.1f reductions (%.1f in the levels' work, %.1f in the transfers, line searches "
                                  "and checks), %.1f messages; %.4f s outside the levels' work (the solver time less the levels', slowest ranks)\n",
                            s->iteration_comm.reductions / s->iterations, levels.reductions / s->iterations,
                            (s->iteration_comm.reductions - levels.reductions) / s->iterations, s->iteration_comm.messages / s->iterations,
                            PetscMax(s->solver_seconds - level_seconds, 0.0) / s->iterations));
    }
  }
  if (s->contact) {
    const double update = s->contact_detect_seconds + s->contact_recolor_seconds + s->contact_update_seconds;
    PetscCall(PetscPrintf(comm, "         contacts: %lld in force at the end, %lld at most; detection %.3f s, recoloring %.3f s, the rest of the updates %.3f s "
                                "(%.1f%% of the frames' iterations and updates)\n",
                          (long long)s->contacts_last, (long long)s->contacts_max, s->contact_detect_seconds, s->contact_recolor_seconds,
                          s->contact_update_seconds, s->solver_seconds + update > 0 ? 100.0 * update / (s->solver_seconds + update) : 0.0));
  }
  if (s->ranks > 1)
    PetscCall(PetscPrintf(comm, "         halo exchange %.3f s of the solver time (slowest rank), %.3f MB per iteration\n", s->halo_seconds,
                          s->halo_bytes_per_iteration / 1e6));
  PetscCall(PetscPrintf(comm, "output: %s (open the .xdmf beside it in ParaView: File > Open, Apply, then play the time series)\n", cfg->output));
  if (rank == 0 && cfg->summary[0]) PetscCall(save_summary_json(cfg, s));
  PetscFunctionReturn(0);
}
