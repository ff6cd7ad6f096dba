"""Careful file I/O for untrusted trees (careful.py), its operations at an open
directory handle (at.py), and globs."""
