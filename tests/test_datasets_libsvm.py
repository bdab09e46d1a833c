"""Tests for kernelmaps.datasets' LIBSVM fetching: downloads, checksums, the cache, deadlines.

The tests serve tiny files from an HTTP server on 127.0.0.1; an autouse fixture
points every loader at a closed local port and a temporary cache, so no test can
reach another address or the user's cache.
"""

import bz2
import dataclasses
import hashlib
import http.server
import io
import json
import threading
import time

import numpy as np
import pytest
from dataset_checks import check_dataset, closed_port_url, go_offline
from sklearn.datasets import dump_svmlight_file

import kernelmaps.datasets as kd


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    go_offline(tmp_path, monkeypatch)


class _Server:
    """Static files from ``root`` on 127.0.0.1, counting the requests.

    With ``seconds_per_byte`` set, file bodies are sent one byte at a time at
    that pace (a trickling server).
    """

    def __init__(self, root):
        self.root, self.requests = root, []
        self.seconds_per_byte = None
        self.stopping = threading.Event()
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            timeout = 5                      # a stuck connection cannot stall close()

            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self):
                server.requests.append(self.path)
                super().do_GET()

            def copyfile(self, source, outputfile):
                if server.seconds_per_byte is None:
                    return super().copyfile(source, outputfile)
                # Bounded by the file's size, and cut short by close() or by the
                # client hanging up, so that the thread always ends with the test.
                for byte in iter(lambda: source.read(1), b""):
                    if server.stopping.wait(server.seconds_per_byte):
                        return
                    try:
                        outputfile.write(byte)
                    except OSError:
                        return

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/datasets"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def close(self):
        """Stop serving and wait for every server thread to end."""
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()            # joins the request threads
        self.thread.join()

    def put(self, folder, name, X, y):
        """Write X, y in LIBSVM format (bz2 if the name ends in .bz2); return the bytes."""
        path = self.root / "datasets" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        dump_svmlight_file(X, y, buffer, zero_based=False)
        data = buffer.getvalue()
        data = bz2.compress(data) if name.endswith(".bz2") else data
        path.write_bytes(data)
        return data


@pytest.fixture
def server(tmp_path):
    srv = _Server(tmp_path / "www")
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def small_unpinned_sets(monkeypatch):
    """cpusmall and cadata expecting the 40 and 30 rows of the test files.

    Their real files (8192 and 20640 rows) have no checksum pin, so a file's
    row count is checked; the registry entries are swapped for loaders of
    specs with these sizes, cut in the real 80/20 ratio.
    """
    for name, n_train, n_test in (("cpusmall", 32, 8), ("cadata", 24, 6)):
        spec = next(s for s in kd._libsvm.SPECS if s.name == name)
        small = dataclasses.replace(spec, n_train=n_train, n_test=n_test)
        info = kd._base.REGISTRY[name].info
        monkeypatch.setitem(kd._base.REGISTRY, name,
                            kd._base.Entry(info, kd._libsvm._loader(small, info)))


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _manifest_files(cache):
    return json.loads((cache / "libsvm" / "manifest.json").read_text())["files"]


def _regression_data(n=40, d=12, seed=0):
    rng = np.random.default_rng(seed)
    return np.round(rng.uniform(-1, 1, (n, d)), 4), np.round(rng.normal(size=n), 4)


def test_libsvm_download_parse_and_cache_hit(server, tmp_path, small_unpinned_sets):
    X, y = _regression_data()
    data = server.put("regression", "cpusmall_scale", X, y)
    cache = tmp_path / "cache"
    ds = kd.load("cpusmall", data_home=cache, base_url=server.url)
    check_dataset(ds, kd.info("cpusmall"))
    assert server.requests == ["/datasets/regression/cpusmall_scale"]
    assert (len(ds.y_train), len(ds.y_test)) == (32, 8)
    rows = np.column_stack([np.concatenate([ds.X_train, ds.X_test]),
                            np.concatenate([ds.y_train, ds.y_test])])
    assert np.array_equal(np.unique(rows, axis=0), np.unique(np.column_stack([X, y]),
                                                             axis=0))
    cached = cache / "libsvm" / "cpusmall_scale"
    assert cached.read_bytes() == data
    assert ds.extras["files"] == {"cpusmall_scale": _sha256(data)}
    entry = _manifest_files(cache)["cpusmall_scale"]
    assert entry["sha256"] == _sha256(data)
    assert entry["origin"].startswith("passed the row and column check")
    assert sorted(p.name for p in cached.parent.iterdir()) == ["cpusmall_scale",
                                                               "manifest.json"]

    again = kd.load("cpusmall", data_home=cache, base_url=server.url)
    assert len(server.requests) == 1                 # served from the cache
    assert np.array_equal(again.X_train, ds.X_train)
    assert np.array_equal(again.y_test, ds.y_test)


