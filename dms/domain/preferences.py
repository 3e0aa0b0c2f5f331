"""Each user's own settings (api.md, "Preferences"), in Papermerge's shape so that its clients
(papermerge-cli `pref-list`, `pref-update`) work: items with a `section`, a `name`, an
`identifier` (`section__name`), a `default`, the `value` and, where the value is one of a list,
its `choices`. Unlike Papermerge, every user reads and changes their own.

`ocr__language`: the OCR language of the user's new documents (`POST /nodes/` without `lang`,
legacy uploads, imports); its choices are Tesseract's installed languages and their `+`
combinations (at most MAX_LANGUAGES, e.g. `deu+eng`), its default the server's `DMS_OCR_LANG`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dms.db import database, write_transaction
from dms.db.models import User
from dms.errors import Invalid, NotFound
from dms.processing.languages import accepted_languages, is_valid_lang, lang_problem


@dataclass(frozen=True)
class Setting:
    section: str
    name: str
    help_text: str
    choices: Callable[[], list[str]]
    problem: Callable[[object], str | None]  # why a value is refused, as a sentence; None: valid

    @property
    def identifier(self) -> str:
        return f"{self.section}__{self.name}"


SETTINGS = {setting.identifier: setting for setting in (
    Setting("ocr", "language", "OCR language of new documents (Tesseract's, + combines them).",
            lambda: list(accepted_languages()), lang_problem),
)}


@dataclass(frozen=True)
class Preference:
    setting: Setting
    default: str
    value: str


def _defaults(default_lang: str) -> dict[str, str]:
    return {"ocr__language": default_lang}


def preferences_of(user: User, default_lang: str) -> list[Preference]:
    stored = dict(database.execute_sql(
        "SELECT identifier, value FROM preference WHERE user_id = ?", (user.id,)).fetchall())
    defaults = _defaults(default_lang)
    return [Preference(setting, defaults[identifier], stored.get(identifier, defaults[identifier]))
            for identifier, setting in SETTINGS.items()]


def preference(user: User, identifier: str, default_lang: str) -> Preference:
    for item in preferences_of(user, default_lang):
        if item.setting.identifier == identifier:
            return item
    raise NotFound()


def set_values(user: User, values: object, default_lang: str,
               field_of: Callable[[str], str] = lambda identifier: identifier) -> None:
    """Change several of the caller's settings at once ({identifier: value}), all or none."""
    if not isinstance(values, dict) or not values:
        raise Invalid("Send the settings to change as {\"identifier\": value}, e.g. "
                      "{\"ocr__language\": \"deu\"}.", "/")
    for identifier, value in values.items():
        setting = SETTINGS.get(identifier)
        if setting is None:
            raise Invalid(f"There is no setting {identifier!r}; there are: "
                          f"{', '.join(SETTINGS)}.", field_of(identifier))
        problem = setting.problem(value)
        if problem is not None:
            raise Invalid(problem, field_of(identifier))
    with write_transaction():
        for identifier, value in values.items():
            database.execute_sql(
                "INSERT INTO preference (user_id, identifier, value) VALUES (?, ?, ?) "
                "ON CONFLICT (user_id, identifier) DO UPDATE SET value = excluded.value",
                (user.id, identifier, value))


def ocr_language(user: User, default_lang: str) -> str:
    """The language new documents of this user are read in."""
    row = database.execute_sql(
        "SELECT value FROM preference WHERE user_id = ? AND identifier = 'ocr__language'",
        (user.id,)).fetchone()
    return row[0] if row and is_valid_lang(row[0]) else default_lang
