"""Language: normalization, tokenizers, sentences and question analysis.

- :mod:`.normalize`: the normalized body and the whitespace-collapsed identity form;
- :mod:`.tokens`: the zh/en retrieval tokenizer (rjieba for Chinese);
- :mod:`.english`: a Lucene-style English analyzer (Porter stemming);
- :mod:`.sentences`: sentence spans;
- :mod:`.questions`: sub-questions and the terms each asks about.
"""
