
7
x0Placeholder*
shape:*
dtype0
!
SoftplusSoftplusx0*
T0
'
IdentityIdentitySoftplus*
T0"ª