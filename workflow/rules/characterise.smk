# characterise: filled in by its issue.
