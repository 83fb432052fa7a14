
7
x0Placeholder*
shape:*
dtype0

ExpExpx0*
T0
"
IdentityIdentityExp*
T0"ª