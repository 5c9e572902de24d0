Bweight_scaleJ
ף;