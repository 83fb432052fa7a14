
7
x0Placeholder*
shape:*
dtype0

ErfcErfcx0*
T0
#
IdentityIdentityErfc*
T0"ª