"""/model NAME: the model another name means, read from the same sources as at start-up (the
assembly's side of the REPL's /model; the REPL gets it as a ModelSwitch)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mca.assembly.wiring import model_options
from mca.config.apikeys import KeyHosts, key_hosts
from mca.config.settings import homes, load_settings
from mca.config.sources import ConfigFile
from mca.config.specs import SPECS
from mca.errors import ConfigError
from mca.models.options import ModelOptions
from mca.models.registry import PROVIDERS, SHARED_KEY_VAR, Registry

__all__ = ["ModelChooser"]


class ModelChooser:
    """/model: what is configured, and the settings for another model name (same sources).

    The shared keys stay bound to the hosts they were configured for at start-up
    (mca.config.apikeys): a name that implies another provider gets that provider's own key, or
    an error saying it is needed; a custom server keeps every name that implies no other
    provider."""

    def __init__(
        self,
        env: Mapping[str, str],
        workspace: Path,
        overrides: Mapping[str, Any],
        providers: Registry = PROVIDERS,
    ) -> None:
        self.env, self.workspace, self.overrides = dict(env), workspace, dict(overrides)
        self.providers = providers
        self._hosts: KeyHosts | None = None

    @property
    def hosts(self) -> KeyHosts:
        """Where the shared keys were configured to go (read once, as mca started)."""
        if self._hosts is None:
            config = ConfigFile(homes(self.env)[1] / "config.toml")
            self._hosts = key_hosts(self.env, config.data, self.providers)
        return self._hosts

    def available(self) -> list[str]:
        keyed = [s for s in self.providers if s.key_vars]
        lines = []
        for spec in keyed:
            shared = (SHARED_KEY_VAR,) if self.hosts.env == spec.base_url else ()
            var = next((v for v in (*shared, *spec.key_vars) if self.env.get(v)), "")
            state = f"key in {var}" if var else f"no key (set {spec.key_vars[0]})"
            lines.append(f"  {spec.name:<10} {state}; default model {spec.default_model}")
        if self.env.get("MCA_BASE_URL"):
            key = f" (key in {SHARED_KEY_VAR})" if self.env.get(SHARED_KEY_VAR) else ""
            lines.append(
                f"  server     MCA_BASE_URL={self.env['MCA_BASE_URL']}: any model it serves{key}"
            )
        for spec in self.providers:
            if not spec.key_vars:
                lines.append(f"  {spec.name:<10} {spec.about}: /model {spec.default_model}")
        return ["configured:", *lines, "switch with /model NAME (the conversation stays)"]

    def to(self, name: str, current: ModelOptions) -> ModelOptions:
        """The model `name` means, and how to reach it; ConfigError (naming what is missing)
        when it cannot be used."""
        env = dict(self.env)
        implied = self.providers.implied(name)  # the same rule as at start-up
        if implied is not None and implied.name != current.provider:
            env["MCA_PROVIDER"] = implied.name  # the name says which API it needs
            env.pop("MCA_BASE_URL", None)  # the server left behind speaks the other one
        overrides = {**self.overrides, "model": name}
        try:
            settings = load_settings(
                env,
                workspace=self.workspace,
                overrides=overrides,
                providers=self.providers,
                hosts=self.hosts,
            )
        except ConfigError as e:  # the name came from /model, not from a --model flag
            flag = f"{SPECS.model.flag}:"
            raise ConfigError(f"/model {name}: {str(e).removeprefix(flag).strip()}") from None
        if settings.model != name:
            raise ConfigError(
                f"cannot switch to {name!r}: {settings.mock_reason or 'the settings'} keeps"
                f" the model {settings.model!r}"
            )
        return model_options(settings)
