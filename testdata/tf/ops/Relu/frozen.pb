
7
x0Placeholder*
shape:*
dtype0

ReluRelux0*
T0
#
IdentityIdentityRelu*
T0"ª