import Foundation

/// One webhook delivery: a signed JSON POST of one page's posts of one event to one endpoint.
///
/// Its ``id`` is made once, when it is queued, and sent with every attempt, so a receiver that
/// got it twice (delivery is at least once) can tell.
public struct WebhookDelivery: Sendable, Hashable {
    public var id: String
    /// The endpoint's URL.
    public var endpoint: String
    /// The JSON body, as it is sent and signed.
    public var body: String
    /// How many attempts failed so far.
    public var attempts: Int

    public init(id: String, endpoint: String, body: String, attempts: Int = 0) {
        self.id = id
        self.endpoint = endpoint
        self.body = body
        self.attempts = attempts
    }
}

/// The store's role that keeps webhook deliveries until they are sent or given up.
public protocol WebhookQueue: Sendable {
    /// Queues `deliveries`, due at once, in one transaction; one already queued (by id) stays as it is.
    func enqueue(_ deliveries: [WebhookDelivery], at now: Date) async throws

    /// The deliveries due at `now`, the earliest due first, at most `limit`.
    func dueDeliveries(at now: Date, limit: Int) async throws -> [WebhookDelivery]

    /// Removes a delivery: it was sent, or given up.
    func removeDelivery(_ id: String) async throws

    /// Records a failed attempt: the delivery is due again at `next`.
    func retryDelivery(_ id: String, attempts: Int, at next: Date) async throws
}

/// One attempt to send a webhook delivery, as an integration that faces out makes it.
public protocol WebhookSending: Sendable {
    /// Sends `delivery`, signed with `secret`, at `now`.
    ///
    /// - Returns: `nil` once the endpoint answered 2xx; otherwise why not, in words.
    func send(_ delivery: WebhookDelivery, secret: Secret, now: Date) async -> String?

    /// Releases its connections.
    func close() async
}

/// How an integration sends webhook deliveries (``IntegrationDescriptor/webhooks``).
public struct WebhooksCapability: Sendable {
    /// Makes a sender that names itself `userAgent`.
    public var makeSender: @Sendable (_ userAgent: String) -> any WebhookSending

    public init(makeSender: @escaping @Sendable (String) -> any WebhookSending) { self.makeSender = makeSender }
}
