
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
f1
/

f
a
yRelua*
T0"
ya