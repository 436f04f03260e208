"""COREN prompts, first layout (2026-11-30): one header per variant before the step (kept loadable for
comparison)."""
