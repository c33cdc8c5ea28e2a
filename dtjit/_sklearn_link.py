"""Make dtjit's trees pass scikit-learn's ``isinstance`` checks without importing ``sklearn.tree``.

scikit-learn's ``export_text``, ``export_graphviz`` and ``plot_tree`` validate their argument
with ``isinstance(tree, sklearn.tree.DecisionTreeClassifier)`` (or ``...Regressor``) and then
read only ``tree_`` (which speaks scikit-learn's vocabulary), ``classes_`` and ``criterion``.
scikit-learn's tree classes are ABCs, so registering ours as *virtual* subclasses satisfies the
check without inheriting any of scikit-learn's fitting code.

Importing ``sklearn.tree`` just to register costs about 0.1 s (it pulls in
``sklearn.neighbors``), a tenth of the start-up budget of ``import dtjit`` + fit + predict.
So the registration happens when ``sklearn.tree`` is imported: at once if it already is,
otherwise through a one-shot import hook that runs right after the module is executed. Only
code that imports ``sklearn.tree`` can call its exporters, so no check can run before the
registration. :func:`call_when_imported` serves :mod:`dtjit._base` the same way, for
``sklearn.base``.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

SKLEARN_TREE = "sklearn.tree"


class _AfterExec(importlib.abc.Loader):
    """Delegates to the real loader, then calls ``after(module)`` and steps out of the way."""

    def __init__(self, inner: Any, after: Callable[[ModuleType], None]) -> None:
        self.inner = inner
        self.after = after

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Restore the real loader first, so the module looks exactly as if imported normally.
        module.__loader__ = self.inner
        module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        self.after(module)


class _OnImport(importlib.abc.MetaPathFinder):
    """A one-shot finder: wraps the loader of one module name, then removes itself."""

    def __init__(self, name: str, after: Callable[[ModuleType], None]) -> None:
        self.name = name
        self.after = after

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # before find_spec below, which would otherwise recurse
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _AfterExec(spec.loader, self.after)
        return spec


def call_when_imported(name: str, after: Callable[[ModuleType], None]) -> None:
    """Call ``after(module)`` once the module ``name`` is imported (at once if it already is)."""
    module = sys.modules.get(name)
    if module is not None:
        after(module)
    else:
        sys.meta_path.insert(0, _OnImport(name, after))


def register_with_sklearn_tree(classifier: type, regressor: type) -> None:
    """Register ``classifier`` and ``regressor`` as virtual subclasses of scikit-learn's trees."""

    def register(sklearn_tree: ModuleType) -> None:
        sklearn_tree.DecisionTreeClassifier.register(classifier)
        sklearn_tree.DecisionTreeRegressor.register(regressor)

    call_when_imported(SKLEARN_TREE, register)
