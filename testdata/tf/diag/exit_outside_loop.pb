
2
xPlaceholder*
dtype0*
shape
:

yExitx*
T0