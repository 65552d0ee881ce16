"""OAuth 2 for the fake Mastodon server, from Mastodon's documentation (docs.joinmastodon.org:
methods/apps, methods/oauth, spec/oauth) and RFC 6749 / RFC 7636 (PKCE) / RFC 8252 (loopback
redirects).

- POST /api/v1/apps                 client_name, redirect_uris (one or more, newline-separated),
                                    scopes -> {id, name, client_id, client_secret, redirect_uri, ...}
- GET  /oauth/authorize             response_type=code, client_id, redirect_uri (one registered),
                                    scope, state, code_challenge, code_challenge_method=S256.
                                    The fixture's user always consents: a loopback redirect_uri gets
                                    302 to it with ?code=&state=; the out-of-band one gets a page
                                    showing the code, as Mastodon does.
- POST /oauth/token                 grant_type=authorization_code, code, client_id, client_secret,
                                    redirect_uri (the same as authorize's), code_verifier
                                    (SHA-256 of it must equal the challenge) -> {access_token, ...}
- POST /oauth/revoke                client_id, client_secret, token -> {}
Errors are Mastodon's: {"error": ..., "error_description": ...} with 400/401/403.

Control (loopback only): POST /_control/oauth?mode=M sets how it misbehaves:
  normal | no-apps (404 for /api/v1/apps) | deny (authorize redirects with error=access_denied)
  | refuse-code (token endpoint says invalid_grant) | token-redirect (token endpoint answers 307
  to another origin) | bad-token (verify_credentials rejects the issued token)
GET /_control/oauth answers the apps, tokens issued and revoked, for tests.
"""
import base64
import hashlib
import json
import secrets
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

OOB = "urn:ietf:wg:oauth:2.0:oob"
KNOWN_SCOPES = {"read", "write", "follow", "push", "profile", "read:statuses", "read:accounts", "read:bookmarks",
                "read:favourites", "read:lists", "read:follows", "read:notifications", "read:search"}


def _error(status, error, description):
    return status, [], json.dumps({"error": error, "error_description": description}).encode()