def test_libsvm_environment_variables(server, tmp_path, monkeypatch,
                                     small_unpinned_sets):
    X, y = _regression_data(30, 8)
    server.put("regression", "cadata", X, y)
    monkeypatch.setenv("KERNELMAPS_LIBSVM_URL", server.url)
    monkeypatch.setenv("KERNELMAPS_DATA", str(tmp_path / "from-env"))
    ds = kd.load("cadata")
    assert ds.n_features == 8 and len(ds.y_train) + len(ds.y_test) == 30
    assert (tmp_path / "from-env" / "libsvm" / "cadata").exists()


def test_libsvm_classification_with_user_pins(server, tmp_path):
    rng = np.random.default_rng(1)
    X_tr, X_te = rng.uniform(-1, 1, (30, 22)).round(3), rng.uniform(-1, 1, (10, 22)).round(3)
    y_tr, y_te = np.where(X_tr[:, 0] > 0, 1, -1), np.where(X_te[:, 0] > 0, 1, -1)
    pins = {"ijcnn1.bz2": "sha256:" + _sha256(server.put("binary", "ijcnn1.bz2", X_tr, y_tr)),
            "ijcnn1.t.bz2": _sha256(server.put("binary", "ijcnn1.t.bz2", X_te, y_te))}
    cache = tmp_path / "cache"
    ds = kd.load("ijcnn1", data_home=cache, base_url=server.url, checksums=pins)
    check_dataset(ds, kd.info("ijcnn1"))
    assert ds.class_names == ("-1", "1")
    assert np.array_equal(ds.X_train, X_tr) and np.array_equal(ds.X_test, X_te)
    assert np.array_equal(ds.y_train, (y_tr > 0).astype(np.int64))
    manifest = _manifest_files(cache)
    assert {manifest[f]["origin"] for f in pins} == {"user"}
    # The user pins replace the built-in MD5 pins from now on, without the option.
    kd.load("ijcnn1", data_home=cache, base_url=server.url)
    assert len(server.requests) == 2


def test_libsvm_pinned_checksum_mismatch(server, tmp_path):
    rng = np.random.default_rng(2)
    data = server.put("binary", "a9a", rng.integers(0, 2, (5, 123)), [1, -1, 1, 1, -1])
    cache = tmp_path / "cache"
    with pytest.raises(kd.ChecksumMismatchError) as err:
        kd.load("a9a", data_home=cache, base_url=server.url)
    msg = str(err.value)
    actual = hashlib.md5(data).hexdigest()
    assert "'a9a'" in msg and "fb3596510d780aaf76a06dc721d49662" in msg and actual in msg
    assert (err.value.filename, err.value.algorithm, err.value.actual) == ("a9a", "md5",
                                                                           actual)
    assert isinstance(err.value, OSError)
    assert list((cache / "libsvm").iterdir()) == []        # nothing kept, no manifest


def test_libsvm_recorded_checksum_mismatch_on_new_download(server, tmp_path,
                                                           small_unpinned_sets):
    X, y = _regression_data()
    first = server.put("regression", "cpusmall_scale", X, y)
    cache = tmp_path / "cache"
    kd.load("cpusmall", data_home=cache, base_url=server.url)
    cached = cache / "libsvm" / "cpusmall_scale"
    cached.unlink()
    changed = server.put("regression", "cpusmall_scale", X, y + 1)
    with pytest.raises(kd.ChecksumMismatchError, match="manifest") as err:
        kd.load("cpusmall", data_home=cache, base_url=server.url)
    assert (err.value.expected, err.value.actual) == (_sha256(first), _sha256(changed))
    assert "cpusmall_scale" in str(err.value) and "deleted" in str(err.value)
    assert sorted(p.name for p in cached.parent.iterdir()) == ["manifest.json"]


