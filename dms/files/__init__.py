"""What dms reads and writes outside its database: the file store of uploads and derived files,
what a file is (file-type sniffing), PDFs read only in pdfium child processes, images, sealing of
secrets, link-safe file operations, and the connections dms opens for its users under the
outbound rule (dms.files.outbound). Two helpers for the threads above it: users' fair shares of
pools (dms.files.fairness) and the background loop that can be woken (dms.files.loop). Knows
nothing of users or documents: callers pass version ids, paths and addresses."""
