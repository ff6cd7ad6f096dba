"""Text as data: the sanitiser and scrubber, diffs, counts, plans. Pure functions."""
