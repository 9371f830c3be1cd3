import Benchmark
import CordonSecrets

/// App keys into locked memory: `KeyCustody.legacyAppKey` (HKDF-SHA256 of the master key with the
/// app id; the derivation of containers of before, run by their migration only) and
/// `KeyCustody.unwrapAppKey` (a random app key opened from its wrapped row, as the agent does once
/// per app while the master key is held).
enum KeyBenchmarks {
    static func register() {
        let custody = KeyCustody()
        let master = custody.makeMasterKey()
        Benchmark("key.appKey derive") { benchmark in
            for _ in benchmark.scaledIterations {
                let key = custody.legacyAppKey(master: master, appId: "com.example.notes")
                blackHole(key)
            }
        }
        let wrapped = try? custody.wrapAppKey(custody.makeAppKey(), appId: "com.example.notes", master: master)
        Benchmark("key.appKey unwrap") { benchmark in
            for _ in benchmark.scaledIterations {
                let key = try? custody.unwrapAppKey(wrapped ?? [], appId: "com.example.notes", master: master)
                blackHole(key)
            }
        }
    }
}
