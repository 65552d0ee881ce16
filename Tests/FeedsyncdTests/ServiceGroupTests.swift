import App
import Core
@testable import feedsyncd
import Foundation
import Synchronization
import Testing

/// The daemon's service group: start and stop order by dependency, graceful shutdown first.
@Suite struct ServiceGroupTests {
    @Test func stopsEachServiceOnlyAfterEveryServiceThatDependsOnItHasReturned() async throws {
        let events = EventLog()
        // Listed in an order that contradicts the dependencies: the group must not follow the list.
        let group = try ServiceGroup([
            makeService("scheduler", dependsOn: ["heartbeat"], events, windDown: .milliseconds(50)),
            makeService("heartbeat", dependsOn: ["runtime"], events),
            makeService("runtime", events),
            makeService("live", dependsOn: ["runtime"], events, windDown: .milliseconds(20)),
        ])
        #expect(await group.startOrder == ["runtime", "heartbeat", "scheduler", "live"])

        await group.start()
        #expect(await events.eventually { $0.filter { $0.hasPrefix("running") }.count == 4 })
        await group.stop()

        let stopping = events.all.filter { !$0.hasPrefix("running") }
        #expect(stopping == ["asked live", "returned live", "asked scheduler", "returned scheduler",
                             "asked heartbeat", "returned heartbeat", "asked runtime", "returned runtime"], "\(events.all)")
    }

    @Test func aGracefulShutdownComesBeforeAnyCancellation() async throws {
        let events = EventLog()
        let group = try ServiceGroup([makeService("scheduler", events, windDown: .milliseconds(30))])
        await group.start()
        #expect(await events.eventually { $0.contains("running scheduler") })
        await group.stop()
        #expect(events.all.contains("returned scheduler") && !events.all.contains("cancelled scheduler"), "\(events.all)")
    }

    @Test func anUnknownDependencyOrACycleIsRefused() {
        let events = EventLog()
        #expect(throws: ServiceGroup.ConfigurationError.self) {
            try ServiceGroup([makeService("scheduler", dependsOn: ["store"], events)])
        }
        #expect(throws: ServiceGroup.ConfigurationError.self) {
            try ServiceGroup([makeService("a", dependsOn: ["b"], events), makeService("b", dependsOn: ["a"], events)])
        }
    }

    /// A wait the request did not end would run its 600 s: the time limit, far from any
    /// machine's speed, turns that into a failure instead of a slow pass.
    @Test(.timeLimit(.minutes(5))) func aShutdownRequestEndsAWaitEarly() async {
        let shutdown = GracefulShutdown()
        async let asked = shutdown.requested(within: .seconds(600))
        shutdown.request()
        #expect(await asked)
        #expect(await shutdown.requested(within: .seconds(600)), "once asked, every later wait ends at once")
    }
}

/// A service that records when it runs, when it is asked to stop, and when it returns.
struct RecordingService: Service {
    let name: String
    let dependencies: [String]
    let events: EventLog
    /// How long it takes to wind down once asked: a later service must not be asked meanwhile.
    let windDown: Duration

    func run(until shutdown: GracefulShutdown) async {
        events.add("running \(name)")
        await shutdown.requested()
        events.add(Task.isCancelled ? "cancelled \(name)" : "asked \(name)")
        try? await Task.sleep(for: windDown)
        events.add("returned \(name)")
    }
}

func makeService(_ name: String, dependsOn dependencies: [String] = [], _ events: EventLog,
                 windDown: Duration = .zero) -> RecordingService {
    RecordingService(name: name, dependencies: dependencies, events: events, windDown: windDown)
}

final class EventLog: Sendable {
    private let events = Mutex<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }

    /// Whether `condition` comes to hold, waiting up to 600 s for a busy machine (it polls; the
    /// services run on their own tasks).
    func eventually(_ condition: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(all)
    }
}

/// The daemon's own services, as `feedsyncd` builds them.
@Suite struct DaemonServicesTests {
    @Test func theSchedulerStopsBeforeTheHeartbeatLeavesAndTheStoreClosesLast() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsyncd-services-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("feedsync.json")
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "home", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed.xml"}}]}
            """
        try Data(json.utf8).write(to: config)
        let runtime = try Runtime.load(configPath: config.path, Runtime.Options(feeds: .none))
        let daemon = Daemon(configPath: config.path, log: Logger())
        let instance = DaemonInstance(id: "test", host: "test", process: "1", startedAt: Date(), beatAt: Date())

        let group = try ServiceGroup(daemon.makeServices(Scheduler(runtime: runtime, log: Logger()), as: instance))

        // Started in this order, stopped in the reverse one.
        // The webhook sender and the media archive need only the store: after the runtime, before or after the others.
        let order = await group.startOrder
        #expect(order.filter { $0 != "webhooks" && $0 != "media" } == ["runtime", "heartbeat", "scheduler"] && order.first == "runtime"
                && order.contains("webhooks") && order.contains("media"), "\(order)")
    }
}
