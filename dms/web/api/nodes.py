"""Nodes and folders (api.md, "Folders and documents"): list, create, rename, move, delete.

Another user's node answers exactly like an unknown id, for every route, admins included, unless
it is shared with the caller (api.md §21): then each node shows the caller's role on it
(`access`), its `owner`, and a breadcrumb from the caller's .shared folder
(dms.domain.access.sight)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import bottle

from dms.db.models import Node, User
from dms.domain import archives, documents, listings, tags, trash, tree
from dms.domain.access.sight import SHARED, Shown, Sight
from dms.domain.mailaccounts import mail_of
from dms.domain.metadata import document as metadata
from dms.domain.metadata import filters as metadata_filters
from dms.files.storage import original, searchable_pdf
from dms.web.downloads import content_disposition, file_response
from dms.web.endpoints import Context
from dms.web.fieldsets import Fieldsets, chosen, wants
from dms.web.jsonapi import (
    JSON,
    ApiError,
    RouteTable,
    created,
    format_datetime,
    invalid,
    no_content,
)
from dms.web.nodefields import (
    FIELDS_QUERY,
    METADATA_FIELDS,
    NODE_FIELDS,
    chosen_resource,
)
from dms.web.openapi import Operation
from dms.web.openapi.shapes import (
    BINARY,
    BOOLEAN,
    FILES,
    INTEGER,
    JSON_OR_VND,
    PAGE_QUERY,
    STRING,
    UUID,
    data_of,
    list_of,
    obj,
    ref,
)

routes = RouteTable()

TYPE_OF_KIND = {Node.FOLDER: "folders", Node.DOCUMENT: "documents"}
KIND_OF_TYPE = {resource_type: kind for kind, resource_type in TYPE_OF_KIND.items()}


def node_resource(node: Node | listings.NodeRow, shown: Shown, labels: list[dict],
                  mail: dict | None = None, about: dict | None = None,
                  **extra_attributes) -> dict:
    """A folder or document as JSON:API resource: type, id, attributes, relationships only.
    `shown`: the caller's role, the owner, the breadcrumb and parent they see; `mail`: the
    message a document came by (None: it did not come by mail); `about`: a document's metadata
    attributes (dms.domain.metadata.document.about)."""
    # One dict literal per kind: building it by update() calls was a fifth of a page of 100.
    if node.is_document:
        attributes: dict[str, Any] = {
            "title": node.title, "lang": node.lang, "ocr": bool(node.ocr),
            "ocr_status": node.ocr_status, "ocr_error": node.ocr_error,
            "file_name": node.file_name, "size": node.size, "page_count": node.page_count,
            "mail": mail, **(about or {}),
            "created_at": format_datetime(node.created_at),
            "updated_at": format_datetime(node.updated_at), "breadcrumb": shown.breadcrumb,
            "tags": labels, "access": shown.access, "owner": shown.owner, **extra_attributes}
    else:
        attributes = {
            "title": node.title, "created_at": format_datetime(node.created_at),
            "updated_at": format_datetime(node.updated_at), "breadcrumb": shown.breadcrumb,
            "tags": labels, "access": shown.access, "owner": shown.owner, **extra_attributes}
    parent = {"type": "folders", "id": shown.parent_id} if shown.parent_id else None
    return {"type": TYPE_OF_KIND[node.kind], "id": node.id, "attributes": attributes,
            "relationships": {"parent": {"data": parent}}}


def resources(user: User, nodes: Sequence[Node | listings.NodeRow],
              crumbs: dict[str, list[list[str]]] | None = None,
              fieldsets: Fieldsets | None = None) -> list[dict]:
    """Several nodes with their breadcrumbs (`crumbs` if known) and the caller's tags, each
    looked up in one query; with `fieldsets`, only the chosen fields, and only their lookups."""
    ids = [node.id for node in nodes]
    fieldsets = fieldsets or {}
    # The types whose fields decide which lookups run: without fieldsets, all of them.
    kinds = {TYPE_OF_KIND[node.kind] for node in nodes} if fieldsets else NODE_FIELDS.keys()
    if not wants(fieldsets, "breadcrumb", kinds):
        crumbs = {}  # each node's own [title, id] stands in; the attribute is left out
    crumbs = crumbs if crumbs is not None else tree.breadcrumbs(ids)
    labels = (tags.tags_of(ids, user.id) if wants(fieldsets, "tags", kinds)
              else {node_id: [] for node_id in ids})
    documents_of = kinds & {"documents"}
    mail = mail_of(ids) if wants(fieldsets, "mail", documents_of) else {}
    about = (_about(nodes) if any(wants(fieldsets, name, documents_of)
                                  for name in METADATA_FIELDS) else {})
    sight = Sight(user)
    sight.owners({node.owner_id for node in nodes})
    if not fieldsets:  # the usual answer: every field, one dict literal a node
        return [node_resource(node, sight.shown(node.id, node.owner_id, node.parent_id,
                                                crumbs.get(node.id) or [[node.title, node.id]]),
                              labels[node.id], mail.get(node.id), about.get(node.id))
                for node in nodes]
    # Each chosen type's fields in the type's own order, worked out once for the page.
    ordered = {kind: tuple(name for name in NODE_FIELDS[kind] if name in names)
               for kind, names in fieldsets.items()}
    made = []
    for node in nodes:
        shown = sight.shown(node.id, node.owner_id, node.parent_id,
                            crumbs.get(node.id) or [[node.title, node.id]])
        names = ordered.get(TYPE_OF_KIND[node.kind])
        values = (node, shown, labels[node.id], mail.get(node.id), about.get(node.id))
        made.append(node_resource(*values) if names is None
                    else chosen_resource(TYPE_OF_KIND[node.kind], *values, names))
    return made


def _about(nodes: Sequence[Node | listings.NodeRow]) -> dict[str, dict[str, Any]]:
    """The documents' metadata attributes; a listing's rows hold their own columns already."""
    if all(isinstance(node, listings.NodeRow) for node in nodes):
        return metadata.about_heads([
            (row.id, row.correspondent_id, row.document_type_id, row.document_date, row.asn,
             row.seq) for row in cast(Sequence[listings.NodeRow], nodes) if row.is_document])
    return metadata.about([node.id for node in nodes if node.is_document])


def children_resources(user: User, folder: Node, nodes: list[listings.NodeRow],
                       fieldsets: Fieldsets | None = None) -> list[dict]:
    """Siblings share their path: the folder's breadcrumb plus their own title and id (the
    roots in .shared: their own, each from wherever it is)."""
    if folder.special == SHARED or not wants(fieldsets or {}, "breadcrumb", NODE_FIELDS):
        return resources(user, nodes, fieldsets=fieldsets)
    path = tree.breadcrumbs([folder.id], {folder.id: (folder.parent_id, folder.title)})[folder.id]
    return resources(user, nodes, {node.id: [*path, [node.title, node.id]] for node in nodes},
                     fieldsets)


def single(user: User, node: Node, **extra_attributes) -> dict:
    resource = resources(user, [node])[0]
    resource["attributes"].update(extra_attributes)
    return {"data": resource}


def node_fieldsets(ctx: Context) -> dict[str, frozenset[str]]:
    """The request's `fields[folders]` and `fields[documents]` (400 for a name they lack)."""
    return chosen(ctx.query_items, NODE_FIELDS)


