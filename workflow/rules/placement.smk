# placement: filled in by its issue.
