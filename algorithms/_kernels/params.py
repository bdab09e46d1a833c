"""The fitted kernel of the exact kernel machines, as keywords of :func:`kernelmaps.exact_kernel`."""


class FittedKernelMixin:
    """``_kernel_params`` of an estimator whose fit sets ``kernel_``, ``gamma_``,
    ``degree_``, ``coef0_`` and ``nu_`` (the exact kernel ridge and SVM baselines)."""

    def _kernel_params(self):
        """Keyword arguments of :func:`kernelmaps.exact_kernel` for the fitted kernel.

        Returns
        -------
        dict
            ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``nu`` (the Matérn
            smoothness, read only when ``kernel`` is ``'matern'``).
        """
        return {"kernel": self.kernel_, "gamma": self.gamma_, "degree": self.degree_,
                "coef0": self.coef0_, "nu": self.nu_}
