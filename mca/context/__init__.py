"""What the model is sent: the engine (model + system prompt), the prompt, the
directories above the workspace that speak, provenance, compaction."""