def paginated_nodes(ctx: Context, listing: listings.NodeListing,
                    fieldsets: Fieldsets | None = None) -> dict:
    """A page of `listing`'s nodes, with the request's fieldsets (`fieldsets` if read already:
    a listing that does its work when made reads them first, so that a bad one costs nothing)."""
    fieldsets = node_fieldsets(ctx) if fieldsets is None else fieldsets
    return ctx.paginate(listing, lambda rows: resources(ctx.user, rows, fieldsets=fieldsets))


def parent_reference(data: dict) -> tuple[object, str]:
    """The parent id of a new node and the pointer to it: `relationships.parent` (the spec's
    examples) or `parent` right under `data` (the spec's reference), as an id or an object."""
    relationships = data.get("relationships")
    if isinstance(relationships, dict) and "parent" in relationships:
        reference, pointer = relationships["parent"], "/data/relationships/parent"
    elif "parent" in data:
        reference, pointer = data["parent"], "/data/parent"
    else:
        raise ApiError(400, "required", "A parent folder is required.",
                       "/data/relationships/parent")
    if isinstance(reference, dict) and isinstance(reference.get("data"), dict):
        reference = reference["data"]
    if isinstance(reference, dict):
        reference = reference.get("id")
    return reference, pointer


def create(ctx: Context, allowed_types: tuple[str, ...]) -> Node:
    # The spec: "Any other content type on folder creation gives 400 Bad Request."
    data, attributes = ctx.resource(allowed_types, refuse_status=400)
    parent_id, pointer = parent_reference(data)
    return tree.create_node(ctx.user, KIND_OF_TYPE[data["type"]], attributes, parent_id,
                            parent_field=pointer, default_lang=ctx.config.ocr_lang,
                            max_depth=ctx.config.max_tree_depth)


def update(ctx: Context, node_id: str, route_kind: str | None = None) -> Node:
    data, attributes = ctx.resource(("folders", "documents"))
    if "id" in data and data["id"] != node_id:
        raise ApiError(409, "conflict", "The id in the body does not match the id in the URL.",
                       "/data/id")
    return metadata.update_node(ctx.user, node_id, KIND_OF_TYPE[data["type"]], attributes,
                                route_kind)


