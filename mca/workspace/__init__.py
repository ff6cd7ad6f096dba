"""The workspace store: everything mca knows about the workspace's files and their history.

paths (containment), ignore (.gitignore rules), protect (the protected-path manifest) and guard
(protected paths around a sandboxed command); records (the one record type) kept by journal,
snapshots (the file tools' old bytes), checkpoints (the workspace walked around a turn: scan,
update, watch; trees and packs store them), undo and restore (the one undo path), and store
(the WorkspaceStore a session opens). Nothing is imported here: each part loads when used.
"""
