"""Batch prediction: rows walk from the root to a leaf, block by block for large inputs."""
