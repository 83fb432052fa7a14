
7
x0Placeholder*
shape:*
dtype0

SignSignx0*
T0
#
IdentityIdentitySign*
T0"ª