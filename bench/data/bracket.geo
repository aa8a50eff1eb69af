// An L-bracket with two bolt holes (bench/defaults.py): a wall flange x in [0, 0.2] (y in [0, 2], z in [0, 1])
// with two holes along x, and an arm along x (x in [0, 2], y in [0, 0.2]). Mounted on the wall x = 0, gravity -y.
// gmsh -3 -format msh22 bracket.geo -setnumber lc L -o bracket.msh (lc 0.09: ~20K nodes).
SetFactory("OpenCASCADE");
DefineConstant[ lc = {0.09, Name "lc"} ];
Box(1) = {0, 0, 0, 0.2, 2, 1};
Box(2) = {0, 0, 0, 2, 0.2, 1};
Cylinder(3) = {-0.1, 1.3, 0.3, 0.4, 0, 0, 0.12};
Cylinder(4) = {-0.1, 1.3, 0.7, 0.4, 0, 0, 0.12};
BooleanUnion(5) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
BooleanDifference(6) = { Volume{5}; Delete; }{ Volume{3, 4}; Delete; };
Mesh.CharacteristicLengthMax = lc;
Physical Volume("bracket") = {6};
