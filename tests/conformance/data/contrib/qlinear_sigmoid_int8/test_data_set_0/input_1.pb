BX_scaleJ
×#=