// swift-tools-version:6.2
import PackageDescription

// Every target of this package is built in Swift 6 mode with its warnings as errors, so `make test`
// (and CI, which runs it) fails on a warning in Sources/, Tests/ or examples/. The setting applies to
// these targets only: the dependencies build with their own settings.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .treatAllWarnings(as: .error)]

let package = Package(
    name: "Cordon",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CordonKit", targets: ["CordonKit"]),
        .library(name: "CordonPolicy", targets: ["CordonPolicy"]),
        .library(name: "CordonLifecycle", targets: ["CordonLifecycle"]),
        .library(name: "CordonSecrets", targets: ["CordonSecrets"]),
        .library(name: "CordonProtocol", targets: ["CordonProtocol"]),
        .executable(name: "cordond", targets: ["cordond"]),
        .executable(name: "cordon", targets: ["cordon"]),
        .executable(name: "cordon-bench", targets: ["cordon-bench"]),
        .executable(name: "cordon-fleetd", targets: ["cordon-fleetd"]),
        // The one installed executable: cordon, cordond and cordon-fleetd by the name it runs under.
        .executable(name: "cordon-multicall", targets: ["cordon-multicall"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // The pinned channel (docs/ARCHITECTURE.md, "Pinned channel"): HTTP/2, X.509 verification.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // ID token verification (docs/ARCHITECTURE.md, "Identity"): swift-crypto, swift-certificates and swift-log only.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // Metrics in the Prometheus text format (docs/ARCHITECTURE.md, "Metrics"): the shells only
        // (CordonFleetd, CordonServer), never a pure module.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // The module map and each module's one job: docs/ARCHITECTURE.md.
        // Pure modules: no NIO, GRDB or CSystemd, no I/O.
        .target(name: "CordonProtocol", swiftSettings: strict),
        .target(name: "CordonPolicy", dependencies: ["CordonProtocol"], swiftSettings: strict),
        .target(name: "CordonLifecycle", dependencies: ["CordonProtocol"], swiftSettings: strict),
        // Device posture checks, each read under an injectable root (docs/ARCHITECTURE.md, "Posture").
        .target(name: "CordonPosture", dependencies: ["CordonProtocol"], swiftSettings: strict),
        // Key material: locked memory, the KDF, wrapping, per-app derivation, the sealed pasteboard.
        .target(
            name: "CordonSecrets",
            dependencies: [
                "CordonProtocol", "CCordonLinux", "CCordonAEAD",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The age file format (age-encryption.org/v1): header, X25519 and scrypt stanzas, STREAM payload, armor.
        .target(
            name: "CordonAge",
            dependencies: [
                "CCordonAEAD",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Software tokens: OATH HOTP/TOTP, otpauth and migration URIs, SecurID CTF/SDTID and codes (no I/O).
        .target(
            name: "CordonTokens",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The Assuan protocol as pinentry speaks it (the CLI's passcode prompt).
        .target(name: "CordonPinentry", swiftSettings: strict),
        // The CLI's passcode prompt: pinentry (which program, the Assuan dialogue), the terminal
        // without echo, standard input (docs/ARCHITECTURE.md, "Modules").
        .target(
            name: "CordonPrompt", dependencies: ["CordonPinentry", "CordonKit", "CordonProtocol", "CordonSystem"],
            swiftSettings: strict),
        // Policy signatures and the admin trust store (reads files).
        .target(
            name: "CordonTrust",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // The fleet's pure core: TUF metadata and its verification, signed commands (docs/ARCHITECTURE.md, "Fleet").
        .target(
            name: "CordonFleet",
            dependencies: ["CordonProtocol", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // fleetd's shell: HTTPS, the device key, state and handoff files (docs/ARCHITECTURE.md, "Fleet").
        .target(
            name: "CordonFleetd",
            dependencies: [
                "CordonLocking",
                "CordonNATS",
                "CordonFleet", "CordonProtocol", "CordonSystem", "CordonTPM", "CordonSecrets", "CordonPosture",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // cordon-fleetd's command line (`run`, `id`), run by the executable `cordon-fleetd` and the
        // multi-call one (docs/ARCHITECTURE.md, "Binaries").
        .target(
            name: "CordonFleetdCLI",
            dependencies: [
                "CordonFleetd", "CordonFleet", "CordonSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The admin's side of the fleet: the workspace that makes and maintains the signed repository
        // (`cordon fleet`; reads and writes files, no NIO or GRDB).
        .target(
            name: "CordonFleetAdmin",
            dependencies: [
                "CordonNATS", "CordonFleet", "CordonProtocol", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Shells.
        // `Locked`, the lock every shell keeps state behind: a pthread mutex ThreadSanitizer sees
        // (docs/ARCHITECTURE.md, "Threads and confinement").
        .target(
            name: "CordonLocking", dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CCordonLinux"),
        // The `read` that keeps who wrote each read of an app's connection (SCM_CREDENTIALS); linked
        // only into the agent (CordonServer), docs/ARCHITECTURE.md "Who wrote a message".
        .target(name: "CCordonSenders"),
        // RecordCache's change check: `PRAGMA data_version` on a read-only SQLite connection of its
        // own, asked on the agent's loop without GRDB's queue hop (the system SQLite GRDB links).
        .target(name: "CCordonSQLiteProbe", linkerSettings: [.linkedLibrary("sqlite3")]),
        // ChaCha20-Poly1305 sealing into the caller's buffer, through the BoringSSL swift-crypto links
        // (CordonAge's payload chunks without SealedBox's extra copy).
        .target(name: "CCordonAEAD"),
        // The sd-bus calls Swift cannot make (variadic), with fixed signatures.
        .target(name: "CCordonBus", linkerSettings: [.linkedLibrary("systemd")]),
        // The fan-out benchmark's receivers and D-Bus sender (sd-bus is variadic).
        .target(name: "CCordonBench", linkerSettings: [.linkedLibrary("systemd"), .linkedLibrary("crypto")]),
        // The TPM Software Stack (ESYS, TCTI loader, RC decoding, marshalling) and the fixed-signature
        // C glue that builds its nested structures; CordonTPM is the Swift shell over both.
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        // The official NATS C client (nats.c) and the Swift shell over it: the fleet's push channel
        // (docs/ARCHITECTURE.md, "Fleet push").
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .target(
            name: "CordonNATS",
            dependencies: ["CordonLocking", "CNATS", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // An epoll event loop for the C client's external-loop API: one loop for many connections
        // (the fleet swarm of cordon-bench; the products keep the library's own threads).
        .target(name: "CNATSLoop", dependencies: ["CNATS"]),
        .target(name: "CordonNATSLoop", dependencies: ["CNATS", "CNATSLoop", "CordonNATS"], swiftSettings: strict),
        .target(
            name: "CCordonTPM", dependencies: ["CTSS2"],
            linkerSettings: [
                .linkedLibrary("tss2-esys"), .linkedLibrary("tss2-tctildr"), .linkedLibrary("tss2-rc"),
                .linkedLibrary("tss2-mu"),
            ]),
        .target(name: "CordonTPM", dependencies: ["CCordonTPM", "CordonSecrets"], swiftSettings: strict),
        // One app's encrypted records (`AppStorage`), the format the SDK and the agent share; not the
        // agent's own database (docs/ARCHITECTURE.md, "Storage").
        .target(
            name: "CordonAppStorage",
            dependencies: [
                "CordonLocking", "CCordonSQLiteProbe",
                "CordonSecrets", "CordonProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CordonStore",
            dependencies: [
                "CordonLocking",
                "CordonAppStorage", "CordonSecrets", "CordonProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CordonSystem",
            dependencies: [
                "CordonLocking",
                "CSystemd", "CCordonLinux", "CCordonBus",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CordonTransport",
            dependencies: ["CordonProtocol", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strict
        ),
        .target(
            name: "CordonServer",
            dependencies: [
                "CordonLocking",
                "CordonProtocol", "CordonLifecycle", "CordonSecrets", "CordonTrust", "CordonPolicy", "CordonStore",
                "CordonAppStorage", "CordonSystem", "CordonTransport", "CordonPosture", "CordonAge", "CordonTokens",
                "CordonTPM", "CordonIdentity", "CordonFleet", "CCordonLinux", "CCordonSenders",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CordonKit",
            dependencies: [
                "CordonLocking",
                "CordonProtocol", "CordonTransport", "CCordonLinux", "CordonSecrets", "CordonAppStorage", "CordonAge",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // cordond's command line, run by the executable `cordond` and the multi-call one.
        .target(
            name: "CordondCLI",
            dependencies: [
                "CordonServer", "CordonSystem", "CordonLifecycle", "CordonProtocol", "CordonPolicy", "CordonTPM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // `cordon run`'s work: the wrapped program, its supervisor, the pinned tunnels (docs/ARCHITECTURE.md,
        // "Freezing" and "Pinned channel").
        .target(
            name: "CordonRun",
            dependencies: [
                "CordonLocking",
                "CordonKit", "CordonProtocol", "CordonSystem",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // cordon's command line, run by the executable `cordon` and the multi-call one.
        .target(
            name: "CordonCLI",
            dependencies: [
                "CordonLocking",
                "CordonKit", "CordonProtocol", "CordonPinentry", "CordonPrompt", "CordonSystem", "CordonPolicy",
                "CordonTrust",
                "CordonRun", "CordonFleet", "CordonFleetAdmin",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // The three programs, each an executable of its own (what the tests and `swift run` start) and
        // together the multi-call one that `make install` and the Debian package install as `cordon`,
        // with `cordond` and `cordon-fleetd` linked to it (docs/ARCHITECTURE.md, "Binaries").
        .executableTarget(name: "cordond", dependencies: ["CordondCLI"], swiftSettings: strict),
        .executableTarget(name: "cordon", dependencies: ["CordonCLI"], swiftSettings: strict),
        .executableTarget(name: "cordon-fleetd", dependencies: ["CordonFleetdCLI"], swiftSettings: strict),
        .executableTarget(
            name: "cordon-multicall", dependencies: ["CordonCLI", "CordondCLI", "CordonFleetdCLI"],
            swiftSettings: strict),
        // The benchmarks' summary of every target (records, the summary file, the table): Foundation only.
        .target(name: "CordonBenchSummary", swiftSettings: strict),
        .executableTarget(
            name: "cordon-bench",
            dependencies: [
                "CordonLocking",
                "CordonPolicy", "CordonProtocol", "CCordonBench", "CordonAge", "CordonStore", "CordonAppStorage",
                "CordonSecrets",
                "CordonTokens", "CordonKit", "CordonBenchSummary", "CordonSystem", "CCordonLinux", "CCordonSenders",
                "CordonFleet",
                "CordonFleetd", "CordonFleetAdmin", "CordonNATS", "CNATS", "CordonNATSLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "cordon-notes",
            dependencies: ["CordonKit", "CordonProtocol", .product(name: "Crypto", package: "swift-crypto")],
            path: "examples/notes",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "cordon-files",
            dependencies: ["CordonKit", "CordonProtocol"],
            path: "examples/files",
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonProtocolTests",
            dependencies: ["CordonProtocol", .product(name: "PropertyBased", package: "swift-property-based")],
            exclude: ["fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonPolicyTests",
            dependencies: [
                "CordonPolicy", "CordonProtocol", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonLifecycleTests", dependencies: ["CordonLifecycle", "CordonProtocol"], swiftSettings: strict),
        .testTarget(
            name: "CordonPostureTests", dependencies: ["CordonPosture", "CordonProtocol"], swiftSettings: strict),
        .testTarget(name: "CordonSecretsTests", dependencies: ["CordonSecrets"], swiftSettings: strict),
        // zlib inflates the compressed C2SP vectors (test only).
        .systemLibrary(name: "CZlib", path: "Tests/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .testTarget(
            name: "CordonAgeTests",
            dependencies: [
                "CordonAge", "CZlib", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["vectors"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonTokensTests", dependencies: ["CordonTokens"], exclude: ["vectors"], swiftSettings: strict
        ),
        .testTarget(name: "CordonTPMTests", dependencies: ["CordonTPM", "CordonSecrets"], swiftSettings: strict),
        // `peers/`: python-tuf (the reference implementation) makes the repositories and attacks.
        .testTarget(
            name: "CordonFleetTests",
            dependencies: ["CordonFleet", "CordonProtocol", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["peers"],
            swiftSettings: strict),
        // `peers/`: python-tuf's ngclient refreshes from the workspaces the tests make.
        .testTarget(
            name: "CordonFleetAdminTests",
            dependencies: [
                "CordonFleetAdmin", "CordonFleet", "CordonProtocol", .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["peers"], swiftSettings: strict),
        // Against a real nats-server (Debian) started by the tests.
        .target(name: "NATSTestServer", path: "Tests/NATSTestServer", swiftSettings: strict),
        .testTarget(
            name: "CordonNATSTests",
            dependencies: [
                "CordonLocking",
                "CordonNATS", "CordonNATSLoop", "NATSTestServer", "ChannelTestPeers",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // fleetd's shell in process: its metrics (the end-to-end tests run the daemon itself).
        .testTarget(
            name: "CordonFleetdTests",
            dependencies: ["CordonFleetd", "CordonFleet", .product(name: "Prometheus", package: "swift-prometheus")],
            swiftSettings: strict),
        .testTarget(name: "CordonTrustTests", dependencies: ["CordonTrust"], swiftSettings: strict),
        .testTarget(name: "CordonBenchSummaryTests", dependencies: ["CordonBenchSummary"], swiftSettings: strict),
        .testTarget(name: "CordonPinentryTests", dependencies: ["CordonPinentry"], swiftSettings: strict),
        .testTarget(
            name: "CordonPromptTests", dependencies: ["CordonPrompt", "CordonProtocol"], swiftSettings: strict),
        .testTarget(
            name: "CordonStoreTests",
            dependencies: [
                "CordonLocking",
                "CordonStore", "CordonProtocol", "CordonSecrets", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonAppStorageTests",
            dependencies: [
                "CordonAppStorage", "CordonProtocol", "CordonSecrets",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonSystemTests",
            dependencies: ["CordonLocking", "CordonSystem", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonServerTests",
            dependencies: [
                "CordonLocking",
                "CordonServer", "CordonKit", "CordonProtocol", "CordonLifecycle", "CordonSystem", "CordonTransport",
                "CordonStore", "CordonAppStorage", "CordonSecrets", "CordonIdentity", "CordonPolicy", "CCordonSenders",
                "CordonFleet", .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonRunTests",
            dependencies: [
                "CordonLocking",
                "CordonRun", "CordonKit", "CordonProtocol", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CordonKitTests", dependencies: ["CordonKit", "CordonProtocol", "CordonSecrets"],
            swiftSettings: strict),
        // The pinned channel against real peers: certificates from openssl, servers in Python (`peers/`),
        // curl as the reference verifier.
        .testTarget(
            name: "CordonChannelTests",
            dependencies: ["CordonKit", "CordonProtocol", "ChannelTestPeers"],
            exclude: ["peers"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CordonLocking",
                "CordonKit", "CordonProtocol", "CordonStore", "CordonSecrets", "CordonSystem", "CordonTrust",
                "CordonAge", "CordonAppStorage", "CCordonLinux", "ChannelTestPeers", "CTestCredentials", "CordonFleet",
                "CordonNATS", "NATSTestServer", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The end-to-end tests' raw clients connect to an agent run as an ordinary user with that
        // user's credentials (a thread's effective uid switched for the connect: variadic syscall).
        .target(name: "CTestCredentials", path: "Tests/CTestCredentials"),
        // The channel tests' peers (openssl CA and leaves, the Python TLS server), shared by the
        // channel tests and the end-to-end tests.
        .target(name: "ChannelTestPeers", path: "Tests/ChannelTestPeers", swiftSettings: strict),
        // MARK: Identity (#15)
        // The identity broker's protocols: PKCE, the device grant, the loopback code flow, token
        // responses, sessions (pure, no I/O; docs/ARCHITECTURE.md "Identity").
        .target(
            name: "CordonIdentity",
            dependencies: [
                "CordonProtocol", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: strict
        ),
        // `peers/`: the local authlib identity provider and the browser stand-in the tests start.
        .testTarget(
            name: "CordonIdentityTests", dependencies: ["CordonIdentity", "CordonProtocol", "ChannelTestPeers"],
            exclude: ["peers"],
            swiftSettings: strict),
    ]
)

// `make test-tsan` builds only the suites it runs and what they need (CORDON_TEST_TARGETS, comma
// separated): the ThreadSanitizer pass needs no executables, examples or other suites, whose build
// under the sanitizer only lengthened CI (docs/ARCHITECTURE.md, "Threads and confinement").
if let wanted = Context.environment["CORDON_TEST_TARGETS"], !wanted.isEmpty {
    var keep = Set(wanted.split(separator: ",").map(String.init))
    let byName = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var queue = Array(keep)
    while let name = queue.popLast() {
        for dependency in byName[name]?.dependencies ?? [] {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _):
                if byName[name] != nil, keep.insert(name).inserted { queue.append(name) }
            default: break
            }
        }
    }
    package.targets.removeAll { !keep.contains($0.name) }
    package.products = []
}
