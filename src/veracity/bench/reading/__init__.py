"""The reader's training data, its fit and its calibration (see :mod:`veracity.reader`)."""