class OAuth:
    def __init__(self):
        self.lock = threading.Lock()
        self.apps = {}        # client_id -> app
        self.codes = {}       # code -> grant
        self.tokens = {}      # token -> client_id
        self.revoked = []
        self.mode = "normal"

    def valid(self, token):
        with self.lock:
            return token in self.tokens and self.mode != "bad-token"

    def control(self, method, params):
        if method == "POST":
            mode = params.get("mode", "normal")
            if mode not in {"normal", "no-apps", "deny", "refuse-code", "token-redirect", "bad-token"}:
                return _error(400, "invalid_mode", mode)
            with self.lock:
                self.mode = mode
            return 200, [], json.dumps({"mode": mode}).encode()
        with self.lock:
            body = {"mode": self.mode, "apps": list(self.apps.values()), "tokens": list(self.tokens), "revoked": self.revoked}
        return 200, [], json.dumps(body).encode()

    def handle(self, method, path, query, body, content_type):
        form = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        if method == "POST" and body:
            if (content_type or "").startswith("application/json"):
                try:
                    form.update({k: str(v) for k, v in json.loads(body).items()})
                except (ValueError, AttributeError):
                    return _error(400, "invalid_request", "body is not JSON")
            else:
                form.update({k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()})
        route = (method, path)
        if route == ("POST", "/api/v1/apps"):
            return self.register(form)
        if route == ("GET", "/oauth/authorize"):
            return self.authorize(form)
        if route == ("POST", "/oauth/token"):
            return self.token(form)
        if route == ("POST", "/oauth/revoke"):
            return self.revoke(form)
        return _error(404, "not_found", "Record not found")

    def register(self, form):
        if self.mode == "no-apps":
            return 404, [], json.dumps({"error": "Record not found"}).encode()
        name, uris = form.get("client_name", ""), form.get("redirect_uris", "")
        if not name or not uris:
            return 422, [], json.dumps({"error": "Validation failed: Application name and redirect URI can't be blank"}).encode()
        scopes = form.get("scopes", "read")
        if not set(scopes.split()) <= KNOWN_SCOPES:
            return 422, [], json.dumps({"error": "Validation failed: Scopes are invalid"}).encode()
        app = {"id": str(len(self.apps) + 1), "name": name, "website": form.get("website"),
               "redirect_uri": uris, "redirect_uris": uris.split(), "scopes": scopes.split(),
               "client_id": secrets.token_urlsafe(32), "client_secret": secrets.token_urlsafe(32),
               "vapid_key": ""}
        with self.lock:
            self.apps[app["client_id"]] = app
        return 200, [], json.dumps(app).encode()

    def authorize(self, form):
        app = self.apps.get(form.get("client_id", ""))
        if app is None:
            return _error(401, "invalid_client", "Client authentication failed due to unknown client")
        redirect = form.get("redirect_uri", "")
        if redirect not in app["redirect_uris"]:
            return _error(400, "invalid_redirect_uri", "The redirect uri included is not valid.")
        if form.get("response_type") != "code":
            return _error(400, "unsupported_response_type", "The authorization server does not support this response type.")
        challenge, method = form.get("code_challenge", ""), form.get("code_challenge_method", "")
        if not challenge or method != "S256":
            return _error(400, "invalid_request", "Code challenge is required and must use S256.")
        scopes = form.get("scope", "read").split()
        if not set(scopes) <= set(app["scopes"]):
            return _error(400, "invalid_scope", "The requested scope is invalid, unknown, or malformed.")
        state = form.get("state")
        if self.mode == "deny":
            params = {"error": "access_denied", "error_description": "The resource owner or authorization server denied the request."}
            if state is not None:
                params["state"] = state
            return 302, [("Location", redirect + "?" + urlencode(params))], b""
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = {"client_id": app["client_id"], "redirect_uri": redirect, "challenge": challenge, "scopes": scopes}
        if redirect == OOB:
            page = f'<html><body><p>Copy this authorization code and paste it to the application.</p><input class="oauth-code" readonly value="{code}"></body></html>'
            return 200, [("Content-Type", "text/html; charset=utf-8")], page.encode()
        params = {"code": code}
        if state is not None:
            params["state"] = state
        return 302, [("Location", redirect + "?" + urlencode(params))], b""

    def token(self, form):
        if self.mode == "token-redirect":
            return 307, [("Location", "http://127.0.0.2:9/oauth/token")], b""
        app = self.apps.get(form.get("client_id", ""))
        if app is None or form.get("client_secret") != app["client_secret"]:
            return _error(401, "invalid_client", "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.")
        if form.get("grant_type") != "authorization_code":
            return _error(400, "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.")
        with self.lock:
            grant = self.codes.pop(form.get("code", ""), None)   # a code is good once
        if self.mode == "refuse-code" or grant is None or grant["client_id"] != app["client_id"]:
            return _error(400, "invalid_grant", "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.")
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return _error(400, "invalid_grant", "The redirect_uri does not match the one used in the authorization request.")
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if digest != grant["challenge"]:
            return _error(400, "invalid_grant", "The code verifier does not match the code challenge.")
        token = secrets.token_urlsafe(32)
        with self.lock:
            self.tokens[token] = app["client_id"]
        return 200, [], json.dumps({"access_token": token, "token_type": "Bearer", "scope": " ".join(grant["scopes"]),
                                    "created_at": 1764000000}).encode()

    def revoke(self, form):
        app = self.apps.get(form.get("client_id", ""))
        if app is None or form.get("client_secret") != app["client_secret"]:
            return _error(403, "unauthorized_client", "You are not authorized to revoke this token")
        with self.lock:
            if self.tokens.get(form.get("token")) == app["client_id"]:
                del self.tokens[form["token"]]
                self.revoked.append(form["token"])
        return 200, [], b"{}"
