
3
x0Placeholder*
shape
:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
'

div_no_nanDivNoNanx0x1*
T0
)
IdentityIdentity
div_no_nan*
T0"ª