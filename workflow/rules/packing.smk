# packing: filled in by its issue.
