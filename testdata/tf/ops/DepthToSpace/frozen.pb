
;
x0Placeholder*
shape:*
dtype0
R
DepthToSpaceDepthToSpacex0*

block_size*
data_formatNHWC*
T0
+
IdentityIdentityDepthToSpace*
T0
R
SpaceToDepthSpaceToDepthx0*
data_formatNHWC*

block_size*
T0
-

Identity_1IdentitySpaceToDepth*
T0"ª