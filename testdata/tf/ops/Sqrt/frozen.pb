
7
x0Placeholder*
shape:*
dtype0

SqrtSqrtx0*
T0
#
IdentityIdentitySqrt*
T0"ª