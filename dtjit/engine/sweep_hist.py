"""Histogram split search over binned data (``splitter="hist"``).

Data layout:

- ``rows`` (int32): the sample ids, every open node owning the segment ``[start, end)``;
  a split stably partitions its node's segment into left | right.
- ``codes`` (uint8, ``(n_samples, n_features)``, row-major; see ``binning``), ``code``
  (int32 sweep codes, as in ``sweep_exact``) and, unless the fit is unweighted classification,
  ``position_contrib`` / ``position_weight`` / ``position_y`` (each row's contribution,
  weight and target) are indexed by *position* like ``rows`` and partitioned with it, so
  every pass over a node reads them sequentially.
- The flat bin axis: feature ``f`` owns bins ``bin_offset[f] .. bin_offset[f + 1] - 1``,
  whose smallest and largest training values are ``bin_min`` / ``bin_max``.
- A histogram is a ``(n_total_bins, histogram_width)`` float64 array: per bin the sweep
  statistics (weighted class counts, or ``sum(w * y)``), then the weight and the number of
  rows (columns ``n_sweep`` and ``n_sweep + 1``). Row counts are exact in float64, so an
  empty bin is recognised even after a subtraction. Unweighted classification fills only
  the class counts, whose sum is both weight and row count.

Large nodes keep their histogram in a slot of a pool while they are open; the smaller child's
histogram is built from its rows and the larger one's is the parent's minus it. Small nodes
build a histogram in a per-thread scratch array, sweep it, and clear the bins they touched.
"""

from __future__ import annotations

import numpy as np

from .borrow import borrowed, keep_alive
from .criterion import (
    children_proxy,
    gini_from_squares,
    is_classification,
    single_output_proxy,
)
from .jit import FEATURE_THRESHOLD, GINI, callee_kernel, inline_kernel, kernel
from .sweep_exact import (
    EXACT_SQUARES_LIMIT,
    NO_ENTROPY_BOUND,
    add_row_to_left,
    add_row_to_left_xlogx,
    entropy_bound,
    entropy_margin,
    unit_entropy_proxy,
    values_versus_missing_single_output,
)
from .work_queue import claim_item

NO_SPLIT = -np.inf


@inline_kernel
def histogram_width(n_sweep, unit_weight):
    """Columns of a histogram: the sweep statistics, plus weight and row count if weighted."""
    return n_sweep if unit_weight else n_sweep + 2


@callee_kernel
def add_rows(start, end, codes, bin_offset, f_first, f_stop, code, position_contrib,
             position_weight, unit_weight, n_sweep, hist):  # fmt: skip
    """Add the positions ``start .. end - 1`` of features ``f_first .. f_stop - 1`` to ``hist``.

    Notes
    -----
    Every input is indexed by position (partitioned with the rows, see
    :func:`partition_rows`), so the pass reads them all sequentially. The weights were
    gathered through the sample ids: a deep node's ids are scattered, and those reads missed
    the cache at almost every row (85 % of this kernel's time in a weighted or regression
    fit). Cost O((end - start) * (f_stop - f_first)).
    """
    if unit_weight:
        # Unweighted classification: the class counts are all; a bin's weight and row
        # count are their sum (see bin_totals), so one add per (row, feature) instead of 3.
        # Unsigned positions and bins (see jit).
        for p in range(np.uint64(start), np.uint64(end)):
            c = code[p]
            for f in range(np.uint64(f_first), np.uint64(f_stop)):
                hist[np.uint64(bin_offset[f]) + codes[p, f], c] += 1.0
        return
    for p in range(start, end):
        c = code[p]
        a = position_contrib[p]
        w = position_weight[p]
        for f in range(f_first, f_stop):
            b = bin_offset[f] + codes[p, f]
            hist[b, c] += a
            hist[b, n_sweep] += w
            hist[b, n_sweep + 1] += 1.0


@inline_kernel
def add_unit_rows_of(start, end, codes, bin_offset, features, n_listed_features, code, hist):
    """Add the positions ``start .. end - 1`` of ``features[:n_listed_features]`` to ``hist``.

    :func:`add_rows` of unweighted classification, for a list of features.
    """
    for p in range(np.uint64(start), np.uint64(end)):
        c = code[p]
        for j in range(n_listed_features):
            f = features[j]
            hist[np.uint64(bin_offset[f]) + codes[p, f], c] += 1.0


@inline_kernel
def bin_totals(hist, b, n_sweep, unit_weight):
    """Weight and row count of bin ``b`` (summed from the class counts when unweighted)."""
    if unit_weight:
        count = 0.0
        for c in range(n_sweep):
            count += hist[b, c]
        return count, count
    return hist[b, n_sweep], hist[b, n_sweep + 1]


@inline_kernel
def clear_listed_bins(listed_f, n_listed_f, first_bin, hist):
    """Zero the bins ``first_bin + listed_f[:n_listed_f]`` of ``hist`` (one feature's).

    The bins :func:`occupied_bins` lists, each once, with a loop over its columns: clearing
    each row's bins instead (once per row and feature) made numba call ``memset`` for every
    80-byte bin of a 10-class histogram, 9 % of a full-depth hist fit.
    """
    for j in range(n_listed_f):
        b = first_bin + listed_f[j]
        for c in range(hist.shape[1]):
            hist[b, c] = 0.0


@inline_kernel
def bin_class(hist, b, n_sweep):
    """Return the one class with rows in bin ``b``, or ``-1`` if it holds several."""
    found = -1
    n_found = 0
    for c in range(n_sweep):  # no early exit: bins of a few classes, a loop without branches
        if hist[b, c] > 0.0:
            found = c
            n_found += 1
    return found if n_found == 1 else -1


@inline_kernel
def tied(low, high):
    """Whether values ``low <= high`` are tied: within ``FEATURE_THRESHOLD`` of each other.

    The exact splitter's test, in float32 (``sweep_exact``); false when ``high`` is NaN (a
    NaN bin's extremes), so a NaN row is never tied with a value.
    """
    return np.float32(high) <= np.float32(low) + FEATURE_THRESHOLD


