"""Everything the tests share, and `bench/` with them (import it as `tests.harness.<module>`, from
the repository root; nothing here imports pytest, so the benchmarks need no test tools):

- client: the HTTP `Client` of the API and the assert helpers of its answers
- inprocess: the Client's in-process transport (the WSGI app called without a socket)
- users: the fixtures' passwords, a user added through the API
- appserver: a dms Server in a thread (for a block, or until stopped), an empty restore target
- database: the database behind a server's back (snapshots, SQL on either engine, rows written
  straight into it)
- waiting: the one wait loop (wait_for) and the waits built on it: a 503 while the search index
  is built, a document's processing, the search index catching up
- documents: folders, documents and uploads through the API; the files of a data dir
- processes: `python -m dms` subprocesses, free ports, stopping processes
- memory: how far this process' memory rose while an action ran
- mail: messages, mail accounts and checks of the mail-account tests
- consume: the consume folder's settings, looks and refused program file of its tests
- webpage: the token web page in a browser (a Playwright session, logging in, the tokens listed)
- backups: changed copies of backups, a restore of one refused; olddata: a data dir of schema 1
- samples: sample files made on the spot (PDFs, scans, TIFFs, hostile files)
- pdfops: files of the page operations' tests (written, saved, a PDF's layout, leftovers)
- pgcluster, redisserver, imapserver, hostileimap: throwaway PostgreSQL, Redis, Dovecot, and a
  misbehaving IMAP server
- nodes: web nodes and workers of a cluster as processes (the multi-node tests, bench/scaleout.py)
"""
