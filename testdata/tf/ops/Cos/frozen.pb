
7
x0Placeholder*
shape:*
dtype0

CosCosx0*
T0
"
IdentityIdentityCos*
T0"ª