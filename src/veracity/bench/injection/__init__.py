"""The injection benchmark: seeded attack and benign corpora, the detector's fit, the measurements."""
