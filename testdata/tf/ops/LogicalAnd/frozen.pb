
3
x0Placeholder*
shape
:*
dtype0

/
x1Placeholder*
shape:*
dtype0

 

LogicalAnd
LogicalAndx0x1
)
IdentityIdentity
LogicalAnd*
T0


	LogicalOr	LogicalOrx0x1
*

Identity_1Identity	LogicalOr*
T0



LogicalNot
LogicalNotx0
+

Identity_2Identity
LogicalNot*
T0
"ª