"""Page operations (docs/api.md, "Page operations"): pages of documents' latest versions deleted,
reordered, rotated, moved to another document or into a folder, two documents merged, and
scanned batches cut at separator sheets.

- `operations`: the page routes' calls, their bodies checked before any work;
- `build`: the new PDFs and the pages' text carried along (a Builder of Placed pages);
- `commit`: all of one operation in one write transaction;
- `separators`: where a scanned batch is cut (barcodes, blank pages);
- `batches`: the batches the intake cuts before importing (DMS_SPLIT_ON_BARCODE).

All five are the face: the splits (dms.domain.splits, dms.domain.splitruns) cut with
`separators`, `build` and `commit`, and the one import function (dms.domain.uploads) uses
`batches` and `commit`. No module here is private."""