def every_bin_listed(bin_offset):
    """Return ``listed, n_listed`` that list every bin of each feature, its NaN bin included.

    Row ``f`` of ``listed`` holds the codes ``0 .. n_listed[f] - 1`` (then padding): the
    form in which :func:`sweep_bins` reads the occupied bins of a small node.
    """
    n_listed = np.diff(bin_offset).astype(np.int64)
    widest = int(n_listed.max()) if n_listed.shape[0] > 0 else 0
    listed = np.broadcast_to(np.arange(widest, dtype=np.int64), (n_listed.shape[0], widest))
    return np.ascontiguousarray(listed), n_listed


def features_with_near_ties(bin_offset, bin_min, bin_max):
    """1 for each feature with two neighbouring bins :func:`tied` (values within 1e-7), else 0.

    Only those features' sweeps test ties between bins: the tests cost 1.3-1.5x in the sweep
    of small nodes (1M x 20 continuous rows, nodes of 64 rows), where no bin is ever tied.
    """
    # numpy, once per fit: :func:`tied`'s float32 test on every pair of neighbouring bins.
    n_features = bin_offset.shape[0] - 1
    pair_tied = (
        bin_min[1:].astype(np.float32) <= bin_max[:-1].astype(np.float32) + FEATURE_THRESHOLD
    )
    feature_of_pair = np.repeat(np.arange(n_features), np.diff(bin_offset))[:-1]
    # A feature's last bin and the next one's first are not neighbours (nor are pairs
    # around a feature without bins).
    boundary = bin_offset[1:-1] - 1
    within = np.ones(pair_tied.shape[0], dtype=bool)
    within[boundary[(boundary >= 0) & (boundary < within.shape[0])]] = False
    tied_pairs = feature_of_pair[pair_tied & within]
    return (np.bincount(tied_pairs, minlength=n_features) > 0).astype(np.uint8)


@inline_kernel
def tied_run(hist, first_bin, n_bins, listed, n_listed, j, bin_min, bin_max, n_sweep,
             unit_weight, run_class, weight_run, n_run):  # fmt: skip
    """Extend the group of the bin at step ``j`` of :func:`sweep_bins` over the bins tied to it.

    ``run_class``, ``weight_run`` and ``n_run`` are the bin's class (``-1`` if not pure),
    weight and rows; returns those of the group: the bin and the non-empty bins after it,
    each tied with the previous one.

    Notes
    -----
    Usually one test: bins are in increasing order of value, so a bin not tied with its
    successor in the order (empty or not) is not tied with any later bin either.
    """
    last = first_bin + listed[j]
    for step in range(j + 1, n_listed):
        code = listed[step]
        if code >= n_bins:
            break  # the NaN bin, listed last
        b = first_bin + code
        if not tied(bin_max[last], bin_min[b]):
            break
        weight_bin, n_bin = bin_totals(hist, b, n_sweep, unit_weight)
        if n_bin == 0.0:
            continue  # empty: the next bin is compared with the run's last non-empty one
        if bin_class(hist, b, n_sweep) != run_class:
            run_class = -1
        weight_run += weight_bin
        n_run += n_bin
        last = b
    return run_class, weight_run, n_run


