"""Mail accounts checked over IMAP (docs/api.md, "Mail accounts"): every attachment of an accepted
type in a user's mailbox becomes a document, never twice, also across a crash.

The face is `checker`: MailChecker queues the checks and runs them in the background, shared by
turns between users; release_claims frees the claims a crash left. `unpacking` unpacks a large
message in a child process (`dms _mail-unpack`, which dms.cli runs). Private to this package:
- `_check`: one check of one account;
- `_failures`: what a failed check is told as, the sentence for the account's `last_error`;
- `_client`: the IMAP connection whose server cannot decide how much dms reads, where, or for
  how long;
- `_message`: what dms takes from one message, parsed from the file it was fetched into."""
