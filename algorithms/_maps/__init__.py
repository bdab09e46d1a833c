"""What several feature maps share: the skeletons of the cosine, Hadamard-structured
and learned maps, the structured projections two maps use (the circulant blocks,
SORF's Hadamard blocks, the SRHT), and the draws of frequencies from spectral
densities, Monte Carlo and quasi-Monte Carlo."""
