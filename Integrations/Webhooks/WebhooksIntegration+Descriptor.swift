import Core
import Foundation

/// The `"webhook"` integration: it faces out, POSTing what the mirror stored to the config's
/// `"webhooks"` endpoints, signed (see `docs/rules.md`).
public enum WebhooksIntegration {
    /// Webhooks as the registry lists them. The keys are those of one `"webhooks"` entry, which
    /// the app reads (its rules are the app's); this integration sends.
    public static let descriptor = IntegrationDescriptor(
        name: "webhook", summary: "signed JSON POSTs of new, updated and deleted posts, for the config's webhooks",
        example: #"{"url": "https://hooks.example/feedsync", "secretFile": "secrets/hook", "events": ["new"]}"#,
        keys: [
            ConfigKey("url", .url, .required, "the endpoint; not feedsyncd's own listener"),
        ] + ConfigKey.secret("secret", "the secret that signs each delivery (HMAC-SHA256)") + [
            ConfigKey("events", .list, default: #"["new", "updated", "deleted"]"#, "the events it is told of"),
            ConfigKey("feeds", .list, default: "every feed", "the feeds it is told of"),
            ConfigKey("rules", .list, "which new and updated posts it is told of, as a feed's rules"),
        ],
        webhooks: WebhooksCapability { WebhookSender(userAgent: $0) })
}
