"""The names of dms's rows that the layers above the domain write in annotations and compare
kinds with (the Paperless-ngx dialect imports nothing of dms.db: it translates and calls the
domain, which alone reads and writes the rows)."""

from dms.db.models import Group, Node, Task, Token, User

FOLDER, DOCUMENT = Node.FOLDER, Node.DOCUMENT

__all__ = ["DOCUMENT", "FOLDER", "Group", "Task", "Token", "User"]
