BY_scaleJ
×#=