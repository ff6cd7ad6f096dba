"""The provider registry: one entry (plus its wire) is all a new provider needs.

The fake provider "acme" below is one `ProviderSpec` and one small wire class written here; it
reaches start-up settings, the banner, /model (listing and switching), /cost and the context
window through the registry passed to `load_settings` and `ModelChooser`, with no other edit.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mca.assembly.chooser import ModelChooser
from mca.assembly.wiring import model_options
from mca.cli.start import repl_for
from mca.config.settings import Settings, load_settings
from mca.errors import ConfigError
from mca.models import build_model
from mca.models.known import ModelInfo, Price
from mca.models.options import ModelOptions, Notice
from mca.models.registry import PROVIDERS, ProviderSpec
from mca.types import Message, Request, Response, TextSink, Usage
from tests.helpers import piped_repl

ENTER, CTRL_D = "\r", "\x04"
KEY = "acme-key-0123456789"


# -- the new provider's wire module -------------------------------------------------------------
class AcmeModel:
    """Acme's wire: answers with the model's name and reports its token use."""

    def __init__(self, options: ModelOptions) -> None:
        self.name = options.model
        self.key = options.api_key

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        text = f"{self.name} here, keyed {self.key == KEY}"
        if on_text is not None:
            on_text(text)
        return Response(Message("assistant", text), usage=Usage(1_000_000, 500_000))

    def close(self) -> None:
        pass


def _acme(options: ModelOptions, notice: Notice) -> AcmeModel:
    return AcmeModel(options)


# -- and its one registry entry -----------------------------------------------------------------
ACME = ProviderSpec(
    "acme",
    _acme,
    base_url="https://api.acme.example/v1",
    default_model="acme-large",
    key_vars=("ACME_API_KEY",),
    models=(
        ModelInfo("acme", 64_000),
        ModelInfo("acme-large", price=Price(3.0, 12.0)),
        ModelInfo("acme-small", 16_000, Price(0.5, 1.5)),
    ),
    implied_by=("acme-",),
)
REGISTRY = PROVIDERS.with_(ACME)


def load(ws: Path, **env: str) -> Settings:
    return load_settings(
        {"MCA_HOME": str(ws.parent / "home"), **env}, workspace=ws, providers=REGISTRY
    )


def test_start_up_settings_pick_the_provider(ws: Path) -> None:
    s = load(ws, ACME_API_KEY=KEY)  # no model named: its key is the only one set
    assert (s.provider, s.model, s.base_url) == ("acme", "acme-large", ACME.base_url)
    assert (s.api_key, s.api_key_var) == (KEY, "ACME_API_KEY")
    assert (s.context_window, s.context_window_known) == (64_000, True)
    s = load(ws, OPENAI_API_KEY="k" * 20, ACME_API_KEY=KEY, MCA_MODEL="acme-small")
    assert (s.provider, s.context_window) == ("acme", 16_000)  # the name implies it
    s = load(ws, MCA_PROVIDER="acme", MCA_API_KEY=KEY, MCA_MODEL="custom")
    assert (s.provider, s.api_key_var) == ("acme", "MCA_API_KEY")
    with pytest.raises(ConfigError, match="set ACME_API_KEY or MCA_API_KEY"):
        load(ws, MCA_MODEL="acme-large")
    with pytest.raises(ConfigError, match="must be one of openai, anthropic, mock, acme"):
        load(ws, MCA_PROVIDER="nope")
    assert isinstance(build_model(model_options(load(ws, ACME_API_KEY=KEY))), AcmeModel)


def test_the_banner_names_its_key(ws: Path) -> None:
    repl = repl_for(load(ws), out=io.StringIO(), plain=True)
    assert "set OPENAI_API_KEY, ANTHROPIC_API_KEY or ACME_API_KEY for a real one" in repl.banner()
    repl = repl_for(load(ws, ACME_API_KEY=KEY), out=io.StringIO(), plain=True)
    assert "model acme-large via acme" in repl.banner()


def test_model_and_cost_in_the_repl(ws: Path) -> None:
    env = {"MCA_HOME": str(ws.parent / "home"), "ACME_API_KEY": KEY, "OPENAI_API_KEY": "k" * 20}
    settings = load_settings({**env, "MCA_MODEL": "gpt-4o"}, workspace=ws, providers=REGISTRY)
    chooser = ModelChooser(env, ws, {}, providers=REGISTRY)
    keys = (
        f"/model{ENTER}/model acme-small{ENTER}hello{ENTER}/cost{ENTER}"
        f"/model acme-large{ENTER}/model{ENTER}{CTRL_D}"
    )
    text, _ = piped_repl(settings, keys, chooser=chooser)
    assert "acme       key in ACME_API_KEY; default model acme-large" in text
    assert "model acme-small via acme (was gpt-4o via openai); context window 16,000" in text
    assert "acme-small here, keyed True" in text  # its wire answered, with its key
    assert "$0.5 / $1.5 per million tokens" in text and "built-in table" in text
    assert "cost: ~$1.2500" in text  # 1M in at $0.5 + 0.5M out at $1.5
    assert "model acme-large via acme (was acme-small via acme)" in text
    assert "provider acme · model acme-large · base URL https://api.acme.example/v1" in text
    assert "context window 64,000 tokens" in text


def test_one_rule_for_the_provider_a_name_implies() -> None:
    implied = {n: getattr(PROVIDERS.implied(n), "name", None) for n in ("claude-x", "o3", "qwen")}
    assert implied == {"claude-x": "anthropic", "o3": "openai", "qwen": None}
    assert PROVIDERS.infer("qwen", {}) == "openai"  # a name nothing owns: the fallback
    assert PROVIDERS.infer("", {"ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert PROVIDERS.infer("", {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}) == "openai"
    assert PROVIDERS.infer("", {"MCA_API_KEY": "k"}) == "openai"
    assert PROVIDERS.infer("", {}) == "mock"
    assert PROVIDERS.infer("mockingbird", {}) == "openai"  # only the exact name is the mock


def test_lookups_list_the_choices(ws: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown model provider 'x' \(available: acme, anthr"):
        REGISTRY["x"]
    with pytest.raises(ConfigError, match=r"MCA_PROVIDER: must be one of.*acme"):
        load_settings({"MCA_PROVIDER": "x"}, workspace=ws, providers=REGISTRY)
    assert REGISTRY.names() == ("openai", "anthropic", "mock", "acme")
    assert PROVIDERS.names() == ("openai", "anthropic", "mock")  # the default is untouched
    assert PROVIDERS.window_for("claude-opus-4") == 200_000 and PROVIDERS.window_for("x") is None
    assert REGISTRY.prices()["acme-large"] == Price(3.0, 12.0)
