"""Documents as resources (api.md §5): the caller's list, and one document with its versions."""

from __future__ import annotations

from dms import tree
from dms.api.nodes import paginated_nodes, single, update
from dms.jsonapi import RouteTable, no_content
from dms.models import Node
from dms.web import Context

routes = RouteTable()


def versions(document: Node) -> list[dict]:
    """The document's file versions, oldest first (empty until a file is uploaded)."""
    return []


def document_body(document: Node) -> dict:
    return single(document, versions=versions(document))


@routes.get("/documents/")
def list_documents(ctx: Context):
    return paginated_nodes(ctx, tree.of_kind(ctx.user, Node.DOCUMENT))


@routes.get("/documents/{document_id}/")
def get_document(ctx: Context, document_id: str):
    return document_body(tree.owned_node(ctx.user, document_id, Node.DOCUMENT))


@routes.patch("/documents/{document_id}/")
def update_document(ctx: Context, document_id: str):
    return document_body(update(ctx, tree.owned_node(ctx.user, document_id, Node.DOCUMENT)))


@routes.delete("/documents/{document_id}/")
def delete_document(ctx: Context, document_id: str):
    tree.delete_subtree(tree.owned_node(ctx.user, document_id, Node.DOCUMENT))
    return no_content()
