#!/usr/bin/env bash
# The render tool pbng-render (issue 21 item 3; docs/render.md), where ParaView's pvbatch (and Xvfb, without a
# display) is installed — otherwise the test is reported as skipped (exit 77, ctest's "Skipped"; a failure in CI, tests/lib.sh skip):
#  - a 2-rank box_stretch_twist result (5 frames) to one PNG per frame (frame_000000.png ..), the panels of three
#    frames and an mp4 animation: the PNGs have the asked size (the panels 3 x its width), are not blank (many
#    distinct pixel bytes), the animation has one video frame per result frame (ffprobe);
#  - --color color, partition and a .gif;
#  - --color constraints on a small muscles run: blue (bound) and red (in contact) pixels;
#  - refusals that name the problem and leave nothing behind: a missing result, an unknown field, frames out of
#    range, no output asked, an unwritable place, a bad --size.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
RENDER="$(dirname "$PBNG")/pbng-render"
if ! command -v pvbatch > /dev/null || { [ -z "${DISPLAY:-}" ] && ! command -v Xvfb > /dev/null; }; then
  skip "pvbatch or Xvfb not installed (bash .ci/install-deps --tests installs them)"
fi
mpi 2 "$PBNG" -scene box_stretch_twist -res 5 -frames 4 -output "$TMP/box.h5" > "$TMP/box.log" 2>&1 && ok || { fail "the result"; cat "$TMP/box.log"; }

# png_check FILE W H: a PNG of W x H pixels that is not blank
png_check() {
  "$PY" - "$@" <<'PYEOF'
import struct, sys, zlib
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
W, H = struct.unpack(">II", data[16:24])
assert (W, H) == (w, h), f"{path}: {W}x{H}, expected {w}x{h}"
idat, at = b"", 8
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    if kind == b"IDAT":
        idat += data[at + 8:at + 8 + n]
    at += 12 + n
distinct = len(set(zlib.decompress(idat)))
assert distinct > 20, f"{path}: {distinct} distinct bytes: blank"
PYEOF
}

if command -v ffmpeg > /dev/null; then anim=(--animation "$TMP/box.mp4"); else anim=(); echo "ffmpeg not installed: no animation checked"; fi
"$RENDER" "$TMP/box.h5" --frames-dir "$TMP/frames" --size 320,240 "${anim[@]}" > "$TMP/render.log" 2>&1 && ok || { fail "render frames"; cat "$TMP/render.log"; }
[ "$(ls "$TMP/frames" | tr '\n' ' ')" = "frame_000000.png frame_000001.png frame_000002.png frame_000003.png frame_000004.png " ] && ok \
  || fail "frames: $(ls "$TMP/frames" | tr '\n' ' ')"
for f in "$TMP"/frames/*.png; do png_check "$f" 320 240 && ok || fail "$(basename "$f")"; done
if [ ${#anim[@]} -gt 0 ]; then
  n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/box.mp4")
  [ "$n" = 5 ] && ok || fail "the animation has $n frames, not 5"
fi
"$RENDER" "$TMP/box.h5" --png "$TMP/panels.png" --frames 0,2,4 --size 200,150 --color partition > "$TMP/log" 2>&1 && ok || { fail "panels"; cat "$TMP/log"; }
png_check "$TMP/panels.png" 600 150 && ok || fail "panels.png"
"$RENDER" "$TMP/box.h5" --png "$TMP/color.png" --frames 1:5:2 --size 200,150 --color color > "$TMP/log" 2>&1 && ok || { fail "--color color"; cat "$TMP/log"; }
png_check "$TMP/color.png" 400 150 && ok || fail "color.png (frames 1 and 3)"
if [ ${#anim[@]} -gt 0 ]; then
  "$RENDER" "$TMP/box.h5" --animation "$TMP/box.gif" --size 160,120 --fps 5 > "$TMP/log" 2>&1 && [ -s "$TMP/box.gif" ] && ok || { fail "gif"; cat "$TMP/log"; }
fi

# --color constraints (the paper's Fig. 10) on the muscles at a small scale: bound nodes blue, nodes in contact red
mpi 2 "$PBNG" -scene muscles -scale 0.4 -threads 1 -output "$TMP/arm.h5" > "$TMP/arm.log" 2>&1 && grep -q "^frame   10/10 .*contacts [1-9]" "$TMP/arm.log" && ok ||
  { fail "the muscles result (with contacts at the end)"; cat "$TMP/arm.log"; }
"$RENDER" "$TMP/arm.h5" --png "$TMP/arm.png" --frames 10 --size 320,240 --color constraints --camera 1,0.3,0.2 > "$TMP/log" 2>&1 && ok ||
  { fail "--color constraints"; cat "$TMP/log"; }
"$PY" - "$TMP/arm.png" <<'PYEOF' && ok || fail "--color constraints: no blue (bound) or no red (contact) pixels"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
W, H, depth, kind = struct.unpack(">IIBB", data[16:26])
assert depth == 8 and kind in (2, 6), (depth, kind)
idat, at = b"", 8
while at < len(data):
    n, tag = struct.unpack(">I4s", data[at:at + 8])
    idat += data[at + 8:at + 8 + n] if tag == b"IDAT" else b""
    at += 12 + n
raw, bpp = zlib.decompress(idat), 3 if kind == 2 else 4
stride, prev, rows = W * bpp, bytearray(W * bpp), []
for y in range(H):  # undo the PNG filters
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][f]
        line[i] = (line[i] + pred) & 255
    rows.append(line)
    prev = line
px = [(r[i], r[i + 1], r[i + 2]) for r in rows for i in range(0, stride, bpp)]
blue = sum(1 for r, g, b in px if b > r + 60 and b > g + 30)
red = sum(1 for r, g, b in px if r > b + 60 and r > g + 60)
assert blue > 20 and red > 5, (blue, red)
PYEOF

# refusals: exit 2, the problem named, no output left
refuse() {
  local what="$1" msg="$2" out="$3"; shift 3
  local rc=0
  "$RENDER" "$@" > "$TMP/err.log" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$msg" "$TMP/err.log" && ok || { fail "$what: exit $rc, expected 2 with \"$msg\""; cat "$TMP/err.log"; }
  [ ! -e "$out" ] && ok || fail "$what: $out was written"
}
refuse "missing result" "missing.h5 is missing" "$TMP/x.png" "$TMP/missing.h5" --png "$TMP/x.png"
refuse "unknown field" "no node attribute stress" "$TMP/x.png" "$TMP/box.h5" --png "$TMP/x.png" --color stress
refuse "frames out of range" "holds frames 0..4 (not 9)" "$TMP/x.png" "$TMP/box.h5" --png "$TMP/x.png" --frames 0,9
refuse "no output" "no output" "$TMP/x.png" "$TMP/box.h5"
refuse "unwritable" "cannot write there" "$TMP/nodir/x.png" "$TMP/box.h5" --png "$TMP/nodir/x.png"
refuse "bad size" "--size W,H" "$TMP/x.png" "$TMP/box.h5" --png "$TMP/x.png" --size 5,5
refuse "animation name" "must end in .mp4, .webm or .gif" "$TMP/x.avi" "$TMP/box.h5" --animation "$TMP/x.avi"
refuse "constraints without contacts or bindings" "--color constraints needs in_contact" "$TMP/x.png" "$TMP/box.h5" --png "$TMP/x.png" --color constraints
finish
