#!/usr/bin/env bash
# tests/check_output.py on plastic strains and released-boundary handles, from a synthetic result whose
# energies and residuals tests/synthetic_fields.py computes on its own (element by element, gradients by
# complex steps): the consistent file passes; copies with one plastic strain or one handle target changed
# fail the residual check, and copies breaking the layout's rules (plasticity with another material,
# handle nodes held, targets without stiffness or returning after the release, XDMF references to a
# frame's missing field) are rejected by name.
source "$(dirname "$0")/lib.sh"
F="$TMP/fields.h5"
"$PY" "$HERE/synthetic_fields.py" "$F" && ok || fail "synthetic_fields.py"
"$PY" "$HERE/check_output.py" --self-test --quiet && ok || fail "checker self-test (plasticity, handles)"
"$PY" "$HERE/check_output.py" "$F" --quiet > "$TMP/good.log" 2>&1 && ok || { fail "the consistent file is rejected"; cat "$TMP/good.log"; }

# corrupt NAME 'python on f (h5py File, r+) and x (the XDMF text, to rewrite)' 'FAIL message': a copy
# changed so, which the checker must reject with that message
corrupt() {
  local name="$1" code="$2" msg="$3" out
  cp "$F" "$TMP/$name.h5" && cp "${F%.h5}.xdmf" "$TMP/$name.xdmf"
  "$PY" - "$TMP/$name.h5" <<EOF || { fail "$name: cannot make the copy"; return; }
import sys, h5py, numpy as np
xpath = sys.argv[1][:-3] + ".xdmf"
x = open(xpath).read().replace("fields.h5:", sys.argv[1].rsplit("/", 1)[-1] + ":")
with h5py.File(sys.argv[1], "r+") as f:
    $code
open(xpath, "w").write(x)
EOF
  if out=$("$PY" "$HERE/check_output.py" "$TMP/$name.h5" 2>&1); then fail "$name: accepted"; return; fi
  grep -qF -- "$msg" <<<"$out" && ok || fail "$name: the checker's report lacks '$msg': $out"
}
corrupt eps_perturbed 'f["frames/000001/plastic_strain"][7, 3] += 1e-3' "frame 000001 (stvk/quasistatic): recomputed residual"
corrupt eps_perturbed_energy 'f["frames/000002/plastic_strain"][0, 0] += 1e-3' "frame 000002 (stvk/quasistatic): recomputed energy"
corrupt target_perturbed 'f["frames/000001/handle_targets"][20, 2] += 1e-3' "frame 000001 (stvk/quasistatic): recomputed residual"
corrupt stiffness_perturbed 'f["mesh/handle_stiffness"][26] *= 1.01' "frame 000001 (stvk/quasistatic): recomputed residual"
corrupt eps_not_finite 'f["frames/000001/plastic_strain"][0, 0] = np.nan' "frame 000001: plastic_strain not finite"
corrupt eps_columns 'eps = f["frames/000001/plastic_strain"][:, :3]; del f["frames/000001/plastic_strain"]; f["frames/000001/plastic_strain"] = eps' \
  "frames/000001/plastic_strain: shape (48, 3), expected (48, 6)"
corrupt not_stvk 'f.attrs["material"] = np.bytes_("neohookean")' "frame 000000: plastic_strain with material neohookean (stvk only)"
corrupt handle_held 'fx = f["mesh/fixed_nodes"][:]; del f["mesh/fixed_nodes"]; f["mesh/fixed_nodes"] = np.union1d(fx, [26])' \
  "/mesh/handle_stiffness: 1 handle nodes in /mesh/fixed_nodes"
corrupt stiffness_negative 'f["mesh/handle_stiffness"][26] = -1.0' "/mesh/handle_stiffness: negative or non-finite values"
corrupt no_stiffness 'del f["mesh/handle_stiffness"]' "frame 000000: handle_targets without /mesh/handle_stiffness"
corrupt target_off_handle 'f["frames/000001/handle_targets"][4, 0] = 1.0' "frame 000001: handle_targets nonzero for nodes without a handle"
corrupt targets_return 'f["frames/000002/handle_targets"] = f["frames/000001/handle_targets"][:]; del f["frames/000001/handle_targets"]' \
  "frame 000002: handle_targets again after frame 000001 had none"
corrupt xdmf_missing_frame_field 'x = x.replace("/frames/000001/handle_targets", "/frames/000002/handle_targets")' \
  "grid 1 refers to xdmf_missing_frame_field.h5:/frames/000002/handle_targets, not a dataset of"
corrupt xdmf_no_targets 'x = x.replace("Name=\"handle_targets\"", "Name=\"targets\"")' "grid 0: no node Vector handle_targets"
corrupt xdmf_voigt_order 'x = x.replace("<DataItem Dimensions=\"3 2\" Format=\"XML\">0 5 1 1", "<DataItem Dimensions=\"3 2\" Format=\"XML\">0 3 1 1", 1)' \
  "grid 0: plastic_strain is not the cell Tensor joined from the Voigt columns"
finish
