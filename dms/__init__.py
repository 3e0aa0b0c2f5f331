"""dms: a self-hosted document management appliance in one process."""

__version__ = "0.1.0"
