
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
fO
M

f
a
y
rRelua*
T0
rRelua*
T0"

yr:y:0