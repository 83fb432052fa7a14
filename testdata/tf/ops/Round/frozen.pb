
3
x0Placeholder*
shape
:*
dtype0

RoundRoundx0*
T0
$
IdentityIdentityRound*
T0"ª