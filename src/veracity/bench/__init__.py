"""Retrieval benchmarks on BEIR-format folders (``veracity bench retrieval``).

- :mod:`.beir`: load a BEIR folder (corpus, queries, qrels of one split);
- :mod:`.embedcache`: embed a corpus in batches, cached as ``.npy``;
- :mod:`.retrieval`: the channels (bm25, dense, hybrid, hybrid+rerank), the
  metrics per channel, timings, and the JSON report.
"""
