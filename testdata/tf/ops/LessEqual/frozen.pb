
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
'
	LessEqual	LessEqualx0x1*
T0
(
IdentityIdentity	LessEqual*
T0
"ª