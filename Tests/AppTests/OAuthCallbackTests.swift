@testable import App
import Core
import Foundation
import Testing

/// The loopback callback checks `state` before anything else: whatever comes without this
/// sign-in's state is answered 400 and changes nothing, and the real callback still decides.
@Suite struct OAuthCallbackTests {
    let state = "s7RkQ2-state_of_this.sign-in~"

    func request(_ query: String, path: String = "/callback") -> HTTPListener.Request {
        HTTPListener.Request(method: "GET", path: path, query: query)
    }

    static let forged = [
        "code=forged", "error=access_denied", "error=access_denied&error_description=gone",
        "state=wrong&code=forged", "state=wrong&error=access_denied", "state=&code=forged",
        "state=s7RkQ2-state_of_this.sign-in&code=forged", "state=s7RkQ2-state_of_this.sign-in~~&code=forged",
        "state=S7RKQ2-STATE_OF_THIS.SIGN-IN~&code=forged",
        "state=s7RkQ2-state_of_this.sign-in~&state=wrong&code=forged", "state=wrong&state=s7RkQ2-state_of_this.sign-in~&code=forged",
        "", "%zz", "state",
    ]

    @Test func forgedCallbacksAre400AndTheRealOneStillDecides() async throws {
        let callback = OAuthCallback(state: state)
        for query in Self.forged {
            let response = callback.handle(request(query))
            #expect(response.status == 400, "\(query)")
        }
        #expect(callback.handle(request("state=\(state)", path: "/other")).status == 404)
        let real = callback.handle(request("code=the-code&state=s7RkQ2-state_of_this.sign-in%7E"))
        #expect(real.status == 200)
        #expect(try await callback.code(within: 5, host: "example.social") == "the-code")
        #expect(callback.handle(request("code=late&state=\(state)")).status == 409, "the first real callback decides")
        #expect(callback.handle(request("error=late")).status == 400)
    }

    @Test(arguments: ["error=access_denied&error_description=The+user+said+no", "error=server_error"])
    func anErrorWithTheRightStateEndsTheSignInInOneSentence(_ query: String) async throws {
        let callback = OAuthCallback(state: state)
        #expect(callback.handle(request("error=forged")).status == 400)
        #expect(callback.handle(request("\(query)&state=\(state)")).status == 400)
        do {
            _ = try await callback.code(within: 5, host: "example.social")
            Issue.record("an error signed in")
        } catch let error as ServiceError {
            #expect(error.code == .unauthorized && error.reason.contains("the server refused the sign-in"), "\(error)")
        }
    }

    @Test(arguments: ["state=s7RkQ2-state_of_this.sign-in~", "state=s7RkQ2-state_of_this.sign-in~&code="])
    func theRightStateWithoutACodeEndsTheSignIn(_ query: String) async throws {
        let callback = OAuthCallback(state: state)
        #expect(callback.handle(request(query)).status == 400)
        await #expect(throws: ServiceError.self) { try await callback.code(within: 5, host: "example.social") }
    }

    @Test func statesAreComparedWhole() {
        #expect(OAuthCallback.same("abc", "abc"))
        for other in ["abd", "ab", "abcd", "", "ABC"] { #expect(!OAuthCallback.same("abc", other), "\(other)") }
    }
}
