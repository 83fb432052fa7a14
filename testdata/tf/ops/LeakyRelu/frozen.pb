
3
x0Placeholder*
shape
:*
dtype0
3
	LeakyRelu	LeakyRelux0*
alpha%š™™>*
T0
(
IdentityIdentity	LeakyRelu*
T0"ª