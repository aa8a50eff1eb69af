#!/usr/bin/env bash
# The rooms and their layers (docs/architecture.md#rooms-and-layers): every #include "..." under src/ is allowed by
# the rooms table, and none goes up the order core < mesh < parallel < contact < problem < methods < io < app.
# Solver and scene names appear only in their own modules, and docs/options.md's scene list is the scene table
# (tests/check_names.py); pbng -help prints the table.
# The checkers are seen to fail on every run: on copies of src/ with a planted upward include, an include the table
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

# names: the tree, then planted literals and a docs list out of step
NAMES=("$PY" "$HERE/check_names.py")
"${NAMES[@]}" "$ROOT/src" "$ROOT/docs/options.md" > "$TMP/log" 2>&1 && ok || { fail "a solver or scene name outside its module"; cat "$TMP/log"; }
plant_name() {
  local label="$1" file="$2" line="$3" expected="$4" rc=0
  rm -rf "$TMP/src" && cp -r "$ROOT/src" "$TMP/src"
  printf '%s\n' "$line" >> "$TMP/src/$file"
  "${NAMES[@]}" "$TMP/src" "$ROOT/docs/options.md" > "$TMP/planted.log" 2>&1 || rc=$?
  if [ $rc -ne 1 ]; then fail "$label: the name checker exited $rc, not 1"; cat "$TMP/planted.log"; return; fi
  grep -F "$file:" "$TMP/planted.log" | grep -qF -- "$expected" && ok || { fail "$label: not listed with '$expected'"; cat "$TMP/planted.log"; }
}
plant_name "a solver name compared in the app" app/run.c 'static int planted(const char *s) { return !strcmp(s, "newton"); }' 'the solver name "newton"'
plant_name "a scene name in a solver" methods/gpbd/gpbd.c 'static const char *planted = "cloth_drape";' 'the scene name "cloth_drape"'
"$PY" - "$ROOT/docs/options.md" "$TMP/options.md" <<'PYEOF'
import sys
s = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(s.replace("| `bar_fold` |", "| `bar_folded` |", 1))
PYEOF
"${NAMES[@]}" "$ROOT/src" "$TMP/options.md" > "$TMP/planted.log" 2>&1 && fail "a docs scene list out of step passed" ||
  { grep -qF "differs from src/app/scene.c's table" "$TMP/planted.log" && ok || { fail "docs list: not named"; cat "$TMP/planted.log"; }; }
# -help prints the scene table: every name of the docs list, with its default solver
"$PBNG" -help > "$TMP/help.log" 2>&1 || true
"$PY" - "$TMP/help.log" "$ROOT/docs/options.md" "$HERE" <<'PYEOF' && ok || fail "pbng -help does not print the scene table"
import re, sys
sys.path.insert(0, sys.argv[3])
import check_names
help_text = open(sys.argv[1]).read()
block = help_text[help_text.index("Scenes (-scene NAME"):]
rows = re.findall(r"^  (\w+) +(.*) \[(\w+)\]$", block, re.M)
docs = check_names.docs_scene_list(sys.argv[2])
assert [tuple(r) for r in rows] == docs, (rows, docs)
PYEOF

finish
