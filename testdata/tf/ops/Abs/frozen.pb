
7
x0Placeholder*
shape:*
dtype0

AbsAbsx0*
T0
"
IdentityIdentityAbs*
T0"ª