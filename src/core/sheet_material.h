/* The material of a run's sheet terms (issue 18, docs/cloth.md): the membrane law of every tri3
 * element (core/membrane: its elasticity tensor and thickness), the isometric bending stiffness of every
 * bend4 stencil (core/bending), the weft direction that orients each triangle's local frame, and the
 * sheet's volumetric density (a triangle of rest area A carries the mass density * thickness * A, lumped
 * a third to each corner). One material for every sheet term of a run. */
#ifndef PBNG_CORE_SHEET_MATERIAL_H
#define PBNG_CORE_SHEET_MATERIAL_H

#include "core/cloth6.h"
#include "core/membrane.h"

typedef struct {
  pbng_membrane_material membrane; /* C (Voigt, weft/warp frame) and thickness */
  double bending_stiffness;        /* k_b of E_b = k_b / 2 sum Q_ij x_i . x_j (>= 0) */
  double weft[3];                  /* the weft axis, projected onto each rest triangle (unit length) */
  double density;                  /* kg per unit volume of sheet material */
  pbng_cloth6_material cloth6;     /* the cloth6 stencils' moduli (-sheet_model cloth6), from the membrane's C, thickness,
                                      -sheet_stiffening and k_b (pbng_cloth6_material_from_membrane) */
} pbng_sheet_material;

#endif
