import App
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `feedsyncd`: parses the command line, runs the services, and turns signals into stop and reload.
enum DaemonCLI {
    static let options = DaemonCommandLine.options
    static let usage = DaemonCommandLine.usage
    static let help = DaemonCommandLine.help

    static func run(_ arguments: [String]) async -> ExitStatus {
        let parsed: CommandLineOptions
        var log = Logger()
        do {
            parsed = try CommandLineOptions(arguments, specs: options, usage: usage)
            if let level = parsed["--log-level"] {
                guard let chosen = Logger.Level.allCases.first(where: { $0.name == level }) else {
                    throw UsageError("--log-level takes debug, info, warn or error, not \"\(level)\"", usage: usage)
                }
                log.minimum = chosen
            }
            guard parsed.positionals.isEmpty else { throw UsageError("feedsyncd takes no arguments", usage: usage) }
        } catch {
            printError("feedsyncd: \(describe(error))\n\(usage)")
            return .usage
        }
        if parsed.has("--help") {
            print(help)
            return .ok
        }
        if parsed.has("--version") {
            print("feedsyncd \(feedsyncVersion)")
            return .ok
        }
        // Watch signals before anything slow, so an early SIGTERM is not lost.
        // A test hook stretches the stop deadline, so a test of the second signal cannot pass by the deadline.
        let deadline = ProcessInfo.processInfo.environment["FEEDSYNC_TEST_STOP_DEADLINE_SECONDS"].flatMap(Int.init)
            .flatMap { (1...600).contains($0) ? Duration.seconds($0) : nil }
        let signals = SignalWatcher.start(log: log, deadline: deadline ?? SignalWatcher.stopDeadline)
        let daemon = Daemon(configPath: parsed["--config"], log: log)
        let runtime: Runtime
        let listener: HTTPListener?
        let readerListener: HTTPListener?
        do {
            runtime = try Runtime.load(configPath: parsed["--config"], daemon.loadOptions(sharing: nil))
            for warning in runtime.warnings { log.warn("config_warning", ["warning": warning]) }
            daemon.metrics.setLeasing(runtime.storeTraits.coordination == .leases)
            // Bound before the store opens, so a port in use is a config error and nothing else happened.
            listener = try runtime.metricsListen.map { address in
                do {
                    return try HTTPListener(address: address, limits: MetricsService.limits, handler: MetricsService.handler(daemon.metrics))
                } catch let error as ListenError {
                    throw ConfigError(file: runtime.configName, keyPath: "metrics.listen", message: error.description)
                }
            }
            daemon.metrics.prepareFeeds(runtime.feedNames.count, shown: listener != nil)
            daemon.served.update(feeds: runtime.servedFeeds, searches: runtime.searches)
            readerListener = try ReaderListener.make(for: runtime, log: log, catalog: daemon.served)
            try await runtime.start()
        } catch {
            printError("feedsyncd: \(describe(error))")
            return ExitStatus(for: error)
        }
        // The store says how many daemons it admits (``StoreTraits/coordination``): one for a
        // local file (a second would double every poll), any number where leases split the feeds.
        let instance: DaemonInstance
        do {
            instance = try await runtime.store.join(startedAt: Date())
        } catch {
            await runtime.stop()
            printError("feedsyncd: \(describe(error))")
            return ExitStatus(for: error)
        }
        await daemon.run(runtime, as: instance, signals: signals, listener: listener, readerListener: readerListener)
        await runtime.store.leave(instance)
        return .ok
    }
}

/// The running daemon: its services, and what each signal does to them.
struct Daemon {
    let configPath: String?
    let log: Logger
    let notifier = SystemdNotifier()
    /// Counts syncs and requests whether or not the config asks for a listener (it is cheap).
    let metrics = MetricsRegistry(version: feedsyncVersion)
    /// What the reader listener serves: replaced on a reload.
    let served = ServedCatalog()

    func run(_ runtime: Runtime, as instance: DaemonInstance, signals: SignalWatcher, listener: HTTPListener?,
             readerListener: HTTPListener? = nil) async {
        let scheduler = Scheduler(runtime: runtime, log: log, busySeconds: busySyncSeconds, metrics: metrics, instance: instance.id)
        let live = LiveMirror(log: log, metrics: metrics)
        let services: ServiceGroup
        do {
            services = try ServiceGroup(makeServices(scheduler, as: instance, live: live, listener: listener, readerListener: readerListener))
        } catch {
            log.error("services_invalid", ["error": "\(error)"])
            await scheduler.close()
            return
        }
        await services.start()
        log.info("started", ["config": runtime.configName, "feeds": runtime.feedNames.joined(separator: ","),
                             "pid": "\(getpid())"])
        notifier.notify("READY=1\nSTATUS=syncing \(runtime.feedNames.count) feeds")
        warnIfNoFeeds(runtime)

        for await signal in signals.events {
            if signal == SIGHUP {
                await reload(scheduler, live: live, tls: readerListener?.tls)
                continue
            }
            // The watcher has logged `stopping` and set the deadline; a second stop signal, or the
            // deadline, ends the process from the watcher's own thread.
            notifier.notify("STOPPING=1")
            await services.stop()
            log.info("stopped")
            return
        }
    }