@callee_kernel
def sweep_bins(hist, first_bin, n_bins, listed, n_listed, bin_min, bin_max, has_near_ties,
               total, weight, n_rows, n_sweep, unit_weight, criterion, xlogx, min_samples_leaf,
               min_weight_leaf, missing_bin, left):  # fmt: skip
    """Best cut of one feature for one node: a sweep over its value bins in increasing order.

    Parameters
    ----------
    hist : ndarray of float64, shape (n_total_bins, histogram_width)
        The node's histogram.
    first_bin, n_bins : int
        The feature's value bins are ``first_bin .. first_bin + n_bins - 1`` (its NaN bin,
        if any, is not among them).
    listed, n_listed : ndarray of int64, int
        Sweep bins ``first_bin + listed[:n_listed]`` (increasing; they must include every
        non-empty bin; codes ``>= n_bins`` are ignored). A node swept over every bin lists
        them all (:func:`every_bin_listed`): one form of the loop, compiled once.
    bin_min, bin_max : ndarray of float64
        Smallest and largest training value of each bin.
    has_near_ties : bool
        Whether the feature has neighbouring bins within ``FEATURE_THRESHOLD`` (see
        :func:`features_with_near_ties`); if not, no bin is tested for ties.
    total : ndarray of float64
        The node's statistics; ``weight`` and ``n_rows`` its weight and row count.
    n_sweep, unit_weight, criterion, min_samples_leaf, min_weight_leaf
        As in the exact sweep.
    xlogx : ndarray of int64
        ``sweep_exact.xlogx_table`` of at least the node's rows for entropy and gain ratio on
        row counts (cuts are then screened, see Notes), else empty.
    missing_bin : int
        The NaN bin, whose rows start on the left side, or ``-1``: the NaN rows (if any)
        are on the right side, which is ``total`` minus the left side.
    left : ndarray of float64
        Scratch of ``n_sweep`` entries.

    Returns
    -------
    proxy : float
        Score of the best cut, ``-inf`` if none.
    cut : int
        Last value bin of the left side.
    threshold : float
        ``bin_max[left bin] / 2 + bin_min[right bin] / 2`` over the nearest non-empty bins:
        the exact splitter's midpoint when each bin holds one distinct value.

    Notes
    -----
    The same rules as the exact sweep, with the node's non-empty bins in the role of its
    distinct values: a bin whose smallest value is within ``FEATURE_THRESHOLD`` (float32) of
    the largest value of the node's previous non-empty bin is tied with it, so runs of such
    bins are groups that no cut separates (whether two values are tied depends on the
    values between them that the node holds). The best is replaced only on a strictly
    greater proxy, and for classification a cut between two groups pure in the same class
    is scored only at the ends of the feasible range. Cost O(n_bins * n_sweep).

    With ``xlogx`` (entropy on row counts), a cut is first screened as in
    ``sweep_exact.unit_entropy_sweep``: fixed-point sums of ``n ln n`` over both sides'
    class counts, updated for the classes a bin moves (two table reads each), give ``ln 2``
    times its proxy within ``ENTROPY_BOUND_MARGIN``; only a cut that may reach the best so
    far is scored, with the expression of the general case (two logarithms and divisions
    per class). Same proxies, same cuts.
    """
    best_proxy = NO_SPLIT
    best_cut = -1
    threshold = 0.0
    skip_same_class = is_classification(criterion)
    for c in range(n_sweep):
        left[c] = hist[missing_bin, c] if missing_bin >= 0 else 0.0
    weight_left, n_left = 0.0, 0.0
    if missing_bin >= 0:
        weight_left, n_left = bin_totals(hist, missing_bin, n_sweep, unit_weight)
    screened = unit_weight and xlogx.shape[0] > 0
    sum_left = np.int64(0)
    sum_right = np.int64(0)
    bound = NO_ENTROPY_BOUND
    margin = 0.0
    if screened:
        for c in range(n_sweep):
            count = np.int64(left[c])
            sum_left += xlogx[count]
            sum_right += xlogx[np.int64(total[c]) - count]
        margin = entropy_margin(n_sweep, weight)
    prev_class = -1  # class of the group of prev_bin if it is pure, else -1
    prev_left_feasible = False
    prev_bin = -1  # the previous non-empty bin
    for j in range(n_listed):
        code = listed[j]
        if code >= n_bins:
            break  # the NaN bin, listed last
        b = first_bin + code
        weight_bin, n_bin = bin_totals(hist, b, n_sweep, unit_weight)
        if n_bin == 0.0:
            continue
        bin_code = bin_class(hist, b, n_sweep) if skip_same_class else -1
        if has_near_ties and prev_bin >= 0 and tied(bin_max[prev_bin], bin_min[b]):
            # Bin b joins the previous bin's group of tied values: no cut between them.
            if bin_code != prev_class:
                prev_class = -1
        else:
            # Bin b starts a group. Candidate: left = the groups before it.
            if prev_bin >= 0:
                if n_rows - n_left < min_samples_leaf or weight - weight_left < min_weight_leaf:
                    break  # the right side only shrinks from here on
                left_feasible = n_left >= min_samples_leaf and weight_left >= min_weight_leaf
                if left_feasible:
                    score = True
                    if bin_code >= 0 and bin_code == prev_class and prev_left_feasible:
                        # Between two groups pure in one class: scored only if it is the
                        # last feasible cut, which depends on the whole group of b.
                        group_class, weight_group, n_group = bin_code, weight_bin, n_bin
                        if has_near_ties:
                            group_class, weight_group, n_group = tied_run(
                                hist, first_bin, n_bins, listed, n_listed, j, bin_min, bin_max,
                                n_sweep, unit_weight, bin_code, weight_bin, n_bin,
                            )  # fmt: skip
                        score = (
                            group_class != prev_class
                            or n_left + n_group >= n_rows
                            or n_rows - n_left - n_group < min_samples_leaf
                            or weight - (weight_left + weight_group) < min_weight_leaf
                        )
                    if score and screened:
                        rows_left = np.int64(n_left)
                        screen = (sum_left - xlogx[rows_left]) + (
                            sum_right - xlogx[np.int64(n_rows) - rows_left]
                        )
                        score = screen > bound
                    if score:
                        proxy = single_output_proxy(
                            criterion, left, total, n_sweep, weight_left, weight - weight_left
                        )
                        if proxy > best_proxy:
                            best_proxy = proxy
                            best_cut = prev_bin
                            threshold = bin_max[prev_bin] / 2.0 + bin_min[b] / 2.0
                            if screened:
                                bound = max(bound, entropy_bound(best_proxy, margin))
                prev_left_feasible = left_feasible
            prev_class = bin_code
        if screened:
            for c in range(n_sweep):
                moved = hist[b, c]
                if moved > 0.0:
                    count = np.int64(left[c])
                    right = np.int64(total[c]) - count
                    n_moved = np.int64(moved)
                    sum_left += xlogx[count + n_moved] - xlogx[count]
                    sum_right += xlogx[right - n_moved] - xlogx[right]
                    left[c] += moved
        else:
            for c in range(n_sweep):
                left[c] += hist[b, c]
        weight_left += weight_bin
        n_left += n_bin
        prev_bin = b
    return best_proxy, best_cut, threshold


