// Box [0,1] x [0,0.5] x [0,0.25] (volume 0.125) of 4 x 2 x 2 hexahedra, by extruding a point, a line
// and a recombined square (tests/test_readers.c): gmsh -3 -order 1|2 box_hex.geo.
SetFactory("Built-in");
Point(1) = {0, 0, 0};
line[] = Extrude {1, 0, 0} {Point{1}; Layers{4};};
face[] = Extrude {0, 0.5, 0} {Line{line[1]}; Layers{2}; Recombine;};
cell[] = Extrude {0, 0, 0.25} {Surface{face[1]}; Layers{2}; Recombine;};
// cell[]: top, volume, then the sides from the square's edges: y = 0, x = 1, y = 0.5, x = 0
Physical Surface("left") = {cell[5]};
Physical Surface("right") = {cell[3]};
Physical Volume("body") = {cell[1]};
