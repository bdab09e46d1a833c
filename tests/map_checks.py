"""Shared checks of the Gaussian feature maps against their exact kernel."""

from kernelmaps import exact_kernel, relative_frobenius_error


def gaussian_map_error(map_class, gamma, X, n_components, seed, output="cos", true_gamma=None):
    """Relative Frobenius error of ``map_class(n_components, gamma=gamma)`` on ``X``
    against the exact Gaussian kernel at ``true_gamma`` (default: ``gamma``), so
    that a map drawn at a wrong bandwidth can be held to the right kernel."""
    features = map_class(n_components, gamma=gamma, output=output, random_state=seed).fit(X).transform(X)
    K = exact_kernel(X, kernel="gaussian", gamma=true_gamma or gamma)
    return relative_frobenius_error(K, Z=features)