@callee_kernel
def best_bin_split(hist, first_bin, n_bins, listed, n_listed, bin_min, bin_max, has_near_ties,
                   total, weight, n_rows, n_sweep, unit_weight, criterion, xlogx,
                   min_samples_leaf, min_weight_leaf, left):  # fmt: skip
    """Best cut of one feature for one node, NaN rows included (scikit-learn 1.9's rules).

    Parameters are those of :func:`sweep_bins`, except that ``n_bins`` counts the feature's
    NaN bin, its last, when it has one (``bin_min`` of that bin is NaN).

    Returns
    -------
    proxy, cut, threshold
        As :func:`sweep_bins`; ``threshold`` is ``+inf`` for the cut "every value | NaN".
    missing : int
        Where the node's NaN rows go: ``1`` left, ``0`` right, ``-1`` when it has none.

    Notes
    -----
    The exact splitter's order (``sweep_exact.best_splits_worker``): a sweep with the
    NaN bin on the right, the cut "all values | NaN", a sweep with the NaN bin on the left;
    a later candidate wins only if strictly better. A feature or node without NaN is one
    sweep. Cost O(n_bins * n_sweep).

    The NaN passes are compiled for every fit: a switch leaving them out of fits without NaN
    compiled this kernel and its two callers, ``sweep_small_nodes`` and ``sweep_worker``,
    once more for fits with NaN, for more than their first use costs the others.
    """
    # Uncounted views of the arguments for the loops below (``borrow``).
    hist, listed, bin_min, bin_max, total, xlogx, left = borrowed(
        (hist, listed, bin_min, bin_max, total, xlogx, left)
    )
    nan_bin = first_bin + n_bins - 1
    n_values = n_bins
    weight_missing, n_missing = 0.0, 0.0
    if np.isnan(bin_min[nan_bin]):
        n_values = n_bins - 1
        weight_missing, n_missing = bin_totals(hist, nan_bin, n_sweep, unit_weight)
        if n_missing == n_rows:
            return NO_SPLIT, -1, 0.0, -1  # all NaN in this node: nothing to split
    best_proxy, best_cut, best_threshold, best_missing = NO_SPLIT, -1, 0.0, -1
    # One call of the sweep, run once without NaN rows, twice with them (NaN bin right, then
    # left). The sweep is a kernel of its own: inlined, it was compiled again into the NaN
    # variant of this kernel.
    for nan_pass in range(2 if n_missing > 0.0 else 1):
        proxy, cut, threshold = sweep_bins(
            hist, first_bin, n_values, listed, n_listed, bin_min, bin_max, has_near_ties,
            total, weight, n_rows, n_sweep, unit_weight, criterion, xlogx, min_samples_leaf,
            min_weight_leaf, nan_bin if nan_pass == 1 else -1, left,
        )  # fmt: skip
        if nan_pass == 0:
            best_proxy, best_cut, best_threshold = proxy, cut, threshold
            if n_missing > 0.0:
                best_missing = 0
                proxy_inf = values_versus_missing_single_output(
                    n_rows - n_missing, n_missing, weight, weight_missing, total,
                    hist[nan_bin], n_sweep, criterion, min_samples_leaf, min_weight_leaf, left,
                )  # fmt: skip
                if proxy_inf > best_proxy:
                    best_proxy, best_threshold = proxy_inf, np.inf
                    best_cut = first_bin + n_values - 1
        elif proxy > best_proxy:
            best_proxy, best_cut, best_threshold, best_missing = proxy, cut, threshold, 1
    return best_proxy, best_cut, best_threshold, best_missing


@inline_kernel
def sweep_node(s, hist, listed, n_listed, candidate, bin_offset, bin_min, bin_max, near_ties, total,
               weight, n_rows, n_sweep, unit_weight, criterion, xlogx, min_samples_leaf,
               min_weight_leaf, left, out_proxy, out_cut, out_threshold,
               out_missing):  # fmt: skip
    """Sweep every candidate feature of batch node ``s``; writes row ``s`` of the outputs.

    Feature ``f``'s bins swept are ``listed[f, :n_listed[f]]`` (codes).
    """
    for f in range(candidate.shape[1]):
        if candidate[s, f]:
            proxy, cut, threshold, missing = best_bin_split(
                hist, bin_offset[f], bin_offset[f + 1] - bin_offset[f], listed[f], n_listed[f],
                bin_min, bin_max, near_ties[f], total, weight, n_rows,
                n_sweep, unit_weight, criterion, xlogx, min_samples_leaf, min_weight_leaf, left,
            )  # fmt: skip
        else:
            proxy, cut, threshold, missing = NO_SPLIT, -1, 0.0, -1
        out_proxy[s, f] = proxy
        out_cut[s, f] = cut
        out_threshold[s, f] = threshold
        out_missing[s, f] = missing


# In a small node on unit weights (Gini; entropy and gain ratio with the xlogx screen), a
# feature is swept row by row (see unit_rows_sweep) when the node has at most n_sweep rows
# per bin it occupies of that feature, the feature has no near ties (features_with_near_ties)
# and the node no NaN rows in it; otherwise from a scratch histogram. A histogram costs a row
# one add, then O(n_sweep) per occupied bin in the sweep; the row sweep costs O(1) per row (a
# counting sort and a step) and per bin. A/B of Gini on 300k x 20, full depth, one thread,
# against every feature from a histogram: 10 classes 0.72x the fit time, binary 0.82x,
# covtype's first 300k rows 0.99x (its 44 0/1 columns stay binned). At twice or half as many
# rows per bin: within 5 %. A choice per node (all of its features by rows up to 128 rows per
# class) cost covtype 1.16x. Entropy, against the screened bin sweep: 10 classes 0.81x (8
# pairs; 0.94x in another 6), binary 1.00x.


