"""JSON:API sparse fieldsets (api.md, "Fewer fields"): `fields[documents]=title,tags` asks a
listing for those fields of each document only, `fields[folders]=` for none of a folder's. The
fields are the attributes and relationships of the type (a field not asked for is left out, and
what only it needs is not read); a type not named keeps all of its fields. A name the type does
not have, a type the answer does not hold, or a type named twice is refused (400), so that a typo
does not pass for a field the server left out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dms.web.jsonapi import invalid

PREFIX, SUFFIX = "fields[", "]"

# {type: its chosen field names}; a type missing from it keeps all of its fields.
Fieldsets = Mapping[str, frozenset[str]]


def chosen(query_items: Iterable[tuple[str, str]],
           known: Mapping[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """The `fields[type]` parameters among `query_items`, each checked against `known` (every
    type of the answer with its field names, in the order they are listed to the client)."""
    found: dict[str, frozenset[str]] = {}
    for key, value in query_items:
        if not (key.startswith(PREFIX) and key.endswith(SUFFIX)):
            continue
        kind = key[len(PREFIX):-len(SUFFIX)]
        if kind not in known:
            key = key if len(key) <= 100 else key[:99] + "\u2026"  # the client's text, cut short
            raise invalid(f"{key} names a type this answer does not hold; its types are "
                          f"{' and '.join(known)}.")
        if kind in found:
            raise invalid(f"{key} is given twice; name its fields once, separated by commas.")
        names = frozenset(name for name in value.split(",") if name)  # `fields[x]=`: none
        fields = known[kind]
        unknown = names.difference(fields)
        if unknown:
            # The first unknown name in the client's own order: one clear sentence.
            first = next(name for name in value.split(",") if name in unknown)
            raise invalid(f"{key}: {kind} have no field \u201c{first[:100]}\u201d; theirs are "
                          f"{', '.join(fields)}.")
        found[kind] = names
    return found


def wants(fieldsets: Fieldsets, field: str, kinds: Iterable[str]) -> bool:
    """Whether any of `kinds` shows `field` (a type without a fieldset shows all of its own)."""
    return any(kind not in fieldsets or field in fieldsets[kind] for kind in kinds)

