
2
xPlaceholder*
dtype0*
shape
:
=
callPartitionedCallx*	
Tin0*

Tout0*

fR
f;
9

f
a
y
rRelua*
T0"
yr:y:zero