"""Generate N realistic skill packs (for the 30-pack comparison and the 1,000-skill benchmark).

    python -m bench.packs DIR [N]

Packs get a domain, triggers, paths and a body of several sections (~2-4 KB, like the median
public SKILL.md); every tenth has a scripts/ folder. Deterministic: same N, same files.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

TOPICS = [
    ("api-errors", "HTTP API error responses", ["error response", "status code", "problem json"]),
    ("db-migrations", "database schema migrations", ["migration", "schema change", "alembic"]),
    ("logging", "structured logging", ["logging", "log line", "structured log"]),
    ("feature-flags", "feature flags", ["feature flag", "rollout", "kill switch"]),
    ("i18n", "translations and locales", ["translation", "locale", "i18n"]),
    ("caching", "cache layers", ["cache", "ttl", "invalidation"]),
    ("auth", "authentication and sessions", ["login", "session token", "oauth"]),
    ("payments", "payment flows", ["payment", "refund", "invoice"]),
    ("docs", "documentation style", ["docs", "docstring", "readme"]),
    ("ci", "continuous integration", ["ci pipeline", "workflow", "github actions"]),
    ("docker", "container images", ["dockerfile", "container", "image size"]),
    ("perf", "performance work", ["slow", "profile", "latency"]),
    ("security", "security review", ["secret", "injection", "xss"]),
    ("frontend", "frontend components", ["component", "css", "accessibility"]),
    ("cli", "command-line tools", ["cli flag", "argparse", "exit code"]),
]


def body(rng: random.Random, title: str, triggers: list[str]) -> str:
    steps = [
        f"{i}. {rng.choice(['Check', 'Read', 'Update', 'Verify', 'Run'])} the {t} rules in"
        f" `{rng.choice(['src', 'lib', 'app'])}/{t.replace(' ', '_')}.py` before changing"
        " anything, and keep the change small enough to review in one sitting."
        for i, t in enumerate(triggers * 2, 1)
    ]
    sections = [f"# {title.capitalize()}", "", f"How this team handles {title}.", ""]
    for heading in ("When to use", "Procedure", "Pitfalls", "Verification"):
        sections += [f"## {heading}", "", *rng.sample(steps, k=min(4, len(steps))), ""]
    return "\n".join(sections)


SYLLABLES = ["ka", "lo", "mi", "ter", "vo", "sun", "rex", "pla", "dor", "fi", "gra", "nu"]


def vocabulary(rng: random.Random, size: int = 1500) -> list[str]:
    """Words public skills' descriptions use (the judgment's background: terms in three or
    more of them), and as many made-up ones, so described packs share terms as real ones do."""
    from mca.skills.background import frequencies

    real = list(frequencies()[1])
    made = {"".join(rng.choices(SYLLABLES, k=3)) for _ in range(size)}
    return sorted(set(real) | made)


def description(rng: random.Random, i: int, words: list[str]) -> str:
    """A description in the manner of public skills: what it does, then when to use it."""
    _, title, triggers = TOPICS[i % len(TOPICS)]
    extra = " ".join(rng.sample(words, 8))
    return (
        f"Team conventions for {title} (set {i}): {extra}. Use when the task involves"
        f" {triggers[0]} or {triggers[1]}, or the user asks about {triggers[2]}."
    )


def write_packs(root: Path, n: int, seed: int = 7, described: bool = False) -> list[Path]:
    """Write n packs under root; returns their directories. `described`: packs with no
    triggers, paths or domain, like the skills people install (judged by description)."""
    rng = random.Random(seed)
    words = vocabulary(random.Random(seed))
    out = []
    for i in range(n):
        slug, title, triggers = TOPICS[i % len(TOPICS)]
        name = f"{slug}-{i:04d}"
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        trig = ", ".join(triggers)
        own = (
            f"domain: {slug}\npriority: {i % 7}\ntriggers: [{trig}]\npaths:\n  - 'src/{slug}/**'\n"
        )
        about = (
            description(rng, i, words)
            if described
            else (
                f"Team conventions for {title} (set {i}). Use when the task involves"
                f" {triggers[0]} or {triggers[1]}."
            )
        )
        (d / "SKILL.md").write_text(
            "---\n"
            f"name: {name}\n"
            f'description: "{about}"\n'
            + ("" if described else own)
            + "---\n\n"
            + body(rng, title, triggers),
            encoding="utf-8",
        )
        if i % 10 == 0:
            (d / "scripts").mkdir(exist_ok=True)
            (d / "scripts" / "check.py").write_text("print('ok')\n")
        out.append(d)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 26
    write_packs(target, count)
    print(f"wrote {count} packs to {target}")
