"""The fitted kernel of the exact kernel machines, as keywords of :func:`kernelmaps.exact_kernel`."""


class FittedKernelMixin:
    """``_kernel_params`` of an estimator whose fit sets ``kernel_``, ``gamma_``,
    ``degree_`` and ``coef0_`` (the exact kernel ridge and SVM baselines)."""

    def _kernel_params(self):
        """Keyword arguments of :func:`kernelmaps.exact_kernel` for the fitted kernel.

        Returns
        -------
        dict
            ``kernel``, ``gamma``, ``degree`` and ``coef0``.
        """
        return {"kernel": self.kernel_, "gamma": self.gamma_, "degree": self.degree_,
                "coef0": self.coef0_}
