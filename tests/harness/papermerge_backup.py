"""Papermerge 2.1 backups (releases 2.1.5 to 2.1.9) written as its `backup` command writes them
(papermerge-core's backup_restore package at tag 2.1.9): a `.tar.gz` whose members are each
user's folders (directory entries named by breadcrumb), each document version's file under
`docs/user_<id>/document_<id>/v<n>/<name>`, a browsable symbolic link per document, and
`backup.json` last."""

from __future__ import annotations

import io
import json
import tarfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.harness import samples


def document(title: str, breadcrumb: str, texts: list[list[str]], tags: list[str] = (),
             doc_id: str | None = None) -> dict[str, Any]:
    """A document entry with one version per list of page texts (the first the original)."""
    return {"id": doc_id or str(uuid.uuid4()), "breadcrumb": breadcrumb, "tags": [
        tag(name) for name in tags], "versions": [
        {"pages": [{"file_path": "", "text": text, "number": n, "page_count": len(pages),
                    "lang": "deu"} for n, text in enumerate(pages, 1)],
         "file_path": "", "lang": "deu", "number": number, "file_name": f"{title}.pdf",
         "size": 0, "page_count": len(pages),
         "short_description": "Original" if number == 1 else "with OCRed text layer",
         "text": " ".join(pages)} for number, pages in enumerate(texts, 1)],
        "ctype": "document", "title": title, "lang": "deu",
        "created_at": "2023-01-20T06:58:27.702234+01:00",
        "updated_at": "2023-01-20T06:58:27.702251+01:00", "ocr": True,
        "ocr_status": "succeeded"}


def folder(breadcrumb: str, tags: list[str] = ()) -> dict[str, Any]:
    return {"breadcrumb": breadcrumb, "tags": [tag(name) for name in tags], "ctype": "folder",
            "title": breadcrumb.rstrip("/").split("/")[-1],
            "created_at": "2023-01-20T06:58:27.696898+01:00",
            "updated_at": "2023-01-20T06:58:27.696910+01:00"}


def tag(name: str) -> dict[str, Any]:
    return {"bg_color": "#f52d00", "fg_color": "#ffffff", "description": "", "pinned": True,
            "name": name}


def user(username: str, password: str, nodes: list[dict[str, Any]],
         superuser: bool = False) -> dict[str, Any]:
    names = sorted({t["name"] for node in nodes for t in node["tags"]})
    return {"id": str(uuid.uuid4()), "nodes": [folder(".home/"), folder(".inbox/"), *nodes],
            "tags": [tag(name) for name in names], "password": password,
            "last_login": None, "is_superuser": superuser, "username": username,
            "first_name": "", "last_name": "", "email": f"{username}@example.org",
            "is_staff": superuser, "is_active": True,
            "date_joined": "2023-01-20T06:18:10.328571+01:00",
            "created_at": "2023-01-20T06:58:27.650355+01:00",
            "updated_at": "2023-01-20T06:58:27.688371+01:00", "groups": [],
            "user_permissions": []}


def write_backup(path: Path, users: list[dict[str, Any]], version: str = "2.1.9") -> Path:
    """The archive of these users at `path` (file paths filled in as the backup computes them)."""
    with tarfile.open(path, "w:gz") as archive:
        for entry in users:
            for node in entry["nodes"]:
                if node["ctype"] == "folder":
                    info = tarfile.TarInfo(f"{entry['username']}/{node['breadcrumb']}")
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o40775, time.time()
                    archive.addfile(info)
                    continue
                for version_entry in node["versions"]:
                    name = (f"docs/user_{entry['id']}/document_{node['id']}/"
                            f"v{version_entry['number']}/{version_entry['file_name']}")
                    version_entry["file_path"] = name
                    data = samples.pdf([page["text"] for page in version_entry["pages"]])
                    version_entry["size"] = len(data)
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime = len(data), time.time()
                    archive.addfile(info, io.BytesIO(data))
                link = tarfile.TarInfo(f"{entry['username']}/{node['breadcrumb']}")
                link.type = tarfile.SYMTYPE
                link.linkname = "../" * node["breadcrumb"].count("/") + \
                    node["versions"][-1]["file_path"]
                archive.addfile(link)
        raw = json.dumps({"created": "30.01.2023-08:15:42", "version": version,
                          "users": users}, indent=4).encode()
        info = tarfile.TarInfo("backup.json")
        info.size, info.mtime = len(raw), time.time()
        archive.addfile(info, io.BytesIO(raw))
    return path
