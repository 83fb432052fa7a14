
2
xPlaceholder*
dtype0*
shape
:
@
callPartitionedCallxx*	
Tin0*

Tout0*

fR
f8
6

f
a
y
rRelua*
T0"

yr:y:0