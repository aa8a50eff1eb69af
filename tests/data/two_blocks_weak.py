#!/usr/bin/python3
"""Writes the weak constraints of two_blocks_v22.msh (tests/data/README.md): every node of the lower block's
top face (z = 0.6) bound to the point 0.05 above it on the upper block's bottom face (z = 0.65), given by the
barycentric weights of the upper block's tetrahedron containing it.
Usage: two_blocks_weak.py MESH.msh "K_N K_T" OUT.txt"""
import sys, numpy as np
def read(path):
    L=open(path).read().split("\n"); i=L.index("$Nodes"); n=int(L[i+1])
    X=np.array([[float(v) for v in L[i+2+k].split()[1:4]] for k in range(n)])
    j=L.index("$Elements"); m=int(L[j+1]); tets=[]
    for k in range(m):
        f=[int(v) for v in L[j+2+k].split()]
        if f[1]==4: tets.append([x-1 for x in f[3+f[2]:]])
    return X,np.array(tets)
X,T=read(sys.argv[1])
ztop_low=0.6; zbot_up=0.65
low=np.where(np.abs(X[:,2]-ztop_low)<1e-9)[0]
# tets of the upper block
up=T[X[T].mean(axis=1)[:,2]>0.62]
out=["pbng-weak-constraints 1"]
for i in low:
    q=np.array([X[i,0],X[i,1],zbot_up])
    best=None
    for t in up:
        P=X[t]; D=(P[1:]-P[0]).T; w=np.linalg.solve(D,q-P[0]); w=np.concatenate([[1-w.sum()],w])
        if w.min()>-1e-12: best=(t,np.clip(w,0,1)); break
    t,w=best; w=w/w.sum()
    out.append("1 %d 1.0   4 %s   %s"%(i," ".join("%d %.17g"%(a,b) for a,b in zip(t,w)),sys.argv[2]))
open(sys.argv[3],"w").write("\n".join(out)+"\n")
print(len(low),"constraints")
