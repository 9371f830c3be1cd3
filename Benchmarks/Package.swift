// swift-tools-version:6.1
import PackageDescription

// Microbenchmarks of Cordon's pure modules with ordo-one/benchmark: time and allocations
// (`mallocCountTotal`) per policy decision, per-app key derivation and varlink encode/decode.
// A package of its own so the root package does not depend on the benchmark tooling.
let package = Package(
    name: "CordonBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Cordon", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CordonBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CordonPolicy", package: "Cordon"),
                .product(name: "CordonSecrets", package: "Cordon"),
                .product(name: "CordonProtocol", package: "Cordon"),
            ],
            path: "Benchmarks/CordonBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
