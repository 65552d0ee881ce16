"""Echo the credential: a careless or hostile server that repeats a request's own secret in its error.

Shared by the fixture servers (reference-api, mastodon, bluesky): each routes its requests through
CredentialEcho.respond() first and its /_control/echo through CredentialEcho.control(). Standard
library only.

POST /_control/echo with a JSON object turns it on (an empty object turns it off):

  path        answer requests whose path contains this ("" = every request but /_control/)
  source      where the secret is read from the request: "authorization" (a Bearer token, or a
              Basic credential's password), "password", "refresh_token", "client_secret", "token"
              or "code" (a JSON or form body field); "any" (default) takes the first found
  where       list of places the secret goes: "reason" (the status line's reason phrase), "json"
              (the error body's fields), "html" (an HTML error page), "header" (WWW-Authenticate and
              X-Debug-Credential), "location" (a redirect whose Location carries it); default all but
              html and location
  form        how it is written: verbatim, percent, percent-all, percent-all-lower, form,
              double-percent, json-unicode, json-slash, html-entities, html-hex, base64, basic,
              basic-a, basic-ab, upper, truncated, split
  status      the status to answer (default 401; 302 with "location")
  times       how many requests to answer so, then none (0 = every one)

GET /_control/echo answers {"settings": …, "echoed": [every secret echoed, as it was received]}.
"""

import base64
import html
import json
import re
import threading
from http.client import responses
from urllib.parse import parse_qs, quote, quote_plus

FORMS = ("verbatim", "percent", "percent-all", "percent-all-lower", "form", "double-percent", "json-unicode",
         "json-slash", "html-entities", "html-hex", "base64", "basic", "basic-a", "basic-ab", "upper", "truncated", "split")
PLACES = ("reason", "json", "html", "header", "location")
SOURCES = ("any", "authorization", "password", "refresh_token", "client_secret", "token", "code")
BODY_FIELDS = ("password", "refresh_token", "client_secret", "token", "code")


def encode(secret, form):
    """The secret as the server writes it."""
    def every_byte(lower=False):
        text = "".join(f"%{b:02X}" for b in secret.encode())
        return text.lower() if lower else text

    def basic(user):
        return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()

    half = max(8, len(secret) // 2)
    return {
        "verbatim": lambda: secret,
        "percent": lambda: quote(secret, safe=""),
        "percent-all": every_byte,
        "percent-all-lower": lambda: every_byte(lower=True),
        "form": lambda: quote_plus(secret),
        "double-percent": lambda: quote(every_byte(), safe=""),
        "json-unicode": lambda: "".join(f"\\u{ord(c):04x}" for c in secret),
        "json-slash": lambda: secret.replace("/", "\\/"),
        "html-entities": lambda: "".join(f"&#{ord(c)};" for c in secret),
        "html-hex": lambda: "".join(f"&#x{ord(c):X};" for c in secret),
        "base64": lambda: base64.b64encode(secret.encode()).decode(),
        "basic": lambda: basic("feedsync"),
        "basic-a": lambda: basic("a"),
        "basic-ab": lambda: basic("ab"),
        "upper": lambda: secret.upper(),
        "truncated": lambda: secret[:half] + "...",
        "split": lambda: secret[:half] + "\n" + secret[half:],
    }[form]()


def credential(headers, body, source="any"):
    """The secret a request carries, or None."""
    found = {}
    scheme, _, value = (headers.get("Authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        found["authorization"] = value.strip()
    elif scheme.lower() == "basic" and value.strip():
        try:
            found["authorization"] = base64.b64decode(value.strip()).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            pass
    fields = {}
    try:
        parsed = json.loads(body or b"null")
        if isinstance(parsed, dict):
            fields = parsed
    except (ValueError, UnicodeDecodeError):
        fields = {k: v[-1] for k, v in parse_qs((body or b"").decode("utf-8", "replace")).items()}
    for key in BODY_FIELDS:
        if isinstance(fields.get(key), str) and fields[key]:
            found[key] = fields[key]
    if source != "any":
        return found.get(source)
    return next((found[k] for k in ("authorization",) + BODY_FIELDS if k in found), None)


class CredentialEcho:
    def __init__(self, json_body):
        """json_body(message) -> the server's error object with `message` in its text fields."""
        self.json_body = json_body
        self.lock = threading.Lock()
        self.settings, self.echoed, self.answered = None, [], 0

    def control(self, method, body):
        """The answer to /_control/echo; raises ValueError for bad settings."""
        if method == "POST":
            settings = json.loads(body or b"{}")
            if not isinstance(settings, dict):
                raise ValueError("expected a JSON object")
            if settings:
                settings.setdefault("path", "")
                settings.setdefault("source", "any")
                settings.setdefault("where", ["reason", "json", "header"])
                settings.setdefault("form", "verbatim")
                settings.setdefault("status", 302 if "location" in settings["where"] else 401)
                settings.setdefault("times", 0)
                if settings["form"] not in FORMS or settings["source"] not in SOURCES \
                        or not set(settings["where"]) <= set(PLACES) or not isinstance(settings["path"], str) \
                        or not isinstance(settings["status"], int) or not 100 <= settings["status"] <= 599:
                    raise ValueError(f"bad echo settings: {settings!r}")
            with self.lock:
                self.settings, self.answered = settings or None, 0
                self.echoed = []
        with self.lock:
            return {"settings": self.settings, "echoed": list(self.echoed)}

    def respond(self, handler, path, body):
        """Answers the request with its own secret when the echo is on and it matches; True if it did."""
        with self.lock:
            s = self.settings
            if s is None or s["path"] not in path or (s["times"] and self.answered >= s["times"]):
                return False
            secret = credential(handler.headers, body, s["source"])
            if secret is None:
                return False
            self.answered += 1
            self.echoed.append(secret)
        text = encode(secret, s["form"])
        line = text.replace("\r", " ").replace("\n", " ")     # a field or status line holds no line break
        status, where = s["status"], s["where"]
        reason = f"Rejected credential {line}" if "reason" in where else responses.get(status, "Error")
        headers = []
        if "header" in where:
            headers += [("WWW-Authenticate", f'Bearer realm="api", error="invalid_token", error_description="{line}"'),
                        ("X-Debug-Credential", line)]
        if "location" in where:
            host = handler.headers.get("Host") or "127.0.0.1"
            headers.append(("Location", f"http://{host}{path}?echo=1&credential={quote(line, safe='%')}"))
        message = f"rejected credential {text}"
        if "html" in where:
            content_type = "text/html; charset=utf-8"
            payload = (f"<!doctype html><html><head><title>{status} {html.escape(responses.get(status, 'Error'))}</title></head>"
                       f"<body><h1>Unauthorized</h1><p>The credential <code>{html.escape(text)}</code> was rejected.</p>"
                       "</body></html>").encode()
        else:
            content_type = "application/json; charset=utf-8"
            payload = json.dumps(self.json_body(message) if "json" in where else {"error": "rejected"}).encode()
        head = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(payload)}"]
        head += [f"{name}: {value}" for name, value in headers]
        handler.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace") + payload)
        return True
