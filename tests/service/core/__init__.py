"""Tests of the serving core (veracity.service.core)."""
