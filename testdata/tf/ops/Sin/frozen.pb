
7
x0Placeholder*
shape:*
dtype0

SinSinx0*
T0
"
IdentityIdentitySin*
T0"ª