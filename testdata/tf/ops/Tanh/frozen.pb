
7
x0Placeholder*
shape:*
dtype0

TanhTanhx0*
T0
#
IdentityIdentityTanh*
T0"ª