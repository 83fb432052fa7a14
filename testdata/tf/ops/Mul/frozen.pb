
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0

MulMulx0x1*
T0
"
IdentityIdentityMul*
T0"ª