#!/usr/bin/env python3
"""Solver and scene names live in their own modules (docs/architecture.md#rooms-and-layers).

  1. No string literal that is exactly a solver's name appears outside the file that defines that solver's
     pbng_solver_ops (src/methods/...), nor a scene's name outside src/app/scene.c: the rest of the code asks the
     registry or the scene table. Comments are not read. Three names are also other things' names and are not
     looked for: "pbng" (the program: its PETSc class and error prefix), "box" (an obstacle and a shape kind),
     "none" (a value of -accel and -newton_npc).
  2. docs/options.md's scene list (the table under "## Scenes" whose first column is `scene`) holds the scene
     table's names, in its order, each with the table's one-line help and default solver.

Usage: check_names.py SRC OPTIONS_MD       exit 0: kept; 1: broken (each place listed)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layering import report  # noqa: E402

ALSO_OTHER_THINGS = {"pbng", "box", "none"}
LITERAL = re.compile(r'"([a-z_0-9]+)"')


def strip_comments(text):
    """The text with comments blanked (newlines kept, so line numbers hold); string literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":  # a string or character literal, kept whole (escapes skipped)
            j = i + 1
            while j < n and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def sources(src):
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(root, name)


def scene_table(scene_c):
    """[(name, help, default solver)] of the scenes[] table in scene.c."""
    text = open(scene_c, encoding="utf-8").read()
    start = text.index("static const pbng_scene scenes[] = {")
    body = text[start:text.index("};", start)]
    return re.findall(r'\{\s*"([a-z_0-9]+)",\s*"((?:[^"\\]|\\.)*)",\s*\w+,\s*&pbng_solver_([a-z_0-9]+)_ops', body)


def solver_owners(src):
    """{solver name: the file defining its ops}."""
    owners = {}
    for path in sources(os.path.join(src, "methods")):
        text = strip_comments(open(path, encoding="utf-8").read())
        for name in re.findall(r'\.name\s*=\s*"([a-z_0-9]+)"', text) + re.findall(r'CB_OPS\(\s*"([a-z_0-9]+)"', text):
            owners[name] = path
    return owners


def docs_scene_list(md_path):
    """[(name, help, default solver)] of the docs' scene list: rows | `name` | help | ... under '## Scenes' after a header whose first
    cell is 'scene'."""
    rows, inside, listing = [], False, False
    for line in open(md_path, encoding="utf-8"):
        if line.startswith("## "):
            inside, listing = line.strip() == "## Scenes", False
            continue
        if not inside:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            if listing:
                break
            continue
        if cells[0] == "scene":
            listing = True
            continue
        if listing and not set(cells[0]) <= set("-: "):
            m = re.fullmatch(r"`([a-z_0-9]+)`", cells[0])
            rows.append((m.group(1) if m else cells[0], cells[1] if len(cells) > 1 else "", cells[2].strip("`") if len(cells) > 2 else ""))
    return rows


def main(src, md_path):
    problems = []
    scene_c = os.path.join(src, "app", "scene.c")
    scenes = scene_table(scene_c)
    owners = solver_owners(src)
    if not scenes:
        problems.append(f"{scene_c}: no scene table found")
    if not owners:
        problems.append(f"{src}/methods: no solver found")
    owner_of = {name: {path} for name, path in owners.items()}
    for name, _, _ in scenes:
        owner_of.setdefault(name, set()).add(scene_c)
    for path in sources(src):
        text = strip_comments(open(path, encoding="utf-8", errors="replace").read())
        for lineno, line in enumerate(text.split("\n"), 1):
            for lit in LITERAL.findall(line):
                if lit in owner_of and lit not in ALSO_OTHER_THINGS and path not in owner_of[lit]:
                    kind = "scene" if scene_c in owner_of[lit] else "solver"
                    problems.append(f"{os.path.relpath(path, os.path.dirname(src))}:{lineno}: the {kind} name \"{lit}\" as a literal "
                                    f"(ask the {'scene table' if kind == 'scene' else 'solver registry'})")
    docs = docs_scene_list(md_path)
    if [row[0] for row in docs] != [row[0] for row in scenes]:
        problems.append(f"{md_path}: the scene list {[row[0] for row in docs]} differs from src/app/scene.c's table {[row[0] for row in scenes]}")
    else:
        for want, have in zip(scenes, docs):
            if have != want:
                problems.append(f"{md_path}: scene {want[0]}: {have[1:]} where the table says {want[1:]}")
    return report("names", problems, f"{len(owners)} solvers and {len(scenes)} scenes named only in their modules; docs/options.md lists the scene table")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
