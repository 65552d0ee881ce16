import Core
import Foundation
import IntegrationKit
import Synchronization
import Testing
import Webhooks

/// What one attempt sends and how it reads the answer, over a transport that records requests.
@Suite struct WebhookSenderTests {
    final class RecordingTransport: HTTPTransport {
        let answer: Result<HTTPResponse, ServiceError>
        let sent = Mutex<[HTTPRequest]>([])
        init(_ answer: Result<HTTPResponse, ServiceError>) { self.answer = answer }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            sent.withLock { $0.append(request) }
            return try answer.get()
        }
        func close() async {}
    }

    let delivery = WebhookDelivery(id: "d-1", endpoint: "https://hooks.example/in", body: #"{"id":"d-1","event":"new"}"#)
    let secret = Secret("whsec-Zq81mNc5Tt")
    let now = Date(timeIntervalSince1970: 1_800_000_123)

    @Test func aDeliveryIsAPostSignedOverTimestampDotBodyThatFollowsNoRedirect() async throws {
        let transport = RecordingTransport(.success(HTTPResponse(status: 204)))
        let sender = WebhookSender(userAgent: "feedsync/test", transport: transport)
        #expect(await sender.send(delivery, secret: secret, now: now) == nil)
        let request = try #require(transport.sent.withLock { $0.first })
        #expect(request.method == "POST" && request.url.absoluteString == delivery.endpoint && !request.followsRedirects)
        #expect(request.body == Data(delivery.body.utf8))
        #expect(request.headers["X-Feedsync-Delivery"] == "d-1" && request.headers["X-Feedsync-Timestamp"] == "1800000123")
        let expected = "sha256=" + HMACSHA256.hex(key: Data(secret.revealed.utf8), message: Data("1800000123.\(delivery.body)".utf8))
        #expect(request.headers["X-Feedsync-Signature"] == expected)
        #expect(request.headers.values.allSatisfy { !$0.contains(secret.revealed) }, "the secret itself is never sent")
    }

    @Test(arguments: [(302, "a redirect, which is never followed"), (500, "answered 500"), (410, "answered 410")])
    func anythingButA2xxIsAFailure(_ status: Int, _ reason: String) async {
        let sender = WebhookSender(userAgent: "feedsync/test", transport: RecordingTransport(.success(HTTPResponse(status: status, headers: ["Location": "https://elsewhere.example/"]))))
        #expect(await sender.send(delivery, secret: secret, now: now)?.contains(reason) == true)
    }

    @Test func aTransportFailureIsAFailureWithItsReason() async {
        let sender = WebhookSender(userAgent: "feedsync/test", transport: RecordingTransport(.failure(ServiceError(.contractViolation, "posting", "the body is larger than 65536 bytes"))))
        #expect(await sender.send(delivery, secret: secret, now: now) == "the body is larger than 65536 bytes")
        #expect(await sender.send(WebhookDelivery(id: "x", endpoint: "ftp://x/", body: "{}"), secret: secret, now: now) == "the endpoint is not an http(s) URL")
    }
}