def test_libsvm_tampered_cache_is_moved_aside(server, tmp_path, small_unpinned_sets):
    X, y = _regression_data()
    server.put("regression", "cpusmall_scale", X, y)
    cache = tmp_path / "cache"
    ds = kd.load("cpusmall", data_home=cache, base_url=server.url)
    cached = cache / "libsvm" / "cpusmall_scale"
    cached.write_bytes(cached.read_bytes().replace(b"1:", b"2:", 1))
    with pytest.raises(kd.ChecksumMismatchError, match="cached copy") as err:
        kd.load("cpusmall", data_home=cache, base_url=server.url)
    rejected = cached.with_name("cpusmall_scale.rejected")
    assert not cached.exists() and rejected.exists() and str(rejected) in str(err.value)
    again = kd.load("cpusmall", data_home=cache, base_url=server.url)   # downloads anew
    assert len(server.requests) == 2 and np.array_equal(again.X_train, ds.X_train)


def test_libsvm_offline_error_says_what_to_put_where(tmp_path):
    url = closed_port_url()
    cache = tmp_path / "cache"
    with pytest.raises(kd.DatasetNotAvailableError) as err:
        kd.load("usps", data_home=cache, base_url=url, timeout=5)
    msg, directory = str(err.value), (cache / "libsvm").resolve()
    assert isinstance(err.value, OSError)
    assert f"{url}/multiclass/usps.bz2" in msg
    assert "'usps.bz2'" in msg and str(directory) in msg
    assert (err.value.url, err.value.filename, err.value.directory) == (
        f"{url}/multiclass/usps.bz2", "usps.bz2", directory)
    assert list(directory.iterdir()) == []                    # no partial download


def test_libsvm_missing_file_on_server(server, tmp_path):
    with pytest.raises(kd.DatasetNotAvailableError, match="404"):
        kd.load("mnist", data_home=tmp_path, base_url=server.url)


def test_libsvm_invalid_download_is_not_kept_or_trusted(server, tmp_path):
    X, y = _regression_data(10, 13)                   # 13 features, cpusmall has 12
    server.put("regression", "cpusmall_scale", X, y)
    (server.root / "datasets" / "multiclass").mkdir()
    (server.root / "datasets" / "multiclass" / "usps.bz2").write_text("<html>login</html>")
    with pytest.raises(ValueError, match="cpusmall_scale is not a valid LIBSVM file for "
                                         "dataset 'cpusmall'"):
        kd.load("cpusmall", data_home=tmp_path, base_url=server.url)
    with pytest.raises(ValueError, match="usps.bz2 is not a valid LIBSVM file"):
        kd.load("usps", data_home=tmp_path, base_url=server.url,
                checksums={"usps.bz2": "md5:" + hashlib.md5(b"<html>login</html>")
                           .hexdigest()})
    assert list((tmp_path / "libsvm").iterdir()) == []      # no file, no manifest


