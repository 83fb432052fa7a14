
7
x0Placeholder*
shape:*
dtype0
%

Reciprocal
Reciprocalx0*
T0
)
IdentityIdentity
Reciprocal*
T0"ª