"""threadpoolctl control of the thread count of kernelmaps' row blocks.

Transforms and Gram matrices run their row blocks on as many threads as Numba's
thread count for the calling thread (``numba.get_num_threads()``, at most
``NUMBA_NUM_THREADS``). Registering a threadpoolctl controller for it lets the
tool users already reach for limit it too::

    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):                  # every library, kernelmaps included
        Z = rff.transform(X)
    with threadpool_limits(limits={"numba": 1}):       # kernelmaps and Numba only
        Z = rff.transform(X)

Numba's thread count is per calling thread, so such a limit applies to the
thread that sets it (as threadpoolctl asks of its controllers), unlike BLAS
limits, which are process-wide. scikit-learn's and joblib's process workers
(``GridSearchCV(n_jobs=...)``) start with ``NUMBA_NUM_THREADS`` set to their
share of the cores, which this count follows.

Threadpoolctl finds a library's controller by a shared object loaded in the
process; the Numba one is matched on Numba's ``_helperlib`` extension, which
is loaded whenever Numba is imported, so the controller is found as soon as
kernelmaps is imported.
"""

import numba

try:
    from threadpoolctl import LibController, register
except ImportError:  # threadpoolctl before 3.2 has no custom controllers
    LibController = register = None


def _thread_cap():
    return int(numba.config.NUMBA_NUM_THREADS)


if LibController is not None:

    class NumbaThreadsController(LibController):
        """The thread count of Numba and of kernelmaps' row blocks, for threadpoolctl.

        Examples
        --------
        >>> import kernelmaps
        >>> from threadpoolctl import threadpool_info, threadpool_limits
        >>> [info["user_api"] for info in threadpool_info() if info["internal_api"] == "numba"]
        ['numba']
        >>> import numba
        >>> with threadpool_limits(limits={"numba": 1}):
        ...     numba.get_num_threads()
        1
        """

        user_api = "numba"
        internal_api = "numba"
        filename_prefixes = ("_helperlib",)

        def get_num_threads(self):
            return numba.get_num_threads()

        def set_num_threads(self, num_threads):
            # threadpoolctl may ask for more threads than Numba started with
            numba.set_num_threads(max(1, min(int(num_threads), _thread_cap())))

        def get_version(self):
            return numba.__version__

    register(NumbaThreadsController)
