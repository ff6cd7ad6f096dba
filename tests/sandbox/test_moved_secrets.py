"""Credentials where tools' own variables put them ($GNUPGHOME, $DOCKER_CONFIG, $KUBECONFIG …,
read from the environment mca starts with) are secrets as the `~/` ones are: unreadable from a
sandboxed command, and a gpg-agent's socket in a moved $GNUPGHOME out of reach. main read them
all, and reached the socket with namespaces too."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.assembly.sandboxing import sandbox_for
from mca.config.settings import load_settings
from mca.errors import ConfigError
from mca.sandbox.box import Sandbox
from mca.sandbox.credentials import named_places
from mca.sandbox.rights import Mode, build_policy
from tests.sandbox.mechanisms import chosen, used
from tests.sandbox.world import Listener, World, all_files_text, build_world, local_places

KINDS = chosen(only=("namespaces", "namespaces-only", "landlock"))


# -- pure: where the variables point ------------------------------------------------------------
def test_the_places_follow_tools_own_variables(tmp_path: Path) -> None:
    home, x = tmp_path / "home", tmp_path / "x"
    env = {
        "GNUPGHOME": f"{x}/gnupg",
        "DOCKER_CONFIG": f"{x}/docker/",
        "KUBECONFIG": f"{x}/k1::{x}/k2:relative",  # a list, as $PATH
        "CARGO_HOME": "~/cargo",
        "XDG_CONFIG_HOME": f"{x}/cfg",
        "SOPS_AGE_KEY_FILE": f"{x}/age.txt",
        "GOOGLE_APPLICATION_CREDENTIALS": "creds.json",  # relative: nothing fixed
        "GITHUB_TOKEN": f"{x}/not-a-place",
    }
    places = named_places(env, home)
    for p in (
        x / "gnupg",
        x / "docker" / "config.json",
        x / "k1",
        x / "k2",
        home / "cargo" / "credentials",
        home / "cargo" / "credentials.toml",
        x / "cfg" / "gh",
        x / "cfg" / "git" / "credentials",
        x / "cfg" / "sops" / "age" / "keys.txt",
        x / "age.txt",
    ):
        assert p in places, p
    assert x / "docker" not in places and x / "not-a-place" not in places
    assert not any("relative" in str(p) or "creds.json" in str(p) for p in places)
    assert named_places({}, home) == ()


def test_the_policy_holds_them_but_never_a_device_the_root_or_the_home(tmp_path: Path) -> None:
    home, moved = tmp_path / "home", tmp_path / "moved" / "gnupg"
    env = {
        "GNUPGHOME": str(moved),
        "HISTFILE": "/dev/null",  # common: no history
        "AWS_CONFIG_FILE": "/",
        "CLOUDSDK_CONFIG": str(home),
    }
    policy = build_policy(Mode.WORKSPACE_WRITE, tmp_path / "ws", home, tmp_path / "mh", env=env)
    assert moved in policy.deny_read and home / ".gnupg" in policy.deny_read
    assert not {Path("/dev/null"), Path("/"), home} & set(policy.deny_read)


def test_the_settings_read_them_from_the_environment_mca_starts_with(tmp_path: Path) -> None:
    ws, moved = tmp_path / "ws", tmp_path / "moved"
    ws.mkdir()
    env = {
        "HOME": str(tmp_path / "home"),
        "MCA_HOME": str(tmp_path / "mh"),
        "DOCKER_CONFIG": str(moved / "docker"),
        "GITHUB_TOKEN": "ghp_not-a-place",
        "MCA_SANDBOX": "off",  # no probe needed to see the policy
    }
    settings = load_settings(env, workspace=ws)
    assert dict(settings.place_vars) == {"DOCKER_CONFIG": str(moved / "docker")}  # no token
    assert moved / "docker" / "config.json" in sandbox_for(settings).policy.deny_read
    with pytest.raises(ConfigError, match="holds one of your secrets"):
        load_settings({**env, "MCA_SANDBOX_WRITABLE": str(moved)}, workspace=ws)


# -- in a real sandbox ----------------------------------------------------------------------------
@pytest.fixture(params=sorted(KINDS) or ["none"])
def world(request: pytest.FixtureRequest, world_root: Path) -> Iterator[World]:
    if request.param == "none":
        pytest.skip("no sandbox mechanism on this system")
    mech = KINDS[request.param]
    used(mech)
    w = build_world(world_root, mech)
    yield w
    w.sandbox.close()
    w.listener.close()


def _moved(world: World, env: dict[str, str]) -> World:
    """The world with a policy built from an environment with these variables."""
    world.sandbox.close()
    ws, home, mca_home = world.ws, world.home, world.root / "mcahome"
    policy = build_policy(Mode.WORKSPACE_WRITE, ws, home, mca_home, env=env)
    box = Sandbox(local_places(policy, world.root), world.sandbox.mechanisms)
    return dataclasses.replace(world, sandbox=box)


def _plant(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.slow
def test_credentials_where_variables_put_them_are_unreadable(world: World) -> None:
    moved = world.root / "moved"
    files = {
        moved / "gnupg" / "private-keys-v1.d" / "k.key": "PLANTED-GPG-7f3a",
        moved / "docker" / "config.json": '{"auths": {"x": {"auth": "PLANTED-DOCKER-91c2"}}}',
        moved / "kube" / "a": "token: PLANTED-KUBE-A-5d1e",
        moved / "kube" / "b": "token: PLANTED-KUBE-B-0b8c",
        world.home / "elsewhere" / "cfg" / "gh" / "hosts.yml": "oauth_token: PLANTED-GH-c4d0",
    }
    for path, text in files.items():
        _plant(path, text + "\n")
    _plant(moved / "docker" / "readable.txt", "BESIDE-IT\n")  # the rest of the folder: not secret
    env = {
        "GNUPGHOME": str(moved / "gnupg"),
        "DOCKER_CONFIG": str(moved / "docker"),
        "KUBECONFIG": f"{moved / 'kube' / 'a'}:{moved / 'kube' / 'b'}",
        "XDG_CONFIG_HOME": str(world.home / "elsewhere" / "cfg"),
    }
    w = _moved(world, env)
    names = " ".join(str(p) for p in files)
    done = w.run(
        f"cat {names} 2>&1; cp -r {moved / 'gnupg'} stolen 2>&1; rev {names} 2>&1;"
        f" cat {moved / 'docker' / 'readable.txt'}; true"
    )
    texts = [done.output, *all_files_text(w.ws)]
    planted = [t.split()[-1].strip('"}') for t in files.values()]
    assert [p for p in planted if any(p in t or p[::-1] in t for t in texts)] == []
    assert "BESIDE-IT" in done.output, done.output  # the command ran, and reads elsewhere work


@pytest.mark.slow
@pytest.mark.parametrize("where", ["beside", "home"])
def test_a_gpg_agent_in_a_moved_gnupghome_is_out_of_reach(world: World, where: str) -> None:
    """A real listening socket where gpg-agent puts its own when $GNUPGHOME is not ~/.gnupg
    and no /run/user folder holds it: a folder beside the workspace (as under /tmp), or one
    under the home no socket place names (~/somewhere)."""
    mech = world.sandbox.mechanisms
    if not mech.user_namespaces and mech.landlock_abi < 9:
        pytest.skip("without namespaces only Landlock ABI 9 keeps sockets out (docs/security.md)")
    top = world.root / "moved" if where == "beside" else world.home / "somewhere"
    gnupg = top / "gnupg"
    gnupg.mkdir(parents=True, mode=0o700)
    sock = gnupg / "S.gpg-agent"
    agent = Listener((sock,))
    try:
        w = _moved(world, {"GNUPGHOME": str(gnupg)})
        done = w.run(
            'python3 -c "import socket, sys; s = socket.socket(socket.AF_UNIX)\n'
            f"try:\n s.connect({str(sock)!r}); print('REACHED')\n"
            "except OSError as e:\n print('refused', e)\""
        )
        assert agent.received == [] and "REACHED" not in done.output, done.output
        assert "refused" in done.output, done.output
    finally:
        agent.close()
