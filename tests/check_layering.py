#!/usr/bin/env python3
"""Checks every #include "..." under SRC against the rooms table of docs/architecture.md (#rooms-and-layers).

The table's rows name a room (a folder under src/, e.g. `src/methods/pbng/`) and the rooms it may include
(`core`, `mesh`, ...; "-" for none; "any" for every room), or single headers of a room (`methods/gpbd/gpbd.h`). Two rules, each line that breaks one listed:
  1. the order: the top-level rooms in the table's order (core < mesh < parallel < ...): no file may include
     a file of a later top-level room (an upward include);
  2. the table: a file may include its own room and the rooms its row names (a sub-room's row is its own).
Also refused: a source folder without a row, a row without a folder, an include of a file that does not exist.

Usage: check_layering.py SRC ARCHITECTURE_MD        exit 0: all kept; 1: broken (the lines are listed)
"""
import os
import re
import sys

ROW = re.compile(r"^\|\s*`src/([a-z_/]+?)/?`\s*\|\s*([^|]*)\|")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_table(md_path):
    """The rooms in table order and what each may include ({room: set or None for any})."""
    rooms, allowed, inside = [], {}, False
    with open(md_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                inside = line.strip() == "## Rooms and layers"
                continue
            m = ROW.match(line) if inside else None
            if not m:
                continue
            room, may = m.group(1), m.group(2).strip()
            rooms.append(room)
            if may == "any":
                allowed[room] = None
            else:
                names = re.findall(r"`([a-z_/.]+)`", may)
                allowed[room] = set(names)
    return rooms, allowed


def room_of(rel_path, rooms):
    """The longest room that holds rel_path (a path under src/)."""
    best = None
    for r in rooms:
        if rel_path.startswith(r + "/") and (best is None or len(r) > len(best)):
            best = r
    return best


def source_folders(src):
    out = set()
    for root, _, files in os.walk(src):
        if any(f.endswith((".c", ".h")) for f in files):
            out.add(os.path.relpath(root, src))
    return out


def report(name, problems, kept):
    """Prints each problem and a closing line; the exit code (0: kept, 1: broken). Shared with check_names.py."""
    for p in problems:
        print(p)
    if problems:
        print(f"{name}: {len(problems)} problem(s)")
        return 1
    print(f"{name}: {kept}")
    return 0


def main(src, md_path):
    rooms, allowed = read_table(md_path)
    problems = []
    if not rooms:
        print(f"{md_path}: no rooms table under '## Rooms and layers'")
        return 1
    top = []
    for r in rooms:
        t = r.split("/")[0]
        if t not in top:
            top.append(t)
    for folder in sorted(source_folders(src)):
        if folder not in allowed:
            problems.append(f"src/{folder}/: a source folder with no row in {md_path}")
    for r in rooms:
        if not os.path.isdir(os.path.join(src, r)):
            problems.append(f"{md_path}: row src/{r}/ names no folder")
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            mine = room_of(rel, rooms)
            if mine is None:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    where = f"src/{rel}:{lineno}: {line.strip()}"
                    if not os.path.exists(os.path.join(src, target)):
                        if not os.path.exists(os.path.join(root, target)):
                            problems.append(f"{where}: no such file under src/")
                        continue
                    theirs = room_of(target, rooms)
                    if theirs is None or theirs == mine:
                        continue
                    a, b = mine.split("/")[0], theirs.split("/")[0]
                    if top.index(b) > top.index(a):
                        problems.append(f"{where}: upward include ({a} below {b} in the order {' < '.join(top)})")
                    elif allowed[mine] is not None and theirs not in allowed[mine] and target not in allowed[mine]:
                        problems.append(f"{where}: src/{mine}/ may not include src/{theirs}/ (docs/architecture.md#rooms-and-layers)")
    return report("layering", problems, f"{len(rooms)} rooms, order {' < '.join(top)}: every include kept")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
