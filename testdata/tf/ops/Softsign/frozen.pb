
7
x0Placeholder*
shape:*
dtype0
!
SoftsignSoftsignx0*
T0
'
IdentityIdentitySoftsign*
T0"ª