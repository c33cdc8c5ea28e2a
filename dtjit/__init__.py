"""dtjit: exact decision trees built breadth-first by Numba kernels, scikit-learn compatible.

Public names:

- :class:`DecisionTreeClassifier`, :class:`DecisionTreeRegressor`: drop-in replacements for
  scikit-learn's trees;
- :class:`Tree`: the fitted tree as flat parallel arrays (``estimator.tree_``);
- :func:`check_tree`: checks a tree's arrays against the storage contract (every
  :class:`Tree` runs it when built, so :func:`load` does too);
- :class:`TreeFormatError`: the ``ValueError`` raised when a tree's arrays or a model file
  break that contract;
- :func:`save`, :func:`load`: model files without pickle;
- :mod:`dtjit.criteria`: entropy, Gini and information gain for hand computations;
- :func:`export_text`, :func:`export_rules`, :func:`rule_records`, :func:`rules_frame`,
  :func:`export_graphviz`, :func:`export_mermaid`, :func:`to_dict`, :func:`to_json`: the tree
  as indented text, if-then rules (text, records, DataFrame), DOT, Mermaid and JSON;
- :class:`MDLPDiscretizer`: Fayyad & Irani's supervised discretisation, a transformer;
- :mod:`dtjit.pruning`: :func:`prune` (cut a fitted tree back to any ``ccp_alpha``),
  :func:`select_ccp_alpha` (choose it on validation data or by cross-validation, minimum or
  one-standard-error rule), :func:`reduced_error_prune`, :func:`pruning_path`, and
  :class:`PruningSelection`, what :func:`select_ccp_alpha` returns (each candidate subtree's
  alpha, error and standard error; the chosen alpha and the pruned estimator);
- :func:`plot_tree`, :func:`plot_importances`, :func:`plot_split_scan`,
  :func:`plot_pruning_path` (module
  :mod:`dtjit.plotting`; they need matplotlib, imported only when a plot is drawn).

A fitted estimator or :class:`Tree` displays itself in Jupyter as a drawing of the tree.

The estimators are scikit-learn estimators: they inherit its ``BaseEstimator`` and mixins
and validate their parameters and data with its helpers. ``import dtjit`` compiles nothing:
numba compiles (or loads from its on-disk cache) each kernel when a fit or prediction first
needs it.
"""

__version__ = "0.1.0"

from . import criteria, datasets, pruning
from ._estimators import DecisionTreeClassifier, DecisionTreeRegressor
from ._persist import load, save
from ._tree import Tree, TreeFormatError, check_tree
from .discretize import MDLPDiscretizer
from .engine.compile_notice import CompileWarning
from .export import (
    export_graphviz,
    export_mermaid,
    export_rules,
    export_text,
    rule_records,
    rules_frame,
    to_dict,
    to_json,
)
from .interop import to_sklearn
from .plotting import plot_importances, plot_pruning_path, plot_split_scan, plot_tree
from .pruning import (
    PruningSelection,
    prune,
    pruning_path,
    reduced_error_prune,
    select_ccp_alpha,
)

__all__ = [
    "CompileWarning",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "MDLPDiscretizer",
    "PruningSelection",
    "Tree",
    "TreeFormatError",
    "check_tree",
    "criteria",
    "datasets",
    "export_graphviz",
    "export_mermaid",
    "export_rules",
    "export_text",
    "load",
    "plot_importances",
    "plot_pruning_path",
    "plot_split_scan",
    "plot_tree",
    "prune",
    "pruning",
    "pruning_path",
    "reduced_error_prune",
    "rule_records",
    "rules_frame",
    "save",
    "select_ccp_alpha",
    "to_dict",
    "to_json",
    "to_sklearn",
    "__version__",
]
