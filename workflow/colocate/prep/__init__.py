"""Preparation: map/reduce of the shards to per-task tables and series, the task tables, realizations."""
