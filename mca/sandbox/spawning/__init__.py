"""How a sandboxed command is started: mca's side (client.py) of the
spawner, the small single-threaded helper (spawner.py, run as `python -I -S`) that forks
each command, its children from fork to exec (child.py), the frames between them
(frames.py) and a started command (spawned.py). Nothing here runs at import: the helper
imports this package too."""
