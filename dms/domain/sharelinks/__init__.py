"""Share links (api.md, "Share links"): a document or folder handed to someone without an account,
at a public URL that works until it expires, is revoked or is used up.

- `links`: the owner's side — making, listing and revoking links (only a node's owner may: a
  public link hands the owner's paper to anyone holding the URL);
- `visits`: the visitor's side — opening a link by its slug, the password and its limits on
  guessing, what a link shows, counting downloads, and the node's history of every access.
"""

from dms.domain.sharelinks.links import (
    FILE_VERSIONS,
    create_link,
    links_of,
    owned_link,
    revoke_link,
    slug_of,
)
from dms.domain.sharelinks.visits import (
    UNLOCK_SECONDS,
    Visit,
    open_visit,
)

__all__ = ["FILE_VERSIONS", "UNLOCK_SECONDS", "Visit", "create_link", "links_of", "open_visit",
           "owned_link", "revoke_link", "slug_of"]
