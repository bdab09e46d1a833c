"""benchmarks.pickle_compat: estimators pickled by one version load, and give the same output, in another."""

import pickle

from benchmarks import pickle_compat


def test_pickles_written_and_checked_by_the_same_code_agree(tmp_path, capsys):
    pickle_compat.main(["write", str(tmp_path), "--only", "rff,least_squares"])
    assert pickle_compat.main(["check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 estimators load and give identical output" in out
    # the one private class a fitted estimator holds: the least-squares accumulator
    assert "names kernelmaps._solvers.normal_equations.NormalEquations" in out


def test_a_changed_output_and_a_moved_module_fail_the_check(tmp_path, capsys):
    pickle_compat.main(["write", str(tmp_path), "--only", "rff"])
    saved = pickle.loads((tmp_path / "rff.pkl").read_bytes())
    saved["outputs"]["transform"][0, 0] += 1.0
    (tmp_path / "rff.pkl").write_bytes(pickle.dumps(saved))
    # a pickle naming a class by a module path that no longer exists
    (tmp_path / "moved.pkl").write_bytes(b"ckernelmaps._gone\nThing\n.")
    assert pickle_compat.main(["check", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("rff ") and line.endswith("FAILED: different transform") for line in lines)
    assert any(line.startswith("moved ") and "FAILED to load: ModuleNotFoundError" in line and "kernelmaps._gone" in line
               for line in lines)
    assert "0 of 2 estimators load and give identical output; failed: moved, rff" in lines


def test_a_least_squares_model_pickled_with_its_accumulator_defined_in_least_squares_loads():
    import numpy as np

    from kernelmaps import LeastSquaresRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    model = LeastSquaresRegressor(alpha=0.1).fit(X, X @ np.array([1.0, -2.0, 0.5]))
    # protocol 2 names each class as "module\nname"; written by a version that defined the
    # accumulator in kernelmaps.least_squares, the pickle names it there
    current = b"ckernelmaps._solvers.normal_equations\nNormalEquations\n"
    data = pickle.dumps(model, protocol=2)
    assert current in data
    loaded = pickle.loads(data.replace(current, b"ckernelmaps.least_squares\nNormalEquations\n"))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