@callee_kernel
def sweep_small_nodes(first, stop, searched_nodes, node_slot, node_start, node_end, node_stats,
                      node_weight, codes, bin_offset, bin_min, bin_max, near_ties, code,
                      position_contrib, position_weight, unit_weight, n_sweep, criterion, xlogx,
                      min_samples_leaf, min_weight_leaf, candidate, out_proxy, out_cut,
                      out_threshold, out_missing, row_sweeps):  # fmt: skip
    """Sweep the batch nodes ``first .. stop - 1`` that have no stored histogram.

    Each is swept over the bins it occupies only (a small node touches few bins): from a
    scratch histogram, built from its rows and cleared again, or on unit weights feature by
    feature from its rows grouped by bin (:func:`unit_rows_sweep`). Writes rows of the
    outputs only. The row sweeps are an accelerator with the histogram's very results:
    ``row_sweeps`` None (a small fit) leaves them out of the compiled code.
    """
    n_features = codes.shape[1]
    n_total = bin_offset[n_features]
    # Entropy and gain ratio: screened with xlogx (empty on too many rows: not by rows).
    rows_sweep = unit_weight and (criterion == GINI or xlogx.shape[0] > 0)
    n_grouped = 0  # scratch rows the row sweeps need
    if rows_sweep:
        for s in range(first, stop):
            node = searched_nodes[s]
            if node_slot[node] < 0:
                n_grouped = max(n_grouped, node_end[node] - node_start[node])
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (
        np.zeros((n_total, histogram_width(n_sweep, unit_weight)), dtype=np.float64),
        np.empty((n_features, 4), dtype=np.uint64),
        np.empty((n_features, 256), dtype=np.int64),
        np.empty(n_features, dtype=np.int64),
        np.empty(n_sweep, dtype=np.float64),
        np.empty((2, 256), dtype=np.int64),
        np.empty(n_grouped, dtype=np.int32),
        np.empty(n_sweep, dtype=np.int64),
        np.zeros(n_features, dtype=np.uint8),
        np.empty(n_features, dtype=np.int64),
    )
    (scratch, occupancy, listed, n_listed, left, bin_rows, grouped, counts, by_rows,
     binned) = borrowed(owned)  # fmt: skip
    for s in range(first, stop):
        node = searched_nodes[s]
        if node_slot[node] >= 0:
            continue
        start = node_start[node]
        end = node_end[node]
        occupied_bins(start, end, codes, occupancy, listed, n_listed)
        any_by_rows = False
        if row_sweeps is not None and rows_sweep:
            any_by_rows = choose_row_sweeps(
                candidate[s], listed, n_listed, bin_offset, bin_min, near_ties, end - start,
                n_sweep, by_rows,
            )  # fmt: skip
        if not any_by_rows:
            add_rows(start, end, codes, bin_offset, np.int64(0), n_features, code,
                     position_contrib, position_weight, unit_weight, n_sweep, scratch)  # fmt: skip
            sweep_node(s, scratch, listed, n_listed, candidate, bin_offset, bin_min, bin_max,
                       near_ties, node_stats[node], node_weight[node], end - start, n_sweep,
                       unit_weight, criterion, xlogx, min_samples_leaf, min_weight_leaf, left,
                       out_proxy, out_cut, out_threshold, out_missing)  # fmt: skip
            for f in range(n_features):
                clear_listed_bins(listed[f], n_listed[f], bin_offset[f], scratch)
            continue
        if row_sweeps is None:
            continue  # not reached: no feature is swept by rows without the switch
        n_binned = 0  # the other candidate features, swept from a histogram
        for f in range(n_features):
            if candidate[s, f] and not by_rows[f]:
                binned[n_binned] = f
                n_binned += 1
        add_unit_rows_of(start, end, codes, bin_offset, binned, n_binned, code, scratch)
        for f in range(n_features):
            proxy, cut, threshold, missing = NO_SPLIT, -1, 0.0, -1
            if by_rows[f]:
                group_classes_by_bin(start, end, codes, f, listed[f], n_listed[f], code,
                                     bin_rows, grouped)  # fmt: skip
                proxy, cut, threshold = unit_rows_sweep(
                    bin_offset[f], listed[f], n_listed[f], bin_rows[0], grouped, bin_min,
                    bin_max, node_stats[node], node_weight[node], end - start, n_sweep,
                    criterion, xlogx, min_samples_leaf, min_weight_leaf, counts,
                )  # fmt: skip
            elif candidate[s, f]:
                proxy, cut, threshold, missing = best_bin_split(
                    scratch, bin_offset[f], bin_offset[f + 1] - bin_offset[f], listed[f],
                    n_listed[f], bin_min, bin_max, near_ties[f], node_stats[node],
                    node_weight[node], end - start, n_sweep, unit_weight, criterion, xlogx,
                    min_samples_leaf, min_weight_leaf, left,
                )  # fmt: skip
                clear_listed_bins(listed[f], n_listed[f], bin_offset[f], scratch)
            out_proxy[s, f] = proxy
            out_cut[s, f] = cut
            out_threshold[s, f] = threshold
            out_missing[s, f] = missing
    keep_alive(owned)


@inline_kernel
def choose_row_sweeps(candidate, listed, n_listed, bin_offset, bin_min, near_ties, n_rows,
                      n_sweep, by_rows):  # fmt: skip
    """Mark in ``by_rows`` the candidate features of a node to sweep row by row.

    A feature qualifies when the node has at most ``n_sweep`` rows per bin it occupies
    (``listed`` / ``n_listed``: :func:`occupied_bins`), it has no near ties and the node no
    NaN rows in it: a feature's NaN bin is its last bin, listed last when occupied. Returns
    whether any feature is marked (none in a node of ``EXACT_SQUARES_LIMIT`` rows or more,
    where the sums of squares could leave float64's exact integers).
    """
    any_marked = False
    if n_rows >= EXACT_SQUARES_LIMIT:
        return any_marked
    for f in range(candidate.shape[0]):
        n = n_listed[f]
        nan_bin = bin_offset[f + 1] - 1
        with_nan = (
            np.isnan(bin_min[nan_bin]) and n > 0 and bin_offset[f] + listed[f, n - 1] == nan_bin
        )
        marked = candidate[f] != 0 and near_ties[f] == 0 and not with_nan and n_rows <= n * n_sweep
        by_rows[f] = marked
        any_marked = any_marked or marked
    return any_marked


@inline_kernel
def group_classes_by_bin(start, end, codes, f, listed_f, n_listed_f, code, bin_rows, grouped):
    """Sort the class codes at positions ``start .. end - 1`` by feature ``f``'s bin (counting).

    ``listed_f[:n_listed_f]`` are the codes present, increasing. Writes ``bin_rows[0, c]``,
    the rows of code ``c`` (only for listed codes), and ``grouped``: the class codes, those
    of the first listed bin first, each bin's in position order. ``bin_rows[1]`` is scratch.
    """
    for j in range(n_listed_f):
        bin_rows[0, listed_f[j]] = 0
    for p in range(start, end):
        bin_rows[0, codes[p, f]] += 1
    offset = 0
    for j in range(n_listed_f):
        c = listed_f[j]
        bin_rows[1, c] = offset
        offset += bin_rows[0, c]
    for p in range(start, end):
        c = codes[p, f]
        grouped[bin_rows[1, c]] = code[p]
        bin_rows[1, c] += 1


