"""The sandbox for commands mca runs for the model (and for the lab's student code).

Enforced by the operating system, not by a question: each property has the mechanism that can
hold it on Linux, and nothing here pretends where none can.

| property                          | mechanism                                                  |
|-----------------------------------|------------------------------------------------------------|
| write only the workspace and tmp  | Landlock (allow-list; root is not exempt); with user       |
|                                   | namespaces also the whole tree mounted read-only           |
| no chmod/utime outside            | read-only mounts; read-only mode: seccomp refuses the calls |
| secrets unreadable, and absent    | Landlock read allow-list; in a mount namespace each secret |
|                                   | covered by an empty mount                                  |
| .git/, .mca/ … read-only; every   | a read-only bind mount; without namespaces, recorded       |
| repository inside the workspace   | before and restored after the command; a new one whose     |
|                                   | settings run programs named after it                       |
| no network                        | a new network namespace; without one, seccomp: no socket   |
|                                   | but a unix one (Landlock's TCP rules, ABI 4, too)          |
| no unix socket outside            | where they live covered by empty mounts; Landlock's        |
|                                   | RESOLVE_UNIX (ABI 9) too; neither: said, not held.         |
|                                   | Abstract ones: the network namespace, or Landlock's scope  |
|                                   | (ABI 6)                                                    |
| nothing outlives the command      | a PID namespace; without one, a pids cgroup (root) or the  |
|                                   | command's process group, which seccomp keeps every process |
|                                   | in (setsid, setpgid refused; the spawner reaps them)       |
| no fork bomb, no giant file       | RLIMIT_NPROC (a pids cgroup for root), RLIMIT_FSIZE        |
| no new privileges, no ptrace out  | PR_SET_NO_NEW_PRIVS; Landlock's ptrace and signal scopes;  |
|                                   | root's capabilities cut to those about files               |

Without Landlock, user namespaces alone are a sandbox (the mounts are then the only wall, so
each must hold); with neither, nothing is called a sandbox and every command asks.

Modules: rights (what is allowed; pure data), rules (which paths Landlock grants), rulesets
(the session's Landlock rulesets, kept while the grants stand), landlock
(the ctypes binding), linux (what the child does before exec), mounts (what it mounts), seccomp
(the metadata, process-group and socket filters), probe (what this system has), box (the session's
Sandbox), nproc (the room RLIMIT_NPROC gives a command), tasks (root's pids cgroup), reach (what
a command could reach past the fixed walls, decided again before each: nested (the
repositories inside the workspace) and sockets (where unix sockets live)), properties (what
holds with which mechanisms; pure), check (each property tried in a real child). Commands
start from the spawner, a small single-threaded helper made once per process, never from a
fork of mca (spawning/: spawner, the helper's loop, run as its own program; child, what its
children do between fork and exec; client, mca's side: the helper started, the requests,
restarts; spawned, the request's data and the Popen-like handle on a command; frames, the wire
between them). The protected paths'
list, their guard without a mount namespace, the search for repositories and what in them runs
programs are the workspace store's (mca/workspace/protect.py, guard.py, repos.py,
gitconfig.py).
"""
