"""The SQL of `dms verify` (dms.ops.verify): rows pointing at nothing, trash marks that disagree
with the tree, documents whose attributes, pages or state disagree with their versions, metadata
that disagrees with itself. Reads only; each query lists what it finds by id."""

from __future__ import annotations

from dms.db.models import OcrStatus

DANGLING = {
    "versions without a document":
        "SELECT v.id FROM document_version AS v LEFT JOIN node AS n ON n.id = v.document_id "
        "WHERE n.id IS NULL",
    "pages without a version":
        "SELECT p.id FROM page AS p LEFT JOIN document_version AS v ON v.id = p.version_id "
        "WHERE v.id IS NULL",
    "nodes whose parent is gone":
        "SELECT n.id FROM node AS n LEFT JOIN node AS p ON p.id = n.parent_id "
        "WHERE n.parent_id IS NOT NULL AND p.id IS NULL",
    "nodes whose owner is gone":
        "SELECT n.id FROM node AS n LEFT JOIN \"user\" AS u ON u.id = n.owner_id "
        "WHERE u.id IS NULL",
    "tokens whose user is gone":
        "SELECT t.token_key FROM token AS t LEFT JOIN \"user\" AS u ON u.id = t.user_id "
        "WHERE u.id IS NULL",
    "trash entries whose node is gone":
        "SELECT t.node_id FROM trash_entry AS t LEFT JOIN node AS n ON n.id = t.node_id "
        "WHERE n.id IS NULL ORDER BY t.node_id",
}

# The trash (migration 0013, dms.domain.trash): a deletion marks its root and every node below it
# that was live (`trash_id`, the root's id) and has its entry; nodes a deletion of their own had
# put in the trash before keep their own mark. So every mark names a deletion, each marked node
# is that deletion's root or hangs below a node with the same mark, no live node hangs below a
# node in the trash, and .home and .inbox are never in it.
TRASH = {
    "nodes in the trash of a deletion that is gone":
        "SELECT n.id FROM node AS n LEFT JOIN trash_entry AS t ON t.node_id = n.trash_id "
        "WHERE n.trash_id IS NOT NULL AND t.node_id IS NULL ORDER BY n.id",
    "trash entries whose node is not in the trash":
        "SELECT t.node_id FROM trash_entry AS t JOIN node AS n ON n.id = t.node_id "
        "WHERE n.trash_id IS NULL OR n.trash_id <> n.id ORDER BY t.node_id",
    "live nodes below a node in the trash (a deletion that did not take its whole subtree)":
        "SELECT n.id FROM node AS n JOIN node AS p ON p.id = n.parent_id "
        "WHERE n.trash_id IS NULL AND p.trash_id IS NOT NULL ORDER BY n.id",
    "nodes in the trash that are not below the node whose deletion they are marked with":
        "SELECT n.id FROM node AS n LEFT JOIN node AS p ON p.id = n.parent_id "
        "WHERE n.trash_id IS NOT NULL AND n.trash_id <> n.id "
        "AND (p.id IS NULL OR p.trash_id IS NULL OR p.trash_id <> n.trash_id) ORDER BY n.id",
    "trash entries owned by another user than their node":
        "SELECT t.node_id FROM trash_entry AS t JOIN node AS n ON n.id = t.node_id "
        "WHERE t.owner_id <> n.owner_id ORDER BY t.node_id",
    ".home or .inbox folders in the trash":
        "SELECT n.id FROM node AS n WHERE n.special IS NOT NULL AND n.trash_id IS NOT NULL "
        "ORDER BY n.id",
}


# A document's metadata (migration 0021, dms.domain.metadata.document): a documentlink is kept both
# ways, A -> B beside B -> A (the trash included: a link stays while an end is in the trash), and
# a document's correspondent, document type and custom fields are its owner's, as are the
# documents its links name. Each row: (document, target) and the field; (document, what, its id,
# the target of a link or '').
LINK_WITHOUT_MIRROR = """
    SELECT l.document_id, l.target_id, l.field_id FROM custom_field_link AS l
    WHERE NOT EXISTS (SELECT 1 FROM custom_field_link AS m WHERE m.field_id = l.field_id
                      AND m.document_id = l.target_id AND m.target_id = l.document_id)
    ORDER BY l.document_id, l.target_id, l.field_id"""