def _damage(data, damage):
    """``data`` emptied, or truncated after its middle line (so it still parses)."""
    return b"" if damage == "empty" else data[:data.index(b"\n", len(data) // 2) + 1]


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_libsvm_unpinned_download_with_wrong_counts_is_refused_then_genuine_accepted(
        server, tmp_path, small_unpinned_sets, damage):
    X, y = _regression_data()
    genuine = server.put("regression", "cpusmall_scale", X, y)
    served = server.root / "datasets" / "regression" / "cpusmall_scale"
    damaged = _damage(genuine, damage)
    served.write_bytes(damaged)
    n_rows = damaged.count(b"\n")
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="cpusmall_scale is not the expected LIBSVM file "
                                         "for dataset 'cpusmall'") as err:
        kd.load("cpusmall", data_home=cache, base_url=server.url)
    msg = str(err.value)
    assert (f"expected 40 rows and 12 feature columns, found {n_rows} rows and "
            f"{12 if n_rows else 0} feature columns") in msg
    assert "not recorded" in msg and "download was deleted" in msg
    assert list((cache / "libsvm").iterdir()) == []          # no file, no manifest

    served.write_bytes(genuine)
    ds = kd.load("cpusmall", data_home=cache, base_url=server.url)
    assert len(ds.y_train) + len(ds.y_test) == 40 and len(server.requests) == 2
    entry = _manifest_files(cache)["cpusmall_scale"]
    assert entry["sha256"] == _sha256(genuine)
    assert entry["origin"].startswith("passed the row and column check")


def test_libsvm_unpinned_cached_file_with_wrong_counts_is_moved_aside(
        server, tmp_path, small_unpinned_sets):
    X, y = _regression_data(30, 8)
    server.put("regression", "cadata", X, y)
    cached = tmp_path / "libsvm" / "cadata"
    cached.parent.mkdir()
    cached.write_bytes(b"")                   # as if saved by hand from a failed fetch
    with pytest.raises(ValueError, match="expected 30 rows and 8 feature columns, found 0 "
                                         "rows and 0 feature columns") as err:
        kd.load("cadata", data_home=tmp_path, base_url=server.url)
    rejected = cached.with_name("cadata.rejected")
    assert str(rejected) in str(err.value) and server.requests == []
    assert sorted(p.name for p in cached.parent.iterdir()) == ["cadata.rejected"]
    ds = kd.load("cadata", data_home=tmp_path, base_url=server.url)  # downloads anew
    assert len(ds.y_train) + len(ds.y_test) == 30


def test_libsvm_unchecked_manifest_entry_of_older_versions_is_ignored(
        server, tmp_path, small_unpinned_sets):
    # Older versions trusted an unpinned file on first use: an empty download was
    # recorded and the genuine file refused ever after.
    X, y = _regression_data()
    genuine = server.put("regression", "cpusmall_scale", X, y)
    (tmp_path / "libsvm").mkdir()
    (tmp_path / "libsvm" / "manifest.json").write_text(json.dumps({"version": 1, "files": {
        "cpusmall_scale": {"sha256": _sha256(b""), "md5": hashlib.md5(b"").hexdigest(),
                           "origin": "trust on first use (downloaded from elsewhere)",
                           "url": None, "recorded": "2024-01-01T00:00:00+00:00"}}}))
    ds = kd.load("cpusmall", data_home=tmp_path, base_url=server.url)
    assert len(ds.y_train) + len(ds.y_test) == 40
    entry = _manifest_files(tmp_path)["cpusmall_scale"]
    assert entry["sha256"] == _sha256(genuine)
    assert entry["origin"].startswith("passed the row and column check")


def _load_from_trickling_server(server, cache, seconds_per_byte, **options):
    """Load cpusmall from ``server`` sending a byte every ``seconds_per_byte``
    (minutes for the whole file), with a socket timeout that never fires; the
    error it raises and the seconds it took."""
    X, y = _regression_data()
    server.put("regression", "cpusmall_scale", X, y)
    server.seconds_per_byte = seconds_per_byte
    started = time.monotonic()
    with pytest.raises(kd.DatasetNotAvailableError) as err:
        kd.load("cpusmall", data_home=cache, base_url=server.url, timeout=5, **options)
    return err.value, time.monotonic() - started


def test_libsvm_download_deadline(server, tmp_path):
    cache = tmp_path / "cache"
    error, seconds = _load_from_trickling_server(server, cache, 0.3, deadline=1.5,
                                                 min_rate=0)
    url = f"{server.url}/regression/cpusmall_scale"
    assert f"download of {url} exceeded the total deadline of 1.5 s" in str(error)
    assert isinstance(error.__cause__, TimeoutError)
    assert 1.5 <= seconds < 4
    assert list((cache / "libsvm").iterdir()) == []       # partial file removed


def test_libsvm_download_minimum_rate(server, tmp_path, monkeypatch):
    monkeypatch.setattr(kd._libsvm_download, "MIN_RATE_WINDOW", 0.5)
    cache = tmp_path / "cache"
    error, seconds = _load_from_trickling_server(server, cache, 0.05, min_rate=100)
    url = f"{server.url}/regression/cpusmall_scale"
    assert f"download of {url} fell below the minimum rate of 100 bytes/s over the " \
           "last 0." in str(error)
    assert 0.5 <= seconds < 3
    assert list((cache / "libsvm").iterdir()) == []       # partial file removed


@pytest.mark.parametrize("options, match", [
    (dict(timeout=0), "timeout must be a number of seconds > 0"),
    (dict(deadline=0), "deadline must be a number of seconds > 0, got 0"),
    (dict(deadline=True), "deadline must be a number of seconds > 0, got True"),
    (dict(deadline="60"), "deadline must be a number of seconds > 0"),
    (dict(min_rate=-1), "min_rate must be a number of bytes/s >= 0, got -1"),
    (dict(min_rate=False), "min_rate must be a number of bytes/s >= 0, got False"),
    (dict(min_rate=float("nan")), "min_rate must be a number of bytes/s >= 0"),
    (dict(checksums=["abc"]), "checksums must be a dict"),
    (dict(checksums={"mnist.scale.bz2": "sha1:abc"}), "checksum for mnist.scale.bz2 must"),
    (dict(checksums={"mnist.bz2": "0" * 64}), "does not use; its files are"),
    (dict(base_url="ftp://127.0.0.1/x"), "base_url must be an http"),
])
def test_bad_libsvm_options(options, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        kd.load("mnist", data_home=tmp_path, **options)
