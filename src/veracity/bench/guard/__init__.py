"""The guard's training data, its fit and its calibration (see :mod:`veracity.guard`)."""
