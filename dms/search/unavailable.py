"""The search engine of a database that has none yet: PostgreSQL until its full-text search
(issue 14, point 5) lands. Same interface as the Indexer; every search answers 503 with a
sentence, never wrong results."""

from __future__ import annotations

MESSAGE = "Search is not available yet when dms runs on PostgreSQL."


class NoSearch:
    ready = False
    progress = (0, 0)
    message = MESSAGE

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def notify(self) -> None:
        pass

    def status(self) -> dict:
        return {"state": "unavailable"}

    def searchable(self) -> None:
        return None
