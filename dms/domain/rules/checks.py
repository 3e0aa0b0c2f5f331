"""A rule's attributes (api.md, "Rules") checked: what a POST or PATCH may say, each refusal a
sentence with a pointer into the body (`/data/attributes/match/pattern`), nothing written before
every check passed. The folder of `move_to` is checked where the rule is written, in its transaction
(dms.domain.rules.store), since it must be live then.

Unknown attributes are ignored (api.md, "Resources and unknown input"), but unknown keys inside
`match` and `actions` are refused: a misspelt `"algoritm"` would otherwise silently become the
default."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from dms.domain import tags
from dms.domain.matching import ALGORITHMS, FIELDS, Pattern, check_pattern
from dms.domain.rules import templates
from dms.errors import Invalid
from dms.text import has_refused_characters, required_text

SOURCES = ("api", "import", "consume", "mail")
MAX_RULES_PER_USER = 200
MAX_NAME_LENGTH = 100
MAX_PATTERN_LENGTH = 1000
MAX_TAGS_PER_RULE = 20
MAX_ORDER = 1_000_000  # `order` lies in -MAX_ORDER..MAX_ORDER
DEFAULT_MATCH = Pattern("text", "any", "", False)
MATCH_KEYS = ("field", "algorithm", "pattern", "case_sensitive")
ACTION_KEYS = ("add_tags", "move_to", "set_title", "stop", "set_correspondent",
               "set_document_type", "set_custom_field", "set_document_date_from_text")
# What a rule sets of a document's metadata (api.md §16), kept as JSON in `rule.set_metadata`.
METADATA_ACTIONS = ("set_correspondent", "set_document_type", "set_custom_field",
                    "set_document_date_from_text")
NO_ACTION = ("A rule needs at least one action: add_tags, move_to, set_title, set_correspondent, "
             "set_document_type, set_custom_field, set_document_date_from_text or stop.")


@dataclass(frozen=True)
class Actions:
    add_tags: tuple[str, ...] = ()
    move_to: str | None = None
    set_title: str | None = None
    stop: bool = False
    set_correspondent: str | None = None  # ids of the owner's (checked by dms.domain.rules.store)
    set_document_type: str | None = None
    set_custom_field: tuple[str, Any] | None = None  # (field id, value as the API takes it)
    set_document_date_from_text: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"add_tags": list(self.add_tags), "move_to": self.move_to,
                "set_title": self.set_title, "stop": self.stop, **self.metadata()}

    def metadata(self) -> dict[str, Any]:
        """The metadata actions as the API shows them (`set_metadata`'s JSON, every key)."""
        field = self.set_custom_field
        return {"set_correspondent": self.set_correspondent,
                "set_document_type": self.set_document_type,
                "set_custom_field": {"field": field[0], "value": field[1]} if field else None,
                "set_document_date_from_text": self.set_document_date_from_text}

    def any(self) -> bool:
        return bool(self.add_tags or self.move_to or self.set_title or self.stop
                    or any(self.metadata().values()))


@dataclass(frozen=True)
class RuleSpec:
    """A rule as its owner wrote it, checked (the columns of table `rule`)."""
    name: str
    match: Pattern
    actions: Actions
    enabled: bool = True
    order: int = 0
    sources: tuple[str, ...] = SOURCES
    template: tuple[Any, ...] = field(default=(), compare=False)  # set_title parsed

    def columns(self) -> dict[str, Any]:
        return dict(name=self.name, name_key=tags.name_key(self.name), enabled=self.enabled,
                    position=self.order, match_field=self.match.field,
                    match_algorithm=self.match.algorithm, match_pattern=self.match.pattern,
                    case_sensitive=self.match.case_sensitive, sources=",".join(self.sources),
                    add_tags=json.dumps(list(self.actions.add_tags), ensure_ascii=False),
                    move_to=self.actions.move_to, set_title=self.actions.set_title,
                    stop=self.actions.stop,
                    set_metadata=json.dumps(self.actions.metadata(), ensure_ascii=False,
                                            sort_keys=True))


def spec_of(row: Any) -> RuleSpec:
    """The RuleSpec of a `rule` row (a model or anything with its columns)."""
    stored = json.loads(getattr(row, "set_metadata", None) or "{}")
    field = stored.get("set_custom_field")
    actions = Actions(tuple(json.loads(row.add_tags)), row.move_to, row.set_title,
                      bool(row.stop), stored.get("set_correspondent"),
                      stored.get("set_document_type"),
                      (field["field"], field["value"]) if field else None,
                      bool(stored.get("set_document_date_from_text")))
    return RuleSpec(row.name, Pattern(row.match_field, row.match_algorithm, row.match_pattern,
                                      bool(row.case_sensitive)),
                    actions, bool(row.enabled), row.position,
                    tuple(s for s in row.sources.split(",") if s),
                    templates.parse(row.set_title) if row.set_title else ())


def check(attributes: dict[str, Any], current: RuleSpec | None) -> RuleSpec:
    """The rule a POST (`current` None) or a PATCH of `current` makes; Invalid for the first
    thing wrong. A PATCH's `match` and `actions` change only the keys they name."""
    creating = current is None
    if creating and "name" not in attributes:
        raise Invalid("A rule needs a name.", "name", code="required")
    if creating and "match" not in attributes:
        raise Invalid("A rule needs `match`: {\"field\", \"algorithm\", \"pattern\"}.", "match",
                      code="required")
    spec = current or RuleSpec("", DEFAULT_MATCH, Actions())
    if "name" in attributes:
        spec = replace(spec, name=check_name(attributes["name"]))
    if "enabled" in attributes:
        spec = replace(spec, enabled=_boolean(attributes["enabled"], "enabled"))
    if "order" in attributes:
        spec = replace(spec, order=_order(attributes["order"]))
    if "match" in attributes:
        spec = replace(spec, match=_match(attributes["match"], spec.match, creating))
    if "sources" in attributes:
        spec = replace(spec, sources=_sources(attributes["sources"]))
    if "actions" in attributes:
        spec = replace(spec, actions=_actions(attributes["actions"], spec.actions))
    elif creating:
        raise Invalid("A rule needs `actions`: add_tags, move_to, set_title or stop.", "actions",
                      code="required")
    a = spec.actions
    if not a.any():
        raise Invalid(NO_ACTION, "actions")
    return replace(spec, template=templates.parse(a.set_title) if a.set_title else ())


def check_name(value: object) -> str:
    name = required_text(value, "name", "rule name", MAX_NAME_LENGTH)
    if has_refused_characters(name):
        raise Invalid("A rule name may not contain control characters or invisible formatting "
                      "characters.", "name")
    return name


def _boolean(value: object, pointer: str) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"`{pointer.split('/')[-1]}` must be true or false.", pointer)
    return value


