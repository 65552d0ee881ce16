import Core
import Foundation

extension MastodonSignIn {
    /// Signs in in the browser: registers feedsync, shows the authorization URL, and takes the
    /// code from the loopback callback or as pasted; returns the token and the app it belongs to.
    func authorize(_ login: MastodonLogin, host: String, _ context: any SignInContext) async throws -> (Secret, MastodonLogin.App) {
        let pkce = MastodonLogin.PKCE()
        let state = MastodonLogin.PKCE().verifier
        let paste = context.flag("--paste") || (!context.flag("--callback") && !context.hasDisplay)
        let code: String
        let redirect: String
        let app: MastodonLogin.App
        if paste {
            redirect = MastodonLogin.outOfBand
            app = try await login.register(redirectURIs: [redirect])
            try context.say("Open this address in a browser, sign in to \(host) and allow feedsync to read:")
            try context.say("  \(login.authorizationURL(app: app, redirectURI: redirect, state: state, challenge: pkce.challenge).absoluteString)")
            try context.ask("Then paste the authorization code it shows here: ")
            guard let pasted = await context.readLine(within: Self.patience)?.trimmingCharacters(in: .whitespaces), !pasted.isEmpty else {
                throw ServiceError(.unauthorized, "signing in to \(host)", "no authorization code was pasted")
            }
            code = pasted
        } else {
            let callback = try context.listenForCallback(state: state)
            defer { callback.stop() }
            redirect = callback.redirectURI
            app = try await login.register(redirectURIs: [redirect])
            let url = login.authorizationURL(app: app, redirectURI: redirect, state: state, challenge: pkce.challenge)
            try context.say("Open this address in a browser, sign in to \(host) and allow feedsync to read:")
            try context.say("  \(url.absoluteString)")
            try context.say("Waiting for the browser to come back to \(redirect) (up to \(Int(Self.patience / 60)) minutes)…")
            try context.flush()
            if context.hasDisplay { context.openInBrowser(url) }
            code = try await callback.code(within: Self.patience, host: host)
        }
        return (try await login.exchange(code: code, app: app, redirectURI: redirect, verifier: pkce.verifier), app)
    }
}
