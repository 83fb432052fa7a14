
3
x0Placeholder*
shape
:*
dtype0
/
x1Placeholder*
shape:*
dtype0

PowPowx0x1*
T0
"
IdentityIdentityPow*
T0"ª