    /// A config may list no feeds (its last one removed or logged out of): the daemon keeps
    /// running, answers `/healthz`, and syncs the feeds a reload adds.
    private func warnIfNoFeeds(_ runtime: Runtime) {
        guard runtime.feedNames.isEmpty else { return }
        log.warn("no_feeds", ["config": runtime.configName, "action": "syncing nothing until a reload (SIGHUP) adds a feed"])
    }

    /// The daemon's services. The order each starts and stops in follows from their
    /// `dependencies`, not from this list: the scheduler depends on the heartbeat (its syncs
    /// write under the leases the daemon's record holds), which depends on the runtime (the
    /// store). Stopping runs the other way round. A new service names what it uses.
    func makeServices(_ scheduler: Scheduler, as instance: DaemonInstance, live: LiveMirror? = nil,
                      listener: HTTPListener? = nil, readerListener: HTTPListener? = nil) -> [any Service] {
        var services: [any Service] = [
            SchedulerService(scheduler: scheduler),
            HeartbeatService(scheduler: scheduler, notifier: notifier, log: log, daemon: instance),
            RuntimeService(scheduler: scheduler),
            WebhookService(scheduler: scheduler, log: log, metrics: metrics),
            MediaService(scheduler: scheduler, metrics: metrics, log: log),
        ]
        if let live {
            services.append(LiveMirrorService(mirror: live, scheduler: scheduler))
        }
        if let listener {
            services.append(MetricsService(scheduler: scheduler, registry: metrics, listener: listener, log: log))
        }
        if let readerListener {
            services.append(ReaderService(listener: readerListener, log: log))
        }
        return services
    }

    /// The test hook `FEEDSYNC_TEST_BUSY_SYNC_SECONDS`: every sync first keeps a thread busy this long.
    private var busySyncSeconds: Double? {
        ProcessInfo.processInfo.environment["FEEDSYNC_TEST_BUSY_SYNC_SECONDS"].flatMap(Double.init).flatMap { (0...600).contains($0) ? $0 : nil }
    }

    /// What a daemon builds from its config: every feed, waits logged; on reload, the store it has.
    func loadOptions(sharing store: Managed<any FeedStore>?) -> Runtime.Options {
        var options = Runtime.Options()
        options.sharing = store
        options.log = log
        options.traffic = metrics
        options.keepsFeedDetails = false
        options.backendsPerSync = true
        return options
    }

    /// Loads and checks the config again; on any error keeps the running one.
    ///
    /// The new config's feeds share the running store (its connection, its locks), so a
    /// reload never makes the daemon contend with itself. A config that moves the store is
    /// refused: that takes a restart.
    ///
    /// The reader listener's certificate and key are loaded again too (a renewed certificate),
    /// from the new config's `serve.tls` if it loaded, else from the files in use.
    private func reload(_ scheduler: Scheduler, live: LiveMirror, tls: TLSContext?) async {
        notifier.notify("RELOADING=1")
        var files: TLSContext.Files?
        do {
            let running = await scheduler.currentRuntime
            let runtime = try Runtime.load(configPath: configPath, loadOptions(sharing: running.provider.store))
            let moved = try Runtime.load(configPath: configPath, Runtime.Options(feeds: .none)).storeName
            guard moved == running.storeName else {
                throw ConfigError(file: runtime.configName, keyPath: "store",
                                  message: "moves the store (from \(running.storeName) to \(moved)); restart feedsyncd to change the store")
            }
            for warning in runtime.warnings { log.warn("config_warning", ["warning": warning]) }
            try await runtime.start()
            await scheduler.apply(runtime)
            await live.apply(runtime)
            served.update(feeds: runtime.servedFeeds, searches: runtime.searches)
            files = runtime.serve?.tls
            log.info("reloaded", ["config": runtime.configName, "feeds": runtime.feedNames.joined(separator: ",")])
            warnIfNoFeeds(runtime)
        } catch {
            log.error("reload_failed", ["error": describe(error), "action": "kept the running config"])
        }
        reloadCertificate(tls, from: files)
        notifier.notify("READY=1")
    }

    /// New TLS connections get the certificate and key as the files hold them now; a pair that
    /// does not load leaves the one in use, in one line of the log.
    private func reloadCertificate(_ tls: TLSContext?, from files: TLSContext.Files?) {
        guard let tls else { return }
        do throws(TLSError) {
            try tls.reload(files)
            for warning in TLSContext.warnings(tls.files, keyPath: "serve.tls") { log.warn("tls_key_readable", ["warning": warning]) }
            log.info("tls_reloaded", ["certificate": tls.files.certificate])
        } catch {
            log.error("tls_reload_failed", ["error": "serve.tls.\(error.key): \(error.description)", "action": "kept the certificate in use"])
        }
    }
}
