"""Keep a knowledge base in step with where its documents live: folders, git repositories, websites.

A sources file (:mod:`veracity.sync.config`) names each source with its tenant and default
governance; ``veracity sync`` (:mod:`veracity.sync.run`) brings every source up to date.
"""
