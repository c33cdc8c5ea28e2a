"""The engine: compiled kernels and the Python driver that grows a tree from prepared data.

It imports numpy and numba and itself only, never the estimators or scikit-learn.
"""