@routes.get("/nodes/", Operation(
    "The caller's .home and .inbox", list_of(ref("Node")), query=PAGE_QUERY + FIELDS_QUERY,
    errors=(400,)))
def list_top_level(ctx: Context):
    return paginated_nodes(ctx, listings.special_folders(ctx.user))


@routes.post("/nodes/", Operation(
    "Create a folder or a document", data_of(ref("Node")), 201, request=ref("NodeInput"),
    errors=(409,)))
def create_node(ctx: Context):
    return created(single(ctx.user, create(ctx, ("folders", "documents"))))


@routes.post("/nodes/move/", Operation(
    "Move nodes into a folder, all or nothing",
    obj({"data": {"type": "array", "items": ref("Node")}}), request=ref("Move"),
    accepts=JSON_OR_VND, errors=(403, 404)), media_type=JSON)
def move_nodes(ctx: Context):
    body = ctx.json()
    entries = body.get("nodes")
    if not isinstance(entries, list):
        raise ApiError(400, "required", "`nodes` must be a list of {\"id\": ...} objects.",
                       "/nodes")
    node_ids = []
    for index, entry in enumerate(entries):
        node_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(node_id, str) or not node_id:
            raise invalid("Each entry of `nodes` needs an `id`.", f"/nodes/{index}/id")
        node_ids.append(node_id)
    target = body.get("target_parent")
    target_id = target.get("id") if isinstance(target, dict) else None
    if not isinstance(target_id, str) or not target_id:
        raise ApiError(400, "required",
                       "`target_parent` must be an object with the target folder's `id`.",
                       "/target_parent")
    moved = tree.move_nodes(ctx.user, node_ids, target_id, ctx.config.max_tree_depth)
    return {"data": resources(ctx.user, moved)}


# Nodes one POST /nodes/download/ names: a page of a listing and then some.
MAX_DOWNLOAD_NODES = 1000


@routes.get("/nodes/download/", Operation(
    "Download nodes", media={"application/zip": BINARY, "application/gzip": BINARY, **FILES},
    query=("node_ids", "archive_type", "password", "searchable"), errors=(400, 404)))
def download_nodes(ctx: Context):
    """One document: its latest file as is. Anything else: an archive of the selection."""
    node_ids = list(dict.fromkeys(
        part for key, value in ctx.query_items if key in ("node_ids", "node_ids[]")
        for part in value.split(",") if part))
    return archive_of(ctx, node_ids, ctx.query.get("archive_type", "zip"),
                      ctx.query.get("password") or None, searchable_asked(ctx))


@routes.post("/nodes/download/", Operation(
    "Download a selection as one archive (api.md §22)",
    media={"application/zip": BINARY, "application/gzip": BINARY, **FILES},
    request=obj({"node_ids": {"type": "array", "items": UUID}, "archive_type": STRING,
                 "password": STRING, "searchable": BOOLEAN}, ["node_ids"]),
    accepts=JSON_OR_VND, errors=(400, 404)))
def download_selection(ctx: Context):
    """The same as GET, with the ids (and a password) in the body instead of the address."""
    body = ctx.json()
    node_ids = body.get("node_ids")
    if (not isinstance(node_ids, list) or not node_ids
            or not all(isinstance(node_id, str) and node_id for node_id in node_ids)):
        raise invalid("`node_ids` must be a list of the ids of the nodes to download.",
                      "/node_ids", code="required" if node_ids is None else "invalid")
    if len(node_ids) > MAX_DOWNLOAD_NODES:
        raise invalid(f"At most {MAX_DOWNLOAD_NODES} nodes can be downloaded at once; select a "
                      "folder to take everything in it.", "/node_ids")
    archive_type, password = body.get("archive_type", "zip"), body.get("password") or None
    if not isinstance(archive_type, str) or not (password is None or isinstance(password, str)):
        raise invalid("`archive_type` and `password` must be strings.")
    return archive_of(ctx, list(dict.fromkeys(node_ids)), archive_type, password,
                      body.get("searchable") is True)


def archive_of(ctx: Context, node_ids: list[str], archive_type: str, password: str | None,
               searchable: bool):
    if not node_ids:
        raise ApiError(400, "required", "Name the nodes to download with node_ids=<id> "
                                        "(repeat it for several).")
    if archive_type not in archives.ARCHIVE_TYPES:
        raise invalid(f"archive_type must be one of {', '.join(archives.ARCHIVE_TYPES)}.")
    if password and archive_type != "zip":
        raise invalid("A password can only protect a zip archive (archive_type=zip).")
    nodes = tree.reached_nodes(ctx.user, node_ids)
    if len(nodes) == 1 and nodes[0].is_document and not password:
        return version_file(ctx, documents.latest_file(ctx.user, nodes[0].id), searchable)
    members = archives.entries([node.id for node in nodes], ctx.services.store, searchable,
                               ctx.config.max_tree_depth)
    # A hidden file would surprise: `.inbox` downloads as inbox.zip.
    stem = archives.safe_name(nodes[0].title).lstrip(".") if len(nodes) == 1 else ""
    stem = stem or "documents"
    if archive_type == "zip":
        body, media, name = archives.stream_zip(members, password), "application/zip", stem + ".zip"
    else:
        body, media, name = archives.stream_targz(members), "application/gzip", stem + ".tar.gz"
    return bottle.HTTPResponse(body, 200, {"Content-Type": media,
                                           "Content-Disposition": content_disposition(name)})


