"""Scheduling experiments: stochastic packing and its fit tests, admission control, periodic packing, placement."""
