
7
x0Placeholder*
shape:*
dtype0
9
ShapeShapex0*
T0*
out_type0:íÏ
$
IdentityIdentityShape*
T0
)
SizeSizex0*
T0*
out_type0	
%

Identity_1IdentitySize*
T0	

RankRankx0*
T0
%

Identity_2IdentityRank*
T0"ª