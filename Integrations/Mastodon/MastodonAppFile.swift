import Core
import Foundation

/// What `feedsync login mastodon` keeps beside a token (`NAME.token.app`, mode 0600): the
/// server, the client the server registered for that login, and whose the token is — so
/// `logout` and a second login can revoke it, and a second login can tell which feed is the
/// account's.
///
///     {"server": "https://example.social", "client_id": "…", "client_secret": "…", "account": "alice"}
struct MastodonAppFile {
    var server: URL
    var app: MastodonLogin.App
    /// The account's `username`; `nil` in a file written before logins recorded it.
    var account: String?

    /// The app file that belongs with `tokenFile`.
    static func url(for tokenFile: URL) -> URL { tokenFile.appendingPathExtension("app") }

    /// The app file whose text is `text`, or `nil` when there is none or it is not one.
    ///
    /// The caller reads the text as a secret file is read (never through a symlink).
    static func parse(_ text: String?) -> MastodonAppFile? {
        guard let text, case .object(let fields)? = try? JSONDecoder().decode(ConfigValue.self, from: Data(text.utf8)),
              case .string(let server)? = fields["server"], let serverURL = URL(string: server),
              case .string(let id)? = fields["client_id"], case .string(let secret)? = fields["client_secret"] else { return nil }
        var account: String?
        if case .string(let name)? = fields["account"] { account = name }
        return MastodonAppFile(server: serverURL, app: .init(clientID: id, clientSecret: secret), account: account)
    }

    /// The file's text, one line.
    var json: String {
        "{\"server\": \(Self.quoted(server.absoluteString)), \"client_id\": \(Self.quoted(app.clientID)), "
            + "\"client_secret\": \(Self.quoted(app.clientSecret))" + (account.map { ", \"account\": \(Self.quoted($0))" } ?? "") + "}"
    }

    /// `text` as a JSON string.
    private static func quoted(_ text: String) -> String {
        var json = JSONWriter()
        json.string(text)
        return json.text
    }
}
