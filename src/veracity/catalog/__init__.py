"""The catalog, the source of truth for documents, chunks and tenant roles.

- :mod:`.catalog`: ``Catalog``, governance operations (add, resolve, withdraw, …);
- :mod:`.store`: the ``Store`` protocol every storage backend implements;
- :mod:`.memory` (the test fake) and :mod:`.sqlite` (the embedded default);
- :mod:`.migrations`: named schema migrations of the knowledge-base file;
  :mod:`.sql`: small apsw row helpers.
- the knowledge base's own tables, read and written here so no layer above runs
  SQL: :mod:`.ledger`, :mod:`.tombstones`, :mod:`.sources`, :mod:`.settings`,
  :mod:`.keys`, :mod:`.manifest`, :mod:`.state`, :mod:`.copy`, :mod:`.erase`.
"""
