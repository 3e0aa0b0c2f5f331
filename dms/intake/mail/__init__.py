"""Mail accounts checked over IMAP: their attachments become documents."""
