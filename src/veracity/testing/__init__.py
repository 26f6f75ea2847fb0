"""Support code for tests and benchmarks; the engine never imports it at run time.

- :mod:`veracity.testing.fakes`: a reader and a guard that need no weights.
- :mod:`veracity.testing.pdf_builder`: minimal valid PDFs written byte by byte.
- :mod:`veracity.testing.tenants`: the demo plus a second tenant, with API keys, for the service.
"""