@inline_kernel
def unit_rows_sweep(first_bin, listed_f, n_listed_f, bin_count, grouped, bin_min, bin_max,
                    total, weight, n_rows, n_sweep, criterion, xlogx, min_samples_leaf,
                    min_weight_leaf, counts):  # fmt: skip
    """Do what :func:`sweep_bins` does on unit weights, row by row.

    For Gini, or entropy and gain ratio with the table ``xlogx`` (as :func:`sweep_bins`'s;
    not empty), a feature without near ties and a node without NaN rows in it. ``bin_count[c]``
    rows of code ``c`` (listed in ``listed_f[:n_listed_f]``) have the classes in ``grouped``,
    bin after bin (:func:`group_classes_by_bin`); ``counts`` is scratch of ``n_sweep``.
    Returns ``proxy, cut, threshold`` as :func:`sweep_bins`.

    Notes
    -----
    The bin sweep spends O(n_sweep) per occupied bin (its totals, its class and the left
    counts, then the proxy's sum over classes), and a small node has about one row per
    occupied bin. Here a row costs O(1), and so does a cut:

    - Gini: the sums of squared class counts of both sides follow each row
      (``sweep_exact.add_row_to_left``, integers). They are the very integers the bin sweep
      adds up in float64, so the proxies are the same numbers.
    - Entropy: the fixed-point sums of ``n ln n`` follow each row
      (``sweep_exact.add_row_to_left_xlogx``) and screen each cut as the bin sweep does; a cut
      that may reach the best is scored with the bin sweep's expression.

    Every feasible cut is considered: the bin sweep skips cuts between two bins pure in one
    class, which cannot be strictly better than the cuts around them (the proxy is convex
    along such a run; the exact splitter's unit sweeps consider them as well).
    """
    best_proxy = NO_SPLIT
    best_cut = -1
    threshold = 0.0
    gini = criterion == GINI
    sum_left = np.int64(0)  # Gini: sums of squared counts; entropy: of n ln n (fixed point)
    sum_right = np.int64(0)
    for c in range(n_sweep):
        counts[c] = 0
        count = np.int64(total[c])
        sum_right += count * count if gini else xlogx[count]
    bound = NO_ENTROPY_BOUND
    margin = 0.0 if gini else entropy_margin(n_sweep, weight)
    n_left = 0
    r = 0
    prev_bin = -1
    for j in range(n_listed_f):
        b = first_bin + listed_f[j]
        if prev_bin >= 0:
            weight_left = np.float64(n_left)
            weight_right = weight - weight_left
            if n_rows - weight_left < min_samples_leaf or weight_right < min_weight_leaf:
                break  # the right side only shrinks from here on
            if weight_left >= min_samples_leaf and weight_left >= min_weight_leaf:
                if gini:
                    proxy = children_proxy(
                        gini_from_squares(np.float64(sum_left), weight_left),
                        gini_from_squares(np.float64(sum_right), weight_right),
                        weight_left,
                        weight_right,
                    )
                else:
                    proxy = NO_SPLIT
                    screen = (sum_left - xlogx[n_left]) + (sum_right - xlogx[n_rows - n_left])
                    if screen > bound:
                        proxy = unit_entropy_proxy(counts, total, n_sweep, weight_left, weight)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best_cut = prev_bin
                    threshold = bin_max[prev_bin] / 2.0 + bin_min[b] / 2.0
                    if not gini:
                        bound = max(bound, entropy_bound(best_proxy, margin))
        n_bin = bin_count[listed_f[j]]
        if gini:
            for q in range(n_bin):
                sum_left, sum_right = add_row_to_left(
                    grouped[r + q], counts, total, sum_left, sum_right
                )
        else:
            for q in range(n_bin):
                sum_left, sum_right = add_row_to_left_xlogx(
                    grouped[r + q], counts, total, xlogx, sum_left, sum_right
                )
        r += n_bin
        n_left += n_bin
        prev_bin = b
    return best_proxy, best_cut, threshold


# Bit index of a power of two: multiply by a de Bruijn constant, look up the top 6 bits.
DE_BRUIJN = np.uint64(0x03F79D71B4CA8B09)
DE_BRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    DE_BRUIJN_INDEX[((1 << _bit) * 0x03F79D71B4CA8B09 % 2**64) >> 58] = _bit


@inline_kernel
def occupied_bins(start, end, codes, occupancy, listed, n_listed):
    """List, per feature and in increasing order, the codes at positions ``start .. end - 1``.

    Parameters
    ----------
    occupancy : ndarray of uint64, shape (n_features, 4)
        Scratch: a 256-bit set of codes per feature.
    listed : ndarray of int64, shape (n_features, 256)
        Receives the codes present; ``n_listed[f]`` how many.

    Notes
    -----
    One pass sets bits, then set bits are read lowest first (isolate with ``w & -w``, index
    by de Bruijn multiplication). A small node then sweeps only the bins it occupies, not
    all of a feature's bins. Cost O((end - start) * n_features + n_listed).
    """
    n_features = codes.shape[1]
    occupancy[:] = 0
    one = np.uint64(1)
    for p in range(start, end):
        for f in range(n_features):
            c = codes[p, f]
            occupancy[f, c >> 6] |= one << np.uint64(c & 63)
    for f in range(n_features):
        n = 0
        for w in range(4):
            word = occupancy[f, w]
            while word != 0:
                low = word & (~word + one)
                listed[f, n] = 64 * w + DE_BRUIJN_INDEX[(low * DE_BRUIJN) >> np.uint64(58)]
                n += 1
                word ^= low
        n_listed[f] = n


