// two blocks, the upper one held at its top, the lower one hanging from it by weak constraints
SetFactory("OpenCASCADE");

Box(1) = {0, 0, 0, 1, 1, 0.6};
Box(2) = {-0.1, -0.1, 0.65, 1.2, 1.2, 0.6};

Physical Volume("lower") = {1};
Physical Volume("upper") = {2};
Physical Surface("top") = {12};
