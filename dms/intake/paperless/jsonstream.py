"""The items of a JSON array read one at a time from a stream, so that a manifest of any size is
read in bounded memory: each item is decoded by the standard library's decoder as soon as the
buffer holds all of it.

Bounded: an item longer than `max_item_chars` (or the array's text before it ends) is refused, and
so is nesting deeper than Python's decoder can take (RecursionError) — a ManifestError with a
sentence, never a crash."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

CHUNK_CHARS = 1 << 20
WHITESPACE = " \t\r\n"


class ManifestError(Exception):
    """The export cannot be read: the sentence says why."""


def array_items(stream: TextIO, max_item_chars: int, name: str) -> Iterator[Any]:
    """Each item of the JSON array `stream` holds, in order."""
    decoder = json.JSONDecoder()
    reader = _Buffer(stream)
    if reader.next_char() != "[":
        raise ManifestError(f"{name} is not a JSON list.")
    reader.take(1)
    if reader.next_char() == "]":
        return
    while True:
        yield reader.decode(decoder, max_item_chars, name)
        following = reader.next_char()
        if following == "]":
            return
        if following != ",":
            raise ManifestError(f"{name} is not valid JSON: a comma or the end of the list was "
                                "expected after an item.")
        reader.take(1)
        reader.next_char()


class _Buffer:
    def __init__(self, stream: TextIO):
        self.stream, self.text, self.at, self.ended = stream, "", 0, False

    def more(self, wanted: int) -> bool:
        """Read at least `wanted` more characters (fewer at the end); False at the end."""
        if self.ended:
            return False
        self.text = self.text[self.at:]
        self.at = 0
        chunk = self.stream.read(max(wanted, CHUNK_CHARS))
        if not chunk:
            self.ended = True
            return False
        self.text += chunk
        return True

    def next_char(self) -> str:
        """The next character that is not white space ("" at the end), not taken."""
        while True:
            while self.at < len(self.text) and self.text[self.at] in WHITESPACE:
                self.at += 1
            if self.at < len(self.text):
                return self.text[self.at]
            if not self.more(CHUNK_CHARS):
                return ""

    def take(self, count: int) -> None:
        self.at += count

    def decode(self, decoder: json.JSONDecoder, limit: int, name: str) -> Any:
        while True:
            try:
                item, end = decoder.raw_decode(self.text, self.at)
            except json.JSONDecodeError as error:
                held = len(self.text) - self.at
                if held > limit:
                    raise ManifestError(f"{name} holds an item of more than {limit:,} characters"
                                        ".") from None
                # Perhaps incomplete so far: read as much again (an item is decoded O(log n) times).
                if self.more(max(held, CHUNK_CHARS)):
                    continue
                raise ManifestError(f"{name} is not valid JSON ({error.msg}).") from None
            except RecursionError:
                raise ManifestError(f"{name} nests deeper than a manifest does.") from None
            if end == len(self.text) and self.more(CHUNK_CHARS):
                continue  # a number or word at the end of the buffer may go on
            if end - self.at > limit:
                raise ManifestError(f"{name} holds an item of more than {limit:,} characters.")
            self.at = end
            return item
