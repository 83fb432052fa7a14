
3
x0Placeholder*
shape
:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
3
stackPackx0x1*

axis*
T0*
N
$
IdentityIdentitystack*
T0
5
unstackUnpackx0*

axis*
T0*	
num
(

Identity_1Identityunstack*
T0
*

Identity_2Identity	unstack:1*
T0
*

Identity_3Identity	unstack:2*
T0"ª