"""Background processing: the queue (embedded SQLite or Redis), workers with leases and a
heartbeat, the cluster's registry and periodic-job claims, OCR with Tesseract, saved progress and
searchable PDFs, the OCR languages. The domain queues work through the JobQueue interface
(dms.domain.services); this package never imports the domain."""
