Bb_scaleJ
×#<B`e<¼t“<X9´<ôýÔ<Âõ<