
2
xPlaceholder*
dtype0*
shape
: