"""Whether this process's sealing key (`mail.key` in its data dir, dms.files.sealing) opens the
secrets the database holds: mail accounts' passwords, webhooks' secrets, share links' slugs.
Nodes that share one database need the same key file; a node started with another one, or none,
would fail every mail check, every signed delivery of a secret sealed elsewhere and every share
link's page behind a password, and seal new ones that the other nodes cannot open. Checked at
start (dms.runtime), so the person starting the node reads why."""

from __future__ import annotations

from pathlib import Path

from dms.db.models import MailAccount, ShareLink, Webhook
from dms.files import sealing

SAMPLE = 20  # the newest sealed values of each kind tried: a bounded start-up cost (~1 ms)


def key_problem(data_dir: Path) -> str | None:
    """A sentence for the log when the key cannot open the newest sealed secrets; None when it
    opens them all or there are none."""
    sealed = [(row.password, row.id) for row in MailAccount.select(MailAccount.id,
              MailAccount.password).order_by(MailAccount.created_at.desc()).limit(SAMPLE)]
    sealed += [(row.secret, row.id) for row in Webhook.select(Webhook.id, Webhook.secret)
               .order_by(Webhook.created_at.desc()).limit(SAMPLE)]
    sealed += [(row.slug_sealed, row.id) for row in ShareLink.select(
        ShareLink.id, ShareLink.slug_sealed).order_by(ShareLink.created_at.desc()).limit(SAMPLE)]
    if not sealed:
        return None
    path = sealing.key_path(data_dir)
    advice = ("copy the key file of the node where they were set to every node, or set the "
              "passwords and secrets again")
    if not path.exists():
        return (f"the database holds mail passwords or webhook secrets, but this data dir has no "
                f"key to open them ({path}); {advice}")
    try:
        key = sealing.load_key(data_dir)
    except sealing.Unsealable as reason:
        return f"{reason} The mail passwords and webhook secrets cannot be opened; {advice}"
    unopened = 0
    for value, bound_to in sealed:
        try:
            sealing.unseal(key, value, bound_to)
        except sealing.Unsealable:
            unopened += 1
    if not unopened:
        return None
    return (f"{unopened} of the {len(sealed)} newest mail passwords and webhook secrets do not "
            f"open with this node's key ({path}): it differs from the key they were sealed with; "
            f"{advice}")