ANOTHER_USERS = """
    SELECT n.id, 'correspondent', c.id, '' FROM node AS n
    JOIN correspondent AS c ON c.id = n.correspondent_id WHERE c.owner_id <> n.owner_id
    UNION ALL
    SELECT n.id, 'document type', t.id, '' FROM node AS n
    JOIN document_type AS t ON t.id = n.document_type_id WHERE t.owner_id <> n.owner_id
    UNION ALL
    SELECT n.id, 'custom field', f.id, '' FROM custom_field_value AS v
    JOIN node AS n ON n.id = v.document_id JOIN custom_field AS f ON f.id = v.field_id
    WHERE f.owner_id <> n.owner_id
    UNION ALL
    SELECT l.document_id, 'custom field', f.id, l.target_id FROM custom_field_link AS l
    JOIN custom_field AS f ON f.id = l.field_id JOIN node AS d ON d.id = l.document_id
    JOIN node AS t ON t.id = l.target_id WHERE d.owner_id <> f.owner_id OR t.owner_id <> f.owner_id
    ORDER BY 1, 2, 3, 4"""


def _sql_list(values: tuple[str, ...]) -> str:
    """('a', 'b') as the inside of an SQL IN (...); for OcrStatus constants only, never input."""
    return ", ".join(f"'{value}'" for value in values)


DONE = _sql_list((OcrStatus.SUCCEEDED, OcrStatus.FAILED))
PENDING = _sql_list(OcrStatus.PENDING)

LATEST_VERSION = ("(SELECT lv.id FROM document_version AS lv WHERE lv.document_id = n.id "
                  "ORDER BY lv.number DESC LIMIT 1)")

DOCUMENT_ATTRIBUTES = f"""
    SELECT n.id, n.file_name, n.size, n.page_count, v.id, v.file_name, v.size, v.page_count
    FROM node AS n LEFT JOIN document_version AS v ON v.id = {LATEST_VERSION}
    WHERE n.kind = 'document' AND (
        (v.id IS NULL AND (n.file_name IS NOT NULL OR n.size <> 0 OR n.page_count <> 0))
        OR (v.id IS NOT NULL AND (n.file_name IS NULL OR n.file_name <> v.file_name
                                  OR n.size <> v.size OR n.page_count <> v.page_count)))
    ORDER BY n.id"""

# (version_id, number) is unique, so count = page_count, min = 1 and max = page_count mean 1..n.
PAGE_ROWS = f"""
    SELECT n.id, v.id, v.page_count FROM node AS n
    JOIN document_version AS v ON v.id = {LATEST_VERSION}
    LEFT JOIN page AS p ON p.version_id = v.id
    WHERE n.kind = 'document' AND n.ocr_status IN ({DONE})
    GROUP BY n.id, v.id, v.page_count
    HAVING count(p.id) != v.page_count
        OR (count(p.id) > 0 AND (min(p.number) != 1 OR max(p.number) != v.page_count))
    ORDER BY n.id"""

UNREAD = f"""
    SELECT n.id, v.id FROM node AS n JOIN document_version AS v ON v.id = {LATEST_VERSION}
    WHERE n.kind = 'document' AND n.ocr_status = '{OcrStatus.SUCCEEDED}'
      AND EXISTS (SELECT 1 FROM page AS p WHERE p.version_id = v.id AND p.method IS NULL)
    ORDER BY n.id"""

FAILED_WITHOUT_ERROR = f"""
    SELECT n.id FROM node AS n WHERE n.kind = 'document' AND n.ocr_status = '{OcrStatus.FAILED}'
      AND (n.ocr_error IS NULL OR trim(n.ocr_error) = '')
    ORDER BY n.id"""

# (A document in the trash is not read: it is waiting for its restore, not stuck.)
STUCK = ("SELECT n.id, n.ocr_status, n.updated_at FROM node AS n WHERE n.kind = 'document' "
         f"AND n.ocr_status IN ({PENDING}) AND n.updated_at < ? AND n.trash_id IS NULL "
         "AND EXISTS (SELECT 1 FROM document_version AS v WHERE v.document_id = n.id)")
