"""The passes of the cross-validated least-squares learners over the rows.

A pass is a task (:class:`MomentsPass` or :class:`EvaluationPass`) applied block by
block to the rows, filling a part that merges with the parts of other rows. In
memory one part takes every block (:func:`run_rows`); on Dask each chunk fills its
own (:func:`run_chunk`) and a tree of merges sums them
(:func:`kernelmaps.dask.map_reduce`). The same code computes every row either way.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier

from .._core.parallel import block_rows
from .._solvers.ridge_path import FoldMoments
from .least_squares import MAPPED_BLOCK_BYTES


def feature_blocks(Z, feature_map, row_bytes):
    """``(rows, features)`` for consecutive row blocks of ``Z``, mapped by ``feature_map`` if given.

    Only one block of features exists at a time. A block's rows take about
    ``row_bytes`` each (its features and the work beside them): the library's
    block rule for features, the taller blocks of a map's accumulation for inputs.
    """
    if feature_map is None:
        step = block_rows(row_bytes)
    else:
        step = max(256, MAPPED_BLOCK_BYTES // row_bytes)
    for start in range(0, Z.shape[0], step):
        rows = slice(start, min(Z.shape[0], start + step))
        yield rows, (Z[rows] if feature_map is None else feature_map.transform(Z[rows]))


def _rows_of(values, rows):
    return None if values is None else values[rows]


def run_rows(task, part, Z, targets, membership=None, fit_weight=None, score_weight=None, feature_map=None):
    """Apply ``task`` to every row block of validated rows, filling ``part``; return it.

    Parameters
    ----------
    task : MomentsPass or EvaluationPass
    part : what ``task.start()`` gave
    Z : ndarray or sparse matrix
        Features, or with ``feature_map`` its inputs.
    targets : ndarray
        The learner's targets of the rows (class indices, or target values).
    membership : ndarray of bool of shape (n_rows, n_splits), optional
        Whether each row is in each test fold.
    fit_weight, score_weight : ndarray of shape (n_rows,), optional
        The rows' weights in the fit (sample and class weights) and in the scores
        (sample weights).
    feature_map : fitted feature map, optional
    """
    for rows, block in feature_blocks(Z, feature_map, task.row_bytes):
        task.block(part, block, targets[rows], _rows_of(membership, rows), _rows_of(fit_weight, rows),
                   _rows_of(score_weight, rows))
    return part


def run_chunk(task, chunk, y, *rest):
    """One Dask chunk's part (the map step of :func:`kernelmaps.dask.map_reduce`).

    ``rest`` is the chunk's fold membership (when there are folds) and the feature
    map. The chunk is validated as rows in memory are; its rows weigh their class
    weights (Dask input takes no sample weights).
    """
    *membership, feature_map = rest
    learner = task.learner
    part = task.start()
    if chunk.shape[0] == 0:
        return part
    chunk, y = learner._validate_rows(chunk, y, False, feature_map)
    targets = learner._block_targets(y)
    return run_rows(task, part, chunk, targets, membership[0] if membership else None,
                    learner._row_weights(targets, None, partial=True), None, feature_map)


class MomentsPass:
    """The first pass: the moments of every test fold (and of all rows), :class:`FoldMoments`.

    Parameters
    ----------
    learner : cross-validated least-squares learner
        Its ``n_features_in_`` and targets are set.
    n_splits : int
    partition : bool
    target_offset : ndarray of shape (n_outputs,)
    """

    def __init__(self, learner, n_splits, partition, target_offset):
        self.learner, self.n_splits, self.partition, self.target_offset = learner, n_splits, partition, target_offset
        self.row_bytes = 8 * learner.n_features_in_

    def start(self):
        return FoldMoments(self.learner.n_features_in_, self.learner._n_outputs(), self.n_splits, self.partition,
                           self.target_offset)

    def block(self, part, Z, targets, membership, fit_weight, score_weight):
        part.add(Z, membership, sample_weight=fit_weight, **self.learner._moment_targets(targets))


def class_indices(decisions):
    """The class index of one-vs-rest decision values (last axis): the sign of one column, else the arg-max."""
    if decisions.shape[-1] == 1:
        return (decisions[..., 0] > 0).astype(np.intp)
    return np.argmax(decisions, axis=-1)


class EvaluationPart:
    """What the second pass gathers: every penalty's squared errors, hits, or outputs.

    Parameters
    ----------
    n_groups : int
        Test folds (1 for leave-one-out).
    n_alphas, n_outputs : int
    collect : bool
        Keep every row's outputs, targets and score weights, per test fold.
    """

    def __init__(self, n_groups, n_alphas, n_outputs, collect):
        self.squared = np.zeros((n_alphas, n_outputs))
        self.hits = np.zeros((n_groups, n_alphas))
        self.counted = np.zeros(n_groups)
        self.collected = [[] for _ in range(n_groups)] if collect else None

    def add(self, group, outputs, targets, score_weight, classifier):
        """Add rows of test fold ``group``: ``outputs`` (n_rows, n_alphas, n_outputs)."""
        if classifier:
            right = class_indices(outputs) == targets[:, None]
            self.hits[group] += right.sum(axis=0) if score_weight is None else score_weight @ right
        self.counted[group] += len(outputs) if score_weight is None else score_weight.sum()
        if self.collected is not None:
            self.collected[group].append((outputs, targets, score_weight))

    def merge(self, other):
        """Add another part's rows (which follow this part's)."""
        self.squared += other.squared
        self.hits += other.hits
        self.counted += other.counted
        if self.collected is not None:
            for mine, theirs in zip(self.collected, other.collected):
                mine.extend(theirs)
        return self

    def rows(self, group):
        """``(outputs, targets, score_weight)`` of every row of test fold ``group``, in row order."""
        outputs, targets, weights = zip(*self.collected[group])
        weights = None if weights[0] is None else np.concatenate(weights)
        return np.concatenate(outputs), np.concatenate(targets), weights


class EvaluationPass:
    """The second pass: every penalty's outputs on the held-out rows.

    With ``path`` (leave-one-out), each row's leave-one-out outputs; with
    ``fold_solutions``, each test fold's rows' outputs by the solutions of its
    training system. Squared errors (leave-one-out) and hits (classifiers) are
    summed as the rows come; the outputs themselves are kept only with ``collect``.

    Parameters
    ----------
    learner : cross-validated least-squares learner
    n_alphas : int
    collect : bool
    path : RidgePath, optional
    fold_solutions : list of (coef, intercept), optional
        Of shapes (n_features, n_alphas, n_outputs) and (n_alphas, n_outputs).
    """

    def __init__(self, learner, n_alphas, collect, path=None, fold_solutions=None):
        self.learner, self.n_alphas, self.collect = learner, n_alphas, collect
        self.path, self.fold_solutions = path, fold_solutions
        # a block's features, their projection and its square, and the outputs of every penalty
        self.row_bytes = 8 * (3 * learner.n_features_in_ + 3 * n_alphas * learner._n_outputs())

    def start(self):
        groups = 1 if self.fold_solutions is None else len(self.fold_solutions)
        return EvaluationPart(groups, self.n_alphas, self.learner._n_outputs(), self.collect)

    def block(self, part, Z, targets, membership, fit_weight, score_weight):
        classifier = is_classifier(self.learner)
        if self.path is not None:
            values = self.learner._target_matrix(targets)
            residuals = self.path.leave_one_out(Z, values, fit_weight)
            squares = residuals * residuals
            part.squared += squares.sum(axis=0) if score_weight is None else np.einsum("i,iat->at", score_weight,
                                                                                         squares)
            part.add(0, values[:, None, :] - residuals, targets, score_weight, classifier)
            return
        for k, (coef, intercept) in enumerate(self.fold_solutions):
            rows = np.flatnonzero(membership[:, k])
            if not len(rows):
                continue
            D, A, T = coef.shape
            outputs = Z[rows] @ coef.reshape(D, A * T)
            outputs = np.asarray(outputs.toarray() if sp.issparse(outputs) else outputs).reshape(-1, A, T)
            part.add(k, outputs + intercept, targets[rows], _rows_of(score_weight, rows), classifier)
