/* Elastoplasticity of seed position-based-continuous-materials.txt (Sec. 4.2, "Plastic Deformation",
 * after Mueller and Gross 2004 and O'Brien et al. 2002): the total Green strain is split additively,
 * eps = eps_elastic + eps_plastic; the plastic part creeps towards the deviator of the elastic part once
 * its Frobenius norm exceeds the yield, and the plastic strain's norm is capped at a maximum. Strains are
 * symmetric 3 x 3 (row-major double[9]; a membrane's 2 x 2 strain padded with zeros). Pure functions.
 * The material law then uses eps_elastic = eps - eps_plastic (docs/cloth.md#plasticity). */
#ifndef PBNG_CORE_PLASTICITY_H
#define PBNG_CORE_PLASTICITY_H

typedef struct {
  double yield; /* gamma_yield >= 0: von Mises threshold on |dev(eps_elastic)| */
  double creep; /* gamma_creep >= 0: flow rate (per unit time) */
  double max;   /* gamma_max > 0: the largest |eps_plastic| */
} pbng_plasticity;

/* NULL, or a message naming the impossible parameter (a negative or non-finite yield or creep, a
 * maximum not positive and finite, a creep rate with dt above 1: the update would overshoot). */
const char *pbng_plasticity_check(const pbng_plasticity *p, double dt);

/* The deviator dev(e) = e - tr(e)/3 I. */
void pbng_strain_deviator(const double e[9], double dev[9]);

/* One step dt of the plastic strain at total strain eps (seed Sec. 4.2):
 *   e' = dev(eps - eps_p);  if |e'| > yield: eps_p += dt creep e';  then if |eps_p| > max: eps_p *= max / |eps_p|.
 * The seed writes the cap as conditioned on |e'| >= max; we cap |eps_p| itself, as Mueller and Gross
 * (whom the seed follows) do and as the parameter's name says: the plastic strain never exceeds max.
 * Returns 1 when eps_p changed, 0 otherwise. The flow is deviatoric (tr eps_p stays 0 from 0: plastic
 * flow keeps the volume to first order). */
int pbng_plastic_update(const pbng_plasticity *p, double dt, const double eps[9], double eps_p[9]);

/* A symmetric strain as its Voigt 6-vector (xx, yy, zz, yz, xz, xy: the order of the state and the
 * output's /frames/N/plastic_strain) and back. */
void pbng_strain_to_voigt(const double e[9], double v[6]);
void pbng_strain_from_voigt(const double v[6], double e[9]);

/* pbng_plastic_update at the Green strain of F, E = (F^T F - I) / 2, on a Voigt eps_p. */
int pbng_plastic_update_at(const pbng_plasticity *p, double dt, const double F[9], double eps_p[6]);

#endif
