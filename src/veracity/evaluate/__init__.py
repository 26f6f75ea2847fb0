"""Evaluation: pure metric functions (``metrics``); cases, runner and reports come later."""
