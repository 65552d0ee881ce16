import Core

/// The Google Reader API for reader apps (NetNewsWire, Reeder, ReadYou…), served by the
/// daemon's reader listener (`"serve"` in the config) over the store.
public enum ReaderAPIIntegration {
    /// Its entry in the registry: its keys are the config's `"serve"` section's, which the app
    /// reads to bind the listener (it has no `"integration"` key: there is one reader API).
    public static let descriptor = IntegrationDescriptor(
        name: "readerapi", summary: "the Google Reader API for reader apps, served by the reader listener",
        example: #"{"listen": "127.0.0.1:8765", "behindProxy": false}"#,
        keys: [
            ConfigKey("listen", .string, .required, "where to listen, host:port; a loopback address unless tls or behindProxy"),
            ConfigKey("behindProxy", .bool, default: "false", "a reverse proxy in front terminates TLS, so any address may be used"),
            ConfigKey("tls", .object, "serve HTTPS (TLS 1.2 or later), so any address may be used: {\"certificate\": PATH, \"key\": PATH}, "
                      + "PEM files (the certificate chain, leaf first; the key unencrypted, mode 0600), loaded again on SIGHUP"),
        ],
        serving: ServingCapability { context in
            let service = ReaderAPIService(context)
            return { await service.answer($0) }
        })
}
