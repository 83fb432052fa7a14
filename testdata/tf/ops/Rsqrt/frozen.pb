
7
x0Placeholder*
shape:*
dtype0

RsqrtRsqrtx0*
T0
$
IdentityIdentityRsqrt*
T0"ª