"""Building a session whole from the settings, in order (assemble.py), each part
given its own small frozen config (wiring.py)."""
