"""Datasets shipped with scikit-learn: digits and breast_cancer (no download needed)."""

from __future__ import annotations

import numpy as np

from ._base import DatasetInfo, make_dataset, register, seeded_split

SPLIT_SEED = 0
_SPLIT_NOTE = (f"Split: a random permutation of the rows with seed {SPLIT_SEED} "
               "(numpy default_rng), cut into train and test; not stratified. "
               "Class indices are scikit-learn's own target codes.")

_SPECS = {
    # name: (sklearn loader name, n_rows, n_features, n_train, n_test, class_names, ...)
    "digits": dict(
        loader="load_digits", n_rows=1797, n_features=64, n_train=1297, n_test=500,
        class_names=tuple(str(d) for d in range(10)),
        source=("scikit-learn's bundled copy (sklearn.datasets.load_digits) of the test "
                "part of UCI Optical Recognition of Handwritten Digits "
                "(Alpaydin & Kaynak, 1998; doi:10.24432/C50P49)"),
        license="CC BY 4.0 (UCI Machine Learning Repository)",
        description=("DIGITS: 1797 8x8 images of handwritten digits, 64 integer "
                     "features in 0..16, 10 classes. 1297 train / 500 test. "
                     + _SPLIT_NOTE)),
    "breast_cancer": dict(
        loader="load_breast_cancer", n_rows=569, n_features=30, n_train=369, n_test=200,
        class_names=("malignant", "benign"),
        source=("scikit-learn's bundled copy (sklearn.datasets.load_breast_cancer) of "
                "UCI Breast Cancer Wisconsin (Diagnostic) (Wolberg et al., 1995; "
                "doi:10.24432/C5DW2B)"),
        license="CC BY 4.0 (UCI Machine Learning Repository)",
        description=("BREAST_CANCER: 569 tumours, 30 real features, classes malignant "
                     "(0) / benign (1). 369 train / 200 test. " + _SPLIT_NOTE)),
}


def _loader(info: DatasetInfo, spec: dict):
    def load(options, data_home):
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, spec["loader"])(return_X_y=True)
        train, test = seeded_split(spec["n_rows"], spec["n_train"], spec["n_test"],
                                   SPLIT_SEED)
        return make_dataset(info, np.asarray(X, dtype=np.float64), y, train, test)
    return load


for _name, _spec in _SPECS.items():
    _info = DatasetInfo(
        name=_name, kind="sklearn", task="classification", n_features=_spec["n_features"],
        n_train=_spec["n_train"], n_test=_spec["n_test"],
        n_classes=len(_spec["class_names"]), class_names=_spec["class_names"],
        source=_spec["source"], license=_spec["license"],
        description=_spec["description"])
    register(_info, _loader(_info, _spec))
