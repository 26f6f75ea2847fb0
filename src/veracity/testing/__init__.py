"""Support code for tests and benchmarks; the engine never imports it at run time.

- :mod:`veracity.testing.pdf_builder`: minimal valid PDFs written byte by byte.
"""
