"""The barcodes of a page: `page.barcodes`, a JSON list of the texts of the barcodes read on the
page while processing rendered it for Tesseract (dms.processing.ocr), or NULL where no one looked (a
page with a text layer, an image's frame, a page not read yet, rows from before this migration). A
split at separator sheets (dms.domain.pages.separators) then renders only the pages whose barcodes
are not known, instead of every page in the request.
"""


def up(migrator, db):
    db.execute_sql("ALTER TABLE page ADD COLUMN barcodes TEXT")
