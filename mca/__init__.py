"""mca: a mini coding agent."""

__all__ = ["__version__"]

__version__ = "0.1.0"  # a literal: the build reads it without importing mca (pyproject.toml)
