"""The settings: read once from flags, MCA_* variables, *_API_KEY and config.toml
(settings.py; specs, values, sources, provider, apikeys say how), validated, frozen."""
