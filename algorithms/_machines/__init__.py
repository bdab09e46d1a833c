"""The bases of the learner families: least squares on features, the Nyström kernel
machines (in memory and on Dask), the scale-learning kernel ridge, the SVC parameters,
and the group-lasso fits over kernel groups, with the helpers the learners on Dask
arrays share."""
