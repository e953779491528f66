"""The report: summary.md beside the papers' numbers."""