@inline_kernel
def sweep_stored_node(s, searched_nodes, node_slot, node_start, node_end, node_stats,
                      node_weight, hist_pool, bin_offset, every_bin, n_bins_of, bin_min, bin_max,
                      near_ties, n_sweep, unit_weight, criterion, xlogx, min_samples_leaf,
                      min_weight_leaf, candidate, out_proxy, out_cut, out_threshold,
                      out_missing):  # fmt: skip
    """Sweep batch node ``s`` from its stored histogram, over every bin of each feature.

    ``every_bin``, ``n_bins_of``: the lists of :func:`every_bin_listed`.
    """
    node = searched_nodes[s]
    left = np.empty(n_sweep, dtype=np.float64)
    sweep_node(s, hist_pool[node_slot[node]], every_bin, n_bins_of, candidate, bin_offset,
               bin_min, bin_max, near_ties, node_stats[node], node_weight[node],
               node_end[node] - node_start[node], n_sweep, unit_weight, criterion, xlogx,
               min_samples_leaf, min_weight_leaf, left, out_proxy, out_cut, out_threshold,
               out_missing)  # fmt: skip


@kernel
def sweep_worker(queue, n_threads, searched_nodes, node_slot, node_start, node_end, node_stats,
                 node_weight, hist_pool, codes, bin_offset, every_bin, n_bins_of, bin_min,
                 bin_max, near_ties, code,
                 position_contrib, position_weight, unit_weight, n_sweep, criterion, xlogx,
                 min_samples_leaf, min_weight_leaf, candidate, out_proxy, out_cut, out_threshold,
                 out_missing, row_sweeps, n_chunks):  # fmt: skip
    """One thread's share of the best cut of every (searched node, candidate feature) pair.

    Called on ``n_threads`` threads at once (``threads.run_workers``), each claiming work
    items from ``queue``: first each searched node with a stored histogram, then ``n_chunks``
    contiguous chunks of the small nodes (swept from their rows, each chunk with its own
    scratch histogram). An item writes only its own nodes' rows of the outputs, so results
    do not depend on the threads or the chunks; one thread and one chunk is the serial
    search. ``row_sweeps``: see :func:`sweep_small_nodes`.
    """
    # Uncounted views of the arguments for the loops below (``borrow``).
    (searched_nodes, node_slot, node_start, node_end, node_stats, node_weight, hist_pool, codes,
     bin_offset, every_bin, n_bins_of, bin_min, bin_max, near_ties, code, position_contrib,
     position_weight, xlogx, candidate, out_proxy, out_cut, out_threshold,
     out_missing) = borrowed((
        searched_nodes, node_slot, node_start, node_end, node_stats, node_weight, hist_pool,
        codes, bin_offset, every_bin, n_bins_of, bin_min, bin_max, near_ties, code,
        position_contrib, position_weight, xlogx, candidate, out_proxy, out_cut, out_threshold,
        out_missing))  # fmt: skip
    n_searched = searched_nodes.shape[0]
    item = claim_item(queue)
    while item < n_searched + n_chunks:
        if item < n_searched:
            if node_slot[searched_nodes[item]] >= 0:
                sweep_stored_node(item, searched_nodes, node_slot, node_start, node_end,
                                  node_stats, node_weight, hist_pool, bin_offset, every_bin,
                                  n_bins_of, bin_min, bin_max, near_ties, n_sweep, unit_weight,
                                  criterion, xlogx, min_samples_leaf, min_weight_leaf,
                                  candidate, out_proxy, out_cut, out_threshold,
                                  out_missing)  # fmt: skip
        else:
            chunk = item - n_searched
            sweep_small_nodes(chunk * n_searched // n_chunks,
                              (chunk + 1) * n_searched // n_chunks, searched_nodes, node_slot,
                              node_start, node_end, node_stats, node_weight, codes, bin_offset,
                              bin_min, bin_max, near_ties, code, position_contrib,
                              position_weight, unit_weight, n_sweep, criterion, xlogx,
                              min_samples_leaf, min_weight_leaf, candidate, out_proxy, out_cut,
                              out_threshold, out_missing, row_sweeps)  # fmt: skip
        item = claim_item(queue)


@kernel
def build_histograms_worker(queue, n_threads, task_slot, task_start, task_end, codes,
                            bin_offset, code, position_contrib, position_weight, unit_weight,
                            n_sweep, hist_pool, n_feature_chunks):  # fmt: skip
    """One thread's share of filling slot ``task_slot[t]`` with the rows of task ``t``.

    Called on ``n_threads`` threads at once (``threads.run_workers``). Work items are (task,
    feature chunk) pairs, claimed from ``queue``: with few large nodes (the top of the tree)
    each node's features are split over the threads. An item zeroes and fills only its own
    slot's bins of its own features, and every bin is summed in row order whatever the
    chunking, so the histograms are bit-identical to one thread's with one chunk.
    """
    # Uncounted views of the arguments for the loops below (``borrow``).
    (task_slot, task_start, task_end, codes, bin_offset, code, position_contrib, position_weight,
     hist_pool) = borrowed((task_slot, task_start, task_end, codes, bin_offset, code,
                            position_contrib, position_weight, hist_pool))  # fmt: skip
    n_features = codes.shape[1]
    n_items = task_slot.shape[0] * n_feature_chunks
    item = claim_item(queue)
    while item < n_items:
        t = item // n_feature_chunks
        chunk = item % n_feature_chunks
        f_first = chunk * n_features // n_feature_chunks
        f_stop = (chunk + 1) * n_features // n_feature_chunks
        hist = hist_pool[task_slot[t]]
        for b in range(bin_offset[f_first], bin_offset[f_stop]):
            for j in range(hist.shape[1]):
                hist[b, j] = 0.0
        add_rows(task_start[t], task_end[t], codes, bin_offset, f_first, f_stop, code,
                 position_contrib, position_weight, unit_weight, n_sweep, hist)  # fmt: skip
        item = claim_item(queue)


@inline_kernel
def subtract_histograms(derive_dst, derive_parent, derive_src, hist_pool):
    """``hist_pool[dst] = hist_pool[parent] - hist_pool[src]`` for every derive task.

    ``dst`` may equal ``src``; the operation is elementwise, so that is safe.
    """
    for t in range(derive_dst.shape[0]):
        dst = hist_pool[derive_dst[t]]
        parent = hist_pool[derive_parent[t]]
        src = hist_pool[derive_src[t]]
        for b in range(dst.shape[0]):
            for j in range(dst.shape[1]):
                dst[b, j] = parent[b, j] - src[b, j]


