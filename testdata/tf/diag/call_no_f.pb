
2
xPlaceholder*
dtype0*
shape
:
1
callPartitionedCallx*	
Tin0*

Tout0