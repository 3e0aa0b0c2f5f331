"""Hostile-input benchmark, round 4: can one ordinary user slow everyone else down, or make the
server's memory or log grow without bound?

Against one fresh `dms serve` (a new temporary data dir; DMS_OCR_WORKERS=1,
DMS_OUTBOUND_ALLOW=127.0.0.1 so that users may reach the benchmark's own servers on loopback,
DMS_TRUSTED_PROXY=127.0.0.1, no periodic mail checks), with an admin, the victim ("another
user") and an attacker user (or two) per phase. Each phase has a victim of its own, so that
what a phase measures is its attack and not what the probe of the phases before left behind
(one victim for the whole round, --one-victim, as until 2026-12-01: by the last phases it had
~10,000 folders in its home and ~1,000 documents, and its p99 without any attack, phase 7, was
84-102 ms against 32-43 in the baseline). The probe: --victims client threads (default 4)
of the victim, each its own keep-alive connection, looping over bench/hostile.py's ordinary
requests (GET users/me, GET its home folder, a search, POST a folder) plus the JPEG preview of
a page of a processed one-page PDF; the first of them also uploads a one-page born-digital PDF
into a new document each time round (one thread: a user's share of the PDF readers is one file
at a time and one waiting, so the victim's own parallel uploads would be refused by design).
Each phase lasts --seconds (default 20):

  0. baseline: no attack.
  1. webhooks with non-ASCII URLs: 20 webhooks of the attacker whose URLs hold a
     path `/dokumente/über`, a query `?name=Bücher`, a host `127。0。0。1` (what the API answered
     to each form and the URL it stored), to a receiver of the benchmark on loopback; one test
     delivery per form; the attacker makes folders (events) meanwhile. After it: each webhook's
     last_status, last_error and failures, and what the receiver got.
  2. parallel Flate bombs: 8 attacker threads upload PDF content bombs (1 GiB
     inflated; 200 pages sharing a 300 MiB stream) into new documents, back to back.
  3. 16 parallel dry runs: the attacker has --long-documents (default 200) text
     documents of 100,000 characters and a rule with a long fuzzy pattern; 16 threads loop over
     GET /api/rules/{id}/matches/.
  4. the mail bomb: two attackers with two accounts each on hostile IMAP servers of
     the benchmark serving 24 MiB messages announced as 1,000 bytes, checked again and again (new
     messages for each check); after it, the server's RSS once the checks have ended.
  5. a split into thousands: the attacker's born-digital PDF of --split-pages
     (default 2,000) pages, processed before the phase, split after every page; the answer's
     status and time, and the run it started followed (GET /api/split-runs/{id}/).
  6. shared pools, three phases: (a) two attackers with two accounts each on tarpit
     IMAP servers (a byte a second) checking again and again, the victim's check of one small
     message timed from POST to `checking: false`; (b) the attacker's 20 webhooks to a receiver
     that accepts connections and never answers, the attacker making folders, the victim's
     webhook delivery timed from its rename to the receipt; (c) the attacker's two rule runs over
     its long documents (started again as they end), the victim's run over its few documents
     timed to `succeeded`. The victim's samples go on one after the other.
  7. smaller, on raw sockets: a chunked upload with a 5,000-byte chunk extension, a
     chunked body with bare-LF line ends (each expected 400 at once), resume points with a space
     on GET /api/events/; and `http://[::127.0.0.1]/` as a webhook URL (expected 400; made
     disabled and deleted at once if accepted: nothing is ever sent to it).
  8. a flood of ordinary requests: 16 connections of the attacker, each asking for its folder
     of 100 children (a page of 100) back to back, nothing refused: the request threads are
     served by turns (dms/web/turns.py), so the victim's request takes the next free thread
     rather than waiting behind the attacker's queue.

Each phase prints the probe's latencies per operation (p50/p95/p99/max, errors), the server's
peak RSS and RSS at the end (and its PDF readers' and Tesseract's), the attacker's answers by
status, what the attack left behind, what the server wrote meanwhile (lines, tracebacks,
warnings, the commonest messages) and a summary line with the targets beside the
numbers: `probe p99 X ms (target <= 100), server RSS peak Y MiB (target <= 600)`; at the end one
table of every phase. Traffic goes to loopback only. It prints numbers and never asserts.

    .venv/bin/python -m bench.hostile4 [--seconds 20] [--victims 4] [--long-documents 200]
                                       [--split-pages 2000]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from bench.common import ServerProcess, machine
from bench.lib.hostile_http import connect
from bench.lib.hostile_round4 import (
    PROBE_P99_TARGET_MS,
    RSS_TARGET_MIB,
    Probe,
    Round,
    preview_page,
    print_outcomes,
    run_attack,
)
from bench.lib.hostile_round4_attacks import (
    DryRuns,
    FlateBombs,
    Flood,
    LongDocuments,
    NonAsciiWebhooks,
    SplitIntoThousands,
)
from bench.lib.hostile_round4_mail import MailBomb
from bench.lib.hostile_round4_pools import MailPools, RulePools, WebhookPools
from bench.lib.hostile_round4_smaller import Smaller
from bench.lib.hostile_watch import OutputDrain

STOP_SECONDS = 60  # for the server to stop before it is killed (checks and runs may hold it)
LONG_DOCUMENTS = 200  # the dry-run attacker's text documents of 100,000 characters
SPLIT_PAGES = 2000  # the pages of the PDF split after every page


def stop(server: ServerProcess) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"the server did not stop within {STOP_SECONDS} s of SIGTERM; killed")
        server.process.kill()
        server.process.wait()


def run_round4(seconds: float, victims: int, long_documents: int, split_pages: int,
               prefix: str = "", phases: list[str] | None = None,
               one_victim: bool = False) -> None:
    """Every phase of round 4 (or those labelled as in `phases`) against one fresh server; phases
    labelled `prefix` + number; a new victim for each phase unless `one_victim`."""
    print(f"targets (issue 38): under each attack another user's p99 <= {PROBE_P99_TARGET_MS} "
          f"ms and the server's RSS <= {RSS_TARGET_MIB} MiB; DMS_OCR_WORKERS=1")
    with tempfile.TemporaryDirectory(prefix="dms-bench-hostile4-") as tmp:
        server = ServerProcess(Path(tmp) / "data", DMS_OCR_WORKERS="1",
                               DMS_TRUSTED_PROXY="127.0.0.1",
                               # The benchmark's IMAP servers and webhook receivers listen on
                               # loopback, which the outbound rule refuses to users unless the
                               # administrator allows it.
                               DMS_OUTBOUND_ALLOW="127.0.0.1",
                               # Only the checks the attacks ask for, none of the periodic ones.
                               DMS_MAIL_CHECK_MINUTES="100000")
        output = OutputDrain(server.process.stdout)
        try:
            round_ = Round(server, server.login(), {}, seconds, long_documents, split_pages)
            documents = LongDocuments(round_, long_documents)
            attacks = [None, NonAsciiWebhooks(round_), FlateBombs(round_),
                       DryRuns(round_, documents), MailBomb(round_), SplitIntoThousands(round_),
                       MailPools(round_), WebhookPools(round_), RulePools(round_, documents),
                       Smaller(round_), Flood(round_)]
            outcomes = []
            for attack in attacks:
                if phases and (attack.label if attack else "0") not in phases:
                    continue
                label = f"{prefix}{attack.label if attack else '0'}"
                if not outcomes or not one_victim:
                    round_.victim = round_.user("victim" if one_victim else f"victim-{label}")
                    page = preview_page(connect(server.port, round_.victim["token"]),
                                        round_.victim["home"])
                    probes = [Probe(index, server.port, round_.victim, page)
                              for index in range(victims)]
                title = attack.title if attack else f"baseline: {victims} probe threads, no attack"
                outcomes.append(run_attack(round_, output, probes, attack, label, title))
            print_outcomes(outcomes)
        finally:
            stop(server)
        print()
        output.report()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--seconds", type=float, default=20, help="length of each phase")
    parser.add_argument("--victims", type=int, default=4, help="the probe's client threads")
    parser.add_argument("--long-documents", type=int, default=LONG_DOCUMENTS,
                        help="the dry-run attacker's text documents of 100,000 characters")
    parser.add_argument("--split-pages", type=int, default=SPLIT_PAGES,
                        help="pages of the PDF split after every page")
    parser.add_argument("--phases", default="",
                        help="only these phases, by label, comma-separated (e.g. 0,3,6c)")
    parser.add_argument("--one-victim", action="store_true",
                        help="one victim for the whole round (as until 2026-12-01), not one per "
                             "phase")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    run_round4(args.seconds, args.victims, args.long_documents, args.split_pages,
               phases=[label for label in args.phases.split(",") if label],
               one_victim=args.one_victim)


if __name__ == "__main__":
    main()
