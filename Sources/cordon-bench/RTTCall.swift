/// One method's calls in `cordon-bench rtt` (`RTTFixture.call`): its app's `Register`, sent while
/// the benchmark is still dumpable (the agent reads a registering process's executable through
/// `/proc`, which a non-dumpable process of an ordinary user hides); the set-up calls (`Storage.Put`
/// …), sent once the benchmark made itself non-dumpable, as the agent demands of a process it
/// hands data to (`ProcessNotHardened` otherwise, docs/THREAT-MODEL.md, "App identity"); and the
/// request measured.
struct RTTCall {
    let method: RTTMethod
    let register: String?
    let prelude: [String]
    let request: String
}
