
2
xPlaceholder*
dtype0*
shape
:
"
yMergexx*
N*
T0