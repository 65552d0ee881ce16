// swift-tools-version:6.0
import PackageDescription

// feedsync: Core (models + service protocols), Sync (the coordinating logic), one module per
// backend under Integrations/, and App, the composition root that maps config to integrations.
// No package dependencies: the toolchain plus libsqlite3, libcurl, libpq, libxml2, libsodium and libssl through system-library targets.
let package = Package(
    name: "feedsync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedsync", targets: ["feedsync"]),
        .executable(name: "feedsyncd", targets: ["feedsyncd"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .systemLibrary(
            name: "CPostgres",
            path: "Sources/CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            path: "Sources/CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        // argon2id password hashes, SHA-256 and random tokens for the reader listener's accounts.
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // TLS on the reader listener (`"serve": {"tls": …}`): OpenSSL's libssl.
        .systemLibrary(
            name: "CSSL",
            path: "Sources/CSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]
        ),
        // glibc's mallopt, for feedsyncd's malloc arenas: in the C library itself.
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        .target(name: "Core", path: "Sources/Core"),
        .target(name: "Sync", dependencies: ["Core"], path: "Sources/Sync"),
        // Plumbing shared by the HTTP integrations: transport, pacing, Link and date parsing, the JSON reader.
        .target(name: "IntegrationKit", dependencies: ["Core", "CCurl", "CSodium", "CSSL"], path: "Sources/IntegrationKit"),

        // Webhooks face out: signed POSTs of what the mirror stored (issue 38).
        .target(name: "Webhooks", dependencies: ["Core", "IntegrationKit"], path: "Integrations/Webhooks"),
        .target(name: "HTTPAPI", dependencies: ["Core", "IntegrationKit"], path: "Integrations/HTTPAPI",
                exclude: ["API.md", "README.md"]),
        // What both stores share: the one Post⇄row codec and the executor that keeps blocking calls off the pool.
        .target(name: "StoreKit", dependencies: ["Core"], path: "Sources/StoreKit"),
        .target(name: "SQLiteCache", dependencies: ["Core", "StoreKit", "CSQLite"], path: "Integrations/SQLiteCache", exclude: ["README.md"]),
        .target(name: "PostgresStore", dependencies: ["Core", "StoreKit", "CPostgres"], path: "Integrations/PostgresStore", exclude: ["README.md"]),
        .target(name: "MockVideoHost", dependencies: ["Core"], path: "Integrations/MockVideoHost", exclude: ["README.md"]),
        .target(name: "Mastodon", dependencies: ["Core", "IntegrationKit"], path: "Integrations/Mastodon", exclude: ["README.md"]),
        .target(name: "WebFeed", dependencies: ["Core", "IntegrationKit", "CLibXML2"], path: "Integrations/WebFeed", exclude: ["README.md"]),
        .target(name: "Bluesky", dependencies: ["Core", "IntegrationKit"], path: "Integrations/Bluesky", exclude: ["README.md"]),
        .target(name: "ReaderAPI", dependencies: ["Core", "IntegrationKit"], path: "Integrations/ReaderAPI"),
        // The local media archive (issue 37): content-addressed files of what the posts point at.
        .target(name: "PeerTube", dependencies: ["Core", "IntegrationKit"], path: "Integrations/PeerTube", exclude: ["README.md"]),
        .target(name: "YouTube", dependencies: ["Core", "IntegrationKit"], path: "Integrations/YouTube", exclude: ["README.md"]),
        .target(name: "MediaArchive", dependencies: ["Core", "IntegrationKit"], path: "Integrations/MediaArchive", exclude: ["README.md"]),

        .target(name: "App",
                dependencies: ["Core", "Sync", "HTTPAPI", "SQLiteCache", "PostgresStore", "MockVideoHost", "Mastodon", "WebFeed", "Bluesky",
                               "ReaderAPI", "Webhooks", "MediaArchive", "PeerTube", "YouTube", "CSSL", "StoreKit"],
                path: "Sources/App"),
        .executableTarget(name: "feedsync", dependencies: ["App", "Core", "Sync", "IntegrationKit"], path: "Sources/feedsync"),
        .executableTarget(name: "feedsyncd", dependencies: ["App", "Core", "Sync", "CMalloc"], path: "Sources/feedsyncd",
                          exclude: ["feedsyncd.service"]),

        .testTarget(name: "CoreTests", dependencies: ["Core"], path: "Tests/CoreTests"),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "Core", "ProcessTestSupport"], path: "Tests/SyncTests"),
        .testTarget(name: "IntegrationKitTests", dependencies: ["IntegrationKit", "Core", "ProcessTestSupport"], path: "Tests/IntegrationKitTests",
                    exclude: ["HTMLTextCases.json"]),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks", "IntegrationKit", "Core"], path: "Tests/WebhooksTests"),
        .testTarget(name: "MediaArchiveTests", dependencies: ["MediaArchive", "PeerTube", "IntegrationKit", "Core", "ProcessTestSupport"],
                    path: "Tests/MediaArchiveTests"),
        .testTarget(name: "HTTPAPITests", dependencies: ["HTTPAPI", "IntegrationKit", "Core", "ProcessTestSupport"], path: "Tests/HTTPAPITests"),
        .testTarget(name: "StoreKitTests", dependencies: ["StoreKit", "Core", "ProcessTestSupport"], path: "Tests/StoreKitTests"),
        .testTarget(name: "SQLiteCacheTests", dependencies: ["SQLiteCache", "Core", "ProcessTestSupport"], path: "Tests/SQLiteCacheTests"),
        .testTarget(name: "MockVideoHostTests", dependencies: ["MockVideoHost", "Core"], path: "Tests/MockVideoHostTests"),
        .testTarget(name: "MastodonTests", dependencies: ["Mastodon", "IntegrationKit", "Core", "ProcessTestSupport"], path: "Tests/MastodonTests"),
        .testTarget(name: "WebFeedTests", dependencies: ["WebFeed", "IntegrationKit", "Core"], path: "Tests/WebFeedTests"),
        .testTarget(name: "BlueskyTests", dependencies: ["Bluesky", "IntegrationKit", "Core", "ProcessTestSupport"], path: "Tests/BlueskyTests"),
        .testTarget(name: "AppTests", dependencies: ["App", "Core", "SQLiteCache", "StoreKit", "ProcessTestSupport"], path: "Tests/AppTests"),
        .testTarget(name: "ReaderAPITests", dependencies: ["ReaderAPI", "Core", "ProcessTestSupport"], path: "Tests/ReaderAPITests"),
        // The daemon's own parts (its service group), tested in-process.
        .testTarget(name: "FeedsyncdTests", dependencies: ["feedsyncd", "App", "Core"], path: "Tests/FeedsyncdTests"),
        .testTarget(name: "ReliabilityTests", dependencies: ["Sync", "SQLiteCache", "Core", "ProcessTestSupport"], path: "Tests/ReliabilityTests"),
        // A PostgreSQL server of the tests' own, for the store contract and the end-to-end runs.
        .target(name: "PostgresTestSupport", path: "Tests/PostgresTestSupport"),
        // Pipes and process starts in every test module under one lock, so no test's pipe or
        // child-exit socket goes to another test's child (the tests all run in one process); and the one
        // seeded generator the tests draw random inputs from.
        .target(name: "ProcessTestSupport", path: "Tests/ProcessTestSupport"),
        // One store contract, run against the SQLite store and a PostgreSQL server the tests start.
        .testTarget(name: "StoreContractTests", dependencies: ["SQLiteCache", "PostgresStore", "StoreKit", "Core", "PostgresTestSupport", "ProcessTestSupport"],
                    path: "Tests/StoreContractTests"),
        // A posts backend of the tests' own, with a sign-in and a form of `add`, registered by one
        // line the way a new integration is, and driven through feedsync's own commands.
        .target(name: "ExampleIntegration", dependencies: ["Core"], path: "Tests/ExampleIntegration"),
        .testTarget(name: "RegistryTests", dependencies: ["feedsync", "App", "Core", "ExampleIntegration", "ProcessTestSupport"], path: "Tests/RegistryTests"),
        .testTarget(name: "EndToEndTests", dependencies: ["Core", "PostgresTestSupport", "ProcessTestSupport"], path: "Tests/EndToEndTests"),
    ],
    swiftLanguageModes: [.v6]
)
