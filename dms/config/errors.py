"""The error of a setting (its own module: dms.config and its helpers both raise it)."""


class ConfigError(ValueError):
    """A setting has a value dms cannot use; the message names the setting."""
