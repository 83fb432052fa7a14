
7
x0Placeholder*
shape:*
dtype0

LogLogx0*
T0
"
IdentityIdentityLog*
T0"ª