
7
x0Placeholder*
shape:*
dtype0

CeilCeilx0*
T0
#
IdentityIdentityCeil*
T0"ª