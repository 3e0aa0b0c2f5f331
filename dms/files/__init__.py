"""Files on disk: the file store of uploads and derived files, what a file is (file-type
sniffing), PDFs read only in pdfium child processes, images, sealing of secrets and link-safe
file operations. Knows nothing of users or documents: callers pass version ids and paths."""
