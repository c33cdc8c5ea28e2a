"""dtjit: exact decision trees built breadth-first by Numba kernels, scikit-learn compatible.

Public names:

- :class:`DecisionTreeClassifier`, :class:`DecisionTreeRegressor`: drop-in replacements for
  scikit-learn's trees;
- :class:`Tree`: the fitted tree as flat parallel arrays (``estimator.tree_``);
- :func:`save`, :func:`load`: model files without pickle;
- :mod:`dtjit.criteria`: entropy, Gini and information gain for hand computations;
- :func:`export_text`, :func:`export_rules`, :func:`rule_records`, :func:`rules_frame`,
  :func:`export_graphviz`, :func:`export_mermaid`, :func:`to_dict`, :func:`to_json`: the tree
  as indented text, if-then rules (text, records, DataFrame), DOT, Mermaid and JSON;
- :class:`MDLPDiscretizer`: Fayyad & Irani's supervised discretisation, a transformer;
- :func:`plot_tree`, :func:`plot_importances`, :func:`plot_split_scan` (module
  :mod:`dtjit.plotting`; they need matplotlib, imported only when a plot is drawn).

A fitted estimator or :class:`Tree` displays itself in Jupyter as a drawing of the tree.
"""

__version__ = "0.1.0"

from . import criteria
from ._estimators import DecisionTreeClassifier, DecisionTreeRegressor
from ._persist import load, save
from ._tree import Tree, TreeFormatError, check_tree
from .discretize import MDLPDiscretizer
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
from .plotting import plot_importances, plot_split_scan, plot_tree

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "MDLPDiscretizer",
    "Tree",
    "TreeFormatError",
    "check_tree",
    "criteria",
    "export_graphviz",
    "export_mermaid",
    "export_rules",
    "export_text",
    "load",
    "plot_importances",
    "plot_split_scan",
    "plot_tree",
    "rule_records",
    "rules_frame",
    "save",
    "to_dict",
    "to_json",
    "__version__",
]
