"""Writes one MSH 2.2 ASCII file holding several MSH 2.2 ASCII meshes side by side, the k-th moved by
k * DX along x (disjoint bodies; physical groups merged by number, so "left" of every input stays
"left"). Used to make meshes mixing element kinds for check_paraview.py (docs/high_order.md) and
for tests/test_mixed.sh:

  python3 side_by_side.py OUT.msh DX IN1.msh IN2.msh ..."""
import sys


def sections(path):
    """{section name: list of its lines} of an ASCII MSH 2.2 file."""
    out, name = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("$End"):
                name = None
            elif line.startswith("$"):
                name = line[1:]
                out[name] = []
            elif name:
                out[name].append(line)
    if out.get("MeshFormat", [""])[0].split()[:2] != ["2.2", "0"]:
        sys.exit(f"{path}: not an ASCII MSH 2.2 file")
    return out


def main(out_path, dx, inputs):
    names, nodes, elements, offset = {}, [], [], 0
    for k, path in enumerate(inputs):
        s = sections(path)
        for line in s.get("PhysicalNames", [])[1:]:
            dim, tag, name = line.split(maxsplit=2)
            if names.setdefault(tag, (dim, name)) != (dim, name):
                sys.exit(f"{path}: physical group {tag} is {name}, another input calls it {names[tag][1]}")
        ids = {}
        for line in s["Nodes"][1:]:
            t, x, y, z = line.split()
            ids[t] = offset + len(ids) + 1
            nodes.append(f"{ids[t]} {float(x) + k * dx!r} {y} {z}")
        for line in s["Elements"][1:]:
            v = line.split()
            ntags = int(v[2])
            head, conn = v[1:3 + ntags], v[3 + ntags:]
            elements.append(" ".join([str(len(elements) + 1)] + head + [str(ids[t]) for t in conn]))
        offset += len(ids)
    with open(out_path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        if names:
            f.write("$PhysicalNames\n%d\n" % len(names))
            f.writelines(f"{dim} {tag} {name}\n" for tag, (dim, name) in names.items())
            f.write("$EndPhysicalNames\n")
        f.write("$Nodes\n%d\n%s\n$EndNodes\n" % (len(nodes), "\n".join(nodes)))
        f.write("$Elements\n%d\n%s\n$EndElements\n" % (len(elements), "\n".join(elements)))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3:])
