"""Settings, secrets and paths: what Tabrelay remembers between runs."""
