"""Workspace checkpoints: the whole workspace's state before a turn's first change, kept in a
content-addressed store under $MCA_HOME, so /undo also reverts what commands did and /rewind
takes files (and the conversation) back to before an earlier turn.

scan.py walks the workspace (no link followed, .gitignore honoured, capped); store.py keeps
blobs, trees and one record per turn; restore.py writes a tree back through contained paths;
undo.py decides between these records and the per-file snapshots (mca/tools/snapshots.py).
"""
