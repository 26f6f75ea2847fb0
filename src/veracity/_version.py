"""The package version, apart from the public API so that any layer may read it."""

__version__ = "0.1.0"
