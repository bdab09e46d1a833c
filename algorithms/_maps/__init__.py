"""What several feature maps share: the skeletons of the cosine, Hadamard-structured
and learned maps, and the quasi-Monte Carlo draws of frequencies."""
