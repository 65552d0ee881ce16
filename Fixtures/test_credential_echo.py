"""Self-check of credential_echo.py, and of its use by the three fixture servers (a few seconds)."""

import base64
import http.client
import json
import os
import subprocess
import sys
import unittest
from urllib.parse import unquote, unquote_plus

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from credential_echo import FORMS, credential, encode  # noqa: E402

SECRET = "s3cret+pass/word=with space"


class Forms(unittest.TestCase):
    def test_each_form_decodes_back_to_the_secret(self):
        decoders = {
            "verbatim": lambda t: t, "percent": unquote, "percent-all": unquote, "percent-all-lower": unquote,
            "form": unquote_plus, "double-percent": lambda t: unquote(unquote(t)),
            "json-unicode": lambda t: json.loads(f'"{t}"'), "json-slash": lambda t: json.loads(f'"{t}"'),
            "html-entities": lambda t: __import__("html").unescape(t), "html-hex": lambda t: __import__("html").unescape(t),
            "base64": lambda t: base64.b64decode(t).decode(),
            "basic": lambda t: base64.b64decode(t[6:]).decode().partition(":")[2],
            "basic-a": lambda t: base64.b64decode(t[6:]).decode().partition(":")[2],
            "basic-ab": lambda t: base64.b64decode(t[6:]).decode().partition(":")[2],
            "upper": lambda t: t, "truncated": lambda t: t, "split": lambda t: t.replace("\n", ""),
        }
        self.assertEqual(set(decoders), set(FORMS))
        for form in FORMS:
            text = encode(SECRET, form)
            if form == "upper":
                self.assertEqual(text, SECRET.upper())
            elif form == "truncated":
                self.assertTrue(SECRET.startswith(text[:-3]) and len(text) - 3 >= 8)
            else:
                self.assertEqual(decoders[form](text), SECRET, form)
            if form not in ("verbatim", "upper", "truncated", "split"):
                self.assertNotIn(SECRET, text, form)

    def test_the_secret_is_read_from_the_header_or_the_body(self):
        self.assertEqual(credential({"Authorization": "Bearer abc.def"}, b""), "abc.def")
        basic = base64.b64encode(b"user:pw:with:colons").decode()
        self.assertEqual(credential({"Authorization": f"Basic {basic}"}, b""), "pw:with:colons")
        self.assertEqual(credential({}, b'{"username": "u", "password": "p1"}'), "p1")
        self.assertEqual(credential({}, b"client_id=x&client_secret=cs&code=c"), "cs")
        self.assertEqual(credential({}, b"client_id=x&client_secret=cs&code=c", "code"), "c")
        self.assertEqual(credential({"Authorization": "Bearer t"}, b'{"refresh_token": "r"}', "refresh_token"), "r")
        self.assertIsNone(credential({}, b'{"username": "u"}'))


class Servers(unittest.TestCase):
    def start(self, script, *arguments):
        process = subprocess.Popen([sys.executable, os.path.join(HERE, script), "--port", "0", *arguments],
                                   stdout=subprocess.PIPE, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(process.stdin.close)
        self.addCleanup(process.stdout.close)
        self.addCleanup(process.wait)
        self.addCleanup(process.terminate)
        return int(process.stdout.readline().decode().rsplit(":", 1)[1])

    def request(self, port, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response, data

    def echo(self, port, settings):
        response, data = self.request(port, "POST", "/_control/echo", json.dumps(settings))
        self.assertEqual(response.status, 200, data)

    def test_each_server_repeats_the_secret_where_it_is_told(self):
        cases = [
            ("reference-api/server.py", ["--password", "pw-0123456789"], "/v1/auth/login",
             {"Content-Type": "application/json"}, json.dumps({"username": "demo", "password": "pw-0123456789"}), "pw-0123456789"),
            ("mastodon/server.py", ["--token", "tok-0123456789"], "/api/v1/timelines/home",
             {"Authorization": "Bearer tok-0123456789"}, None, "tok-0123456789"),
            ("bluesky/server.py", ["--password", "app-pass-word"], "/xrpc/com.atproto.server.createSession",
             {"Content-Type": "application/json"}, json.dumps({"identifier": "me.test", "password": "app-pass-word"}), "app-pass-word"),
        ]
        for script, arguments, path, headers, body, secret in cases:
            port = self.start(script, *arguments)
            self.echo(port, {"path": path, "form": "percent-all", "status": 403})
            response, data = self.request(port, "POST" if body else "GET", path, body, headers)
            encoded = encode(secret, "percent-all")
            self.assertEqual(response.status, 403, script)
            self.assertIn(encoded, response.reason, script)
            self.assertIn(encoded, response.getheader("X-Debug-Credential"), script)
            self.assertIn(encoded, data.decode(), script)
            _, state = self.request(port, "GET", "/_control/echo")
            self.assertEqual(json.loads(state)["echoed"], [secret], script)

            self.echo(port, {"path": path, "where": ["html"], "form": "basic", "times": 1})
            response, data = self.request(port, "POST" if body else "GET", path, body, headers)
            self.assertEqual((response.status, response.getheader("Content-Type")), (401, "text/html; charset=utf-8"), script)
            self.assertIn(encode(secret, "basic"), data.decode())
            response, _ = self.request(port, "POST" if body else "GET", path, body, headers)
            self.assertNotEqual(response.status, 401, f"{script}: times 1 answers once")

            self.echo(port, {"path": path, "where": ["location"]})
            response, _ = self.request(port, "GET", path, None, headers if not body else {"Authorization": f"Bearer {secret}"})
            self.assertEqual(response.status, 302, script)
            self.assertIn(f"credential={secret}", response.getheader("Location"), script)
            self.echo(port, {})
            response, _ = self.request(port, "POST", "/_control/echo", json.dumps({"form": "rot13"}))
            self.assertEqual(response.status, 400, script)


if __name__ == "__main__":
    unittest.main(verbosity=1)
