"""The embedded queue's idle workers wake when this process queues a task, not at their next poll (a
document uploaded after a quiet moment waited up to a second for the worker), and stop at once
(guards the overrides of Huey's Worker.sleep and Consumer.stop, pinned huey 3.5)."""

from __future__ import annotations

import threading
import time

from huey import Huey

from dms.processing.queue import EmbeddedConsumer, PatientSqliteStorage, WakingWorker

POLL_SECONDS = 120.0  # an idle worker's poll, far longer than any wait below


def test_a_queued_task_wakes_the_sleeping_worker_and_stop_does_too(tmp_path):
    huey = Huey("wake-test", storage_class=PatientSqliteStorage,
                filename=str(tmp_path / "queue.db"), results=False, utc=True)
    ran = threading.Event()
    seen: list[str] = []

    @huey.task()
    def remember(text):
        seen.append(text)
        ran.set()

    consumer = EmbeddedConsumer(huey, workers=1, worker_type="thread", periodic=False,
                                initial_delay=POLL_SECONDS, max_delay=POLL_SECONDS,
                                check_worker_health=False)
    consumer.start()
    try:
        assert [type(worker) for worker, _ in consumer.worker_threads] == [WakingWorker]
        time.sleep(0.5)  # the worker found the queue empty and sleeps until its next poll
        assert seen == []
        remember("first")
        assert ran.wait(10), "the task waited for the worker's next poll"
        ran.clear()
        remember("second")  # queued again at once: found whether the worker slept or not
        assert ran.wait(10)
        assert seen == ["first", "second"]
        assert huey.pending_count() == 0
    finally:
        started = time.monotonic()
        consumer.stop(graceful=True)
        stopped_after = time.monotonic() - started
    assert stopped_after < POLL_SECONDS / 4, "stop waited for the sleeping worker's next poll"
    assert not any(thread.is_alive() for _, thread in consumer.worker_threads)
