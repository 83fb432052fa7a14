
7
x0Placeholder*
shape:*
dtype0

EluElux0*
T0
"
IdentityIdentityElu*
T0"ª