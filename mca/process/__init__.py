"""mca's own process: hardening (harden.py) and the signals that end it (signals.py)."""
