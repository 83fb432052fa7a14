
.
xPlaceholder*
shape:*
dtype0

aErfinvx*
T0

bRelua*
T0

cLookupTableFindV2b