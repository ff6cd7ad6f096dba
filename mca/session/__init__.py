"""The session the faces drive (session.py) and its conversation's side of /undo,
/rewind, /export, /init and the ledger."""