@kernel
def partition_rows(rows, start, end, codes, f, cut, missing_code, code, position_contrib,
                   position_weight, position_y, is_regression, unit_weight, scratch_rows,
                   scratch_codes, scratch_code, scratch_stats, out_left,
                   out_right):  # fmt: skip
    """Stably partition positions ``start .. end - 1`` by ``codes[p, f] <= cut``; sum both sides.

    Rows whose code is ``missing_code`` (the NaN bin, when NaN goes left; else ``-1``) go
    left too.

    Parameters
    ----------
    rows, codes, code : ndarray
        Sample ids (int32), their bin codes (uint8, one row per position) and their sweep
        codes (int32), all indexed by position; the segment of each is rewritten as
        left | right, each side in its old order.
    cut : int
        Last code of feature ``f`` going left.
    position_contrib, position_weight, position_y : ndarray of float64
        Each row's contribution, weight and target, indexed by position and moved with the
        rows; neither read nor moved when ``unit_weight`` (unweighted classification: every
        row adds 1 to its class and its side's weight), and ``position_y`` only for
        regression.
    scratch_rows, scratch_codes, scratch_code, scratch_stats : ndarray
        Room for the right side (``scratch_stats``: its contributions, weights and targets).
    out_left, out_right : ndarray of float64, shape (n_stats,)
        The children's statistics (as ``sweep_exact.segment_stats`` computes them).

    Returns
    -------
    pos : int
        First position of the right child.
    weight_left, weight_right : float

    Notes
    -----
    Everything a later pass reads moves with the rows, so those passes read sequentially:
    the exact splitter keeps sorted values next to sorted ids for the same reason. Reading
    the weights through the sample ids instead, which a deep node holds scattered, missed the
    cache at almost every row (80 % of this kernel's time).
    """
    n_features = codes.shape[1]
    for j in range(out_left.shape[0]):
        out_left[j] = 0.0
        out_right[j] = 0.0
    weight_left = 0.0
    weight_right = 0.0
    # The sides' target ranges as scalars and their sums written per side: an array
    # allocated per call, or a variable switched between out_left and out_right, would
    # cost runtime reference-count calls per node or per row.
    low_left, high_left, low_right, high_right = np.inf, -np.inf, np.inf, -np.inf
    a, w, t = 1.0, 1.0, 0.0
    write = start
    n_right = 0
    for p in range(start, end):
        i = rows[p]
        c = code[p]
        if not unit_weight:
            a = position_contrib[p]
            w = position_weight[p]
            if is_regression:
                t = position_y[p]
        if codes[p, f] <= cut or codes[p, f] == missing_code:
            # write <= p: the slot was read already, so the move is safe in place.
            rows[write] = i
            code[write] = c
            for g in range(n_features):
                codes[write, g] = codes[p, g]
            if not unit_weight:
                position_contrib[write] = a
                position_weight[write] = w
                if is_regression:
                    position_y[write] = t
            write += 1
            weight_left += w
            out_left[c] += a
            if is_regression:
                out_left[1] += a * t
                low_left = min(low_left, t)
                high_left = max(high_left, t)
        else:
            scratch_rows[n_right] = i
            scratch_code[n_right] = c
            for g in range(n_features):
                scratch_codes[n_right, g] = codes[p, g]
            if not unit_weight:
                scratch_stats[n_right, 0] = a
                scratch_stats[n_right, 1] = w
                scratch_stats[n_right, 2] = t
            n_right += 1
            weight_right += w
            out_right[c] += a
            if is_regression:
                out_right[1] += a * t
                low_right = min(low_right, t)
                high_right = max(high_right, t)
    for r in range(n_right):
        rows[write + r] = scratch_rows[r]
        code[write + r] = scratch_code[r]
        for g in range(n_features):
            codes[write + r, g] = scratch_codes[r, g]
        if not unit_weight:
            position_contrib[write + r] = scratch_stats[r, 0]
            position_weight[write + r] = scratch_stats[r, 1]
            if is_regression:
                position_y[write + r] = scratch_stats[r, 2]
    if is_regression:
        out_left[2] = high_left - low_left
        out_right[2] = high_right - low_right
    return write, weight_left, weight_right


@inline_kernel
def constant_features(hist_pool, slot, start, end, codes, bin_offset, bin_min, bin_max, n_sweep,
                      unit_weight, out):  # fmt: skip
    """Mark the features constant in a node: ``out[f] = 1``.

    Constant as in the exact splitter (``sweep_exact.presorted_constant_features``): the rows
    share one bin (their NaN bin included), or their bins hold no NaN and span at most
    ``FEATURE_THRESHOLD`` (:func:`tied`). From the stored histogram when
    ``slot >= 0`` (its first and last non-empty bins), else from the codes at positions
    ``start .. end - 1``.
    """
    n_features = codes.shape[1]
    if slot >= 0:
        hist = hist_pool[slot]
        for f in range(n_features):
            lowest = -1
            highest = -1
            for b in range(bin_offset[f], bin_offset[f + 1]):
                if bin_totals(hist, b, n_sweep, unit_weight)[1] > 0.0:
                    if lowest < 0:
                        lowest = b
                    highest = b
            out[f] = lowest == highest or tied(bin_min[lowest], bin_max[highest])
        return
    for f in range(n_features):
        out[f] = 1
        first = bin_offset[f]
        lowest = codes[start, f]
        highest = lowest
        for p in range(start + 1, end):
            code = codes[p, f]
            if code < lowest or code > highest:
                lowest = min(lowest, code)
                highest = max(highest, code)
                if not tied(bin_min[first + lowest], bin_max[first + highest]):
                    out[f] = 0
                    break
