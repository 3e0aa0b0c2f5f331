"""A throwaway IMAP server for the tests: Debian's Dovecot (`dovecot-imapd`) with plain IMAP on
127.0.0.1 and a free port, its config, sockets, state, log, users and Maildirs all in a temp dir,
so it needs no system dovecot and several can run at once. The helpers talk real IMAP (imapclient)
so that tests set up and inspect mailboxes the way a mail client would."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from imapclient import IMAPClient

from tests.harness.processes import free_port, terminate
from tests.harness.waiting import WaitTimeout, wait_for

DOVECOT = "/usr/sbin/dovecot"


class ImapServer:
    def __init__(self):
        if not all(os.access(path, os.X_OK) for path in (DOVECOT, "/usr/lib/dovecot/imap-login")):
            raise RuntimeError("dovecot is not installed: run scripts/setup.sh --test")
        self.dir = Path(tempfile.mkdtemp(prefix="dms-imap-"))
        self.port = free_port()
        self.ssl_port = free_port()
        self.users = self.dir / "users"
        self.users.mkdir()
        self.users.chmod(0o755)  # whatever the umask (dms's is 077): Dovecot's auth reads it
        self.process: subprocess.Popen | None = None

    def _config(self) -> str:
        # Dovecot refuses to run mail processes as root; as root the mails belong to the package's
        # own `dovecot` user (it exists wherever dovecot does), otherwise everything runs as us,
        # without the chroots (only root may chroot).
        chroots = ""
        if os.geteuid() == 0:
            mail_user, login_user, internal_user = "dovecot", "dovenull", "dovecot"
        else:
            mail_user = login_user = internal_user = pwd.getpwuid(os.geteuid()).pw_name
            chroots = "".join(f"service {name} {{\n  chroot =\n}}\n" for name in (
                "anvil", "imap-login", "imap-urlauth-login", "ipc", "old-stats"))
        account = pwd.getpwnam(mail_user)
        internal_group = grp.getgrgid(pwd.getpwnam(internal_user).pw_gid).gr_name
        mail = self.dir / "mail"
        mail.mkdir()
        os.chown(mail, account.pw_uid, account.pw_gid)
        self.dir.chmod(0o711)  # auth and mail processes (not root) go through it
        return f"""
protocols = imap
listen = 127.0.0.1
base_dir = {self.dir}/run
state_dir = {self.dir}/state
log_path = {self.dir}/log
# A self-signed certificate: STARTTLS on the plain port and IMAPS on ssl_port, for the tests that
# show dms refuses a certificate it cannot verify. Plain logins stay allowed without TLS.
ssl = yes
ssl_cert = <{self.dir}/cert.pem
ssl_key = <{self.dir}/key.pem
disable_plaintext_auth = no
# Any character in a username (the default allows ASCII letters, digits and .-_@ only): the
# tests log in users with non-ASCII names, over AUTHENTICATE PLAIN.
auth_username_chars =
default_login_user = {login_user}
default_internal_user = {internal_user}
default_internal_group = {internal_group}
first_valid_uid = 1
# A wrong password is answered after 0.5 s (compiled in) instead of 2 s, and without the growing
# delay Dovecot would otherwise add to every later login from 127.0.0.1 (the auth penalty).
auth_failure_delay = 0
service anvil {{
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
passdb {{
  driver = passwd-file
  args = {self.users}/%u
}}
userdb {{
  driver = static
  args = uid={account.pw_uid} gid={account.pw_gid} home={mail}/%u
}}
mail_location = maildir:~/Maildir
service imap-login {{
  inet_listener imap {{
    port = {self.port}
  }}
  inet_listener imaps {{
    port = {self.ssl_port}
    ssl = yes
  }}
}}
{chroots}"""

    def start(self) -> ImapServer:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-keyout", str(self.dir / "key.pem"),
                        "-out", str(self.dir / "cert.pem")], check=True, capture_output=True)
        config = self.dir / "dovecot.conf"
        config.write_text(self._config())
        # Errors before the log process runs (a bad config) go to stderr: into the same log.
        with open(self.dir / "log", "ab") as log:
            self.process = subprocess.Popen([DOVECOT, "-F", "-c", str(config)],
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        with contextlib.suppress(WaitTimeout):
            if wait_for(self._greets_or_exited, timeout=20, interval=0.05) == "greets":
                return self
        log = (self.dir / "log").read_text(errors="replace").splitlines()[-20:]
        self.stop()
        raise RuntimeError("dovecot did not start:\n" + "\n".join(log))

    def _greets_or_exited(self) -> str | None:
        if self.process.poll() is not None:
            return "exited"
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                return "greets" if connection.recv(64).startswith(b"* OK") else None
        except OSError:
            return None

    def stop(self) -> None:
        if self.process is not None:
            terminate(self.process)
            self.process = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ImapServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def add_user(self, name: str, password: str) -> None:
        """A passwd-file per user: one shared file would be re-read on change, but at most once a
        second, so a user added right after a login could be refused for up to a second."""
        (self.users / name).write_text(f"{name}:{{PLAIN}}{password}\n")
        (self.users / name).chmod(0o644)

    @contextlib.contextmanager
    def client(self, user: str, password: str):
        """A logged-in imapclient.IMAPClient, logged out afterwards."""
        client = IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=10)
        try:
            if (user + password).isascii():
                client.login(user, password)
            else:  # LOGIN sends ASCII only; PLAIN sends UTF-8
                client.plain_login(user, password)
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def append(self, user: str, password: str, raw: bytes, mailbox: str = "INBOX",
               flags: tuple = ()) -> int:
        with self.client(user, password) as client:
            if not client.folder_exists(mailbox):
                client.create_folder(mailbox)
            response = client.append(mailbox, raw, flags=flags)
        return int(re.search(rb"\[APPENDUID \d+ (\d+)\]", response).group(1))

    def messages(self, user: str, password: str, mailbox: str = "INBOX") -> dict[int, tuple]:
        """UID -> flags, read with EXAMINE and FETCH FLAGS so that no flag (\\Seen) changes.
        \\Recent is left out: it belongs to a session (it stays on until a read-write SELECT)."""
        with self.client(user, password) as client:
            client.select_folder(mailbox, readonly=True)
            fetched = client.fetch(client.search("ALL"), ["FLAGS"])
        return {uid: tuple(flag for flag in data[b"FLAGS"] if flag != b"\\Recent")
                for uid, data in fetched.items()}

    def mailboxes(self, user: str, password: str) -> list[str]:
        with self.client(user, password) as client:
            return [name for _flags, _delimiter, name in client.list_folders()]

    def create_mailbox(self, user: str, password: str, name: str) -> None:
        with self.client(user, password) as client:
            client.create_folder(name)
