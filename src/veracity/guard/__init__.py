"""The guard: a classifier, fine-tuned here, of whether a text gives orders to the model reading it
(see :mod:`veracity.guard.model`)."""
