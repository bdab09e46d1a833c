"""The exact-kernel vocabulary: kernel names and their parameters, the exact Gram
blocks, bandwidth heuristics, frames, user kernels, the exact arc-cosine and min-max
kernels, and the choice of centres (landmarks). Every kernel a map approximates has
its formula here, once."""
