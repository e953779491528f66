"""Analyses: task characterisation, Beta fits, jobs, CPU vs memory, periodicity, machine failures."""
