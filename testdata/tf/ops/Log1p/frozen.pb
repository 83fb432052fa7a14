
7
x0Placeholder*
shape:*
dtype0

Log1pLog1px0*
T0
$
IdentityIdentityLog1p*
T0"ª