
7
x0Placeholder*
shape:*
dtype0

SeluSelux0*
T0
#
IdentityIdentitySelu*
T0"ª