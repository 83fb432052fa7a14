
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
-
GreaterEqualGreaterEqualx0x1*
T0
+
IdentityIdentityGreaterEqual*
T0
"ª