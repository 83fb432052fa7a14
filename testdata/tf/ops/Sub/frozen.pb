
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
SubSubx0x1*
T0
"
IdentityIdentitySub*
T0"ª