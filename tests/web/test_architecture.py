"""The route handlers run no database query of their own (docs/development.md, "The dependency
rule"): a handler parses, calls one domain function and serialises, so every query — and the
rule it carries, such as whose rows may be read — is in dms/domain/, where it is tested and
reused. import-linter cannot say this (dms.web may import dms.db.models, for the names and the
types it serialises), so these tests read the source of dms/web/api/ with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

import dms.web.api

API = Path(dms.web.api.__file__).parent
MODELS = "dms.db.models"
# peewee's Model class methods that build or run a query.
QUERY_METHODS = frozenset({
    "select", "get", "get_or_none", "get_by_id", "get_or_create", "create", "insert",
    "insert_many", "insert_from", "replace", "replace_many", "update", "delete", "delete_by_id",
    "raw", "bulk_create", "bulk_update", "filter"})


def model_queries(source: str) -> list[str]:
    """Where `source` queries the database itself, as `line: call` strings. Two shapes count:

    - a query method of a model class (QUERY_METHODS) called on a name imported from
      dms.db.models (`Node.select()`, `Tag.get_or_none(...)`), or on a model reached through
      the module itself (`models.Node.update(...)`). A method of the same name on anything
      else is not a query (`node.title.strip()`, `attributes.get("name")`, `body.update(...)`),
      so only those receivers count: no false alarm from dicts and rows;
    - `execute_sql(...)` on any receiver: it is raw SQL, peewee's database is the only thing
      with that method, and however `database` was imported the call reads the same.
    """
    tree = ast.parse(source)
    models: set[str] = set()  # names bound to model classes of dms.db.models
    modules: set[str] = set()  # how the module itself is named: `models`, `dms.db.models`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == MODELS:
            models.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "dms.db":
            modules.update(alias.asname or alias.name for alias in node.names
                           if alias.name == "models")
        elif isinstance(node, ast.Import):
            modules.update(alias.asname or MODELS for alias in node.names
                           if alias.name == MODELS)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method, receiver = node.func.attr, node.func.value
        if method == "execute_sql" or (method in QUERY_METHODS
                                       and _is_model(receiver, models, modules)):
            found.append((node.lineno, f"{node.lineno}: {ast.unparse(node.func)}(...)"))
    return [call for _, call in sorted(found)]


def _is_model(receiver: ast.expr, models: set[str], modules: set[str]) -> bool:
    """`Node` imported from the models, or `<the models module>.Node`."""
    if isinstance(receiver, ast.Name):
        return receiver.id in models
    return isinstance(receiver, ast.Attribute) and ast.unparse(receiver.value) in modules


def test_no_route_module_queries_the_database():
    found = {path.name: model_queries(path.read_text())
             for path in sorted(API.glob("*.py"))}
    assert {name: calls for name, calls in found.items() if calls} == {}


def test_the_check_finds_each_kind_of_query_and_nothing_else():
    source = """
from dms.db import database, models
from dms.db.models import Node, Tag as Label
import dms.db.models

Node.select().where(Node.id == 1)
Label.get_or_none(Label.name == "x")
models.Rule.update(name="x").execute()
dms.db.models.Webhook.delete().execute()
database.execute_sql("SELECT 1")
attributes.get("name")
body["meta"].update(examined=1)
node.title.strip()
Node.DOCUMENT
tree.owned_node(user, node_id, Node.FOLDER)
dms.web.api.routes.get("/x/")
"""
    assert model_queries(source) == [
        "6: Node.select(...)", "7: Label.get_or_none(...)", "8: models.Rule.update(...)",
        "9: dms.db.models.Webhook.delete(...)", "10: database.execute_sql(...)"]
