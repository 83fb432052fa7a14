
2
xPlaceholder*
dtype0*
shape
:
)
pConst*
dtype0
*
valueB
Z

swSwitchxp*
T0

yRelusw:0*
T0