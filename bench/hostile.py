"""Hostile-input benchmark: how a real `dms serve` on 127.0.0.1 serves ordinary requests while an
attacker feeds it hostile files, hostile JSON and idle connections.

Against one fresh server (a new temporary data dir; default settings except DMS_OCR_WORKERS=1):
  1. baseline: --victims client threads (default 4), each its own keep-alive connection
     (common.KeepAlive), all logged in as one ordinary user (created by the admin with
     POST /api/users/, change-password and login) and each with its own folder under the user's
     .home, loop for --seconds (default 20) over: GET /api/users/me/, GET /api/nodes/{home}/,
     GET /api/search/?q=invoice and POST /api/nodes/ (a small folder in its own folder),
     back to back. No attack.
  2. under attack: the same victims again for --seconds, while one attacker thread (another
     ordinary user, its own keep-alive connection) first opens --idle-connections (default 200)
     raw TCP connections to the server and holds them open, sending nothing, until the end of
     the phase, then repeats until the time is up:
       - upload of a PDF whose page tree claims 1,000,000 pages (it has one), into a new document;
       - upload of a PDF with one 14,400 x 14,400 pt page (OCR renders it at the pixel budget);
       - upload of a PDF with one 1 x 1000 pt page, then GET /api/pages/{id}/ with
         Accept: image/jpeg (its preview, rendered in the request thread);
       - upload of a multi-page TIFF scan of --tiff-frames (default 40) 300-dpi frames (Tesseract
         busy), only when the previous one is no longer waiting or being read (one at a time);
       - upload of a TIFF whose second frame claims 40,000 x 40,000 pixels (expected 400; always
         into the same document);
       - POST /api/auth/login/ with a body nested 100,000 levels deep and with a 5,000-digit
         integer (expected 400 each);
       - round 3's cases (bench/hostile3.py): uploads of a PDF whose page content inflates to
         1 GiB and of 200 pages sharing a 300 MiB content stream (expected 400 each), the preview
         of a page that pdfium renders for minutes (expected 503 within 15 s), checks of four
         mail accounts on hostile IMAP servers run by the benchmark (one announcing a 10 GB
         message, one trickling a byte a second, one serving a Subject of 28,000 encoded words,
         one a MIME nesting of 5,000 levels; expected 202, or 429 past 2 checks under way), a
         request with Content-Length beside Transfer-Encoding: chunked and one with a chunk size
         of 20 nines on raw sockets (expected 400 and 413 at once, the connection closed), and
         symbolic links planted in the consume folder towards a file outside it (after the
         phase: that file unchanged), a 990-level folder tree in the attacker's consume folder
         with a file beside it and one in the victim's folder (after the phase: how long until
         each was imported), and 5 wrong passwords for the victim's username from each of 19
         addresses (X-Forwarded-For, the server trusting 127.0.0.1 as its proxy), the owner's
         login from its own address (expected 200), the same from 20 more addresses, then the
         owner's login from a new address (expected 429: 100 failures for one username lock
         it) and from its own again (expected 200: an address that logged in before is let in).
     Every document of the attacker is created first with POST /api/nodes/ under its .home.

  3. a pool of two: another `dms serve` on a throwaway PostgreSQL cluster (tests/harness/
     pgcluster.py; skipped when PostgreSQL cannot be started) with DMS_DB_POOL_SIZE=2, the
     documented minimum, and a scan being read: --pool-clients victims (default 16) loop for
     --seconds; then one more request a few seconds later (the node did not wedge).
  4. round 4 (bench/hostile4.py, which also runs on its own): one more fresh server,
     the victim's --victims probe threads (these requests plus a page's JPEG preview; one thread
     also uploads a one-page PDF into a new document) beside one attack per phase of --seconds:
     4.0 baseline; 4.1 20 webhooks with non-ASCII URLs and events; 4.2 8 threads of Flate-bomb
     uploads; 4.3 16 parallel rule dry runs of a long fuzzy pattern over --long-documents
     (default 200) long texts; 4.4 a mail bomb (24 MiB messages announced as 1,000 bytes, 4
     checks again and again); 4.5 a split of a --split-pages (default 2,000) page PDF after
     every page; 4.6 shared pools: (a) tarpit IMAP servers holding the mail checks while the
     victim's check is timed, (b) 20 webhooks to a receiver that never answers while the
     victim's delivery is timed, (c) two rule runs over the long texts while the victim's run
     is timed; 4.7 a 5,000-byte chunk extension, bare-LF chunked framing, resume points with a
     space, http://[::127.0.0.1]/ as a webhook URL; 4.8 a flood of ordinary requests (16
     connections of one user asking for a page of 100 back to back). Each phase ends with
     `probe p99 X ms (target <= 100), server RSS peak Y MiB (target <= 600)`.

Each phase prints per victim operation: count, p50/p95/p99/max latency in ms and errors (a status
>= 400 or an exception is an error); the peak RSS of the server process (and its RSS at the end
of the phase), the peak RSS of any `tesseract` child of it and of its PDF reader processes
(processes in /proc whose PPid is the server's pid, all sampled every 100 ms). Phase 2 also prints
the attacker's answers by operation and status (with their latencies), how many of its idle
connections the server still held open at the end, and, after the phase, the OCR state of the
attacker's uploaded documents (ocr_status counted by file, read as the attacker from
GET /api/documents/?page[size]=100, page after page). The one OCR worker reads one user's documents
in the order they came, so in a short run the later ones (the TIFF scan first among them) may still
be waiting. At the end: a summary of the server's output (lines, tracebacks, warnings and errors).
The target for comparison (docs/performance.md, "Numbers": the Target column of the rows of
bench/hostile.py): any request while a hostile file is processed p99 <= 100 ms, server RSS <= 500
MiB; round 4's: another user's p99 <= 100 ms and the server's RSS <= 600 MiB under each attack. It
prints numbers and never asserts.

    .venv/bin/python -m bench.hostile [--seconds 20] [--victims 4] [--tiff-frames 40]
                                      [--idle-connections 200] [--pool-clients 16]
                                      [--long-documents 200] [--split-pages 2000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.common import ServerProcess, machine
from bench.hostile3 import pool_of_two
from bench.hostile4 import LONG_DOCUMENTS, SPLIT_PAGES, run_round4
from bench.lib.hostile_attacker import Attacker
from bench.lib.hostile_http import Victim, create_user, print_latencies, run_phase
from bench.lib.hostile_watch import OutputDrain


def report_attack(attacker: Attacker, seconds: float) -> None:
    if attacker.crash:
        print(f"the attacker crashed:\n{attacker.crash}")
    print("attacker's answers:")
    print_latencies(attacker.tally, seconds, by_status=True)
    failed = f"; {len(attacker.idle_failed)} could not be opened ({attacker.idle_failed[0]})" \
        if attacker.idle_failed else ""
    print(f"idle connections: {len(attacker.idle)} opened, {attacker.idle_still_open()} still open "
          f"at the end{failed}")


def report_ocr_states(attacker: Attacker) -> None:
    print("OCR state of the attacker's documents after the attack:")
    for name, statuses in sorted(attacker.ocr_states().items()):
        shown = ", ".join(f"{status} {count}" for status, count in statuses.most_common())
        print(f"  {name}: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--seconds", type=float, default=20, help="length of each phase")
    parser.add_argument("--victims", type=int, default=4, help="ordinary client threads")
    parser.add_argument("--tiff-frames", type=int, default=40, help="frames of the TIFF scan")
    parser.add_argument("--idle-connections", type=int, default=200,
                        help="raw TCP connections the attacker opens and holds")
    parser.add_argument("--pool-clients", type=int, default=16,
                        help="clients of the server with a pool of two PostgreSQL connections")
    parser.add_argument("--long-documents", type=int, default=LONG_DOCUMENTS,
                        help="round 4: the dry-run attacker's text documents")
    parser.add_argument("--split-pages", type=int, default=SPLIT_PAGES,
                        help="round 4: pages of the PDF split after every page")
    args = parser.parse_args()
    print(f"machine: {machine()}")

    with tempfile.TemporaryDirectory(prefix="dms-bench-hostile-") as tmp:
        consume_dir, outside = Path(tmp) / "consume", Path(tmp) / "outside"
        outside.mkdir()
        victim_file = outside / "private.pdf"
        victim_file.write_bytes(b"%PDF-1.4 a file outside the consume folder")
        server = ServerProcess(Path(tmp) / "data", DMS_OCR_WORKERS="1",
                               DMS_CONSUME_DIR=str(consume_dir), DMS_CONSUME_INTERVAL="1",
                               DMS_CONSUME_STABLE_SECONDS="1", DMS_MAIL_CHECK_SECONDS="10",
                               DMS_TRUSTED_PROXY="127.0.0.1",
                               # The hostile mail servers listen on loopback, which the outbound
                               # rule refuses to users unless the administrator allows it.
                               DMS_OUTBOUND_ALLOW="127.0.0.1")
        output = OutputDrain(server.process.stdout)
        try:
            admin_token = server.login()
            victim_user = create_user(server.port, admin_token, "victim")
            attacker_user = create_user(server.port, admin_token, "attacker")
            victims = [Victim(index, server.port, victim_user) for index in range(args.victims)]
            attacker = Attacker(server.port, attacker_user, args, consume_dir, victim_file,
                                victim_user)
            print("target (docs/performance.md, Numbers): any request while a hostile file is "
                  "processed p99 <= 100 ms, server RSS <= 500 MiB; DMS_OCR_WORKERS=1")

            print(f"\n1. baseline: {args.victims} victims, {args.seconds:g} s, no attack")
            tally, wall, memory = run_phase(server, victims, args.seconds)
            print_latencies(tally, wall)
            memory.report()

            print(f"\n2. under attack: {args.victims} victims, {args.seconds:g} s; the attacker "
                  f"holds {args.idle_connections} idle connections and loops over hostile "
                  f"uploads ({args.tiff_frames}-frame TIFF scans) and hostile logins")
            tally, wall, memory = run_phase(server, victims, args.seconds, attacker)
            print_latencies(tally, wall)
            memory.report()
            report_attack(attacker, wall)
            attacker.close_idle_connections()
            report_ocr_states(attacker)
            print("what issue 22's cases left behind:")
            attacker.round3.report()
        finally:
            server.stop()
        print()
        output.report()

    print(f"\n3. a pool of two: {args.pool_clients} clients, {args.seconds:g} s, of a server on "
          "PostgreSQL with DMS_DB_POOL_SIZE=2 while it reads a scan")
    pool_of_two(args.seconds, args.pool_clients)

    print(f"\n4. round 4 (issue 38, bench/hostile4.py): {args.victims} probe threads of another "
          f"user, {args.seconds:g} s per phase")
    run_round4(args.seconds, args.victims, args.long_documents, args.split_pages, prefix="4.")


if __name__ == "__main__":
    main()