def searchable_asked(ctx: Context) -> bool:
    """`?searchable=1`: the searchable PDF instead of the original."""
    return ctx.query.get("searchable", "").lower() in ("1", "true", "yes")


def inline_asked(ctx: Context) -> bool:
    """`?inline=1`: shown by the browser (its own PDF viewer) instead of saved (api.md §22)."""
    return ctx.query.get("inline", "").lower() in ("1", "true", "yes")


def version_file(ctx: Context, version, searchable: bool = False):
    store = ctx.services.store
    inline = inline_asked(ctx)
    if searchable:
        if version.searchable_size is None:
            raise ApiError(404, "not_found", "This version has no searchable PDF: it is made when "
                                             "Tesseract reads a document's pages.")
        return file_response(store, searchable_pdf(version), "application/pdf",
                             documents.searchable_name(version.file_name),
                             etag=version.searchable_sha256, inline=inline)
    return file_response(store, original(version), version.mime_type, version.file_name,
                         etag=version.sha256, inline=inline)


@routes.get("/nodes/inboxcount/", Operation(
    "How many nodes are directly in the caller's .inbox",
    data_of(obj({"count": INTEGER}, ["count"]))))
def inbox_count(ctx: Context):
    """Papermerge's shape; it counts documents too (Papermerge counted only folders)."""
    return {"data": {"count": listings.inbox_count(ctx.user)}}


@routes.get("/nodes/{node_id}/", Operation(
    "A folder's children", list_of(ref("Node")),
    query=PAGE_QUERY + ("sort", "tags", "tags_op", "owner", *metadata_filters.PARAMETERS,
                        *FIELDS_QUERY),
    errors=(400,)))
def list_children(ctx: Context, node_id: str):
    fieldsets = node_fieldsets(ctx)
    folder, children = listings.listing(ctx.user, node_id, ctx.query.get("sort"),
                                        ctx.query.get("tags"), ctx.query.get("tags_op"),
                                        ctx.query)
    return ctx.paginate(children,
                        lambda rows: children_resources(ctx.user, folder, rows, fieldsets))


@routes.patch("/nodes/{node_id}/", Operation(
    "Rename a node; a document's lang and ocr", data_of(ref("Node")), request=ref("NodeUpdate"),
    errors=(403, 409)))
def update_node(ctx: Context, node_id: str):
    return single(ctx.user, update(ctx, node_id))


@routes.delete("/nodes/{node_id}/", Operation(
    "Move a node with everything below it to the trash", status=204, errors=(403,)))
def delete_node(ctx: Context, node_id: str):
    trash.delete(ctx.services, ctx.user, node_id)
    return no_content()


@routes.get("/folders/", Operation(
    "All the folders the caller may read", list_of(ref("Node")),
    query=PAGE_QUERY + ("owner", *FIELDS_QUERY), errors=(400,)))
def list_folders(ctx: Context):
    return paginated_nodes(ctx, listings.of_kind(ctx.user, Node.FOLDER,
                                                 about={"owner": ctx.query.get("owner", "")}))


@routes.post("/folders/", Operation(
    "Create a folder", data_of(ref("Node")), 201, request=ref("NodeInput"), errors=(409,)))
def create_folder(ctx: Context):
    return created(single(ctx.user, create(ctx, ("folders",))))


@routes.get("/folders/{folder_id}/", Operation("One folder", data_of(ref("Node"))))
def get_folder(ctx: Context, folder_id: str):
    return single(ctx.user, listings.folder_of(ctx.user, folder_id))


@routes.patch("/folders/{folder_id}/", Operation(
    "Rename a folder", data_of(ref("Node")), request=ref("NodeUpdate"), errors=(403, 409)))
def update_folder(ctx: Context, folder_id: str):
    return single(ctx.user, update(ctx, folder_id, route_kind=Node.FOLDER))


@routes.delete("/folders/{folder_id}/", Operation(
    "Move a folder with everything below it to the trash", status=204, errors=(403,)))
def delete_folder(ctx: Context, folder_id: str):
    trash.delete(ctx.services, ctx.user, folder_id, Node.FOLDER)
    return no_content()



