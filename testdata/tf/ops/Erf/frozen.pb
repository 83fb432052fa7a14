
7
x0Placeholder*
shape:*
dtype0

ErfErfx0*
T0
"
IdentityIdentityErf*
T0"ª