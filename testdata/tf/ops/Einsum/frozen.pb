
7
x0Placeholder*
shape:*
dtype0
7
x1Placeholder*
shape:*
dtype0
M
einsum/EinsumEinsumx0x1*
equationbij,bkj->bik*
T0*
N
,
IdentityIdentityeinsum/Einsum*
T0
F
einsum_1/EinsumEinsumx0*
equation	bij->bj*
T0*
N
0

Identity_1Identityeinsum_1/Einsum*
T0"ª