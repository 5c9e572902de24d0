Bx_scaleJ
×#<