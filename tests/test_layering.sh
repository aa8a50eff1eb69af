#!/usr/bin/env bash
# The rooms and their layers (docs/architecture.md#rooms-and-layers): every #include "..." under src/ is allowed by
# the rooms table, and none goes up the order core < mesh < parallel < contact < problem < methods < io < app.
# The checker is seen to fail on every run: on copies of src/ with a planted upward include, an include the table
# does not allow (io of a problem header), a source folder without a row, and an include of a missing file.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$HERE/.." && pwd)"
CHECK=("$PY" "$HERE/check_layering.py")
MD="$ROOT/docs/architecture.md"

"${CHECK[@]}" "$ROOT/src" "$MD" > "$TMP/log" 2>&1 && ok || { fail "the tree breaks its layers"; cat "$TMP/log"; }

# plant LABEL FILE LINE EXPECTED: a copy of src/ with LINE appended to FILE must fail, naming FILE and EXPECTED
plant() {
  local label="$1" file="$2" line="$3" expected="$4" rc=0
  rm -rf "$TMP/src" && cp -r "$ROOT/src" "$TMP/src"
  mkdir -p "$(dirname "$TMP/src/$file")"
  printf '%s\n' "$line" >> "$TMP/src/$file"
  "${CHECK[@]}" "$TMP/src" "$MD" > "$TMP/planted.log" 2>&1 || rc=$?
  if [ $rc -ne 1 ]; then fail "$label: the checker exited $rc, not 1"; cat "$TMP/planted.log"; return; fi
  grep -F "src/$file:" "$TMP/planted.log" | grep -qF -- "$expected" && ok ||
    { fail "$label: the offending line is not listed with '$expected'"; cat "$TMP/planted.log"; }
}
plant "upward include" core/vec3.h '#include "app/run.h"' "upward include (core below app"
plant "upward include from parallel" parallel/dmesh.c '#include "contact/contacts.h"' "upward include (parallel below contact"
plant "io including a problem header" io/output.c '#include "problem/problem.h"' "src/io/ may not include src/problem/"
plant "a method including a sibling it may not" methods/pbd/xpbd.c '#include "methods/gpbd/gpbd_terms.h"' "src/methods/pbd/ may not include src/methods/gpbd/"
plant "a missing file" mesh/mesh.c '#include "mesh/no_such_header.h"' "no such file under src/"
# a folder without a row
rm -rf "$TMP/src" && cp -r "$ROOT/src" "$TMP/src" && mkdir -p "$TMP/src/stray" && echo 'int stray;' > "$TMP/src/stray/stray.c"
"${CHECK[@]}" "$TMP/src" "$MD" > "$TMP/planted.log" 2>&1 && fail "a folder without a row passed" ||
  { grep -qF "src/stray/: a source folder with no row" "$TMP/planted.log" && ok || { fail "a folder without a row: not named"; cat "$TMP/planted.log"; }; }

finish
