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
ACTION_KEYS = ("add_tags", "move_to", "set_title", "stop")


@dataclass(frozen=True)
class Actions:
    add_tags: tuple[str, ...] = ()
    move_to: str | None = None
    set_title: str | None = None
    stop: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"add_tags": list(self.add_tags), "move_to": self.move_to,
                "set_title": self.set_title, "stop": self.stop}


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
                    stop=self.actions.stop)


def spec_of(row: Any) -> RuleSpec:
    """The RuleSpec of a `rule` row (a model or anything with its columns)."""
    actions = Actions(tuple(json.loads(row.add_tags)), row.move_to, row.set_title,
                      bool(row.stop))
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
    if not (a.add_tags or a.move_to or a.set_title or a.stop):
        raise Invalid("A rule needs at least one action: add_tags, move_to, set_title or "
                      "stop.", "actions")
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
    return actions
