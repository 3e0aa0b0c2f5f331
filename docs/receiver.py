import hashlib
import hmac
import json
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        signature = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
        valid = hmac.compare_digest(signature, self.headers.get("X-DMS-Signature", ""))
        self.send_response(204 if valid else 401)  # 401: not sent by your dms
        self.end_headers()
        if valid:
            event = json.loads(body)  # act on it here: rename, file, notify
            print(event["id"], event["type"], (event["node"] or {}).get("title"), flush=True)


HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8001"))), Receiver).serve_forever()