def _order(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_ORDER:
        raise Invalid(f"`order` must be a whole number from {-MAX_ORDER} to {MAX_ORDER}.",
                      "order")
    return value


def _object(value: object, pointer: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"`{pointer}` must be an object with {', '.join(keys)}.", pointer)
    for key in value:
        if key not in keys:
            escaped = key[:100].replace("~", "~0").replace("/", "~1")  # RFC 6901
            raise Invalid(f"`{pointer}` has no key {json.dumps(key[:60])}; its keys are "
                          f"{', '.join(keys)}.", f"{pointer}/{escaped}")
    return value


def _choice(value: object, allowed: tuple[str, ...], pointer: str, noun: str = "") -> str:
    if value not in allowed:
        noun = noun or f"`{pointer.split('/')[-1]}`"
        raise Invalid(f"{noun} must be one of {', '.join(allowed)}.", pointer)
    return value


def _match(value: object, current: Pattern, creating: bool) -> Pattern:
    given = _object(value, "match", MATCH_KEYS)
    if creating and "pattern" not in given:
        raise Invalid("`match` needs a pattern.", "match/pattern", code="required")
    field_name = _choice(given.get("field", current.field), FIELDS, "match/field")
    algorithm = _choice(given.get("algorithm", current.algorithm), ALGORITHMS,
                        "match/algorithm")
    case_sensitive = _boolean(given.get("case_sensitive", current.case_sensitive),
                              "match/case_sensitive")
    pattern = given.get("pattern", current.pattern)
    if not isinstance(pattern, str) or not pattern.strip():
        raise Invalid("The pattern may not be blank.", "match/pattern",
                      code="required" if pattern is None else "blank")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise Invalid(f"A pattern has at most {MAX_PATTERN_LENGTH} characters.", "match/pattern")
    if has_refused_characters(pattern):
        raise Invalid("A pattern may not contain control characters or invisible formatting "
                      "characters (write \\n or \\t in a regular expression).", "match/pattern")
    if algorithm == "fuzzy" and case_sensitive:
        raise Invalid("Fuzzy matching ignores case (OCR confuses it too): case_sensitive must "
                      "be false with the fuzzy algorithm.", "match/case_sensitive")
    check_pattern(algorithm, pattern, case_sensitive, "match/pattern")
    return Pattern(field_name, algorithm, pattern, case_sensitive)


def _sources(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise Invalid(f"`sources` must be a list of one or more of {', '.join(SOURCES)}.",
                      "sources")
    for index, source in enumerate(value):
        _choice(source, SOURCES, f"sources/{index}", "Each source")
    return tuple(s for s in SOURCES if s in value)


def _actions(value: object, current: Actions) -> Actions:
    given = _object(value, "actions", ACTION_KEYS)
    actions = current
    if "add_tags" in given:
        names = given["add_tags"]
        if names is None:
            names = []
        if not isinstance(names, list) or len(names) > MAX_TAGS_PER_RULE:
            raise Invalid(f"`add_tags` must be a list of at most {MAX_TAGS_PER_RULE} tag names.",
                          "actions/add_tags")
        checked: dict[str, Any] = {}
        for index, name in enumerate(names):
            name = tags.check_name(name, f"actions/add_tags/{index}")
            checked.setdefault(tags.name_key(name), name)
        actions = replace(actions, add_tags=tuple(checked.values()))
    if "move_to" in given:
        move_to = given["move_to"]
        if move_to is not None and (not isinstance(move_to, str) or not move_to):
            raise Invalid("`move_to` must be a folder id or null.", "actions/move_to")
        actions = replace(actions, move_to=move_to)
    if "set_title" in given:
        template = given["set_title"]
        if template is not None and not isinstance(template, str):
            raise Invalid("`set_title` must be a title template or null.", "actions/set_title")
        if template is not None and not template.strip():
            template = None
        if template is not None:
            templates.parse(template)
        actions = replace(actions, set_title=template)
    if "stop" in given:
        actions = replace(actions, stop=_boolean(given["stop"], "actions/stop"))
    return _metadata_actions(given, actions)


def _metadata_actions(given: dict[str, Any], actions: Actions) -> Actions:
    """Their shapes; the ids and the value are checked against the owner's names and fields
    where the rule is written (dms.domain.rules.store)."""
    for key in ("set_correspondent", "set_document_type"):
        if key in given:
            value = given[key]
            if value is not None and (not isinstance(value, str) or not value):
                raise Invalid(f"`{key}` must be an id or null.", f"actions/{key}")
            actions = (replace(actions, set_correspondent=value) if key == "set_correspondent"
                       else replace(actions, set_document_type=value))
    if "set_custom_field" in given:
        value = given["set_custom_field"]
        if value is not None:
            value = _object(value, "actions/set_custom_field", ("field", "value"))
            if not isinstance(value.get("field"), str) or not value["field"]:
                raise Invalid("`set_custom_field` needs the id of one of your custom fields in "
                              "`field`.", "actions/set_custom_field/field")
            value = (value["field"], value.get("value"))
        actions = replace(actions, set_custom_field=value)
    if "set_document_date_from_text" in given:
        actions = replace(actions, set_document_date_from_text=_boolean(
            given["set_document_date_from_text"], "actions/set_document_date_from_text"))
    return actions
