import Benchmark
import CordonSecrets

/// `KeyCustody.appKey`: HKDF-SHA256 of the master key with the app id, into locked memory.
enum KeyBenchmarks {
    static func register() {
        let custody = KeyCustody()
        let master = custody.makeMasterKey()
        Benchmark("key.appKey derive") { benchmark in
            for _ in benchmark.scaledIterations {
                let key = custody.appKey(master: master, appId: "com.example.notes")
                blackHole(key)
            }
        }
    }
}
