// A thin curved panel (bench/defaults.py): a cylindrical shell of radius 2 (axis z), thickness 0.05, 60 degrees
// of arc from the x axis, width 1 along z; clamped along its edge at x ~ 2 (y = 0), gravity -y.
// gmsh -3 -format msh22 panel.geo -setnumber lc L -o panel.msh (lc 0.05: ~8K nodes).
SetFactory("OpenCASCADE");
DefineConstant[ lc = {0.05, Name "lc"} ];
Cylinder(1) = {0, 0, 0, 0, 0, 1, 2.025, Pi / 3};
Cylinder(2) = {0, 0, -0.1, 0, 0, 1.2, 1.975, Pi / 3};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = lc;
Physical Volume("panel") = {3};
