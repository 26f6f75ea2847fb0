"""Evaluation: pure metrics, evaluation cases, the runner and report writers."""
