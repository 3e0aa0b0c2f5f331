"""Rules (api.md, "Rules"): the caller's own rules, their dry run over existing documents, runs of a
rule over them in the background, and those runs followed."""

from __future__ import annotations

from dms.db.models import Rule, RuleRun, User
from dms.domain.rules import preview, runs, store
from dms.domain.rules.checks import spec_of
from dms.web.api.nodes import resources
from dms.web.endpoints import Context
from dms.web.jsonapi import Reply, RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.rules import MATCHES
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def rule_resource(rule: Rule) -> dict:
    spec = spec_of(rule)
    match = spec.match
    return {"type": "rules", "id": rule.id, "attributes": {
        "name": rule.name, "enabled": spec.enabled, "order": spec.order,
        "match": {"field": match.field, "algorithm": match.algorithm, "pattern": match.pattern,
                  "case_sensitive": match.case_sensitive},
        "sources": list(spec.sources), "actions": spec.actions.as_dict(),
        "last_error": rule.last_error, "created_at": format_datetime(rule.created_at),
        "updated_at": format_datetime(rule.updated_at)}}


def run_resource(run: RuleRun) -> dict:
    return {"type": "rule-runs", "id": run.id, "attributes": {
        "state": run.state, "matched": run.matched, "changed": run.changed,
        "examined": run.examined, "rule_name": run.rule_name, "error": run.error,
        "created_at": format_datetime(run.created_at),
        "started_at": format_datetime(run.started_at),
        "finished_at": format_datetime(run.finished_at)},
        "relationships": {"rule": {"data": {"type": "rules", "id": run.rule_id}}}}


@routes.get("/rules/", Operation(
    "The caller's rules, in the order they run", list_of(ref("Rule")), query=PAGE_QUERY))
def list_rules(ctx: Context):
    return ctx.paginate(store.rules_of(ctx.user), lambda rows: [rule_resource(r) for r in rows])


@routes.post("/rules/", Operation(
    "Add a rule that files new documents", data_of(ref("Rule")), 201, request=ref("RuleInput"),
    errors=(409,)))
def create_rule(ctx: Context):
    _, attributes = ctx.resource("rules")
    return created({"data": rule_resource(store.create_rule(ctx.user, attributes))})


@routes.get("/rules/{rule_id}/", Operation("One rule", data_of(ref("Rule"))))
def get_rule(ctx: Context, rule_id: str):
    return {"data": rule_resource(store.owned_rule(ctx.user, rule_id))}


@routes.patch("/rules/{rule_id}/", Operation(
    "Change a rule (match and actions: only the keys given)", data_of(ref("Rule")),
    request=ref("RuleInput"), errors=(409,)))
def update_rule(ctx: Context, rule_id: str):
    _, attributes = ctx.resource("rules")
    return {"data": rule_resource(store.update_rule(ctx.user, rule_id, attributes))}


@routes.delete("/rules/{rule_id}/", Operation("Delete a rule (what it did stays)", status=204))
def delete_rule(ctx: Context, rule_id: str):
    store.delete_rule(ctx.user, rule_id)
    return no_content()


class HitListing:
    """The dry run's matches as a listing (they are all in memory: the run is bounded)."""

    def __init__(self, hits: list[preview.Hit]):
        self.hits = hits

    def count(self) -> int:
        return len(self.hits)

    def fetch(self, offset: int, limit: int) -> list[preview.Hit]:
        return self.hits[offset:offset + limit]


def hit_resources(user: User, hits: list[preview.Hit]) -> list[dict]:
    """Each matched document as a node resource, with `rule_match`: the field, the matched text
    and what the rule would change."""
    nodes = preview.hit_documents(user, hits)
    found = [nodes[hit.document_id] for hit in hits if hit.document_id in nodes]
    matched = {hit.document_id: hit for hit in hits}
    listed = resources(user, found)
    for resource in listed:
        hit = matched[resource["id"]]
        resource["attributes"]["rule_match"] = {"field": hit.field, "text": hit.text,
                                                "changes": hit.changes}
    return listed


@routes.get("/rules/{rule_id}/matches/", Operation(
    "Dry run: the caller's documents the rule would match, and what it would change; changes "
    "nothing", MATCHES, query=PAGE_QUERY))
def rule_matches(ctx: Context, rule_id: str):
    """A dry run: changes nothing. meta says how many documents were examined of how many."""
    result = preview.preview(ctx.services, ctx.user, rule_id)
    body = ctx.paginate(HitListing(result.hits), lambda hits: hit_resources(ctx.user, hits))
    body["meta"].update(examined=result.examined, documents=result.documents,
                        complete=result.complete)
    return body


@routes.post("/rules/{rule_id}/apply/", Operation(
    "Run the rule over the caller's existing documents in the background", data_of(ref("RuleRun")),
    202, errors=(429,)))
def apply_rule(ctx: Context, rule_id: str):
    """202 at once: the run goes on in the background; GET /rule-runs/{id}/ follows it."""
    return Reply({"data": run_resource(ctx.runtime.rule_runs.apply(ctx.user, rule_id))},
                 status=202)


@routes.get("/rule-runs/{run_id}/", Operation("One run of a rule", data_of(ref("RuleRun"))))
def get_rule_run(ctx: Context, run_id: str):
    return {"data": run_resource(runs.owned_run(ctx.user, run_id))}
