"""The kernel parameters of the exact kernel machines and Nyström: kept as given, and fitted
as keywords of :func:`kernelmaps.exact_kernel`."""


class FittedKernelMixin:
    """The parameters ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``nu`` of an
    estimator whose fit sets ``kernel_``, ``gamma_``, ``degree_``, ``coef0_`` and
    ``nu_`` (the exact kernel ridge and SVM baselines, Nyström and its kernel machines).
    """

    def _keep_kernel_parameters(self, kernel, gamma, degree, coef0, nu):
        """Store the kernel's constructor arguments unchanged, as scikit-learn's ``__init__`` does."""
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.nu = nu

    def _kernel_params(self):
        """Keyword arguments of :func:`kernelmaps.exact_kernel` for the fitted kernel.

        Returns
        -------
        dict
            ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``nu`` (the Matérn
            smoothness, read only when ``kernel`` is ``'matern'``).
        """
        return self._kernel_params_for(self.gamma_)

    def _kernel_params_for(self, gamma):
        """:meth:`_kernel_params` with the bandwidth ``gamma``, for a fit that has set
        every kernel attribute but ``gamma_`` (see
        :func:`kernelmaps._kernels.landmarks.set_up_landmarks`)."""
        return {"kernel": self.kernel_, "gamma": gamma, "degree": self.degree_,
                "coef0": self.coef0_, "nu": self.nu_}
