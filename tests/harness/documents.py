"""Folders and documents made through the API, uploads, and the files a data dir holds (stored
ones, temporary ones)."""

from __future__ import annotations

from pathlib import Path

TOO_MANY_PIXELS = ("The image has too many pixels to be processed safely (at most 50 million per "
                   "image or page; DMS_MAX_IMAGE_MEGAPIXELS).")


def make_folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def create_node(client, kind: str, title: str, parent: str) -> str:
    """A folder or document (`kind`: folders, documents) in `parent`; its id."""
    body = {"data": {"type": kind, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def new_document(client, title="doc", parent=None):
    body = {"data": {"type": "documents", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders",
                                                           "id": parent or client.home_id}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def upload(client, document_id, name, data, disposition=True):
    headers = {"Content-Type": "application/octet-stream"}
    if disposition:
        headers["Content-Disposition"] = "attachment; filename=whatever.bin"
    return client.put(f"/api/documents/{document_id}/upload/{name}", data=data, headers=headers)


def upload_accepted(client, document_id: str, name: str, data: bytes) -> None:
    """Upload a file that must be accepted."""
    response = client.put(f"/api/documents/{document_id}/upload/{name}", data=data,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Disposition": "attachment; filename=whatever.bin"})
    assert response.status_code in (200, 201), response.text


def stored_files(config) -> list[Path]:
    return sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file())


def temporary_files(config) -> list[Path]:
    return sorted((config.data_dir / "tmp").iterdir())
