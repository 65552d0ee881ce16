import App

/// feedsyncd(8), written from ``DaemonCommandLine``: the daemon's options and signals.
enum DaemonManual {
    static var page: String {
        var page = ManualPage(name: "feedsyncd", section: 8, description: "keep the feeds of a feedsync config in sync")
        page.section("synopsis")
        page.macro(".Nm")
        ManualPage.synopsis(String(DaemonCommandLine.usage.dropFirst("usage: feedsyncd ".count))).forEach { page.macro($0) }
        page.section("description")
        page.paragraph(DaemonCommandLine.summary)
        page.paragraph("""
            Each feed is synced on its interval, with daemon.concurrency syncs at once and at most \
            daemon.maxRequestsPerHost requests in flight to one host; a failing feed is retried with a backoff \
            of at most daemon.maxBackoff. Feeds of integrations that push (a Mastodon or Bluesky timeline with \
            its live keys) are kept live between polls. A config that lists no feeds is not an error: the daemon \
            keeps running and picks up feeds a reload adds.
            """)
        page.paragraph("""
            One daemon serves a SQLite store; a second is refused (exit 75). Several daemons may share a PostgreSQL \
            store, each sync under a lease on its feed. With a metrics section in the config it serves /metrics \
            (Prometheus text) and /healthz on that address.
            """)
        page.paragraph("""
            Under systemd (Type=notify) it says READY=1 once its feeds are scheduled, RELOADING=1 on a reload, \
            WATCHDOG=1 at half the watchdog interval, and STOPPING=1 when it stops. \
            It exits within 8 seconds of SIGTERM: 6 seconds after the signal it exits whatever its syncs are doing.
            """)
        page.section("options")
        page.list(DaemonCommandLine.options.map { (ManualPage.head($0), $0.help) }, width: "Ds")
        page.section("signals")
        page.list(DaemonCommandLine.signals.map { ("Dv \($0.name)", $0.effect) }, width: "Ds")
        page.section("environment")
        page.list([
            ("Ev FEEDSYNC_CONFIG", "the config file, when there is no --config and no ./feedsync.json"),
            ("Ev NOTIFY_SOCKET", "where systemd listens for READY=1, RELOADING=1, WATCHDOG=1 and STOPPING=1"),
            ("Ev WATCHDOG_USEC", "how often systemd expects the watchdog to be petted"),
        ], width: "Ds")
        page.section("files")
        page.list([
            ("Pa /etc/feedsync/feedsync.json", "the config the packaged systemd unit names"),
            ("Pa /etc/feedsync/secrets.env", "the unit's EnvironmentFile, for secrets the config names by variable (mode 0600)"),
            ("Pa /var/lib/feedsync", "the unit's state directory, where its SQLite store should live"),
        ], width: "Ds")
        ManCommand.exitStatus(&page)
        ManCommand.seeAlso(&page, except: "feedsyncd", section: 8)
        return page.text
    }
}
