"""The records everything else passes around; imports nothing else of veracity.

- :mod:`.contracts`: frozen records (``Document``, ``Chunk``, ``Principal``,
  ``Query``, ``Hit``, ``Citation``, ``Claim``) and their enums;
- :mod:`.errors`: the one exception tree;
- :mod:`.versions`: product-version parsing and ranges;
- :mod:`.governance`: the eligibility predicate (tenant, role, validity, version, status).
"""
