
7
x0Placeholder*
shape:*
dtype0

NegNegx0*
T0
"
IdentityIdentityNeg*
T0"ª